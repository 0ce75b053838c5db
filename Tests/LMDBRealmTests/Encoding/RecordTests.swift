import Foundation
import Testing

@testable import LMDBRealm

/// The record format: what `RecordWriter` writes reads back field by field through
/// `Record.field`, and a record damaged on disk is named as damaged, by its header check or by
/// the check of the one field read, never read as a wrong value.
@Suite struct RecordTests {
    /// One field as read, comparable (`Record.Field` lends its bytes and is not `Equatable`).
    enum Read: Equatable, CustomStringConvertible {
        case value([UInt8])
        case null
        case damaged(String)

        init(_ field: Record.Field) {
            switch field {
            case .value(let bytes): self = .value(Array(bytes))
            case .null: self = .null
            case .damaged(let problem): self = .damaged(problem)
            }
        }

        var problem: String? {
            if case .damaged(let problem) = self { return problem }
            return nil
        }

        var description: String {
            switch self {
            case .value(let bytes): "value \(bytes.prefix(24))\(bytes.count > 24 ? "… (\(bytes.count) bytes)" : "")"
            case .null: "null"
            case .damaged(let problem): "damaged: \(problem)"
            }
        }
    }

    /// The bytes of a record of `fields` (`nil` is a null), written with `writer`.
    static func record(_ fields: [[UInt8]?], writer: RecordWriter = RecordWriter()) -> [UInt8] {
        writer.begin(columns: fields.count)
        for field in fields {
            if let field {
                field.withUnsafeBytes { writer.append($0) }
            } else {
                writer.append(nil)
            }
        }
        return writer.withRecord { Array($0) }
    }

    /// Column `column` of `record` read as a record of `size` bytes (all of it by default).
    static func read(_ record: [UInt8], column: Int, fixedSize: Int32 = 0, size: Int? = nil) -> Read {
        record.withUnsafeBytes { raw in
            Read(Record.field(raw.baseAddress!, size: size ?? raw.count, column: column, fixedSize: fixedSize))
        }
    }

    /// What `Record.checkHeader` says of `record` for a schema of `columns` columns.
    static func checkHeader(_ record: [UInt8], columns: Int) -> String? {
        record.withUnsafeBytes { Record.checkHeader($0, columns: columns) }
    }

    /// Overwrites offset-table entry `column` of `record` with `entry`.
    static func setOffsetEntry(_ entry: UInt32, column: Int, of record: inout [UInt8]) {
        withUnsafeBytes(of: entry.littleEndian) { record.replaceSubrange((4 + 4 * column)..<(8 + 4 * column), with: $0) }
    }

    /// The little-endian bytes of `value`, as an int field is stored.
    static func int(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    /// A record with a value of every shape: fixed-size, null, empty, variable-size.
    static let sample: [[UInt8]?] = [
        int(-42),  // 0: int
        nil,  // 1: null
        [],  // 2: empty string
        Array("hello, record".utf8),  // 3: string
        Array(0..<16),  // 4: uuid
        [1],  // 5: bool
        (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) },  // 6: data, larger than the writer's first buffer
        nil,  // 7: null, last
    ]
    static let sampleFixedSizes: [Int32] = [8, 8, 0, 0, 16, 1, 0, 8]

    static func checksumProblem(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { Record.checksumProblem($0) }
    }

    // MARK: - Writing and reading

    @Test func aWrittenRecordReadsBackFieldByField() {
        // A small first buffer, so the writer grows while appending.
        let bytes = Self.record(Self.sample, writer: RecordWriter(capacity: 16))
        #expect(Self.checkHeader(bytes, columns: Self.sample.count) == nil)
        #expect(bytes[0] == Record.version)
        #expect(bytes[2] == UInt8(Self.sample.count) && bytes[3] == 0, "column count, little-endian")
        let dataSize = Self.sample.reduce(0) { $0 + ($1?.count ?? 0) }
        #expect(bytes.count == Record.headerSize(columns: Self.sample.count) + dataSize + Record.checksumSize)
        #expect(Self.checksumProblem(bytes) == nil)
        for (column, field) in Self.sample.enumerated() {
            let expected: Read = field.map { .value($0) } ?? .null
            #expect(Self.read(bytes, column: column) == expected, "column \(column), no size check")
            #expect(
                Self.read(bytes, column: column, fixedSize: Self.sampleFixedSizes[column]) == expected,
                "column \(column), checked against its type's size")
        }
    }

    @Test func nullsAndEmptyValuesAreToldApartInEveryPosition() {
        // An empty value and a null at the first column, between values, and at the end.
        let fields: [[UInt8]?] = [[], nil, [7], nil, [], [8, 9], [], nil]
        let bytes = Self.record(fields)
        #expect(bytes.count == Record.headerSize(columns: fields.count) + 3 + Record.checksumSize)
        for (column, field) in fields.enumerated() {
            #expect(Self.read(bytes, column: column) == (field.map { .value($0) } ?? .null), "column \(column)")
        }
        let nullFirst = Self.record([nil, [1, 2, 3]])
        #expect(Self.read(nullFirst, column: 0) == .null)
        #expect(Self.read(nullFirst, column: 1) == .value([1, 2, 3]))
    }

    @Test func aRecordOfNoColumnsIsItsHeaderAndChecksumAlone() {
        let bytes = Self.record([])
        #expect(bytes.prefix(4) == [Record.version, 0, 0, 0] && bytes.count == 4 + Record.checksumSize)
        #expect(Self.checkHeader(bytes, columns: 0) == nil)
        #expect(Self.checkHeader(bytes, columns: 1) != nil)
    }

    @Test func aRecordWrittenBeforeChecksumsStillReads() {
        var bytes = Self.record(Self.sample)
        bytes.removeLast(Record.checksumSize)
        bytes[0] = Record.uncheckedVersion
        #expect(Self.checkHeader(bytes, columns: Self.sample.count) == nil)
        #expect(Self.checksumProblem(bytes) == nil)
        for (column, field) in Self.sample.enumerated() {
            #expect(Self.read(bytes, column: column) == (field.map { .value($0) } ?? .null), "column \(column)")
        }
    }

    @Test func everyFlippedBitFailsTheChecksum() {
        let good = Self.record(Self.sample)
        for byte in good.indices {
            for bit in 0..<8 {
                var bytes = good
                bytes[byte] ^= 1 << bit
                // A flip in the version byte makes another format; the header check names it.
                if Self.checkHeader(bytes, columns: Self.sample.count) != nil { continue }
                #expect(Self.checksumProblem(bytes) != nil, "byte \(byte), bit \(bit)")
            }
        }
    }

    @Test func aReusedWriterStartsEachRecordAfresh() {
        let writer = RecordWriter(capacity: 8)
        _ = Self.record(Self.sample, writer: writer)
        let second = Self.record([Self.int(7), [0xAB]], writer: writer)
        #expect(second == Self.record([Self.int(7), [0xAB]]), "nothing of the first record is left")
        #expect(Self.checkHeader(second, columns: 2) == nil)
        #expect(Self.read(second, column: 0, fixedSize: 8) == .value(Self.int(7)))
        #expect(Self.read(second, column: 1, fixedSize: 1) == .value([0xAB]))
    }

    @Test func fixedSizeFieldsOfTheRightSizePassTheirCheck() {
        let fields: [[UInt8]?] = [Self.int(.min), Self.int(.max), [0], Array(repeating: 0xFF, count: 12), [1, 2, 3, 4]]
        let sizes: [Int32] = [8, 8, 1, 12, 4]
        let bytes = Self.record(fields)
        for column in fields.indices {
            #expect(Self.read(bytes, column: column, fixedSize: sizes[column]) == .value(fields[column]!), "column \(column)")
        }
    }

    // MARK: - Header damage

    @Test func checkHeaderAcceptsASoundHeader() {
        let bytes = Self.record(Self.sample)
        #expect(Self.checkHeader(bytes, columns: Self.sample.count) == nil)
        // The header check looks at the header only: a record with its data area cut off
        // (as long as its header and a checksum) passes it, and is caught field by field (see
        // `aRecordCutShortDamagesOnlyTheFieldsPastTheCut`) and by its checksum.
        let cut = Array(bytes.prefix(Record.headerSize(columns: Self.sample.count) + Record.checksumSize))
        #expect(Self.checkHeader(cut, columns: Self.sample.count) == nil)
        #expect(Self.checksumProblem(cut) != nil)
    }

    @Test func checkHeaderNamesARecordShorterThanItsHeader() {
        for count in 0..<4 {
            let problem = Self.checkHeader(Array([Record.version, 0, 1, 0].prefix(count)), columns: 1)
            #expect(problem?.contains("record of \(count) bytes is shorter than its header") == true, "\(problem ?? "nil")")
        }
    }

    @Test func checkHeaderNamesAnotherFormatVersion() {
        for version: UInt8 in [0, 3, 0xFF] {
            var bytes = Self.record([Self.int(1), [2]])
            bytes[0] = version
            let problem = Self.checkHeader(bytes, columns: 2)
            #expect(problem?.contains("format version \(version) is not 2") == true, "\(problem ?? "nil")")
        }
    }

    @Test func checkHeaderNamesAnotherColumnCount() {
        let bytes = Self.record(Self.sample)
        for columns in [0, 1, Self.sample.count - 1, Self.sample.count + 1, 300] {
            let problem = Self.checkHeader(bytes, columns: columns)
            #expect(
                problem?.contains("record has \(Self.sample.count) columns, the schema \(columns)") == true,
                "\(problem ?? "nil")")
        }
        // Both bytes of the little-endian count are read: 256 + 8 columns is not 8.
        var high = bytes
        high[3] = 1
        let problem = Self.checkHeader(high, columns: Self.sample.count)
        #expect(problem?.contains("record has \(256 + Self.sample.count) columns") == true, "\(problem ?? "nil")")
    }

    @Test func checkHeaderNamesARecordShorterThanItsOffsetTable() {
        let bytes = Self.record(Self.sample)
        let header = Record.headerSize(columns: Self.sample.count)
        for count in [4, 5, header - 4, header - 1] {
            let problem = Self.checkHeader(Array(bytes.prefix(count)), columns: Self.sample.count)
            #expect(
                problem?.contains("record of \(count) bytes is shorter than its offset table") == true,
                "\(count) bytes: \(problem ?? "nil")")
        }
    }

    // MARK: - Field damage

    @Test func anOffsetPastTheEndOfTheRecordIsDamage() {
        let fields: [[UInt8]?] = [Self.int(5), Array("abc".utf8), [1]]
        let good = Self.record(fields)
        let dataSize = good.count - Record.headerSize(columns: fields.count)
        for column in fields.indices {
            var bytes = good
            Self.setOffsetEntry(UInt32(dataSize + 1), column: column, of: &bytes)
            let problem = Self.read(bytes, column: column).problem
            #expect(problem?.contains("column \(column) spans bytes") == true, "column \(column): \(problem ?? "not damaged")")
            #expect(problem?.contains("of a \(dataSize)-byte data area") == true, "\(problem ?? "not damaged")")
        }
        // The largest offset that is not the null bit.
        var bytes = good
        Self.setOffsetEntry(Record.offsetMask, column: 1, of: &bytes)
        #expect(Self.read(bytes, column: 1).problem != nil)
        #expect(Self.read(bytes, column: 0) == .value(Self.int(5)), "the column before is untouched")
    }

    @Test func offsetsGoingBackwardsAreDamage() {
        let fields: [[UInt8]?] = [Self.int(5), Array("abcdef".utf8), Array("xyz".utf8)]
        var bytes = Self.record(fields)
        // Column 2 ends before column 1 does, so it would start after it ends.
        Self.setOffsetEntry(9, column: 2, of: &bytes)
        let problem = Self.read(bytes, column: 2).problem
        #expect(problem?.contains("column 2 spans bytes 14..<9") == true, "\(problem ?? "not damaged")")
        #expect(Self.read(bytes, column: 1) == .value(Array("abcdef".utf8)), "the column before is untouched")
        // A null's offset is where the next column starts.
        var afterNull = Self.record([Self.int(5), nil, Array("xyz".utf8)])
        Self.setOffsetEntry(12 | Record.nullBit, column: 1, of: &afterNull)
        #expect(Self.read(afterNull, column: 1) == .null)
        let problemAfterNull = Self.read(afterNull, column: 2).problem
        #expect(problemAfterNull?.contains("column 2 spans bytes 12..<11") == true, "\(problemAfterNull ?? "not damaged")")
    }

    @Test func aFixedSizeFieldOfAnotherSizeIsDamage() {
        let bytes = Self.record([[1, 2, 3, 4, 5, 6, 7], Self.int(9), [], Array(repeating: 0, count: 17)])
        #expect(Self.read(bytes, column: 0, fixedSize: 8).problem?.contains("column 0 holds 7 bytes, its type 8") == true)
        #expect(Self.read(bytes, column: 1, fixedSize: 4).problem?.contains("column 1 holds 8 bytes, its type 4") == true)
        #expect(Self.read(bytes, column: 1, fixedSize: 12).problem?.contains("column 1 holds 8 bytes, its type 12") == true)
        #expect(Self.read(bytes, column: 2, fixedSize: 1).problem?.contains("column 2 holds 0 bytes, its type 1") == true)
        #expect(Self.read(bytes, column: 3, fixedSize: 16).problem?.contains("column 3 holds 17 bytes, its type 16") == true)
        // Without a fixed size the same fields read as they are.
        #expect(Self.read(bytes, column: 0) == .value([1, 2, 3, 4, 5, 6, 7]))
        #expect(Self.read(bytes, column: 2) == .value([]))
    }

    @Test func aRecordCutShortDamagesOnlyTheFieldsPastTheCut() {
        let bytes = Self.record(Self.sample)
        // One byte of the data area cut, with the checksum after it.
        let cut = bytes.count - Record.checksumSize - 1
        for column in Self.sample.indices {
            let read = Self.read(bytes, column: column, size: cut)
            switch column {
            case 6:
                #expect(read.problem?.contains("column 6 spans bytes") == true, "\(read)")
            default:
                // Earlier columns lie before the cut; the last is a null, which has no bytes.
                #expect(read == (Self.sample[column].map { .value($0) } ?? .null), "column \(column)")
            }
        }
    }

    // MARK: - Misuse

    @Test func appendingMoreFieldsThanColumnsStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let writer = RecordWriter()
            writer.begin(columns: 1)
            writer.append(nil)
            writer.append(nil)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("record has more fields than columns"), "stderr was: \(stderr)")
    }

    @Test func takingARecordBeforeItsLastFieldStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let writer = RecordWriter()
            writer.begin(columns: 3)
            writer.append(nil)
            _ = writer.withRecord { $0.count }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("record has 1 of its 3 fields"), "stderr was: \(stderr)")
    }
}
