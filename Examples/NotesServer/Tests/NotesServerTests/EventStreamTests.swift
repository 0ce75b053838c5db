import AsyncHTTPClient
import Foundation
import NIOHTTP1
import NotesServerKit
import Testing

/// `GET /folders/:folder/events` over real HTTP: what a subscriber hears, and that its stream
/// ends when it goes away and when the server shuts down.
@Suite struct EventStreamTests {
    /// A subscriber hears of a create made by another request, and its stream ends on the
    /// server when it closes the connection.
    @Test(arguments: BackendKind.allCases)
    func subscriberHearsCreatesAndLeaves(_ kind: BackendKind) async throws {
        try await TestServer.run(kind) { server async throws in
            _ = try await server.create("inbox", "before")
            let stream = server.events(of: "inbox")
            #expect(try await stream.next() == .initial(count: 1))
            #expect(await stream.inbox.status == .ok)
            #expect(await stream.inbox.contentType == "text/event-stream")
            #expect(server.metrics.eventStreams.current == 1)

            let note = try await server.create("inbox", "after")
            #expect(try await stream.next() == .change(FolderChange(insertions: 1, deletions: 0, modifications: 0, count: 2)))
            // A note of another folder is not this stream's business; the delete is.
            _ = try await server.create("archive", "elsewhere")
            #expect(try await server.status(.DELETE, "/notes/\(note.id)") == .noContent)
            #expect(try await stream.next() == .change(FolderChange(insertions: 0, deletions: 1, modifications: 0, count: 1)))

            stream.close()
            try await withTimeout(.seconds(30), waitingFor: "the server to end the stream") {
                await server.metrics.eventStreams.wait(until: 0)
            }
        }
    }

    /// Several subscribers of one folder each hear each commit.
    @Test(arguments: BackendKind.allCases)
    func everySubscriberHearsEveryCommit(_ kind: BackendKind) async throws {
        try await TestServer.run(kind) { server async throws in
            let streams = (0..<8).map { _ in server.events(of: "shared") }
            for stream in streams { #expect(try await stream.next() == .initial(count: 0)) }
            for commit in 1...3 {
                _ = try await server.create("shared", "note \(commit)")
                for stream in streams {
                    #expect(try await stream.next() == .change(FolderChange(insertions: 1, deletions: 0, modifications: 0, count: commit)))
                }
            }
            for stream in streams { stream.close() }
            try await withTimeout(.seconds(30), waitingFor: "the server to end the streams") {
                await server.metrics.eventStreams.wait(until: 0)
            }
        }
    }

    /// A graceful shutdown ends the open event streams, so it finishes while a subscriber is
    /// still connected.
    @Test(arguments: BackendKind.allCases)
    func gracefulShutdownEndsOpenStreams(_ kind: BackendKind) async throws {
        try await TestServer.run(kind) { server async throws in
            let stream = server.events(of: "inbox")
            #expect(try await stream.next() == .initial(count: 0))
            try await server.shutDown(within: .seconds(10))
            try await stream.end(within: .seconds(10))
            #expect(server.metrics.eventStreams.current == 0)
        }
    }
}
