/// Order-preserving key encoding: for two values of one kind, comparing their encoded bytes
/// with `memcmp` (LMDB's default key order) gives the same answer as comparing the values.
///
/// Every key starts with a tag byte, 0 for null and 1 for a value, so nulls sort first (as
/// Realm sorts them) and no key is ever empty (LMDB rejects empty keys). After the tag:
/// - int: 8 bytes big-endian with the sign bit flipped;
/// - double, date: the IEEE bits big-endian, negatives inverted, positives with the sign bit set;
/// - float: likewise in 4 bytes;
/// - bool: one byte 0 or 1;
/// - string: the UTF-8 bytes (code-point order);
/// - uuid, objectId, data: the raw bytes.
enum KeyEncoding {
    static let nullTag: UInt8 = 0
    static let valueTag: UInt8 = 1

    /// Appends the key form of a record field of kind `type` to `out`.
    static func append(_ field: UnsafeRawBufferPointer?, type: PropertyType, to out: inout [UInt8]) {
        guard let field else {
            out.append(nullTag)
            return
        }
        out.append(valueTag)
        switch type {
        case .int:
            let v = UInt64(littleEndian: field.loadUnaligned(as: UInt64.self)) ^ (1 << 63)
            appendBigEndian(v, to: &out)
        case .double, .date:
            let bits = UInt64(littleEndian: field.loadUnaligned(as: UInt64.self))
            appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63), to: &out)
        case .float:
            let bits = UInt32(littleEndian: field.loadUnaligned(as: UInt32.self))
            let v = bits & (1 << 31) != 0 ? ~bits : bits | (1 << 31)
            withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
        case .bool, .string, .uuid, .objectId, .data, .decimal:
            out.append(contentsOf: field)
        }
    }

    /// The key for an auto-assigned object key (classes without a primary key).
    @inline(__always)
    static func appendBigEndian(_ v: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }
}

/// The key of one object in its table, kept inline when it fits in 16 bytes (integer keys,
/// object ids, short strings) so that creating an accessor allocates nothing for it.
struct ObjectKey: Hashable {
    private var a: UInt64 = 0
    private var b: UInt64 = 0
    private var count: Int = 0
    private var heap: [UInt8]?

    /// The empty key, for objects not yet managed.
    init() {}

    init(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count <= 16 {
            count = bytes.count
            withUnsafeMutableBytes(of: &a) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(8))) }
            if bytes.count > 8 {
                withUnsafeMutableBytes(of: &b) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.dropFirst(8)))
                }
            }
        } else {
            count = bytes.count
            heap = Array(bytes)
        }
    }

    init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { ObjectKey($0) }
    }

    /// The key of an auto-assigned object key `n`.
    init(autoKey n: UInt64) {
        a = n.bigEndian
        count = 8
    }

    /// The auto-assigned number, for classes without a primary key.
    var autoKey: UInt64 { UInt64(bigEndian: a) }

    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let heap { return try heap.withUnsafeBytes(body) }
        var inline = (a, b)
        return try withUnsafeBytes(of: &inline) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    var bytes: [UInt8] { withBytes { Array($0) } }
}
