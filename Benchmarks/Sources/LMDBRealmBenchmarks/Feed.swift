import Foundation
import GRDBSQLite
import LMDBRealm

// The feed workload: "the newest 50 notes of a section", the list a server's feed endpoint
// returns. N notes in N/10,000 sections (10,000 each at N = 1,000,000), each query a random
// section. LMDBRealm declares the compound index (section, created); SQLite has the composite
// index a SQLite user creates for this query, ON note(section, created). Run with `--feed`.
//
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --feed [--n N] [--rounds R]

final class FeedEntry: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var section: String
    @Persisted var created: Date
    @Persisted var title: String

    override class func compoundIndexes() -> [[String]] { [["section", "created"]] }
}

/// The feed's data: which section each note is in, and the sections to query.
struct FeedData {
    static let sectionSize = 10_000
    static let limit = 50
    let notes: Int
    let sections: Int
    let sectionOf: [Int]
    let queries: [String]

    init(n: Int) {
        notes = n
        sections = max(1, n / Self.sectionSize)
        var g = Generator(state: 7)
        sectionOf = (0..<n).map { _ in Int(g.next() % UInt64(max(1, n / Self.sectionSize))) }
        queries = (0..<2_000).map { _ in feedSection(Int(g.next() % UInt64(max(1, n / Self.sectionSize)))) }
    }
}

func feedSection(_ i: Int) -> String { "section-\(String(format: "%04d", i))" }
func feedTitle(_ i: Int) -> String { "Note \(i): a title of ordinary length" }
/// Every note has its own date: both engines give one order.
func feedCreated(_ i: Int) -> Double { 1_700_000_000 + Double(i) }

/// One engine of the feed workload; `newest` returns a checksum the engines must agree on.
@MainActor protocol FeedEngine {
    func insert(_ data: FeedData) throws
    func newest(_ sections: [String]) throws -> Int
}

@MainActor final class RealmFeedEngine: FeedEngine {
    let realm: Realm

    init(directory: URL) throws {
        var config = Realm.Configuration(fileURL: directory.appendingPathComponent("feed.realm"), objectTypes: [FeedEntry.self])
        config.maximumFileSize = profileMapSize
        realm = try Realm(configuration: config)
    }

    func insert(_ data: FeedData) throws {
        try realm.write {
            for i in 0..<data.notes {
                let note = FeedEntry()
                note.id = Int64(i + 1)
                note.section = feedSection(data.sectionOf[i])
                note.created = Date(timeIntervalSince1970: feedCreated(i))
                note.title = feedTitle(i)
                realm.add(note)
            }
        }
    }

    func newest(_ sections: [String]) throws -> Int {
        let notes = realm.objects(FeedEntry.self)
        var sum = 0
        for section in sections {
            let page = notes.where { $0.section == section }.sorted(byKeyPath: "created", ascending: false).limit(FeedData.limit)
            for note in page { sum &+= note.title.utf8.count &+ Int(note.id) }
        }
        return sum
    }
}

@MainActor final class SQLiteFeedEngine: FeedEngine {
    private let db: SQLiteDatabase

    init(directory: URL) throws {
        db = try SQLiteDatabase(
            directory.appendingPathComponent("feed.sqlite"),
            schema: """
                CREATE TABLE note(id INTEGER PRIMARY KEY, section TEXT NOT NULL, created REAL NOT NULL, title TEXT NOT NULL);
                CREATE INDEX note_section_created ON note(section, created);
                """)
    }

    func insert(_ data: FeedData) throws {
        let insert = try db.prepare("INSERT INTO note(id, section, created, title) VALUES (?, ?, ?, ?)")
        defer { sqlite3_finalize(insert) }
        try db.exec("BEGIN")
        for i in 0..<data.notes {
            sqlite3_bind_int64(insert, 1, Int64(i + 1))
            sqlite3_bind_text(insert, 2, feedSection(data.sectionOf[i]), -1, db.transient)
            sqlite3_bind_double(insert, 3, feedCreated(i))
            sqlite3_bind_text(insert, 4, feedTitle(i), -1, db.transient)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw db.lastError }
            sqlite3_reset(insert)
        }
        try db.exec("COMMIT")
    }

    func newest(_ sections: [String]) throws -> Int {
        let query = try db.prepare("SELECT id, title FROM note WHERE section = ? ORDER BY created DESC LIMIT \(FeedData.limit)")
        defer { sqlite3_finalize(query) }
        var sum = 0
        for section in sections {
            sqlite3_bind_text(query, 1, section, -1, db.transient)
            while sqlite3_step(query) == SQLITE_ROW {
                // The title as a String, as the LMDBRealm engine reads it.
                let bytes = sqlite3_column_text(query, 1)
                let title = bytes.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(sqlite3_column_bytes(query, 1))), as: UTF8.self) } ?? ""
                sum &+= title.utf8.count &+ Int(sqlite3_column_int64(query, 0))
            }
            sqlite3_reset(query)
        }
        return sum
    }
}

/// Runs the feed workload: `rounds` rounds of both engines, alternating; prints a Markdown
/// table of medians (and writes it to `output/feed-latest.md`).
@MainActor func runFeed(settings: Settings) throws {
    let data = FeedData(n: settings.n)
    let rounds = settings.effectiveRounds
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-feed-\(getpid())")
    defer { try? FileManager.default.removeItem(at: root) }
    log("feed: N = \(data.notes) notes in \(data.sections) sections; \(rounds) rounds")
    var rates: [String: [Double]] = [:]
    var check: Int?
    for round in 0..<rounds {
        for name in ["LMDBRealm", "SQLite"] where settings.engines.contains(name) {
            let directory = root.appendingPathComponent("\(name)-\(round)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let engine: any FeedEngine = name == "LMDBRealm" ? try RealmFeedEngine(directory: directory) : try SQLiteFeedEngine(directory: directory)
            try engine.insert(data)
            // One pass to warm both engines' caches, then the measured one.
            let warm = try engine.newest(Array(data.queries.prefix(200)))
            // The queries ten times over: a pass alone lasts too little to time on a busy machine.
            let passes = 10
            let (seconds, sum) = try timed { try (0..<passes).reduce(0) { total, _ in total &+ (try engine.newest(data.queries)) } }
            precondition(check == nil || check == sum, "\(name) top_n_in_section gave \(sum), another run \(check!)")
            check = sum
            _ = warm
            rates[name, default: []].append(Double(passes * data.queries.count) / seconds)
            log("round \(round + 1)/\(rounds) \(name): top_n_in_section \(Report.format(rates[name]!.last!)) queries/s")
            try? FileManager.default.removeItem(at: directory)
        }
    }
    guard rates.count == 2 else { return }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let a = median(rates["LMDBRealm"]!)
    let b = median(rates["SQLite"]!)
    let table = """
        Feed, N = \(data.notes) notes in \(data.sections) sections; medians of \(rounds) rounds

        | operation | unit | LMDBRealm | SQLite | LMDBRealm / SQLite | what |
        |---|---|---:|---:|---:|---|
        | top_n_in_section | queries/s | \(Report.format(a)) | \(Report.format(b)) | \(String(format: "%.2f", a / b))× | \(data.queries.count) queries, ten times over: the newest \(FeedData.limit) notes of a random section (id and title read); LMDBRealm's compound index (section, created), SQLite's index ON note(section, created) |

        """
    print(table)
    if let output = settings.output {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try table.write(toFile: output + "/feed-latest.md", atomically: true, encoding: .utf8)
    }
}
