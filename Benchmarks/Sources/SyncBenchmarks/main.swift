// Sync's figures: the time from a commit on one node to an observer on another, synced writes
// per second under group commit, the speed at which a new node applies the log, folds it into
// the snapshot, and starts from the snapshot. Against a
// real PostgreSQL server on this machine, which Scripts/with-postgres.sh starts:
//
//     make bench-sync
//
// (POSTGRES_DATABASES="latency throughput catchup" bash Scripts/with-postgres.sh \
//  swift run -c release --package-path Benchmarks SyncBenchmarks). Writes
// Benchmarks/results/sync-latest.md.
import Foundation
import LMDBRealm
import LMDBRealmSync
import Synchronization

final class Note: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var stars = 0
    @Persisted var title = ""
}

/// How many writes have been made (by the throughput run), to know when another node has them all.
final class Counter: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var writes = 0
}

let objectTypes: [Object.Type] = [Note.self, Counter.self]

/// The server of LMDBREALM_POSTGRES_URL, with one database per measurement.
struct Server {
    let url: URLComponents

    init() {
        guard let text = ProcessInfo.processInfo.environment["LMDBREALM_POSTGRES_URL"], let url = URLComponents(string: text),
            url.host != nil, url.user != nil
        else {
            fatalError("LMDBREALM_POSTGRES_URL is not set: run `make bench-sync` (Scripts/with-postgres.sh starts a server)")
        }
        self.url = url
    }

    func postgres(database: String) -> SyncClient.Postgres {
        // with-postgres.sh starts its server on 127.0.0.1 without TLS: these figures are plaintext.
        SyncClient.Postgres(host: url.host!, port: url.port ?? 5432, username: url.user!, password: url.password, database: database, tls: .disable)
    }
}

/// A node: its file and its client, running until `stop()`.
final class Node: Sendable {
    let configuration: Realm.Configuration
    let client: SyncClient
    private let task: Task<Void, any Error>

    init(_ name: String, in directory: URL, postgres: SyncClient.Postgres) async throws {
        configuration = Realm.Configuration(fileURL: directory.appendingPathComponent("\(name).realm"), objectTypes: objectTypes)
        let client = try await SyncClient(realm: configuration, postgres: postgres, node: name)
        self.client = client
        task = Task { try await client.run() }
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }

    /// Waits until the client has sent everything committed so far.
    func waitUntilSent() async throws {
        try await client.waitForUpload()
    }
}

/// What the observers of a node saw, and a way to wait for it.
final class Seen: @unchecked Sendable {
    // @unchecked Sendable: `values` is only touched under `condition`'s lock.
    private let condition = NSCondition()
    private var values: [Int: ContinuousClock.Instant] = [:]

    /// Records `value` as seen now (the first time only).
    func record(_ value: Int) {
        let now = ContinuousClock.now
        condition.lock()
        if values[value] == nil { values[value] = now }
        condition.broadcast()
        condition.unlock()
    }

    /// When `value` was first seen, waiting for it up to a minute.
    func wait(for value: Int) -> ContinuousClock.Instant {
        let deadline = Date(timeIntervalSinceNow: 60)
        condition.lock()
        defer { condition.unlock() }
        while values[value] == nil {
            if !condition.wait(until: deadline) { fatalError("\(value) was not seen within a minute") }
        }
        return values[value]!
    }
}

/// Records what `read` finds in each version of the node's notes or counters, as an observer of
/// the file would see them, until the task is cancelled.
func observe<T: Object>(_ type: T.Type, of node: Node, into seen: Seen, _ read: @escaping @Sendable (FrozenResults<T>) -> Int?) -> Task<Void, Never> {
    let configuration = node.configuration
    let started = Seen()
    let task = Task {
        guard let results = try? Realm(configuration: configuration).objects(type) else { return }
        for await change in results.changes {
            switch change {
            case .initial(let objects):
                started.record(0)
                if let value = read(objects) { seen.record(value) }
            case .update(let objects, _, _, _):
                if let value = read(objects) { seen.record(value) }
            case .error(let error):
                fatalError("observing \(configuration.fileURL!.path): \(error)")
            }
        }
    }
    _ = started.wait(for: 0)
    return task
}

func waitFor(_ what: String, _ done: @escaping @Sendable () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(60)
    while !done() {
        if ContinuousClock.now > deadline { fatalError("waited a minute for \(what)") }
        try? await Task.sleep(for: .milliseconds(5))
    }
}

/// Runs `body` on a thread of its own (realms belong to the thread that opens them).
func onNewThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// From a commit on node A (returned) to an observer on node B seeing it, one commit at a time.
func latency(in directory: URL, postgres: SyncClient.Postgres, samples: Int) async throws -> [Duration] {
    let a = try await Node("latency-a", in: directory, postgres: postgres)
    let b = try await Node("latency-b", in: directory, postgres: postgres)
    let seen = Seen()
    let observer = observe(Note.self, of: b, into: seen) { $0.first?.stars }
    let configuration = a.configuration
    let latencies = try await onNewThread {
        let realm = try Realm(configuration: configuration)
        let note = Note()
        try realm.write { realm.add(note) }
        _ = seen.wait(for: 0)
        var latencies: [Duration] = []
        for value in 1...samples {
            let start = ContinuousClock.now
            try realm.write { note.stars = value }
            latencies.append(seen.wait(for: value) - start)
        }
        return latencies
    }
    observer.cancel()
    await a.stop()
    await b.stop()
    return latencies
}

/// `writes` writes by `writers` concurrent tasks through a RealmStore (group commit) on node A,
/// each changing two objects; the time until node B has applied them all.
func throughput(in directory: URL, postgres: SyncClient.Postgres, writes: Int, writers: Int) async throws -> (written: Duration, applied: Duration) {
    let a = try await Node("throughput-a", in: directory, postgres: postgres)
    let b = try await Node("throughput-b", in: directory, postgres: postgres)
    let store = try await RealmStore(configuration: a.configuration)
    try await addCounterAndNotes(store)
    let seen = Seen()
    let observer = observe(Counter.self, of: b, into: seen) { $0.first?.writes }
    _ = try await onNewThread { seen.wait(for: 0) }
    let start = ContinuousClock.now
    try await runWrites(store, writes: writes, writers: writers)
    let written = ContinuousClock.now - start
    let total = writes / writers * writers
    let applied = try await onNewThread { seen.wait(for: total) } - start
    observer.cancel()
    await a.stop()
    await b.stop()
    return (written, applied)
}

/// The same writes as `throughput`'s on a file that is not synced (or, with `postgres`, on a
/// synced file whose client does not run: the outbox alone): what sync adds to them.
func localWrites(in directory: URL, writes: Int, writers: Int, outboxOf postgres: SyncClient.Postgres? = nil) async throws -> Duration {
    let name = postgres == nil ? "unsynced" : "outbox-only"
    let configuration = Realm.Configuration(fileURL: directory.appendingPathComponent("\(name).realm"), objectTypes: objectTypes)
    if let postgres { _ = try await SyncClient(realm: configuration, postgres: postgres, node: name) }
    let store = try await RealmStore(configuration: configuration)
    try await addCounterAndNotes(store)
    let start = ContinuousClock.now
    try await runWrites(store, writes: writes, writers: writers)
    return ContinuousClock.now - start
}

/// The counter and the thousand notes that the writes of `runWrites` change.
func addCounterAndNotes(_ store: RealmStore) async throws {
    try await store.write { realm in
        realm.add(Counter())
        for id in 0..<1000 { realm.add(Note(value: ["id": id])) }
    }
}

/// `writes` writes by `writers` concurrent tasks (which the store commits together), each
/// counting itself and adding a star to a note.
func runWrites(_ store: RealmStore, writes: Int, writers: Int) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
            group.addTask {
                for k in 0..<(writes / writers) {
                    try await store.write { realm in
                        realm.object(ofType: Counter.self, forPrimaryKey: 0)!.writes += 1
                        realm.object(ofType: Note.self, forPrimaryKey: (writer * 7919 + k) % 1000)!.stars += 1
                    }
                }
            }
        }
        try await group.waitForAll()
    }
}

/// A new node applying a log of `objects` objects, created `perCommit` to a commit on node A;
/// then the log folded into the snapshot (all of it), and another new node starting from that.
func catchUp(in directory: URL, postgres: SyncClient.Postgres, objects: Int, perCommit: Int) async throws
    -> (log: Duration, compaction: Duration, snapshot: Duration)
{
    let a = try await Node("catchup-a", in: directory, postgres: postgres)
    let configuration = a.configuration
    try await onNewThread {
        let realm = try Realm(configuration: configuration)
        for first in stride(from: 0, to: objects, by: perCommit) {
            try realm.write {
                for id in first..<min(first + perCommit, objects) {
                    realm.add(Note(value: ["id": id, "stars": id % 5, "title": "note \(id)"]))
                }
            }
        }
    }
    try await a.waitUntilSent()
    await a.stop()
    /// A new node `name`, started now, and how long it took to hold every object.
    func newNode(_ name: String) async throws -> (node: Node, time: Duration) {
        let start = ContinuousClock.now
        let node = try await Node(name, in: directory, postgres: postgres)
        let seen = Seen()
        let observer = observe(Note.self, of: node, into: seen) { $0.count }
        let time = try await onNewThread { seen.wait(for: objects) } - start
        observer.cancel()
        return (node, time)
    }
    let (b, applied) = try await newNode("catchup-b")
    let compactionStart = ContinuousClock.now
    try await b.client.compactLog(keepingLatest: 0)
    let compaction = ContinuousClock.now - compactionStart
    await b.stop()
    let (c, loaded) = try await newNode("catchup-c")
    await c.stop()
    return (applied, compaction, loaded)
}

/// The cost of the row-level security policies of `SyncSetup` per change set: `count` change sets
/// committed while the client is stopped, then the time until they are all in the log, once
/// sent as the role that owns the tables (no policy applies) and once as a node's own role (its
/// inserts checked by the policy), alternating for `rounds` rounds. Returns the seconds of each.
func pushCost(in directory: URL, rounds: Int, count: Int) async throws -> (owner: [Duration], nodeRole: [Duration]) {
    guard let socket = ProcessInfo.processInfo.environment["LMDBREALM_POSTGRES_SOCKET"],
        let psql = ProcessInfo.processInfo.environment["LMDBREALM_PSQL"]
    else { fatalError("LMDBREALM_POSTGRES_SOCKET and LMDBREALM_PSQL are not set: run `make bench-sync`") }
    let nodes = (0..<rounds).map { "push-role-\($0)" }
    let password = "pw-\(UUID().uuidString)"
    let setup = try SyncSetup.script(nodes: nodes)
        + nodes.map { "ALTER ROLE \"\($0)\" PASSWORD '\(password)';\n" }.joined()
        // The benchmark's own role owns the tables (and so is bound by no policy).
        + ["lmdbrealm_changes", "lmdbrealm_objects", "lmdbrealm_snapshot", "lmdbrealm_log"].map { "ALTER TABLE \($0) OWNER TO \"\(server.url.user!)\";\n" }.joined()
    let script = directory.appendingPathComponent("setup.sql")
    try setup.write(to: script, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: psql)
    process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", socket, "-p", String(server.url.port ?? 5432), "-U", "postgres", "-d", "roles", "-f", script.path]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fatalError("the setup script failed (psql exited \(process.terminationStatus))") }

    func push(_ name: String, _ postgres: SyncClient.Postgres) async throws -> Duration {
        let configuration = Realm.Configuration(fileURL: directory.appendingPathComponent("\(name).realm"), objectTypes: objectTypes)
        let client = try await SyncClient(realm: configuration, postgres: postgres, node: name, compaction: .never)
        try await onNewThread {
            let realm = try Realm(configuration: configuration)
            for id in 0..<count { try realm.write { realm.add(Note(value: ["id": id, "title": "note \(id)"])) } }
        }
        let start = ContinuousClock.now
        let run = Task { try await client.run() }
        try await client.waitForUpload()
        let time = ContinuousClock.now - start
        run.cancel()
        _ = await run.result
        return time
    }
    var owner: [Duration] = []
    var nodeRole: [Duration] = []
    for (round, node) in nodes.enumerated() {
        owner.append(try await push("push-owner-\(round)", server.postgres(database: "roles")))
        var postgres = server.postgres(database: "roles")
        postgres.username = node
        postgres.password = password
        nodeRole.append(try await push(node, postgres))
    }
    return (owner, nodeRole)
}

/// Serial commits, one at a time on one thread (each durable), on node A for `duration`: while
/// its client syncs them (a second node applying them), and on the same kind of file whose
/// client does not run. Returns commits a second of each.
func serialCommits(in directory: URL, postgres: SyncClient.Postgres, duration: Duration) async throws -> (syncing: Double, alone: Double) {
    func commits(_ configuration: Realm.Configuration) async throws -> Double {
        try await onNewThread {
            let realm = try Realm(configuration: configuration)
            let note = Note()
            try realm.write { realm.add(note) }
            let start = ContinuousClock.now
            var count = 0
            while ContinuousClock.now - start < duration {
                try realm.write { note.stars += 1 }
                count += 1
            }
            return Double(count) / seconds(ContinuousClock.now - start)
        }
    }
    let a = try await Node("serial-a", in: directory, postgres: postgres)
    let b = try await Node("serial-b", in: directory, postgres: postgres)
    let syncing = try await commits(a.configuration)
    FileHandle.standardError.write(Data("serial commits while syncing: \(Int(syncing))/s\n".utf8))
    try await a.waitUntilSent()
    await a.stop()
    await b.stop()
    let configuration = Realm.Configuration(fileURL: directory.appendingPathComponent("serial-alone.realm"), objectTypes: objectTypes)
    _ = try await SyncClient(realm: configuration, postgres: postgres, node: "serial-alone")
    let alone = try await commits(configuration)
    return (syncing, alone)
}

// MARK: - The run

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func seconds(_ duration: Duration) -> Double { milliseconds(duration) / 1000 }

func percentile(_ values: [Duration], _ p: Double) -> Duration {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

let quick = CommandLine.arguments.contains("--quick")
if CommandLine.arguments.contains("--serial") {
    let server = Server()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-sync-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let (syncing, alone) = try await serialCommits(in: directory, postgres: server.postgres(database: "latency"), duration: .seconds(10))
    print("serial commits: \(Int(syncing))/s syncing, \(Int(alone))/s with the client stopped (\(String(format: "%.2f", syncing / alone))x)")
    try? FileManager.default.removeItem(at: directory)
    exit(0)
}
let server = Server()
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-sync-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

let samples = quick ? 100 : 500
let (writes, writers) = quick ? (4_000, 32) : (20_000, 32)
let (objects, perCommit) = quick ? (20_000, 1_000) : (100_000, 1_000)

FileHandle.standardError.write(Data("latency: \(samples) commits, one at a time\n".utf8))
let latencies = try await latency(in: directory, postgres: server.postgres(database: "latency"), samples: samples)
FileHandle.standardError.write(Data("throughput: \(writes) writes by \(writers) writers\n".utf8))
let (written, applied) = try await throughput(in: directory, postgres: server.postgres(database: "throughput"), writes: writes, writers: writers)
let unsynced = try await localWrites(in: directory, writes: writes, writers: writers)
let outboxOnly = try await localWrites(in: directory, writes: writes, writers: writers, outboxOf: server.postgres(database: "throughput"))
FileHandle.standardError.write(Data("catch-up: \(objects) objects, \(perCommit) a commit\n".utf8))
let caughtUp = try await catchUp(in: directory, postgres: server.postgres(database: "catchup"), objects: objects, perCommit: perCommit)

let (pushRounds, pushCount) = quick ? (3, 2_000) : (5, 10_000)
FileHandle.standardError.write(Data("push: \(pushCount) change sets, as the tables' owner and as a node's role, \(pushRounds) rounds\n".utf8))
let pushes = try await pushCost(in: directory, rounds: pushRounds, count: pushCount)
let ownerPush = percentile(pushes.owner, 0.5)
let rolePush = percentile(pushes.nodeRole, 0.5)
let policyCost = (seconds(rolePush) - seconds(ownerPush)) / Double(pushCount) * 1e6

FileHandle.standardError.write(Data("serial commits: 10 s syncing, 10 s with the client stopped\n".utf8))
let serial = try await serialCommits(in: directory, postgres: server.postgres(database: "latency"), duration: .seconds(quick ? 3 : 10))

let machine = ProcessInfo.processInfo
let report = """
    # Sync figures

    \(Date().formatted(.iso8601)), \(machine.processorCount) cores, PostgreSQL on 127.0.0.1 with its default settings
    (fsync on), both nodes in one process, each with a file of its own. `make bench-sync`\(quick ? " (--quick)" : "").

    | measure | figure |
    |---|---|
    | commit on A → observer on B, p50 (\(samples) commits, one at a time) | \(String(format: "%.1f", milliseconds(percentile(latencies, 0.5)))) ms |
    | commit on A → observer on B, p99 | \(String(format: "%.1f", milliseconds(percentile(latencies, 0.99)))) ms |
    | synced writes on A, \(writers) writers through a RealmStore (group commit), each changing 2 objects | \(Int(Double(writes) / seconds(written))) writes/s (\(Int(2 * Double(writes) / seconds(written))) changes/s) |
    | the same writes on a file that is not synced | \(Int(Double(writes) / seconds(unsynced))) writes/s |
    | the same writes on a synced file whose client does not run (the outbox alone) | \(Int(Double(writes) / seconds(outboxOnly))) writes/s |
    | the same writes applied on B, from the first write | \(Int(Double(writes) / seconds(applied))) writes/s (\(Int(2 * Double(writes) / seconds(applied))) changes/s) |
    | a new node applying a log of \(objects) objects (\(perCommit) a commit on A) | \(Int(Double(objects) / seconds(caughtUp.log))) objects/s (\(String(format: "%.2f", seconds(caughtUp.log))) s) |
    | that log folded into the snapshot (compaction) | \(Int(Double(objects) / seconds(caughtUp.compaction))) objects/s (\(String(format: "%.2f", seconds(caughtUp.compaction))) s) |
    | a new node starting from that snapshot | \(Int(Double(objects) / seconds(caughtUp.snapshot))) objects/s (\(String(format: "%.2f", seconds(caughtUp.snapshot))) s) |
    | serial commits on A, one at a time on one thread, while its client syncs them to B | \(Int(serial.syncing))/s |
    | the same on a synced file whose client does not run | \(Int(serial.alone))/s (syncing: \(String(format: "%.2f", serial.syncing / serial.alone))×) |
    | \(pushCount) change sets sent as the tables' owner (no policy), median of \(pushRounds) | \(Int(Double(pushCount) / seconds(ownerPush))) change sets/s |
    | the same sent as a node's own role (`lmdbrealm sync-setup`: each insert checked by row-level security) | \(Int(Double(pushCount) / seconds(rolePush))) change sets/s (\(String(format: "%.2f", seconds(rolePush) / seconds(ownerPush)))×; \(String(format: "%+.1f", policyCost)) µs a change set) |

    """
print(report)
let results = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("results")
let reportFile = results.appendingPathComponent(quick ? "quick/sync-latest.md" : "sync-latest.md")
try FileManager.default.createDirectory(at: reportFile.deletingLastPathComponent(), withIntermediateDirectories: true)
try report.write(to: reportFile, atomically: true, encoding: .utf8)
