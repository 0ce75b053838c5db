import Foundation
import GRDBSQLite
import LMDBKit
import LMDBRealm

// The feed workload: "the newest 50 notes of a section", the list a server's feed endpoint
// returns. N notes in N/10,000 sections (10,000 each at N = 1,000,000), each query a random
// section. LMDBRealm runs twice: with the compound index (section, created), and with the
// covering index on the same pair (each entry holds its note); SQLite has the composite index a
// SQLite user creates for this query, ON note(section, created), and, beside it, the index that
// covers the query, ON note(section, created, title); LMDBKit, the floor of the compound index,
// is that layout in raw LMDB, read without objects. Run with `--feed` (`--engines` picks; each
// of LMDBRealm and SQLite brings its second variant).
//
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --feed [--n N] [--rounds R]

final class FeedEntry: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var section: String
    @Persisted var created: Date
    @Persisted var title: String

    override class func compoundIndexes() -> [[String]] { [["section", "created"]] }

    static func newest(in notes: Results<FeedEntry>, section: String) -> Results<FeedEntry> {
        notes.where { $0.section == section }.sorted(byKeyPath: "created", ascending: false).limit(FeedData.limit)
    }
}

/// The same note with a covering index on (section, created): the query reads each note from
/// the index.
final class CoveredFeedEntry: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var section: String
    @Persisted var created: Date
    @Persisted var title: String

    override class func coveringIndexes() -> [[String]] { [["section", "created"]] }

    static func newest(in notes: Results<CoveredFeedEntry>, section: String) -> Results<CoveredFeedEntry> {
        notes.where { $0.section == section }.sorted(byKeyPath: "created", ascending: false).limit(FeedData.limit)
    }
}

/// What the LMDBRealm engine needs of a note class.
protocol FeedModel: Object {
    var id: Int64 { get set }
    var section: String { get set }
    var created: Date { get set }
    var title: String { get set }
    /// The newest notes of `section`, as a feed asks for them.
    static func newest(in notes: Results<Self>, section: String) -> Results<Self>
}

extension FeedEntry: FeedModel {}
extension CoveredFeedEntry: FeedModel {}

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
    /// Gives every note a new title in one transaction (a change to a property no index
    /// orders by); `false` if the engine does not measure it.
    func retitle(_ data: FeedData) throws -> Bool
}

extension FeedEngine {
    func retitle(_ data: FeedData) throws -> Bool { false }
}

/// The title `retitle` gives note `i`, as long as the first.
func feedNewTitle(_ i: Int) -> String { "Note \(i): a title of ordinary width" }

@MainActor final class RealmFeedEngine<Model: FeedModel>: FeedEngine {
    let realm: Realm

    init(directory: URL) throws {
        var config = Realm.Configuration(fileURL: directory.appendingPathComponent("feed.realm"), objectTypes: [Model.self])
        config.maximumFileSize = profileMapSize
        config.verifiesChecksums = benchmarkVerifiesChecksums
        realm = try Realm(configuration: config)
    }

    func insert(_ data: FeedData) throws {
        try realm.write {
            for i in 0..<data.notes {
                let note = Model()
                note.id = Int64(i + 1)
                note.section = feedSection(data.sectionOf[i])
                note.created = Date(timeIntervalSince1970: feedCreated(i))
                note.title = feedTitle(i)
                realm.add(note)
            }
        }
    }

    func newest(_ sections: [String]) throws -> Int {
        let notes = realm.objects(Model.self)
        var sum = 0
        for section in sections {
            for note in Model.newest(in: notes, section: section) { sum &+= note.title.utf8.count &+ Int(note.id) }
        }
        return sum
    }

    func retitle(_ data: FeedData) throws -> Bool {
        try realm.write {
            for (i, note) in realm.objects(Model.self).enumerated() { note.title = feedNewTitle(i) }
        }
        return true
    }
}

@MainActor final class SQLiteFeedEngine: FeedEngine {
    private let db: SQLiteDatabase

    /// With `covering`, the index holds the title too: the query reads the index alone.
    init(directory: URL, covering: Bool = false) throws {
        db = try SQLiteDatabase(
            directory.appendingPathComponent("feed.sqlite"),
            schema: """
                CREATE TABLE note(id INTEGER PRIMARY KEY, section TEXT NOT NULL, created REAL NOT NULL, title TEXT NOT NULL);
                CREATE INDEX note_section_created ON note(section, created\(covering ? ", title" : ""));
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

    func retitle(_ data: FeedData) throws -> Bool {
        let update = try db.prepare("UPDATE note SET title = ? WHERE id = ?")
        defer { sqlite3_finalize(update) }
        try db.exec("BEGIN")
        for i in 0..<data.notes {
            sqlite3_bind_text(update, 1, feedNewTitle(i), -1, db.transient)
            sqlite3_bind_int64(update, 2, Int64(i + 1))
            guard sqlite3_step(update) == SQLITE_DONE else { throw db.lastError }
            sqlite3_reset(update)
        }
        try db.exec("COMMIT")
        return true
    }
}

/// The floor: the same notes in raw LMDB through LMDBKit, laid out as LMDBRealm lays them out
/// (records under big-endian ids; an index whose keys are the section, a zero byte and the
/// big-endian bits of `created`, each naming an id), read with no objects: one cursor walk of
/// the index and one `mdb_get` a note, its title decoded into a String as the other engines do.
/// What any engine on this layout pays for the query; LMDBRealm's cost above it is its own.
@MainActor final class KitFeedEngine: FeedEngine {
    let env: Environment
    let notes: Database
    let bySectionCreated: Database

    init(directory: URL) throws {
        var options = Environment.Options()
        options.mapSize = profileMapSize
        env = try Environment.open(path: directory.appendingPathComponent("feed.mdb").path, options: options)
        notes = try env.createDatabase(named: "note")
        bySectionCreated = try env.createDatabase(named: "section_created", flags: .duplicateSort)
    }

    /// The index key's first part: the section's bytes and a zero byte.
    private static func prefix(_ section: String) -> [UInt8] { Array(section.utf8) + [0] }

    func insert(_ data: FeedData) throws {
        try env.write { txn in
            var record: [UInt8] = []
            var entries: [([UInt8], Int64)] = []
            entries.reserveCapacity(data.notes)
            for i in 0..<data.notes {
                let id = Int64(i + 1)
                let section = feedSection(data.sectionOf[i])
                let created = feedCreated(i).bitPattern
                record.removeAll(keepingCapacity: true)
                withUnsafeBytes(of: created.littleEndian) { record.append(contentsOf: $0) }
                for text in [section, feedTitle(i)] {
                    withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { record.append(contentsOf: $0) }
                    record.append(contentsOf: text.utf8)
                }
                try withUnsafeBytes(of: id.bigEndian) { try txn.put(record, forKey: Array($0), in: notes, flags: .append) }
                var key = Self.prefix(section)
                withUnsafeBytes(of: created.bigEndian) { key.append(contentsOf: $0) }
                entries.append((key, id))
            }
            // Written in key order, as LMDBRealm writes a transaction's index entries.
            entries.sort { $0.0.lexicographicallyPrecedes($1.0) }
            try txn.withCursor(on: bySectionCreated) { cursor in
                for (key, id) in entries {
                    try key.withUnsafeBytes { k in try withUnsafeBytes(of: id.bigEndian) { try cursor.put($0, forKey: k, flags: .append) } }
                }
            }
        }
    }

    func newest(_ sections: [String]) throws -> Int {
        try env.read { txn in
            try txn.withCursor(on: bySectionCreated) { cursor in try txn.withCursor(on: notes) { records in
                var sum = 0
                var ids: [Int64] = []
                ids.reserveCapacity(FeedData.limit)
                for section in sections {
                    let prefix = Self.prefix(section)
                    var after = prefix
                    after[after.count - 1] = 1
                    ids.removeAll(keepingCapacity: true)
                    try prefix.withUnsafeBytes { prefix in
                        func take(_ e: Cursor.Entry) -> Bool {
                            guard e.key.count > prefix.count, memcmp(e.key.baseAddress!, prefix.baseAddress!, prefix.count) == 0 else { return false }
                            ids.append(Int64(bigEndian: e.value.loadUnaligned(as: Int64.self)))
                            return true
                        }
                        // The section's newest entry: the one before the first key after the section.
                        let found = try after.withUnsafeBytes { try cursor.seek(atLeast: $0) { _ in () } } != nil
                        var more = try (found ? cursor.previous(take) : cursor.last(take)) ?? false
                        while more, ids.count < FeedData.limit { more = try cursor.previous(take) ?? false }
                    }
                    for id in ids {
                        sum &+= try withUnsafeBytes(of: id.bigEndian) { key in
                            try records.seek(exactly: key) { e in let value = e.value
                                // created 8, then the section and the title as (length, bytes).
                                let sectionLength = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
                                let at = 12 + sectionLength
                                let n = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                                let title = String(decoding: UnsafeRawBufferPointer(rebasing: value[(at + 4)..<(at + 4 + n)]), as: UTF8.self)
                                return title.utf8.count &+ Int(id)
                            } ?? 0
                        }
                    }
                }
                return sum
            } }
        }
    }
}

/// One engine of the feed as the table names it, and the `--engines` name that selects it.
private struct FeedVariant {
    let name: String
    let label: String
    let make: @MainActor (URL) throws -> any FeedEngine
}

private let feedVariants = [
    FeedVariant(name: "LMDBRealm", label: "LMDBRealm, covering index") { try RealmFeedEngine<CoveredFeedEntry>(directory: $0) },
    FeedVariant(name: "LMDBRealm", label: "LMDBRealm, compound index") { try RealmFeedEngine<FeedEntry>(directory: $0) },
    FeedVariant(name: "SQLite", label: "SQLite, index (section, created)") { try SQLiteFeedEngine(directory: $0) },
    FeedVariant(name: "SQLite", label: "SQLite, index (section, created, title)") { try SQLiteFeedEngine(directory: $0, covering: true) },
    FeedVariant(name: "LMDBKit", label: "LMDBKit, the compound layout") { try KitFeedEngine(directory: $0) },
]

/// Runs the feed workload: `rounds` rounds of every engine, alternating; prints a Markdown
/// table of medians (and writes it to `output/feed-latest.md`).
@MainActor func runFeed(settings: Settings) throws {
    let data = FeedData(n: settings.n)
    let rounds = settings.effectiveRounds
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-feed-\(getpid())")
    defer { try? FileManager.default.removeItem(at: root) }
    log("feed: N = \(data.notes) notes in \(data.sections) sections; \(rounds) rounds")
    let variants = feedVariants.filter { settings.engines.contains($0.name) }
    var queryRates: [String: [Double]] = [:]
    var insertRates: [String: [Double]] = [:]
    var fileBytes: [String: [Double]] = [:]
    var retitleRates: [String: [Double]] = [:]
    var check: Int?
    for round in 0..<rounds {
        for (v, variant) in variants.enumerated() {
            let directory = root.appendingPathComponent("\(v)-\(round)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let engine = try variant.make(directory)
            let (insertSeconds, _) = try timed { try engine.insert(data) }
            insertRates[variant.label, default: []].append(Double(data.notes) / insertSeconds)
            fileBytes[variant.label, default: []].append(Double(dataFileBytes(in: directory)))
            // One pass to warm the caches, then the measured one.
            let warm = try engine.newest(Array(data.queries.prefix(200)))
            // The queries ten times over: a pass alone lasts too little to time on a busy machine.
            let passes = 10
            let (seconds, sum) = try timed { try (0..<passes).reduce(0) { total, _ in total &+ (try engine.newest(data.queries)) } }
            precondition(check == nil || check == sum, "\(variant.label) top_n_in_section gave \(sum), another run \(check!)")
            check = sum
            _ = warm
            queryRates[variant.label, default: []].append(Double(passes * data.queries.count) / seconds)
            let (retitleSeconds, retitled) = try timed { try engine.retitle(data) }
            if retitled { retitleRates[variant.label, default: []].append(Double(data.notes) / retitleSeconds) }
            log("round \(round + 1)/\(rounds) \(variant.label): top_n_in_section \(Report.format(queryRates[variant.label]!.last!)) queries/s, insert \(Report.format(insertRates[variant.label]!.last!)) notes/s")
            try? FileManager.default.removeItem(at: directory)
        }
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let sqlite = queryRates[feedVariants[2].label].map(median)
    var rows = ""
    for variant in variants {
        let q = median(queryRates[variant.label]!)
        let ratio = sqlite.map { String(format: "%.2f×", q / $0) } ?? "–"
        let retitle = retitleRates[variant.label].map { Report.format(median($0)) } ?? "–"
        rows += "| \(variant.label) | \(Report.format(q)) | \(ratio) | \(Report.format(median(insertRates[variant.label]!))) | \(retitle) | \(Report.mb(median(fileBytes[variant.label]!))) |\n"
    }
    let table = """
        Feed, N = \(data.notes) notes in \(data.sections) sections; medians of \(rounds) rounds. top_n_in_section: \(data.queries.count) queries, ten times over, each the newest \(FeedData.limit) notes of a random section (id and title read); insert: all the notes in one transaction; retitle: every note's title changed in one transaction, after the queries; file: the data files' size after the insert.

        | engine | top_n_in_section, queries/s | / SQLite (section, created) | insert, notes/s | retitle, notes/s | file, MB |
        |---|---:|---:|---:|---:|---:|
        \(rows)
        """
    print(table)
    if let output = settings.output {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try table.write(toFile: output + "/feed-latest.md", atomically: true, encoding: .utf8)
    }
}
