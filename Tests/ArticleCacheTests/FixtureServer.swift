import FlyingFox
import FlyingSocks
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP server on 127.0.0.1, on a free port, that answers the Article Search path with
/// whatever ``reply`` says and records every request it receives.
final class FixtureServer: Sendable {
    enum Reply: Sendable {
        /// 200 with this body.
        case body(Data)
        /// This status and a short body.
        case status(Int)
    }

    struct Received: Sendable {
        var path: String
        var query: [String: String]
    }

    private let server: HTTPServer
    private let task: Task<Void, any Error>
    private let box: StateBox
    let baseURL: URL

    private init(server: HTTPServer, task: Task<Void, any Error>, box: StateBox, port: UInt16) {
        self.server = server
        self.task = task
        self.box = box
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    static func start(replying reply: Reply) async throws -> FixtureServer {
        // Generous timeouts: the server's tasks share the concurrency pool with every other
        // test, and a busy pool delays them without anything being wrong (under
        // AddressSanitizer, on two cores, a minute was once not enough to start listening).
        let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: 0), timeout: 300, logger: .disabled)
        let box = StateBox(reply)
        await server.appendRoute("GET /svc/search/v2/articlesearch.json") { request in
            box.reply(to: request)
        }
        let task = Task { try await server.run() }
        try await server.waitUntilListening(timeout: 300)
        let address = await server.listeningAddress
        guard case .ip4(_, let port)? = address else {
            throw FixtureError("the server has no IPv4 address")
        }
        return FixtureServer(server: server, task: task, box: box, port: port)
    }

    /// What the server answers from now on.
    func setReply(_ reply: Reply) { box.state.withLock { $0.reply = reply } }

    /// The requests received so far.
    var received: [Received] { box.state.withLock { $0.received } }

    func stop() async {
        await server.stop()
        task.cancel()
        _ = await task.result
    }
}

/// The server's reply and log, shared with its request handler.
private final class StateBox: Sendable {
    let state: Mutex<(reply: FixtureServer.Reply, received: [FixtureServer.Received])>

    init(_ reply: FixtureServer.Reply) { state = Mutex((reply: reply, received: [])) }

    func reply(to request: HTTPRequest) -> HTTPResponse {
        let query = Dictionary(request.query.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
        let reply = state.withLock { state in
            state.received.append(FixtureServer.Received(path: request.path, query: query))
            return state.reply
        }
        switch reply {
        case .body(let data):
            return HTTPResponse(statusCode: .ok, headers: [.contentType: "application/json"], body: data)
        case .status(let code):
            return HTTPResponse(statusCode: HTTPStatusCode(code, phrase: "Fixture"), body: Data("{\"fault\":\"fixture\"}".utf8))
        }
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A port on 127.0.0.1 that nothing listens on: bound by the kernel's choice, then closed.
func unusedPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw FixtureError("socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { throw FixtureError("bind() failed") }
    var actual = sockaddr_in()
    var actualLength = length
    let named = withUnsafeMutablePointer(to: &actual) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
    }
    guard named == 0 else { throw FixtureError("getsockname() failed") }
    return UInt16(bigEndian: actual.sin_port)
}
