public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay on a port of 127.0.0.1 of its own that passes every connection on to `upstream`
/// and keeps a copy of every byte it passes, both ways: what someone on the network between a
/// client and its server would see.
///
/// ```swift
/// let relay = try TCPRelay(to: server.port)
/// defer { relay.stop() }
/// // connect to relay.port …
/// #expect(!relay.captured.contains(Data("secret".utf8)))
/// ```
public final class TCPRelay: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var captured = Data()
        var sockets: Set<Int32> = []
        var stopped = false
        var connections = 0
    }

    /// Starts relaying connections to 127.0.0.1:`upstreamPort`.
    public init(to upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw PostgresServerError("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            close(listener)
            throw PostgresServerError("could not listen on 127.0.0.1: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in accepting() }
    }

    /// Everything passed so far, both ways, in the order it arrived.
    public var captured: Data { state.withLock { $0.captured } }

    /// How many connections were relayed.
    public var connections: Int { state.withLock { $0.connections } }

    /// Closes the listener and every relayed connection.
    public func stop() {
        let sockets = state.withLock { state in
            state.stopped = true
            defer { state.sockets = [] }
            return state.sockets
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for socket in sockets {
            shutdown(socket, Int32(SHUT_RDWR))
        }
    }

    deinit {
        stop()
    }

    private func accepting() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            guard let server = connectUpstream() else {
                close(client)
                continue
            }
            let open = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.sockets.formUnion([client, server])
                state.connections += 1
                return true
            }
            guard open else {
                close(client)
                close(server)
                return
            }
            let ends = Atomic<Int>(0)
            for (from, to) in [(client, server), (server, client)] {
                Thread.detachNewThread { [self] in
                    pass(from: from, to: to)
                    // Both directions done: the sockets can be closed.
                    if ends.add(1, ordering: .relaxed).newValue == 2 {
                        state.withLock { $0.sockets.subtract([client, server]) }
                        close(client)
                        close(server)
                    }
                }
            }
        }
    }

    private func connectUpstream() -> Int32? {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard server >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(upstreamPort).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(server)
            return nil
        }
        return server
    }

    /// Copies bytes from `from` to `to` (keeping a copy) until either end closes.
    private func pass(from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            state.withLock { $0.captured.append(contentsOf: buffer[0..<count]) }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    shutdown(from, Int32(SHUT_RDWR))
                    return
                }
                sent += written
            }
        }
        shutdown(to, Int32(SHUT_WR))
    }
}
