import Foundation
import NotesServerKit
import Testing

/// The `text/event-stream` format both ways.
@Suite struct ServerSentEventParserTests {
    @Test func eventsSplitAcrossPiecesAreJoined() {
        let events: [FolderEvent] = [
            .initial(count: 3),
            .change(FolderChange(insertions: 1, deletions: 2, modifications: 3, count: 4)),
            .failure("gone"),
        ]
        let bytes = Array(events.map(\.serverSentEvent.encoded).joined().utf8)
        var parser = ServerSentEventParser()
        var parsed: [ServerSentEvent] = []
        // One byte at a time, then with a comment and CRLF line ends.
        for byte in bytes { parsed += parser.feed([byte]) }
        #expect(parsed.compactMap(FolderEvent.init) == events)
        parsed = parser.feed(Array(": keep-alive\r\nevent: initial\r\ndata: {\"count\":7}\r\n\r\n".utf8))
        #expect(parsed.compactMap(FolderEvent.init) == [.initial(count: 7)])
    }

    @Test func countsAreTheJSONAnEncoderWrites() throws {
        let change = FolderChange(insertions: 12, deletions: 0, modifications: 3_000_000, count: 987_654)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let written = FolderEvent.change(change).serverSentEvent.data
        #expect(written == String(decoding: try encoder.encode(change), as: UTF8.self))
        #expect(FolderEvent(ServerSentEvent(event: "change", data: written)) == .change(change))
        // Any spacing and order of the fields reads back; anything else is no event.
        let spaced = #"{ "modifications" : 3000000, "count":987654 ,"insertions":12,"deletions":0 }"#
        #expect(FolderEvent(ServerSentEvent(event: "change", data: spaced)) == .change(change))
        for bad in [#"{"count":1}"#, #"{"count":1,"count":2}"#, #"{"count":-1}"#, #"{"count":"1"}"#, #"{"count":1} x"#, "", "{"] {
            #expect(FolderEvent(ServerSentEvent(event: "initial", data: bad)) == (bad == #"{"count":1}"# ? .initial(count: 1) : nil))
        }
    }
}
