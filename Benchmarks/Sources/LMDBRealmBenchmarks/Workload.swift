import Foundation

/// The Article workload: deterministic rows, the same for every engine and every run.
struct Row: Sendable {
    var id: Int64
    var url: String
    var lead: String
    var section: String
    var pubDate: Date
    var wordCount: Int
}

/// A 64-bit linear congruential generator (Knuth's MMIX constants), upper bits used.
struct Generator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state >> 33
    }
}

let sections = ["Sports", "World", "U.S.", "Business", "Arts", "Opinion", "Science", "Health", "Style", "Travel"]
let words = ["the", "market", "season", "players", "government", "city", "report", "new", "officials", "year",
             "said", "team", "after", "court", "music", "election", "game", "study", "museum", "coach"]

/// Publication dates are whole seconds, distinct for every id (a bijection of 1...N onto
/// 0..<1,000,003 seconds, about 11.6 days), so that "newest 100" has one answer in every engine.
func publicationDate(_ id: Int64) -> Date {
    let offset = (UInt64(id) &* 2_654_435_761) % 1_000_003
    return Date(timeIntervalSince1970: 1_435_708_800 + Double(offset))
}

func makeRows(_ ids: ClosedRange<Int64>, seed: UInt64 = 42) -> [Row] {
    var g = Generator(state: seed)
    return ids.map { i in
        var lead = ""
        while lead.utf8.count < 180 { lead += words[Int(g.next() % UInt64(words.count))] + " " }
        return Row(
            id: i,
            url: "https://www.nytimes.com/2015/07/0\(i % 7 + 1)/sports/article-\(String(format: "%010d", i))-basketball.html",
            lead: lead,
            section: sections[Int(g.next() % 10)],
            pubDate: publicationDate(i),
            wordCount: 100 + Int(g.next() % 1901))
    }
}

/// 100,000 primary keys drawn uniformly from 1...n.
func makeLookups(_ n: Int) -> [Int64] {
    var g = Generator(state: 7)
    return (0..<100_000).map { _ in Int64(1 + g.next() % UInt64(n)) }
}

/// The operations, in the order each engine runs them on its own fresh file.
enum Operation: String, CaseIterable, Sendable {
    case insert_bulk, scan_all, get_by_id, count_filter, count_section_indexed, top100_by_date
    case update_all, small_txns, group_commit, delete_all, file_size

    var unit: String {
        switch self {
        case .insert_bulk, .scan_all, .update_all, .delete_all: "objects/s"
        case .get_by_id: "lookups/s"
        case .count_filter, .count_section_indexed, .top100_by_date: "queries/s"
        case .small_txns, .group_commit: "commits/s"
        case .file_size: "MB"
        }
    }

    var summary: String {
        switch self {
        case .insert_bulk: "N inserts in one transaction, both secondary indexes maintained"
        case .scan_all: "every object: sum of wordCount and both strings' UTF-8 lengths"
        case .get_by_id: "100,000 random primary keys, wordCount read"
        case .count_filter: "count of wordCount > 1800 (no index)"
        case .count_section_indexed: "count of section == \"Sports\" (indexed)"
        case .top100_by_date: "newest 100 by pubDate (indexed), ids summed"
        case .update_all: "wordCount += 1 on every object, one transaction"
        case .small_txns: "1,000 transactions of one insert each, durable commit"
        case .group_commit:
            "8 writers at once, each committing 1,000 single inserts durably (LMDBRealm: `asyncWrite` from 8 actors, "
                + "writes that queue up share a commit; SQLite: 8 connections, `BEGIN IMMEDIATE`; LMDBKit: 8 threads, "
                + "a write transaction each; GRDB: not run); --quick: 100 each"
        case .delete_all: "every object deleted in one transaction"
        case .file_size: "size of the data files after insert_bulk"
        }
    }
}

/// The engines, in the order each round runs them.
let engineNames = ["LMDBRealm", "LMDBRealm-unchecked", "SQLite", "GRDB", "LMDBKit"]

/// What one engine must do. Every method runs on the main thread of a child process that
/// holds only that engine.
@MainActor protocol Engine {
    nonisolated static var name: String { get }
    init(directory: URL) throws
    func insertBulk(_ rows: [Row]) throws
    func scanAll() throws -> Int
    func get(_ ids: [Int64]) throws -> Int
    func countFilter() throws -> Int
    func countSection(_ section: String) throws -> Int
    func top100() throws -> Int
    func updateAll() throws
    func smallTransactions(_ rows: [Row]) throws
    func deleteAll() throws
    /// Makes the data files hold everything committed so far (a WAL checkpoint for SQLite).
    func settleFiles() throws
    func count() throws -> Int
}

/// The bytes of the data files under `directory`, lock and shared-memory files excluded.
func dataFileBytes(in directory: URL) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    var total = 0
    for name in names where !name.hasSuffix("-lock") && !name.hasSuffix("-shm") && name != "lock.mdb" {
        var st = stat()
        if stat(directory.appendingPathComponent(name).path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
            total += Int(st.st_size)
        }
    }
    return total
}
