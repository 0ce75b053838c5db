import Foundation
import LMDBRealm

let profileMapSize = 4 << 30

/// Whether the LMDBRealm engines check every record's checksum as they read it (the default):
/// `LMDBREALM_BENCH_CHECKSUMS=off` in the environment turns the check off, for measuring its
/// cost under a profiler; `make bench` runs the flat suite both ways (engine `LMDBRealm-unchecked`).
let benchmarkVerifiesChecksums = ProcessInfo.processInfo.environment["LMDBREALM_BENCH_CHECKSUMS"] != "off"

/// The operations `--profile` repeats.
enum ProfiledOperation: String, CaseIterable {
    case insert, scan, get, filter, section, top100, update, delete, construct
    case link_insert, follow_links, query_through_link, migrate, top_n_in_section, top_n_covered

    var summary: String {
        switch self {
        case .insert: "insert_bulk on a fresh file each round"
        case .scan: "scan_all over one loaded file"
        case .get: "get_by_id over one loaded file"
        case .filter: "count_filter over one loaded file, repeated for a second per round"
        case .section: "count_section_indexed over one loaded file, 20,000 queries a round"
        case .top100: "top100_by_date over one loaded file, repeated for a second per round"
        case .update: "update_all (wordCount += 1 on every object, one write) over one loaded file"
        case .delete: "delete_all, the file loaded again before each round (the load is not timed)"
        case .construct: "creating and filling N unmanaged Articles, no realm"
        case .link_insert: "the graph workload's link_insert on a fresh file each round"
        case .follow_links: "the graph workload's follow_links over one loaded file"
        case .query_through_link: "the graph workload's query_through_link over one loaded file"
        case .top_n_in_section: "the feed workload's newest 50 of a section, 2,000 queries over one loaded file"
        case .top_n_covered: "top_n_in_section through the covering index"
        case .migrate: "opening N articles of schema version 0 at version 1: a property added, set by the block from another"
        }
    }
}

/// A profiling aid: one operation of the LMDBRealm engine, repeated in this process with
/// nothing else running, so that `perf record -g` or callgrind sees only it. The file's map is
/// 4 GiB here, small enough for valgrind.
///
///     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --profile top100 [--n N] [--rounds R]
///     perf record -g Benchmarks/.build/release/LMDBRealmBenchmarks --profile scan
///     valgrind --tool=callgrind --toggle-collect='*measured*' \
///         Benchmarks/.build/release/LMDBRealmBenchmarks --profile get --n 20000 --rounds 1
@MainActor func runProfile(_ op: ProfiledOperation, settings: Settings) throws {
    let n = settings.n
    let rounds = settings.rounds ?? 5
    let rows = makeRows(1...Int64(n))
    let lookups = makeLookups(n)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-profile-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    log("profile \(op.rawValue): \(op.summary); N = \(n), \(rounds) rounds")

    /// A fresh file with the N rows, in a directory of its own.
    func loaded(_ round: Int) throws -> RealmEngine {
        let sub = directory.appendingPathComponent("round-\(round)")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let engine = try RealmEngine(directory: sub, maximumFileSize: profileMapSize)
        try engine.insertBulk(rows)
        return engine
    }

    var rates: [Double] = []
    var check = 0
    /// A fresh graph file for `round`, loaded unless `empty`.
    func graph(_ round: Int, empty: Bool = false) throws -> (RealmGraphEngine, GraphData) {
        let sub = directory.appendingPathComponent("graph-\(round)")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let engine = try RealmGraphEngine(directory: sub)
        let data = GraphData(n: n)
        if !empty { try engine.insert(data) }
        return (engine, data)
    }
    switch op {
    case .migrate:
        for round in 0..<rounds {
            let sub = directory.appendingPathComponent("migrate-\(round)")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            let url = try writeMigrationSource(sub, n: n)
            let logger = Realm.Logger(level: .info) { _, message in log(message) }
            let (s, count) = try timed { try measured { try migrate(url, logger: logger) } }
            rates.append(Double(n) / s)
            check &+= count
        }
    case .link_insert:
        for round in 0..<rounds {
            let (engine, data) = try graph(round, empty: true)
            let (s, _) = try timed { try measured { try engine.insert(data) } }
            rates.append(Double(n) / s)
        }
    case .follow_links:
        let (engine, data) = try graph(0)
        for _ in 0..<rounds {
            let (s, sum) = try timed { try measured { try engine.follow(data.lookups) } }
            rates.append(Double(data.lookups.count) / s)
            check &+= sum
        }
    case .query_through_link:
        let (engine, data) = try graph(0)
        for _ in 0..<rounds {
            let (s, sum) = try timed { try measured { try engine.countByKeyword(data.values) } }
            rates.append(Double(data.values.count) / s)
            check &+= sum
        }
    case .top_n_in_section, .top_n_covered:
        let sub = directory.appendingPathComponent("feed")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let engine: any FeedEngine =
            op == .top_n_covered ? try RealmFeedEngine<CoveredFeedEntry>(directory: sub) : try RealmFeedEngine<FeedEntry>(directory: sub)
        let data = FeedData(n: n)
        try engine.insert(data)
        for _ in 0..<rounds {
            let (s, sum) = try timed { try measured { try engine.newest(data.queries) } }
            rates.append(Double(data.queries.count) / s)
            check &+= sum
        }
    case .insert:
        for round in 0..<rounds {
            let sub = directory.appendingPathComponent("round-\(round)")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            let engine = try RealmEngine(directory: sub, maximumFileSize: profileMapSize)
            let (s, _) = try timed { try measured { try engine.insertBulk(rows) } }
            rates.append(Double(n) / s)
            check &+= try engine.count()
        }
    case .section:
        let engine = try loaded(0)
        for _ in 0..<rounds {
            let (s, sum) = try timed { try measured { try (0..<20_000).reduce(0) { n, _ in n &+ (try engine.countSection("Sports")) } } }
            rates.append(20_000 / s)
            check &+= sum
        }
    case .scan, .get, .filter, .top100:
        let engine = try loaded(0)
        for _ in 0..<rounds {
            switch op {
            case .scan:
                let (s, sum) = try timed { try measured { try engine.scanAll() } }
                rates.append(Double(n) / s)
                check &+= sum
            case .get:
                let (s, sum) = try timed { try measured { try engine.get(lookups) } }
                rates.append(Double(lookups.count) / s)
                check &+= sum
            default:
                var runs = 0
                let start = now()
                repeat {
                    check &+= try measured { try op == .filter ? engine.countFilter() : engine.top100() }
                    runs += 1
                } while now() - start < 1_000_000_000
                rates.append(Double(runs) / (Double(now() - start) / 1e9))
            }
        }
    case .update:
        let engine = try loaded(0)
        for _ in 0..<rounds {
            let (s, _) = try timed { try measured { try engine.updateAll() } }
            rates.append(Double(n) / s)
            check &+= try engine.count()
        }
    case .delete:
        for round in 0..<rounds {
            let engine = try loaded(round)
            let (s, _) = try timed { try measured { try engine.deleteAll() } }
            rates.append(Double(n) / s)
            check &+= try engine.count()
        }
    case .construct:
        for _ in 0..<rounds {
            var keep: [Article] = []
            keep.reserveCapacity(rows.count)
            let (s, _) = measured {
                timed { for row in rows { keep.append(RealmEngine.article(row)) } }
            }
            rates.append(Double(n) / s)
            check &+= keep.count
        }
    }
    let unit = op == .top100 || op == .filter || op == .section || op == .query_through_link || op == .top_n_in_section || op == .top_n_covered
        ? "queries/s" : (op == .get || op == .follow_links ? "lookups/s" : "objects/s")
    print(String(format: "%@ %.0f %@ (median of %d rounds; min %.0f, max %.0f; check %d)",
                 op.rawValue, median(rates), unit, rates.count, rates.min()!, rates.max()!, check))
}

/// Runs `body`: a frame of its own, never inlined, that a profiler can select (callgrind's
/// `--toggle-collect='*measured*'` counts only the operation, not the loading around it).
@inline(never)
func measured<R>(_ body: () throws -> R) rethrows -> R {
    try body()
}
