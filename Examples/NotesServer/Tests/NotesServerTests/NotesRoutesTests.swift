import AsyncHTTPClient
import Foundation
import NIOHTTP1
import NotesServerKit
import Testing

/// The REST routes over real HTTP, on each backend.
@Suite struct NotesRoutesTests {
    /// Create, read, list newest first with a limit, count, delete, and the 404s after.
    @Test(arguments: BackendKind.allCases)
    func notesRoundTrip(_ kind: BackendKind) async throws {
        try await TestServer.run(kind) { server async throws in
            let first = try await server.create("inbox", "first")
            let second = try await server.create("inbox", "second")
            let third = try await server.create("inbox", "third")
            let elsewhere = try await server.create("archive", "elsewhere")
            #expect(first.folder == "inbox" && first.title == "first" && first.body == "Body of first")
            #expect(Set([first.id, second.id, third.id, elsewhere.id]).count == 4)

            #expect(try await server.decode(NoteDTO.self, "/notes/\(second.id)") == second)

            let newestTwo = try await server.decode([NoteDTO].self, "/folders/inbox/notes?limit=2")
            #expect(newestTwo.map(\.id) == [third.id, second.id])
            let all = try await server.decode([NoteDTO].self, "/folders/inbox/notes")
            #expect(all.map(\.id) == [third.id, second.id, first.id])
            #expect(try await server.decode([NoteDTO].self, "/folders/empty/notes").isEmpty)

            #expect(try await server.decode(FolderCount.self, "/folders/inbox/count") == FolderCount(folder: "inbox", count: 3))
            #expect(try await server.decode(FolderCount.self, "/folders/archive/count").count == 1)

            #expect(try await server.status(.DELETE, "/notes/\(second.id)") == .noContent)
            #expect(try await server.status(.GET, "/notes/\(second.id)") == .notFound)
            #expect(try await server.status(.DELETE, "/notes/\(second.id)") == .notFound)
            #expect(try await server.decode(FolderCount.self, "/folders/inbox/count").count == 2)
            #expect(try await server.decode([NoteDTO].self, "/folders/inbox/notes").map(\.id) == [third.id, first.id])
        }
    }

    /// What a client gets wrong is answered with 400 or 404, not 500.
    @Test(arguments: BackendKind.allCases)
    func badRequests(_ kind: BackendKind) async throws {
        try await TestServer.run(kind) { server async throws in
            #expect(try await server.status(.GET, "/notes/not-an-id") == .notFound)
            #expect(try await server.status(.DELETE, "/notes/0123456789abcdef01234567") == .notFound)
            #expect(try await server.status(.GET, "/folders/inbox/notes?limit=0") == .badRequest)
            #expect(try await server.status(.GET, "/folders/inbox/notes?limit=1001") == .badRequest)
            #expect(try await server.status(.POST, "/notes", json: NewNote(folder: "", title: "t", body: "b")) == .badRequest)
            #expect(try await server.status(.POST, "/notes", json: ["title": "no folder"]) == .badRequest)
        }
    }

    /// Creates made at once are all stored (LMDBRealm: they share commits).
    @Test(arguments: BackendKind.allCases)
    func concurrentCreates(_ kind: BackendKind) async throws {
        try await TestServer.run(kind) { server async throws in
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<40 {
                    group.addTask { try await server.create("busy", "note \(index)").id }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count == 40)
            #expect(try await server.decode(FolderCount.self, "/folders/busy/count").count == 40)
            let listed = try await server.decode([NoteDTO].self, "/folders/busy/notes?limit=1000")
            #expect(Set(listed.map(\.id)) == ids)
            #expect(listed.map(\.created) == listed.map(\.created).sorted(by: >))
        }
    }
}
