public import Foundation

/// Byte strings compared as LMDB compares keys (`memcmp` order, a shorter string before a
/// longer one it begins), and compared for equality. Every byte comparison of the object store
/// goes through here.
@usableFromInline
package enum ByteOrder {
    /// Negative, zero or positive as `a` sorts before, with, or after `b`.
    @inlinable @inline(__always)
    package static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let n = min(a.count, b.count)
        if n > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, n)
            if c != 0 { return Int(c) }
        }
        return a.count - b.count
    }

    @inlinable @inline(__always)
    package static func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        b.withUnsafeBytes { compare(a, $0) }
    }

    @inlinable @inline(__always)
    package static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { a in b.withUnsafeBytes { compare(a, $0) } }
    }

    /// Whether two fields hold the same bytes (`nil` is a null field, equal only to another).
    @inlinable @inline(__always)
    package static func equal(_ a: UnsafeRawBufferPointer?, _ b: UnsafeRawBufferPointer?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let x?, let y?): x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
        default: false
        }
    }
}

extension Optional where Wrapped == [UInt8] {
    /// Lends the bytes, or `nil`: a field that may be null, as record writers take it.
    package func withUnsafeBytesIfPresent<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard let self else { return try body(nil) }
        return try self.withUnsafeBytes { try body($0) }
    }
}
