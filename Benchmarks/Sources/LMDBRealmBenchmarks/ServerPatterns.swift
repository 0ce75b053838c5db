import Foundation
import LMDBRealm

// The three ways request handlers reach a realm, as a server runs them: many concurrent tasks
// each counting one folder's notes (an index count), through a shared `RealmStore`, through one
// actor's realm, or through a realm opened in the handler. Run with `--server-patterns`.
//
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --server-patterns [--n N] [--rounds R]

final class PatternNote: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted(indexed: true) var folder: String
    @Persisted var title: String
}

/// A realm confined to an actor: every read goes through it, one at a time.
actor PatternActor {
    private var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm.open(configuration: configuration, actor: self)
    }

    func count(_ folder: String) -> Int {
        realm.objects(PatternNote.self).where { $0.folder == folder }.count
    }
}

/// A handler that opens its realm itself: synchronous code, on the thread it runs on (the
/// thread's cached handle after the first request there).
func countOpeningARealm(_ configuration: Realm.Configuration, _ folder: String) throws -> Int {
    let realm = try Realm(configuration: configuration)
    return realm.objects(PatternNote.self).where { $0.folder == folder }.count
}

func runServerPatterns(n: Int, rounds: Int) async throws {
    let requests = 20_000
    let concurrency = 32
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-patterns-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var configuration = Realm.Configuration(fileURL: directory.appendingPathComponent("notes.realm"), objectTypes: [PatternNote.self])
    configuration.maximumFileSize = profileMapSize
    let config = configuration
    try onThread {
        let realm = try Realm(configuration: config)
        try realm.write {
            for i in 0..<n {
                let note = PatternNote()
                note.id = Int64(i)
                note.folder = "folder-\(i % 20)"
                note.title = "Note \(i)"
                realm.add(note)
            }
        }
    }
    let store = try await RealmStore(configuration: config)
    let actor = try await PatternActor(configuration: config)
    /// Requests per second for `requests` counts made by `concurrency` tasks at once.
    func rate(_ count: @escaping @Sendable (String) async throws -> Int) async throws -> Double {
        let start = now()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var sum = 0
                    for i in stride(from: worker, to: requests, by: concurrency) { sum &+= try await count("folder-\(i % 20)") }
                    return sum
                }
            }
            var total = 0
            for try await sum in group { total &+= sum }
            precondition(total == requests * (n / 20), "counted \(total)")
        }
        return Double(requests) / (Double(now() - start) / 1e9)
    }
    var rates: [String: [Double]] = [:]
    for round in 0..<rounds {
        rates["store", default: []].append(try await rate { folder in try await store.read { $0.objects(PatternNote.self).where { $0.folder == folder }.count } })
        rates["actor", default: []].append(try await rate { folder in await actor.count(folder) })
        rates["per request", default: []].append(try await rate { folder in try countOpeningARealm(config, folder) })
        log("round \(round + 1)/\(rounds): " + ["store", "actor", "per request"].map { "\($0) \(Report.format(rates[$0]!.last!))" }.joined(separator: ", "))
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    var lines = [
        "Server patterns: \(requests) index counts from \(concurrency) concurrent tasks, N = \(n) notes in 20 folders; medians of \(rounds) rounds",
        "",
        "| pattern | counts/s | µs a count |",
        "|---|---:|---:|",
    ]
    for name in ["store", "actor", "per request"] {
        let r = median(rates[name]!)
        lines.append("| \(name) | \(Report.format(r)) | \(String(format: "%.1f", 1e6 / r)) |")
    }
    print(lines.joined(separator: "\n"))
}

/// Runs `body` on a thread of its own and waits for it (a realm confined to that thread).
func onThread(_ body: @escaping @Sendable () throws -> Void) throws {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var failure: (any Error)?
    // nonisolated(unsafe): written by the thread before it signals, read after the wait.
    let thread = Thread {
        do { try body() } catch { failure = error }
        done.signal()
    }
    thread.start()
    done.wait()
    if let failure { throw failure }
}
