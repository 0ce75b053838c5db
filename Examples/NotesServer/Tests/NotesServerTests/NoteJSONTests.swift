import Foundation
import NIOCore
@testable import NotesServerKit
import Testing

/// The notes' JSON is what Foundation's `JSONEncoder` (ISO 8601 dates, as Hummingbird's default
/// answers) gives for the same notes.
@Suite struct NoteJSONTests {
    /// The JSON of `notes` from `JSONEncoder`, read back as Foundation objects.
    static func encoderObjects(_ notes: [NoteDTO]) throws -> NSArray {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return try JSONSerialization.jsonObject(with: encoder.encode(notes)) as! NSArray
    }

    static func writtenObjects(_ notes: [NoteDTO]) throws -> NSArray {
        var buffer = ByteBuffer()
        NoteJSON.write(notes, into: &buffer)
        return try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as! NSArray
    }

    @Test func everyCharacterReadsBackAsWritten() throws {
        // Every ASCII character (the control characters, quote, backslash and slash among them),
        // then characters of two, three and four bytes in UTF-8.
        let ascii = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        let wide = ["é", "ß", "€", "中文", "\u{2028}", "\u{FEFF}", "😀", "👩‍👩‍👧", "e\u{301}"]
        let pieces = ascii + wide
        var notes: [NoteDTO] = []
        for (index, piece) in pieces.enumerated() {
            let next = pieces[(index * 7 + 3) % pieces.count]
            notes.append(NoteDTO(
                id: "id-\(index)", folder: piece, created: Date(timeIntervalSince1970: Double(index)),
                title: "a\(piece)b\(next)", body: String(repeating: piece + next, count: index % 5)))
        }
        notes.append(NoteDTO(id: "", folder: "", created: Date(timeIntervalSince1970: 0), title: pieces.joined(), body: ""))
        #expect(try Self.writtenObjects(notes) == Self.encoderObjects(notes))
        #expect(try Self.writtenObjects([]) == Self.encoderObjects([]))

        var buffer = ByteBuffer()
        NoteJSON.write(notes, into: &buffer)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try decoder.decode([NoteDTO].self, from: Data(buffer.readableBytesView)) == notes)
        // Escapes only where JSON needs them: raw UTF-8 otherwise.
        var one = ByteBuffer()
        NoteJSON.write(string: "a\"b\\c\nd\u{1}/é", into: &one)
        #expect(String(buffer: one) == #""a\"b\\c\nd\u0001/é""#)
    }

    @Test func datesAreTheEncodersInWholeSeconds() throws {
        // From 0001-01-01 to 9999-12-31 in uneven steps of about 114 days, then the years
        // 2024 to 2028 in steps of an hour and 7.3 s (every day, leap day and hour comes up),
        // with fractions, and the edges of both ends. (Before 1900 the dates are Foundation's own.)
        let first = -62_135_596_800.0, last = 253_402_300_799.0
        var times = Array(stride(from: first, through: last, by: 9_876_543.21))
        times += Array(stride(from: 1_704_067_200.0, to: 1_861_920_000, by: 3_607.3))
        times += [first, first + 0.5, last, last + 0.999, -0.5, -1, 0, 0.999, 951_782_400, 951_868_799.9, 4_107_542_400]
        let notes = times.map { NoteDTO(id: "", folder: "", created: Date(timeIntervalSince1970: $0), title: "", body: "") }
        #expect(notes.count > 70_000)
        let written = try Self.writtenObjects(notes)
        let encoded = try Self.encoderObjects(notes)
        for (index, time) in times.enumerated() {
            let mine = (written[index] as! NSDictionary)["created"] as! String
            let theirs = (encoded[index] as! NSDictionary)["created"] as! String
            #expect(mine == theirs, "\(time) s since 1970")
            if mine != theirs { break }
        }
        // After year 9999 too.
        let far = [NoteDTO(id: "", folder: "", created: Date(timeIntervalSince1970: last + 86_400), title: "", body: "")]
        #expect(try Self.writtenObjects(far) == Self.encoderObjects(far))
    }

    @Test func civilDatesAroundTheEpochAndLeapDays() {
        #expect(NoteJSON.civilDate(daysSince1970: 0) == (1970, 1, 1))
        #expect(NoteJSON.civilDate(daysSince1970: -1) == (1969, 12, 31))
        #expect(NoteJSON.civilDate(daysSince1970: 11_016) == (2000, 2, 29))
        #expect(NoteJSON.civilDate(daysSince1970: 11_017) == (2000, 3, 1))
        #expect(NoteJSON.civilDate(daysSince1970: -25_508) == (1900, 3, 1))
    }
}
