import Foundation

/// Hands out column numbers to `@Persisted` wrappers while an object initialises.
///
/// Swift initialises a class's stored properties in declaration order before `super.init`
/// runs, so the wrappers of one object take 0, 1, 2 … and ``Object/init()`` resets the count
/// for the next object. The count lives in thread-specific storage so objects can be created
/// on many threads at once.
enum ColumnCounter {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "pthread_key_create failed: \(rc)")
        return key
    }()

    @inline(__always)
    static func next() -> Int32 {
        let n = Int(bitPattern: pthread_getspecific(key))
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: n + 1))
        return Int32(truncatingIfNeeded: n)
    }

    /// Ends an object's count and returns how many columns it took.
    @inline(__always)
    @discardableResult
    static func reset() -> Int {
        let n = Int(bitPattern: pthread_getspecific(key))
        if n != 0 { pthread_setspecific(key, nil) }
        return n
    }
}
