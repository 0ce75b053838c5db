internal import CHotPaths
import LMDBRealmFormat
import LMDBRealmStorage

/// Hands out column numbers to `@Persisted` wrappers while an object initialises.
///
/// Swift initialises a class's stored properties in declaration order before `super.init`
/// runs, so the wrappers of one object take 0, 1, 2 … and ``Object/init()`` resets the count
/// for the next object. The count is a C thread-local, so objects can be created on many
/// threads at once.
@usableFromInline
enum ColumnCounter {
    /// This thread's counter.
    @inline(__always)
    private static var counter: UnsafeMutablePointer<Int> {
        lmdbrealm_column_counter()
    }

    /// Set in the count while a managed accessor initialises: its values come from the file, so
    /// defaults that cost something to make (a generated `ObjectId`, a random `UUID`) are not
    /// made. Column numbers are the count's low bits, and ``reset()`` clears it.
    private static let accessorFlag = 1 << 62

    /// Ends an object's count.
    @inline(__always)
    static func reset() {
        counter.pointee = 0
    }

    /// Starts the count of an object about to initialise on this thread afresh: an
    /// initialiser that threw before ``Object/init()`` ran (a failed decode) leaves the count
    /// where it stopped. With `accessor`, marks the object as a managed accessor.
    @inline(__always)
    static func begin(accessor: Bool = false) {
        counter.pointee = accessor ? accessorFlag : 0
    }

    /// Whether the object initialising on this thread is a managed accessor.
    @usableFromInline
    static var isMakingAccessor: Bool { counter.pointee & accessorFlag != 0 }

    @usableFromInline
    static func next() -> Int32 {
        let p = counter
        let n = p.pointee
        p.pointee = n &+ 1
        return Int32(truncatingIfNeeded: n)
    }
}
