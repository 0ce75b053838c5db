import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NotesServerKit
import Synchronization

/// Opens many event streams on one folder of a running server, then creates notes one at a
/// time (until `--commits` are made or `--budget` seconds have passed) and measures, for each,
/// the time from sending the create to the moment the last subscriber has its `change` event.
struct SubscribeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe-bench",
        abstract: "Measure commit-to-last-subscriber latency with many SSE subscribers.")

    @Option(help: "The server's address.")
    var host = "127.0.0.1"

    @Option(help: "The server's port.")
    var port: Int

    @Option(help: "The folder to subscribe to and create notes in.")
    var folder = "folder-7"

    @Option(help: "How many event streams to open.")
    var subscribers = 1_000

    @Option(help: "How many notes to create, one after the other.")
    var commits = 50

    @Option(help: "Seconds after which no further note is created (at least three are).")
    var budget = 30

    @Option(help: "Seconds to wait for any one step (all streams open, one commit heard by all).")
    var timeout = 60

    func validate() throws {
        guard subscribers > 0, commits > 0, timeout > 0, budget > 0 else {
            throw ValidationError("--subscribers, --commits, --budget and --timeout must be at least 1")
        }
    }

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(Int64(timeout)))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await measure(client)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private func measure(_ client: HTTPClient) async throws {
        let base = "http://\(host):\(port)"
        let arrivals = Arrivals(subscribers: subscribers)
        let limit = Duration.seconds(timeout)
        let (folder, subscribers, commits, budget) = (folder, subscribers, commits, Duration.seconds(budget))
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Streams open in waves, so the server's accept backlog never overflows.
            let opening = ContinuousClock.now
            for wave in stride(from: 0, to: subscribers, by: 100) {
                let end = min(wave + 100, subscribers)
                for subscriber in wave..<end {
                    group.addTask {
                        try await Self.subscribe(subscriber, host: host, port: port, path: "/folders/\(folder)/events", arrivals)
                    }
                }
                try await withTimeout(limit, waitingFor: "\(end) streams to open") {
                    await arrivals.waitForInitial(end)
                }
            }
            let opened = ContinuousClock.now - opening
            var latencies: [Duration] = []
            var created: [Duration] = []
            var firsts: [Duration] = []
            var afterCommit: [Duration] = []
            var count = arrivals.initialCount
            let measuring = ContinuousClock.now
            for commit in 1...commits {
                if commit > 3, ContinuousClock.now - measuring > budget { break }
                count += 1
                arrivals.expect(count)
                let start = ContinuousClock.now
                var request = HTTPClientRequest(url: "\(base)/notes")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: #"{"folder":"\#(folder)","title":"bench \#(commit)","body":"…"}"#))
                let response = try await client.execute(request, timeout: .seconds(Int64(timeout)))
                guard response.status == .created else { throw ValidationError("POST /notes answered \(response.status)") }
                _ = try await response.body.collect(upTo: 1 << 20)
                let answered = ContinuousClock.now
                created.append(answered - start)
                let (first, last) = try await withTimeout(limit, waitingFor: "every subscriber to hear of commit \(commit)") {
                    await arrivals.waitForAll()
                }
                latencies.append(last - start)
                firsts.append(first - start)
                afterCommit.append(max(.zero, last - answered))
            }
            group.cancelAll()
            let sorted = latencies.sorted()
            func percentile(_ p: Double, of values: [Duration]? = nil) -> Double {
                let sorted = values?.sorted() ?? sorted
                return milliseconds(sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)])
            }
            // From sending each create: p50_ms/p99_ms/max_ms to the last subscriber's event,
            // created_p50_ms to the POST's answer (a durable commit), first_p50_ms to the first
            // subscriber's event. commit_p50_ms/commit_p99_ms: from the POST's answer to the last
            // subscriber's event, which leaves out the commit's own time (its fsync).
            print(String(
                format: "subscribers=%d commits=%d open_s=%.2f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f created_p50_ms=%.2f first_p50_ms=%.2f commit_p50_ms=%.2f commit_p99_ms=%.2f",
                subscribers, latencies.count, milliseconds(opened) / 1000, percentile(0.5), percentile(0.99),
                milliseconds(sorted.last ?? .zero), percentile(0.5, of: created), percentile(0.5, of: firsts),
                percentile(0.5, of: afterCommit), percentile(0.99, of: afterCommit)))
            if let slowest = latencies.indices.max(by: { latencies[$0] < latencies[$1] }) {
                print(String(
                    format: "slowest: commit %d, answer %.2f ms, first %.2f ms, last %.2f ms", slowest + 1,
                    milliseconds(created[slowest]), milliseconds(firsts[slowest]), milliseconds(latencies[slowest])))
            }
        }
    }

    /// Reads one event stream until its task is cancelled, reporting each event's arrival.
    ///
    /// A plain NIO channel with an HTTP/1.1 decoder rather than an HTTP client's streaming body:
    /// events are parsed where the bytes arrive, on the event loop, with no task to wake per
    /// event, so that the measuring side adds as little as it can to the latency it measures
    /// while it shares the machine's cores with the server.
    private static func subscribe(_ subscriber: Int, host: String, port: Int, path: String, _ arrivals: Arrivals) async throws {
        let failure = Failure()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        EventStreamHandler(subscriber: subscriber, arrivals: arrivals, failure: failure))
                }
            }
            .connect(host: host, port: port).get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
        head.headers.add(name: "Host", value: "\(host):\(port)")
        head.headers.add(name: "Accept", value: "text/event-stream")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
        try await withTaskCancellationHandler {
            try await channel.closeFuture.get()
        } onCancel: {
            channel.close(promise: nil)
        }
        if !Task.isCancelled, let message = failure.message.withLock({ $0 }) {
            throw ValidationError("Subscriber \(subscriber): \(message)")
        }
    }
}

/// What ended a subscriber's stream, if it failed.
private final class Failure: Sendable {
    let message = Mutex<String?>(nil)
}

/// Parses one subscriber's event stream on its event loop and reports each event's arrival; a
/// failure closes the channel, with what went wrong in `failure`.
private final class EventStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let subscriber: Int
    private let arrivals: Arrivals
    private let failure: Failure
    private var parser = ServerSentEventParser()

    init(subscriber: Int, arrivals: Arrivals, failure: Failure) {
        self.subscriber = subscriber
        self.arrivals = arrivals
        self.failure = failure
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if head.status != .ok { fail("the stream answered \(head.status)", context) }
        case .body(let buffer):
            let now = ContinuousClock.now
            for event in parser.feed(buffer.readableBytesView) {
                switch FolderEvent(event) {
                case .initial(let count): arrivals.opened(subscriber, count: count)
                case .change(let change): arrivals.heard(subscriber, count: change.count, at: now)
                case .failure(let message): fail(message, context)
                case nil: break
                }
            }
        case .end:
            fail("the stream ended", context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(String(describing: error), context)
    }

    private func fail(_ message: String, _ context: ChannelHandlerContext) {
        failure.message.withLock { $0 = $0 ?? message }
        context.close(promise: nil)
    }
}

private func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
}

/// What the subscribers have heard: how many streams are open, and when the last of them heard
/// of the count expected now. A lock rather than an actor: a thousand subscribers report each
/// commit at once, and a hop to an actor each would add its queueing to the latency measured.
private final class Arrivals: Sendable {
    private struct State {
        var latest: [Int]
        var open = 0
        var initialCount = 0
        var openWaiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?
        var target = Int.max
        var reached = 0
        var firstArrival = ContinuousClock.now
        var lastArrival = ContinuousClock.now
        var allWaiter: CheckedContinuation<(first: ContinuousClock.Instant, last: ContinuousClock.Instant), Never>?
    }

    private let subscribers: Int
    private let state: Mutex<State>

    init(subscribers: Int) {
        self.subscribers = subscribers
        state = Mutex(State(latest: Array(repeating: -1, count: subscribers)))
    }

    var initialCount: Int { state.withLock { $0.initialCount } }

    func opened(_ subscriber: Int, count: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.latest[subscriber] = count
            state.initialCount = count
            state.open += 1
            guard let waiter = state.openWaiter, state.open >= waiter.count else { return nil }
            state.openWaiter = nil
            return waiter.continuation
        }
        waiter?.resume()
    }

    func waitForInitial(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.open >= count { return true }
                state.openWaiter = (count, continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Counts from now the subscribers that hear a count of at least `count`.
    func expect(_ count: Int) {
        state.withLock { state in
            state.target = count
            state.reached = state.latest.filter { $0 >= count }.count
        }
    }

    func heard(_ subscriber: Int, count: Int, at instant: ContinuousClock.Instant) {
        let subscribers = subscribers
        typealias Waiter = CheckedContinuation<(first: ContinuousClock.Instant, last: ContinuousClock.Instant), Never>
        let resumed = state.withLock { state -> (Waiter, ContinuousClock.Instant, ContinuousClock.Instant)? in
            if state.latest[subscriber] < state.target, count >= state.target {
                state.reached += 1
                state.firstArrival = state.reached == 1 ? instant : min(state.firstArrival, instant)
                state.lastArrival = state.reached == 1 ? instant : max(state.lastArrival, instant)
            }
            state.latest[subscriber] = count
            guard state.reached == subscribers, let waiter = state.allWaiter else { return nil }
            state.allWaiter = nil
            return (waiter, state.firstArrival, state.lastArrival)
        }
        if let (waiter, first, last) = resumed { waiter.resume(returning: (first, last)) }
    }

    /// The moments the first and the last subscriber heard the expected count.
    func waitForAll() async -> (first: ContinuousClock.Instant, last: ContinuousClock.Instant) {
        let subscribers = subscribers
        return await withCheckedContinuation { continuation in
            let done = state.withLock { state -> (first: ContinuousClock.Instant, last: ContinuousClock.Instant)? in
                if state.reached == subscribers { return (state.firstArrival, state.lastArrival) }
                state.allWaiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}
