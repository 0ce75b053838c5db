import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
@testable import NotesServerKit
import ServiceLifecycle
import Testing

/// A running service on a free loopback port, over a store in a directory of its own, with an
/// HTTP client to call it.
struct TestServer {
    let port: Int
    let backend: any NotesBackend
    let metrics: NotesMetrics
    let client: HTTPClient
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    var base: String { "http://127.0.0.1:\(port)" }

    /// Starts a server on `kind`, runs `body` with it, then shuts it down gracefully (within
    /// 30 seconds) and removes its directory.
    static func run(_ kind: BackendKind, _ body: (TestServer) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("NotesServerTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var logger = Logger(label: "NotesServerTests")
        logger.logLevel = .warning
        let backend = try await kind.open(at: directory.appendingPathComponent(kind.defaultFileName))
        let metrics = NotesMetrics()
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = NotesApplication.notes(backend: backend, metrics: metrics, port: 0, logger: logger) { channel in
            listening.yield(channel.localAddress?.port ?? 0)
            listening.finish()
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
        let running = Task { try await group.run() }
        let port = try await withTimeout(.seconds(30), waitingFor: "the server to listen") {
            await ports.first { _ in true }
        }
        // Event streams hold their connections: room for a few next to the requests.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let server = TestServer(
            port: try #require(port), backend: backend, metrics: metrics, client: client, group: group, running: running)
        do {
            try await body(server)
        } catch {
            try? await server.shutDown()
            try? await client.shutdown()
            throw error
        }
        try await server.shutDown()
        try await client.shutdown()
    }

    /// Triggers a graceful shutdown and waits, at most `timeout`, for the server to stop.
    func shutDown(within timeout: Duration = .seconds(30)) async throws {
        await group.triggerGracefulShutdown()
        let running = running
        try await withTimeout(timeout, waitingFor: "the server to shut down") { try await running.value }
    }

    // MARK: - Requests

    /// Sends a request and returns the status and the whole body.
    func send(_ method: HTTPMethod, _ path: String, json body: (some Encodable)? = String?.none) async throws
        -> (status: HTTPResponseStatus, body: ByteBuffer)
    {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        return (response.status, try await response.body.collect(upTo: 16 << 20))
    }

    /// Sends a request and returns the status of the answer.
    func status(_ method: HTTPMethod, _ path: String, json body: (some Encodable)? = String?.none) async throws
        -> HTTPResponseStatus
    {
        try await send(method, path, json: body).status
    }

    /// Sends a request and decodes its JSON answer, expecting `status`.
    func decode<T: Decodable>(
        _ type: T.Type, _ path: String, method: HTTPMethod = .GET, json body: (some Encodable)? = String?.none,
        expecting status: HTTPResponseStatus = .ok, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> T {
        let response = try await send(method, path, json: body)
        #expect(response.status == status, "\(method) \(path): \(String(buffer: response.body))", sourceLocation: sourceLocation)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: Data(response.body.readableBytesView))
    }

    func create(_ folder: String, _ title: String) async throws -> NoteDTO {
        try await decode(NoteDTO.self, "/notes", method: .POST, json: NewNote(folder: folder, title: title, body: "Body of \(title)"), expecting: .created)
    }

    /// Opens the event stream of `folder`: its events arrive in the returned stream's inbox
    /// until the stream ends or is closed.
    func events(of folder: String) -> EventStreamClient {
        let inbox = EventInbox()
        let (client, url) = (client, base + "/folders/\(folder)/events")
        let reader = Task {
            do {
                let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(120))
                await inbox.received(status: response.status, contentType: response.headers["content-type"].first)
                var parser = ServerSentEventParser()
                for try await buffer in response.body {
                    for event in parser.feed(buffer.readableBytesView) {
                        if let event = FolderEvent(event) { await inbox.received(event) }
                    }
                }
            } catch {
                // Closed by the test, or by the server: either way the stream has ended.
            }
            await inbox.finish()
        }
        return EventStreamClient(inbox: inbox, reader: reader)
    }
}

/// An event stream a test reads.
struct EventStreamClient {
    let inbox: EventInbox
    /// The task reading the stream; cancelling it closes the connection.
    let reader: Task<Void, Never>

    /// The next event, waiting at most `timeout`; `nil` once the stream has ended.
    func next(within timeout: Duration = .seconds(30)) async throws -> FolderEvent? {
        let inbox = inbox
        return try await withTimeout(timeout, waitingFor: "an event") { await inbox.next() }
    }

    /// Waits, at most `timeout`, for the stream to end, skipping events.
    func end(within timeout: Duration = .seconds(30)) async throws {
        let inbox = inbox
        try await withTimeout(timeout, waitingFor: "the event stream to end") {
            while await inbox.next() != nil {}
        }
    }

    /// Goes away: closes the connection.
    func close() {
        reader.cancel()
    }
}

/// The events of one stream, in order, for a test to wait on.
actor EventInbox {
    private(set) var status: HTTPResponseStatus?
    private(set) var contentType: String?
    private var events: [FolderEvent] = []
    private var finished = false
    private var waiter: CheckedContinuation<FolderEvent?, Never>?

    func received(status: HTTPResponseStatus, contentType: String?) {
        self.status = status
        self.contentType = contentType
    }

    func received(_ event: FolderEvent) {
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: event)
        } else {
            events.append(event)
        }
    }

    func finish() {
        finished = true
        waiter?.resume(returning: nil)
        waiter = nil
    }

    /// The next event, or `nil` once the stream has ended.
    func next() async -> FolderEvent? {
        if !events.isEmpty { return events.removeFirst() }
        if finished { return nil }
        return await withCheckedContinuation { waiter = $0 }
    }
}
