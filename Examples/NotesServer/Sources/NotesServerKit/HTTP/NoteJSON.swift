import Foundation
public import Hummingbird
import NIOCore

/// The JSON of notes, written straight into the response's buffer.
///
/// The answers carry the same JSON as Hummingbird's default encoder (Foundation's
/// `JSONEncoder` with ISO 8601 dates): an object per note with `id`, `folder`, `created`
/// (`2026-11-29T01:48:19Z`, whole seconds, UTC), `title` and `body`; a list is an array of them.
/// A list of fifty notes spent about half the server's CPU time in `JSONEncoder` (its
/// intermediate values, keyed containers and a date formatter per note), on either backend;
/// written here it is a copy of each string with its escapes.
enum NoteJSON {
    /// The notes as a JSON array.
    static func write(_ notes: some Collection<NoteDTO>, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "["))
        var first = true
        for note in notes {
            if !first { buffer.writeInteger(UInt8(ascii: ",")) }
            first = false
            write(note, into: &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// The note as a JSON object.
    static func write(_ note: NoteDTO, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{\"id\":")
        write(string: note.id, into: &buffer)
        buffer.writeStaticString(",\"folder\":")
        write(string: note.folder, into: &buffer)
        buffer.writeStaticString(",\"created\":\"")
        write(date: note.created, into: &buffer)
        buffer.writeStaticString("\",\"title\":")
        write(string: note.title, into: &buffer)
        buffer.writeStaticString(",\"body\":")
        write(string: note.body, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "}"))
    }

    /// A JSON string: `"`, `\` and the control characters escaped, everything else as its UTF-8.
    static func write(string: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<index])))
                switch byte {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                default:
                    buffer.writeStaticString("\\u00")
                    buffer.writeInteger(hexDigit(byte >> 4))
                    buffer.writeInteger(hexDigit(byte & 0xF))
                }
                start = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start...])))
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    /// `date` in ISO 8601, UTC, whole seconds (the fraction dropped), as `JSONEncoder`'s
    /// `.iso8601` strategy writes it. Years outside 1900…9999 go through Foundation's formatter
    /// (which, before October 1582, counts in the Julian calendar).
    static func write(date: Date, into buffer: inout ByteBuffer) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // 1900-01-01 and 10000-01-01 in seconds since 1970.
        guard seconds >= -2_208_988_800, seconds < 253_402_300_800 else {
            buffer.writeString(date.formatted(.iso8601))
            return
        }
        let total = Int64(seconds)
        let (days, secondOfDay) = total.quotientAndRemainder(dividingBy: 86_400)
        let (day, second) = secondOfDay < 0 ? (days - 1, secondOfDay + 86_400) : (days, secondOfDay)
        let (year, month, dayOfMonth) = civilDate(daysSince1970: day)
        writeDigits(year, count: 4, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "-"))
        writeDigits(month, count: 2, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "-"))
        writeDigits(dayOfMonth, count: 2, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "T"))
        writeDigits(second / 3_600, count: 2, into: &buffer)
        buffer.writeInteger(UInt8(ascii: ":"))
        writeDigits(second / 60 % 60, count: 2, into: &buffer)
        buffer.writeInteger(UInt8(ascii: ":"))
        writeDigits(second % 60, count: 2, into: &buffer)
        buffer.writeInteger(UInt8(ascii: "Z"))
    }

    /// The proleptic Gregorian date `days` days after 1970-01-01: eras of 400 years (146,097
    /// days) counted from 0000-03-01, so that the leap day ends each year of the count.
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func writeDigits(_ value: Int64, count: Int, into buffer: inout ByteBuffer) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        var value = value
        while divisor > 0 {
            buffer.writeInteger(UInt8(ascii: "0") + UInt8(value / divisor))
            value %= divisor
            divisor /= 10
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// A `200 OK` answer with `body` as its JSON (`EditedResponse` changes the status).
    static func response(_ body: ByteBuffer) -> Response {
        let headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes)]
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
    }
}

/// A list of notes as a route's answer: a JSON array, written by ``NoteJSON``.
struct NoteList: ResponseGenerator {
    var notes: [NoteDTO]

    func response(from request: Request, context: some RequestContext) throws -> Response {
        // A note's fixed part (keys, date, punctuation) is about 90 bytes.
        var buffer = ByteBuffer()
        buffer.reserveCapacity(notes.reduce(2) { $0 + 96 + $1.id.utf8.count + $1.folder.utf8.count + $1.title.utf8.count + $1.body.utf8.count })
        NoteJSON.write(notes, into: &buffer)
        return NoteJSON.response(buffer)
    }
}

extension NoteDTO: ResponseGenerator {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(96 + id.utf8.count + folder.utf8.count + title.utf8.count + body.utf8.count)
        NoteJSON.write(self, into: &buffer)
        return NoteJSON.response(buffer)
    }
}
