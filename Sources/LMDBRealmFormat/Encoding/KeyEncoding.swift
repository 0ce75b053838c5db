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
/// - uuid, objectId, data: the raw bytes;
/// - decimal: the value's order key (see `Decimal128.appendOrderKey(to:)`), equal for equal
///   values (`1.50` and `1.5`).
@usableFromInline
package enum KeyEncoding {
    @inlinable package static var nullTag: UInt8 { 0 }
    @inlinable package static var valueTag: UInt8 { 1 }

    /// Appends the key form of a record field of kind `type` to `out`.
    @usableFromInline package static func append(_ field: UnsafeRawBufferPointer?, type: PropertyType, to out: inout [UInt8]) {
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
            var bits = UInt64(littleEndian: field.loadUnaligned(as: UInt64.self))
            // A date of -0.0 equals the date of 0.0, so both have the key of 0.0: an index
            // lookup must find either. (Doubles are never keys; they keep IEEE total order.)
            if type == .date && bits == 1 << 63 { bits = 0 }
            appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63), to: &out)
        case .float:
            let bits = UInt32(littleEndian: field.loadUnaligned(as: UInt32.self))
            let v = bits & (1 << 31) != 0 ? ~bits : bits | (1 << 31)
            withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
        case .decimal:
            StoredField.decimal128(field).appendOrderKey(to: &out)
        case .bool, .string, .uuid, .objectId, .data, .mixed, .object, .linkingObjects:
            out.append(contentsOf: field)
        }
    }

    /// Lends the key form of a record field of kind `type` to `body`: an int's nine bytes
    /// from the stack (the usual primary key, looked up once per `object(ofType:forPrimaryKey:)`),
    /// any other from an array. The bytes must not be used outside `body`.
    @inlinable @inline(__always)
    package static func withKey<R>(_ field: UnsafeRawBufferPointer?, type: PropertyType, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if type == .int, let field, field.count == 8 {
            let v = UInt64(littleEndian: field.loadUnaligned(as: UInt64.self)) ^ (1 << 63)
            var key: (UInt64, UInt64) = (0, 0)
            return try withUnsafeMutableBytes(of: &key) { buffer in
                buffer.storeBytes(of: valueTag, as: UInt8.self)
                buffer.storeBytes(of: v.bigEndian, toByteOffset: 1, as: UInt64.self)
                return try body(UnsafeRawBufferPointer(rebasing: buffer[..<9]))
            }
        }
        var key: [UInt8] = []
        append(field, type: type, to: &key)
        return try key.withUnsafeBytes(body)
    }

    /// Appends the key form of a field as ``append(_:type:to:)`` does, but with no key of its
    /// kind a prefix of another: the bytes of a string or data value have each zero byte
    /// followed by 0xFF and end with two zero bytes. The order stays the values' order, and a
    /// key joined after it compares only between equal values (compound index keys).
    package static func appendPrefixFree(_ field: UnsafeRawBufferPointer?, type: PropertyType, to out: inout [UInt8]) {
        guard let field, type.fixedSize == nil else { return append(field, type: type, to: &out) }
        out.append(valueTag)
        for byte in field {
            out.append(byte)
            if byte == 0 { out.append(0xFF) }
        }
        out.append(0)
        out.append(0)
    }

    /// Appends the prefix-free form (see ``appendPrefixFree(_:type:to:)``) of a key
    /// ``append(_:type:to:)`` made, which must not have been cut.
    package static func appendPrefixFree(key: [UInt8], type: PropertyType, to out: inout [UInt8]) {
        guard type.fixedSize == nil, key.first == valueTag else { return out.append(contentsOf: key) }
        key.withUnsafeBytes { appendPrefixFree(UnsafeRawBufferPointer(rebasing: $0.dropFirst()), type: type, to: &out) }
    }

    /// The key for an auto-assigned object key (classes without a primary key).
    @inlinable @inline(__always)
    package static func appendBigEndian(_ v: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }
}

extension KeyEncoding {
    /// The record field a primary key was encoded from, written into `out`: the inverse of
    /// ``append(_:type:to:)`` for table keys, which are never cut. A key read from disk is
    /// checked first: its tag, and its length for the fixed-size kinds.
    ///
    /// - Parameter out: At least `key.count` bytes; the returned field points into it.
    package static func field(ofKey key: UnsafeRawBufferPointer, type: PropertyType, into out: UnsafeMutableRawPointer) -> Record.Field {
        guard let tag = key.first else { return .damaged("an empty key") }
        if tag == nullTag && key.count == 1 { return .null }
        guard tag == valueTag else { return .damaged("a key with tag \(tag)") }
        let body = UnsafeRawBufferPointer(start: key.baseAddress! + 1, count: key.count - 1)
        if let size = type.fixedSize, body.count != size {
            return .damaged("a key of \(body.count) bytes for a \(size)-byte \(type.rawValue)")
        }
        switch type {
        case .int:
            let v = UInt64(bigEndian: body.loadUnaligned(as: UInt64.self)) ^ (1 << 63)
            out.storeBytes(of: v.littleEndian, as: UInt64.self)
        case .double, .date:
            let e = UInt64(bigEndian: body.loadUnaligned(as: UInt64.self))
            let bits = e & (1 << 63) != 0 ? e & ~(1 << 63) : ~e
            out.storeBytes(of: bits.littleEndian, as: UInt64.self)
        case .float:
            let e = UInt32(bigEndian: body.loadUnaligned(as: UInt32.self))
            let bits = e & (1 << 31) != 0 ? e & ~(1 << 31) : ~e
            out.storeBytes(of: bits.littleEndian, as: UInt32.self)
        case .bool, .string, .uuid, .objectId, .data, .decimal, .mixed, .object, .linkingObjects:
            if let base = body.baseAddress { out.copyMemory(from: base, byteCount: body.count) }
        }
        return .value(UnsafeRawBufferPointer(start: out, count: body.count))
    }
}

/// A realm's buffer for primary keys decoded back into fields (see
/// ``KeyEncoding/field(ofKey:type:into:)``), reused from read to read: a field returned from it
/// is valid until the next decode.
@usableFromInline
package final class UnsafeKeyFieldBuffer {
    // Exclusivity is unchecked: a buffer belongs to one realm and is used on its thread.
    @exclusivity(unchecked) @usableFromInline package private(set) var base: UnsafeMutableRawPointer
    @exclusivity(unchecked) @usableFromInline var capacity: Int

    package init() {
        capacity = 512  // LMDB's default maximum key size is 511 bytes
        base = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        base.deallocate()
    }

    /// The buffer, grown to at least `count` bytes.
    @inlinable @inline(__always)
    package func reserve(_ count: Int) -> UnsafeMutableRawPointer {
        if count > capacity {
            base.deallocate()
            capacity = count
            base = .allocate(byteCount: capacity, alignment: 8)
        }
        return base
    }
}

/// The key of one object in its table, kept inline when it fits in 16 bytes (integer keys,
/// object ids, short strings) so that creating an accessor allocates nothing for it.
@usableFromInline
package struct ObjectKey: Hashable, Sendable {
    @usableFromInline var a: UInt64 = 0
    @usableFromInline var b: UInt64 = 0
    @usableFromInline var count: Int = 0
    @usableFromInline var heap: [UInt8]?

    /// The empty key, for objects not yet managed.
    @inlinable
    package init() {}

    // Equality and hashing written out (they are what the derived ones do, field by field) so
    // that they inline where sets and dictionaries of keys are used, above this target.
    @inlinable
    package static func == (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        lhs.a == rhs.a && lhs.b == rhs.b && lhs.count == rhs.count && lhs.heap == rhs.heap
    }

    @inlinable
    package func hash(into hasher: inout Hasher) {
        hasher.combine(a)
        hasher.combine(b)
        hasher.combine(count)
        hasher.combine(heap)
    }

    // Read as words and bytes, not copied through `prefix`/`dropFirst` slices (calls that cost
    // more than the copy) nor `memcpy` of a few bytes into `a`/`b` (reading them back as a word
    // stalls store forwarding): this runs once per accessor in a scan.
    @inlinable @inline(__always)
    package init(_ bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        if count <= 16 {
            guard let base = bytes.baseAddress else { return }
            a = count >= 8 ? base.loadUnaligned(as: UInt64.self) : Self.word(base, count)
            if count > 8 { b = count == 16 ? base.loadUnaligned(fromByteOffset: 8, as: UInt64.self) : Self.word(base + 8, count - 8) }
        } else {
            heap = Array(bytes)
        }
    }

    /// The word whose first `n` bytes in memory (n < 8) are those at `p`, the rest zero.
    @inlinable @inline(__always)
    static func word(_ p: UnsafeRawPointer, _ n: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<n { v |= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) << (8 * i) }
        return UInt64(littleEndian: v)
    }

    /// The value of a primary key of kind int (a 9-byte key, see ``KeyEncoding``), read from the
    /// words without going through memory; `nil` for any other key.
    @inlinable @inline(__always)
    package var intPrimaryKey: Int64? {
        guard count == 9, heap == nil else { return nil }
        let first = UInt64(littleEndian: a)  // key bytes 0 ... 7, byte 0 lowest
        guard first & 0xFF == UInt64(KeyEncoding.valueTag) else { return nil }
        let last = UInt64(littleEndian: b) & 0xFF  // key byte 8
        // Key bytes 1 ... 8, big-endian, with the sign bit flipped.
        let encoded = (first.byteSwapped << 8) | last
        return Int64(bitPattern: encoded ^ (1 << 63))
    }

    package init(_ bytes: [UInt8]) {
        self = bytes.withUnsafeBytes { ObjectKey($0) }
    }

    @inlinable @inline(__always)
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let heap { return try heap.withUnsafeBytes(body) }
        var inline = (a, b)
        return try withUnsafeBytes(of: &inline) { try body(UnsafeRawBufferPointer(start: $0.baseAddress, count: count)) }
    }
}
