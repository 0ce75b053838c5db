import Dispatch
import Foundation
import GRDBSQLite
@_spi(Testing) import LMDBRealm
import LMDBKit

// Operations with several writers, and notifications: figures the single-threaded workload
// cannot show.

// MARK: - Group commit

/// Writers, each on its own actor, committing single-object writes through `asyncWrite`: the
/// writes that queue up share one durable commit.
actor GroupWriter {
    private var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm.open(configuration: configuration, actor: self)
    }

    func write(_ rows: ArraySlice<Row>) async throws {
        for row in rows {
            try await realm.asyncWrite { realm.add(RealmEngine.article(row)) }
        }
    }
}

/// Seconds for `writers` actors to commit `rows` (split evenly), one durable `asyncWrite` per
/// row.
func realmGroupCommit(directory: URL, rows: [Row], writers: Int) async throws -> Double {
    let config = Realm.Configuration(fileURL: directory.appendingPathComponent("group.realm"), objectTypes: [Article.self])
    var actors: [GroupWriter] = []
    for _ in 0..<writers { actors.append(try await GroupWriter(configuration: config)) }
    let share = rows.count / writers
    let start = now()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for (w, writer) in actors.enumerated() {
            let slice = rows[(w * share)..<((w + 1) * share)]
            group.addTask { try await writer.write(slice) }
        }
        try await group.waitForAll()
    }
    let seconds = Double(now() - start) / 1e9
    let stored = try Realm(configuration: config).objects(Article.self).count
    precondition(stored == share * writers, "group commit stored \(stored) objects")
    return seconds
}

/// Seconds for `writers` threads, each with its own SQLite connection (WAL,
/// `synchronous=FULL`, waiting on a busy database), to commit `rows` one per transaction.
func sqliteGroupCommit(directory: URL, rows: [Row], writers: Int) throws -> Double {
    let path = directory.appendingPathComponent("group.sqlite").path
    var setup: OpaquePointer?
    guard sqlite3_open(path, &setup) == SQLITE_OK else { throw SQLiteError(description: "cannot open \(path)") }
    sqlite3_exec(setup, "PRAGMA journal_mode=WAL", nil, nil, nil)
    sqlite3_exec(setup, sqliteSchema, nil, nil, nil)
    let share = rows.count / writers
    let failures = Counter()
    let start = now()
    DispatchQueue.concurrentPerform(iterations: writers) { w in
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { return failures.add() }
        defer { sqlite3_close(db) }
        sqlite3_busy_timeout(db, 60_000)
        sqlite3_exec(db, "PRAGMA synchronous=FULL", nil, nil, nil)
        var insert: OpaquePointer?
        sqlite3_prepare_v2(db, sqliteInsert, -1, &insert, nil)
        defer { sqlite3_finalize(insert) }
        for row in rows[(w * share)..<((w + 1) * share)] {
            // BEGIN IMMEDIATE takes the write lock up front, so a busy writer waits instead of
            // failing at commit.
            guard sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else { return failures.add() }
            bindArticle(row, to: insert)
            if sqlite3_step(insert) != SQLITE_DONE { failures.add() }
            sqlite3_reset(insert)
            guard sqlite3_exec(db, "COMMIT", nil, nil, nil) == SQLITE_OK else { return failures.add() }
        }
    }
    let seconds = Double(now() - start) / 1e9
    sqlite3_close(setup)
    guard failures.value == 0 else { throw SQLiteError(description: "\(failures.value) writes failed") }
    return seconds
}

/// Seconds for `writers` threads to commit `rows` through raw LMDBKit, one durable write
/// transaction per row holding its record bytes (LMDB has no group commit: writers take turns,
/// each commit syncing on its own).
func kitGroupCommit(directory: URL, rows: [Row], writers: Int) throws -> Double {
    var options = Environment.Options()
    options.mapSize = 1 << 30
    options.durability = .full
    let env = try Environment.open(path: directory.appendingPathComponent("group.mdb").path, options: options)
    let articles = try env.createDatabase(named: "articles")
    let share = rows.count / writers
    let failures = Counter()
    let start = now()
    DispatchQueue.concurrentPerform(iterations: writers) { w in
        do {
            for row in rows[(w * share)..<((w + 1) * share)] {
                let key = withUnsafeBytes(of: row.id.bigEndian) { Array($0) }
                let value = Array(row.url.utf8) + Array(row.lead.utf8) + Array(row.section.utf8)
                try env.write { txn in try txn.put(value, forKey: key, in: articles) }
            }
        } catch {
            failures.add()
        }
    }
    let seconds = Double(now() - start) / 1e9
    guard failures.value == 0 else { throw SQLiteError(description: "\(failures.value) LMDBKit writes failed") }
    return seconds
}

final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

// MARK: - Notifications

/// Nanoseconds between two moments, as a sorted sample.
struct Latencies {
    var nanoseconds: [UInt64] = []
    var p50: Double { percentile(0.50) }
    var p99: Double { percentile(0.99) }
    func percentile(_ p: Double) -> Double {
        let sorted = nanoseconds.sorted()
        guard !sorted.isEmpty else { return .nan }
        return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
    }
}

final class Mailbox: @unchecked Sendable {
    // @unchecked Sendable: `values` is only touched under `condition`'s lock.
    private let condition = NSCondition()
    private var values: [UInt64] = []
    func post(_ value: UInt64) {
        condition.withLock {
            values.append(value)
            condition.broadcast()
        }
    }
    /// The next value, or nil after `timeout` seconds.
    func take(timeout: Double = 10) -> UInt64? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while values.isEmpty {
                if !condition.wait(until: deadline) { return nil }
            }
            return values.removeFirst()
        }
    }
}

/// Latency from a commit on this thread to the change callback on another queue, for
/// `commits` commits of one modified object: from the call to `commitWrite` (which includes
/// the durable commit) and from its return.
func inProcessNotificationLatency(directory: URL, commits: Int) throws -> (fromCall: Latencies, fromReturn: Latencies) {
    let config = Realm.Configuration(fileURL: directory.appendingPathComponent("notify.realm"), objectTypes: [Article.self])
    let realm = try Realm(configuration: config)
    try realm.write { for row in makeRows(1...1000) { realm.add(RealmEngine.article(row)) } }
    let queue = DispatchQueue(label: "observer")
    let mailbox = Mailbox()
    let token = realm.objects(Article.self).observe(on: queue) { change in
        if case .update = change { mailbox.post(now()) }
    }
    // `.initial` is delivered by a block queued on `queue`, which queues the realm's opening.
    queue.sync {}
    queue.sync {}
    var fromCall = Latencies()
    var fromReturn = Latencies()
    let target = realm.object(ofType: Article.self, forPrimaryKey: Int64(1))!
    for i in 0..<commits {
        realm.beginWrite()
        target.wordCount = i
        let called = now()
        try realm.commitWrite()
        let returned = now()
        guard let delivered = mailbox.take() else { throw SQLiteError(description: "no notification for commit \(i)") }
        fromCall.nanoseconds.append(delivered - called)
        fromReturn.nanoseconds.append(delivered &- returned > delivered ? 0 : delivered - returned)
    }
    token.invalidate()
    return (fromCall, fromReturn)
}

/// Latency from the start of another process's commit to the change callback here; the other
/// process stamps each object it writes with the monotonic clock, shared by all processes.
func crossProcessNotificationLatency(directory: URL, commits: Int) throws -> Latencies {
    let url = directory.appendingPathComponent("notify-process.realm")
    let config = Realm.Configuration(fileURL: url, objectTypes: [Article.self])
    let realm = try Realm(configuration: config)
    try realm.write { realm.add(RealmEngine.article(makeRows(1...1)[0])) }
    let queue = DispatchQueue(label: "observer")
    let mailbox = Mailbox()
    let token = realm.objects(Article.self).observe(on: queue) { change in
        guard case .update(let results, _, _, _) = change else { return }
        let arrived = now()
        mailbox.post(arrived - UInt64(results.first!.wordCount))
    }
    queue.sync {}
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = ["--notify-writer", url.path, String(commits)]
    try process.run()
    var latencies = Latencies()
    while latencies.nanoseconds.count < commits, let latency = mailbox.take(timeout: 30) {
        latencies.nanoseconds.append(latency)
    }
    process.waitUntilExit()
    token.invalidate()
    return latencies
}

/// The other process of ``crossProcessNotificationLatency``: `commits` commits, 5 ms apart,
/// each stamping object 1 with the clock at its start.
func runNotifyWriter(path: String, commits: Int) throws {
    let config = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Article.self])
    let realm = try Realm(configuration: config)
    let target = realm.object(ofType: Article.self, forPrimaryKey: Int64(1))!
    for _ in 0..<commits {
        try realm.write { target.wordCount = Int(now()) }
        usleep(5_000)
    }
}

/// Seconds for one notification round on `n` objects with one of them modified by another
/// handle: the observing realm's refresh, the change set, the callback. Medians of `rounds`,
/// with the writes' change logs (in-process commits) and without (as for other processes).
func notificationRoundCost(directory: URL, n: Int, rounds: Int) throws -> (withLog: Double, byComparison: Double) {
    let config = Realm.Configuration(fileURL: directory.appendingPathComponent("round.realm"), objectTypes: [Article.self])
    let realm = try Realm(configuration: config)
    try realm.write { for row in makeRows(1...Int64(n)) { realm.add(RealmEngine.article(row)) } }
    let writer = try Realm(configuration: config)
    // The same file, written without change logs: observers compare the versions instead.
    var unloggedConfig = config
    unloggedConfig.recordsChangeLogs = false
    let unloggedWriter = try Realm(configuration: unloggedConfig)
    var modifications = 0
    let token = realm.objects(Article.self).observe { change in
        if case .update(_, _, _, let m) = change { modifications += m.count }
    }
    func measure(_ writer: Realm) throws -> Double {
        var seconds: [Double] = []
        for i in 0..<rounds {
            try writer.write { writer.object(ofType: Article.self, forPrimaryKey: Int64(1 + (i * 7919) % n))!.wordCount += 1 }
            let (s, _) = timed { realm.refresh() }
            seconds.append(s)
        }
        return median(seconds)
    }
    let withLog = try measure(writer)
    let byComparison = try measure(unloggedWriter)
    token.invalidate()
    precondition(modifications == 2 * rounds, "expected one modification per round, got \(modifications)")
    return (withLog, byComparison)
}

// MARK: - Child: the concurrent operations of one engine

/// Runs group commit for `engine` (and, for LMDBRealm, the notification figures), printing
/// lines in the child format: "operation seconds operations check".
@MainActor func runConcurrencyChild(_ engine: String, settings: Settings) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-benchmarks-c\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let writers = 8
    let perWriter = settings.quick ? 100 : 1000
    let rows = makeRows(1...Int64(writers * perWriter), seed: 44)
    var lines: [String] = []
    let seconds: Double
    switch engine {
    case "LMDBRealm":
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                box.result = .success(try await realmGroupCommit(directory: directory, rows: rows, writers: writers))
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        seconds = try box.result!.get()
    case "SQLite": seconds = try sqliteGroupCommit(directory: directory, rows: rows, writers: writers)
    case "LMDBKit": seconds = try kitGroupCommit(directory: directory, rows: rows, writers: writers)
    default: return
    }
    lines.append("group_commit \(seconds) \(rows.count) \(rows.count)")
    if engine == "LMDBRealm" {
        let commits = settings.quick ? 100 : 1000
        let (fromCall, fromReturn) = try inProcessNotificationLatency(directory: directory, commits: commits)
        lines.append("latency thread.fromCommitCall \(fromCall.p50) \(fromCall.p99)")
        lines.append("latency thread.fromCommitReturn \(fromReturn.p50) \(fromReturn.p99)")
        let process = try crossProcessNotificationLatency(directory: directory, commits: settings.quick ? 50 : 300)
        lines.append("latency process.fromCommitCall \(process.p50) \(process.p99)")
        let n = settings.quick ? 10_000 : 100_000
        let round = try notificationRoundCost(directory: directory, n: n, rounds: settings.quick ? 20 : 100)
        lines.append("round withLog \(round.withLog) \(n)")
        lines.append("round byComparison \(round.byComparison) \(n)")
    }
    print(lines.joined(separator: "\n"))
}

final class ResultBox: @unchecked Sendable {
    // @unchecked Sendable: written by one task before it signals a semaphore, read after the wait.
    var result: Result<Double, any Error>?
}
