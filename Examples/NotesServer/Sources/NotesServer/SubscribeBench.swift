import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NotesServerKit

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
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: subscribers + 8)
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
                        try await Self.subscribe(subscriber, to: "\(base)/folders/\(folder)/events", client, arrivals)
                    }
                }
                try await withTimeout(limit, waitingFor: "\(end) streams to open") {
                    await arrivals.waitForInitial(end)
                }
            }
            let opened = ContinuousClock.now - opening
            var latencies: [Duration] = []
            var count = await arrivals.initialCount
            let measuring = ContinuousClock.now
            for commit in 1...commits {
                if commit > 3, ContinuousClock.now - measuring > budget { break }
                count += 1
                await arrivals.expect(count)
                let start = ContinuousClock.now
                var request = HTTPClientRequest(url: "\(base)/notes")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: #"{"folder":"\#(folder)","title":"bench \#(commit)","body":"…"}"#))
                let response = try await client.execute(request, timeout: .seconds(Int64(timeout)))
                guard response.status == .created else { throw ValidationError("POST /notes answered \(response.status)") }
                _ = try await response.body.collect(upTo: 1 << 20)
                let last = try await withTimeout(limit, waitingFor: "every subscriber to hear of commit \(commit)") {
                    await arrivals.waitForAll()
                }
                latencies.append(last - start)
            }
            group.cancelAll()
            let sorted = latencies.sorted()
            func percentile(_ p: Double) -> Double {
                milliseconds(sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)])
            }
            print(String(
                format: "subscribers=%d commits=%d open_s=%.2f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f",
                subscribers, latencies.count, milliseconds(opened) / 1000, percentile(0.5), percentile(0.99),
                milliseconds(sorted.last ?? .zero)))
        }
    }

    /// Reads one event stream until its task is cancelled, reporting each event's arrival.
    private static func subscribe(_ subscriber: Int, to url: String, _ client: HTTPClient, _ arrivals: Arrivals) async throws {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .hours(1))
        guard response.status == .ok else { throw ValidationError("\(url) answered \(response.status)") }
        var parser = ServerSentEventParser()
        do {
            for try await buffer in response.body {
                let now = ContinuousClock.now
                for event in parser.feed(buffer.readableBytesView) {
                    switch FolderEvent(event) {
                    case .initial(let count): await arrivals.opened(subscriber, count: count)
                    case .change(let change): await arrivals.heard(subscriber, count: change.count, at: now)
                    case .failure(let message): throw ValidationError("Subscriber \(subscriber): \(message)")
                    case nil: break
                    }
                }
            }
        } catch is CancellationError {
            // The measurement is over.
        }
    }
}

private func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
}

/// What the subscribers have heard: how many streams are open, and when the last of them heard
/// of the count expected now.
private actor Arrivals {
    private let subscribers: Int
    private var latest: [Int]
    private var open = 0
    private(set) var initialCount = 0
    private var openWaiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?
    private var target = Int.max
    private var reached = 0
    private var lastArrival = ContinuousClock.now
    private var allWaiter: CheckedContinuation<ContinuousClock.Instant, Never>?

    init(subscribers: Int) {
        self.subscribers = subscribers
        latest = Array(repeating: -1, count: subscribers)
    }

    func opened(_ subscriber: Int, count: Int) {
        latest[subscriber] = count
        initialCount = count
        open += 1
        if let waiter = openWaiter, open >= waiter.count {
            openWaiter = nil
            waiter.continuation.resume()
        }
    }

    func waitForInitial(_ count: Int) async {
        if open >= count { return }
        await withCheckedContinuation { openWaiter = (count, $0) }
    }

    /// Counts from now the subscribers that hear a count of at least `count`.
    func expect(_ count: Int) {
        target = count
        reached = latest.filter { $0 >= count }.count
    }

    func heard(_ subscriber: Int, count: Int, at instant: ContinuousClock.Instant) {
        if latest[subscriber] < target, count >= target {
            reached += 1
            lastArrival = reached == 1 ? instant : max(lastArrival, instant)
        }
        latest[subscriber] = count
        if reached == subscribers, let waiter = allWaiter {
            allWaiter = nil
            waiter.resume(returning: lastArrival)
        }
    }

    /// The moment the last subscriber heard the expected count.
    func waitForAll() async -> ContinuousClock.Instant {
        if reached == subscribers { return lastArrival }
        return await withCheckedContinuation { allWaiter = $0 }
    }
}
