/// The stored form of one object: a versioned header, an offset table, then the field bytes.
///
/// ```
/// byte 0       format version (1)
/// byte 1       reserved (0)
/// bytes 2..<4  column count n, UInt16 little-endian
/// bytes 4..<4+4n  for each column, the end offset of its bytes within the data area,
///                 UInt32 little-endian; bit 31 set means the value is null
/// 4+4n...      the data area: the columns' bytes, back to back
/// ```
///
/// A field is read in constant time from the offset table without decoding anything else,
/// straight from the memory map. Integers and floating-point values are little-endian.
enum Record {
    static let version: UInt8 = 1
    static let nullBit: UInt32 = 1 << 31
    static let offsetMask: UInt32 = ~nullBit

    @inline(__always)
    static func headerSize(columns: Int) -> Int { 4 + 4 * columns }

    /// Checks the header of a record read from disk before anything trusts it: format
    /// version, column count, and room for the offset table. Each field is checked when read
    /// (see ``field(_:size:column:fixedSize:)``), so reading one property of a record costs one
    /// field's check, not all of them.
    ///
    /// - Returns: `nil` if the header is sound, else what is wrong with it.
    @inline(__always)
    static func checkHeader(_ record: UnsafeRawBufferPointer, columns: Int) -> String? {
        guard record.count >= 4, record[0] == version,
            Int(UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt16.self))) == columns,
            record.count >= headerSize(columns: columns)
        else { return describeHeader(record, columns: columns) }
        return nil
    }

    private static func describeHeader(_ record: UnsafeRawBufferPointer, columns: Int) -> String {
        guard record.count >= 4 else { return "record of \(record.count) bytes is shorter than its header" }
        guard record[0] == version else { return "record format version \(record[0]) is not \(version)" }
        let n = Int(UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
        guard n == columns else { return "record has \(n) columns, the schema \(columns)" }
        return "record of \(record.count) bytes is shorter than its offset table"
    }

    /// The result of reading one field.
    enum Field {
        case value(UnsafeRawBufferPointer)
        case null
        /// The offset table points outside the record, or a fixed-size field has another size.
        case damaged(String)
    }

    /// The bytes of `column` in a record of `size` bytes whose header passed
    /// ``checkHeader(_:columns:)``, checked against the record's bounds and, when
    /// `fixedSize` is positive, against that size.
    @inline(__always)
    static func field(_ record: UnsafeRawPointer, size: Int, column: Int, fixedSize: Int32) -> Field {
        let n = Int(UInt16(littleEndian: record.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
        let raw = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 4 + 4 * column, as: UInt32.self))
        if raw & nullBit != 0 { return .null }
        let start =
            column == 0
            ? 0 : UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 4 * column, as: UInt32.self)) & offsetMask
        let end = raw & offsetMask
        let base = headerSize(columns: n)
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
struct RecordWriter {
    private(set) var bytes: [UInt8] = []
    private var columns = 0
    private var column = 0
    private var dataEnd: UInt32 = 0

    /// Starts a record of `columns` columns, discarding the previous one.
    mutating func begin(columns: Int) {
        self.columns = columns
        column = 0
        dataEnd = 0
        bytes.removeAll(keepingCapacity: true)
        bytes.append(Record.version)
        bytes.append(0)
        bytes.append(UInt8(truncatingIfNeeded: columns))
        bytes.append(UInt8(truncatingIfNeeded: columns >> 8))
        bytes.append(contentsOf: repeatElement(0, count: 4 * columns))
    }

    /// Appends the next column's bytes, or a null.
    mutating func append(_ field: UnsafeRawBufferPointer?) {
        precondition(column < columns, "record has more fields than columns")
        var entry: UInt32
        if let field {
            bytes.append(contentsOf: field)
            dataEnd += UInt32(field.count)
            entry = dataEnd
        } else {
            entry = dataEnd | Record.nullBit
        }
        entry = entry.littleEndian
        let at = 4 + 4 * column
        withUnsafeBytes(of: entry) { e in
            bytes.withUnsafeMutableBytes { b in
                b.baseAddress!.advanced(by: at).copyMemory(from: e.baseAddress!, byteCount: 4)
            }
        }
        column += 1
    }

    /// The finished record.
    func withRecord<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        precondition(column == columns, "record has \(column) of its \(columns) fields")
        return try bytes.withUnsafeBytes(body)
    }
}
