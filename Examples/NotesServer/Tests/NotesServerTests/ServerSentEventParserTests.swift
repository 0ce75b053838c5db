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
}
