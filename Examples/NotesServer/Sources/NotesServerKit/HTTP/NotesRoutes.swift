import Foundation
public import Hummingbird
import NIOCore
import ServiceLifecycle

/// The answer of `GET /folders/:folder/count`.
public struct FolderCount: ResponseCodable, Hashable {
    public var folder: String
    public var count: Int

    public init(folder: String, count: Int) {
        self.folder = folder
        self.count = count
    }
}

/// The service's routes, over any ``NotesBackend``.
///
/// | Route | Answer |
/// | --- | --- |
/// | `POST /notes` `{folder, title, body}` | 201 and the note |
/// | `GET /notes/:id` | the note, or 404 |
/// | `DELETE /notes/:id` | 204, or 404 |
/// | `GET /folders/:folder/notes?limit=50` | the newest `limit` notes (1…1000), newest first |
/// | `GET /folders/:folder/count` | `{folder, count}` |
/// | `GET /folders/:folder/events` | server-sent events: `initial`, then a `change` per commit |
/// | `GET /metrics` | Prometheus text |
struct NotesRoutes: Sendable {
    let backend: any NotesBackend
    let metrics: NotesMetrics

    /// The most notes one list returns.
    static let maximumLimit = 1_000

    func register(on router: Router<BasicRequestContext>) {
        router.post("/notes", use: create)
        router.get("/notes/:id", use: note)
        router.delete("/notes/:id", use: delete)
        router.get("/folders/:folder/notes", use: newest)
        router.get("/folders/:folder/count", use: count)
        router.get("/folders/:folder/events", use: events)
        router.get("/metrics", use: exposition)
    }

    // MARK: - Notes

    @Sendable func create(_ request: Request, context: BasicRequestContext) async throws -> EditedResponse<NoteDTO> {
        let new = try await request.decode(as: NewNote.self, context: context)
        guard !new.folder.isEmpty else { throw HTTPError(.badRequest, message: "A note needs a folder") }
        let start = ContinuousClock.now
        let note = try await backend.create(new)
        metrics.recordCommit(.now - start)
        return EditedResponse(status: .created, headers: [.location: "/notes/\(note.id)"], response: note)
    }

    @Sendable func note(_ request: Request, context: BasicRequestContext) async throws -> NoteDTO {
        let id = try context.parameters.require("id")
        guard let note = try await backend.note(id: id) else { throw HTTPError(.notFound) }
        return note
    }

    @Sendable func delete(_ request: Request, context: BasicRequestContext) async throws -> HTTPResponse.Status {
        let id = try context.parameters.require("id")
        let start = ContinuousClock.now
        guard try await backend.delete(id: id) else { throw HTTPError(.notFound) }
        metrics.recordCommit(.now - start)
        return .noContent
    }

    @Sendable func newest(_ request: Request, context: BasicRequestContext) async throws -> NoteList {
        let folder = try context.parameters.require("folder")
        let limit = request.uri.queryParameters.get("limit", as: Int.self) ?? 50
        guard (1...Self.maximumLimit).contains(limit) else {
            throw HTTPError(.badRequest, message: "limit must be between 1 and \(Self.maximumLimit)")
        }
        return NoteList(notes: try await backend.newest(in: folder, limit: limit))
    }

    @Sendable func count(_ request: Request, context: BasicRequestContext) async throws -> FolderCount {
        let folder = try context.parameters.require("folder")
        return FolderCount(folder: folder, count: try await backend.count(in: folder))
    }

    // MARK: - Events

    /// A `text/event-stream` of the folder's events. It ends when the client goes away (the
    /// connection's input closes, which cancels the writing), and on graceful shutdown (which
    /// ends the subscription, so the response finishes and the server can close).
    @Sendable func events(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let folder = try context.parameters.require("folder")
        let subscription = try await backend.subscribe(to: folder)
        let streams = metrics.eventStreams
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            streams.open()
            defer { streams.close() }
            try await request.body.consumeWithCancellationOnInboundClose { _ in
                try await withGracefulShutdownHandler {
                    for await event in subscription.events {
                        try await writer.write(ByteBuffer(string: event.serverSentEvent.encoded))
                    }
                } onGracefulShutdown: {
                    subscription.end()
                }
            }
            try await writer.finish(nil)
        })
    }

    // MARK: - Metrics

    @Sendable func exposition(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let text = metrics.exposition(try await backend.statistics())
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
    }
}
