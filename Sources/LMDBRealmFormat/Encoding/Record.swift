import CHotPaths

/// The stored form of one object: a versioned header, an offset table, the field bytes, then
/// a checksum of everything before it.
///
/// ```
/// byte 0       format version (2; 1: a record written before checksums, without its last 4 bytes)
/// byte 1       reserved (0)
/// bytes 2..<4  column count n, UInt16 little-endian
/// bytes 4..<4+4n  for each column, the end offset of its bytes within the data area,
///                 UInt32 little-endian; bit 31 set means the value is null
/// 4+4n...      the data area: the columns' bytes, back to back
/// last 4 bytes the CRC-32C of every byte before them, UInt32 little-endian
/// ```
///
/// A field is read in constant time from the offset table without decoding anything else,
/// straight from the memory map. Integers and floating-point values are little-endian. The
/// checksum is checked on every read when the configuration asks for it, and always by
/// `verify`: LMDB keeps no checksums, and a flipped bit would otherwise read as another value.
@usableFromInline
package enum Record {
    /// The version written: with a checksum.
    @inlinable package static var version: UInt8 { 2 }
    /// The version of records written before checksums, still read.
    @inlinable package static var uncheckedVersion: UInt8 { 1 }
    @inlinable package static var checksumSize: Int { 4 }
    @inlinable package static var nullBit: UInt32 { 1 << 31 }
    @inlinable package static var offsetMask: UInt32 { ~nullBit }

    @inlinable @inline(__always)
    package static func headerSize(columns: Int) -> Int { 4 + 4 * columns }

    /// Checks the header of a record read from disk before anything trusts it: format
    /// version, column count, and room for the offset table. Each field is checked when read
    /// (see ``field(_:size:column:fixedSize:)``), so reading one property of a record costs one
    /// field's check, not all of them.
    ///
    /// - Returns: `nil` if the header is sound, else what is wrong with it.
    @inlinable @inline(__always)
    package static func checkHeader(_ record: UnsafeRawBufferPointer, columns: Int) -> String? {
        guard record.count >= 4, record[0] == version || record[0] == uncheckedVersion,
            Int(UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt16.self))) == columns,
            record.count >= headerSize(columns: columns) + trailerSize(record.baseAddress!)
        else { return describeHeader(record, columns: columns) }
        return nil
    }

    @usableFromInline static func describeHeader(_ record: UnsafeRawBufferPointer, columns: Int) -> String {
        guard record.count >= 4 else { return "record of \(record.count) bytes is shorter than its header" }
        guard record[0] == version || record[0] == uncheckedVersion else { return "record format version \(record[0]) is not \(version)" }
        let n = Int(UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
        guard n == columns else { return "record has \(n) columns, the schema \(columns)" }
        return "record of \(record.count) bytes is shorter than its offset table"
    }

    /// The bytes after the data area: the checksum of a record of the current version.
    @inlinable @inline(__always)
    package static func trailerSize(_ record: UnsafeRawPointer) -> Int {
        record.load(as: UInt8.self) == version ? checksumSize : 0
    }

    /// What is wrong with the checksum of a record whose header passed
    /// ``checkHeader(_:columns:)``; `nil` if it matches (or the record has none).
    @usableFromInline @inline(__always)
    package static func checksumProblem(_ record: UnsafeRawBufferPointer) -> String? {
        guard record[0] == version else { return nil }
        let body = record.count - checksumSize
        let stored = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: body, as: UInt32.self))
        let computed = lmdbrealm_crc32c(0, record.baseAddress!, body)
        if stored == computed { return nil }
        return "its checksum is \(hex(stored)), its bytes' \(hex(computed))"
    }

    /// Whether the checksum of a record whose header passed ``checkHeader(_:columns:)``
    /// matches (or the record has none).
    @usableFromInline @inline(__always)
    package static func checksumMatches(_ record: UnsafeRawBufferPointer) -> Bool {
        guard record[0] == version else { return true }
        let body = record.count - checksumSize
        return UInt32(littleEndian: record.loadUnaligned(fromByteOffset: body, as: UInt32.self)) == lmdbrealm_crc32c(0, record.baseAddress!, body)
    }

    /// `record` with its checksum computed again over its bytes: what a writer that made the
    /// damage itself would store (tests of the checks behind the checksum use it).
    package static func resealed(_ record: [UInt8]) -> [UInt8] {
        guard record.count >= 4 + checksumSize, record[0] == version else { return record }
        var bytes = record
        let body = bytes.count - checksumSize
        let checksum = bytes.withUnsafeBytes { lmdbrealm_crc32c(0, $0.baseAddress!, body) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange(body..., with: $0) }
        return bytes
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The result of reading one field.
    @usableFromInline
    package enum Field {
        case value(UnsafeRawBufferPointer)
        case null
        /// The offset table points outside the record, or a fixed-size field has another size.
        case damaged(String)
    }

    /// The bytes of `column` in a record of `size` bytes whose header passed
    /// ``checkHeader(_:columns:)``, checked against the record's bounds and, when
    /// `fixedSize` is positive, against that size.
    @inlinable @inline(__always)
    package static func field(_ record: UnsafeRawPointer, size: Int, column: Int, fixedSize: Int32) -> Field {
        let n = Int(UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
        let raw = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 4 + 4 * column, as: UInt32.self))
        if raw & nullBit != 0 { return .null }
        let start =
            column == 0
            ? 0 : UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 4 * column, as: UInt32.self)) & offsetMask
        let end = raw & offsetMask
        let base = headerSize(columns: n)
        // Bounded by the record's end, checksum included: a damaged offset reaching into the
        // checksum reads inside the record, and the checksum tells the damage (`verify` passes
        // the data area's size instead, and finds it either way).
        guard start <= end, Int(end) <= size - base else {
            return .damaged("column \(column) spans bytes \(start)..<\(end) of a \(size - base)-byte data area")
        }
        if fixedSize > 0 && end - start != UInt32(fixedSize) {
            return .damaged("column \(column) holds \(end - start) bytes, its type \(fixedSize)")
        }
        return .value(UnsafeRawBufferPointer(start: record + base + Int(start), count: Int(end &- start)))
    }
}

/// Builds records into one reusable buffer, so encoding an object allocates nothing once the
/// buffer has grown to fit.
@usableFromInline
package final class RecordWriter {
    // Exclusivity is unchecked on this state: a writer belongs to one realm's write buffers and
    // is used by one write at a time, on its thread; the dynamic checks that callers in other
    // targets would otherwise make cost a sixth of an insert's instructions.
    @exclusivity(unchecked) @usableFromInline var buffer: UnsafeMutableRawPointer
    @exclusivity(unchecked) @usableFromInline var capacity: Int
    @exclusivity(unchecked) @usableFromInline var count = 0
    @exclusivity(unchecked) @usableFromInline var columns = 0
    @exclusivity(unchecked) @usableFromInline var column = 0
    @exclusivity(unchecked) @usableFromInline var dataStart = 0
    /// Whether the checksum follows the fields (it is added once the record is finished).
    @exclusivity(unchecked) @usableFromInline var sealed = false

    package init(capacity: Int = 4096) {
        self.capacity = capacity
        buffer = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        buffer.deallocate()
    }

    @inlinable @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(count + extra) }
    }

    @usableFromInline func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBuffer = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        newBuffer.copyMemory(from: buffer, byteCount: count)
        buffer.deallocate()
        buffer = newBuffer
        capacity = newCapacity
    }

    /// Starts a record of `columns` columns, discarding the previous one.
    package func begin(columns: Int) {
        self.columns = columns
        column = 0
        count = 0
        let header = Record.headerSize(columns: columns)
        reserve(header)
        buffer.storeBytes(of: Record.version, toByteOffset: 0, as: UInt8.self)
        buffer.storeBytes(of: 0, toByteOffset: 1, as: UInt8.self)
        buffer.storeBytes(of: UInt16(truncatingIfNeeded: columns).littleEndian, toByteOffset: 2, as: UInt16.self)
        count = header
        dataStart = header
        sealed = false
    }

    /// Appends the next column's bytes, or a null.
    @inlinable @inline(__always)
    package func append(_ field: UnsafeRawBufferPointer?) {
        require(column < columns && !sealed, "record has more fields than columns")
        var entry: UInt32
        if let field {
            let n = field.count
            reserve(n)
            if n > 0 { (buffer + count).copyMemory(from: field.baseAddress!, byteCount: n) }
            count += n
            entry = UInt32(count - dataStart)
        } else {
            entry = UInt32(count - dataStart) | Record.nullBit
        }
        buffer.storeBytes(of: entry.littleEndian, toByteOffset: 4 + 4 * column, as: UInt32.self)
        column += 1
    }

    /// The finished record, with its checksum.
    package func withRecord<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        require(column == columns, "record has \(column) of its \(columns) fields")
        if !sealed {
            reserve(Record.checksumSize)
            let checksum = lmdbrealm_crc32c(0, buffer, count)
            buffer.storeBytes(of: checksum.littleEndian, toByteOffset: count, as: UInt32.self)
            count += Record.checksumSize
            sealed = true
        }
        return try body(UnsafeRawBufferPointer(start: buffer, count: count))
    }
}
