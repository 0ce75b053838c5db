import Foundation
import GRDBSQLite
import LMDBRealm

// The sectioned workload: the articles grouped by section for a sectioned list, then one insert
// and the change set a list view applies (sections inserted and deleted, rows inserted). LMDBRealm
// uses `sectioned(by: \.section)` and its observer; SQLite runs the query a SQLite user writes
// for the same list (ORDER BY section, id, grouped while reading) and, after the insert, the
// query again and the difference of the two. Run with `--sectioned`.
//
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --sectioned [--n N] [--rounds R]

/// One engine of the sectioned workload; checksums must agree between engines.
@MainActor protocol SectionedEngine {
    func load(_ rows: [Row]) throws
    /// Groups every article by section; returns a checksum of the layout.
    func sections() throws -> Int
    /// Inserts `row` and returns a checksum of the change set the list applies.
    func insertAndDiff(_ row: Row) throws -> Int
}

/// A checksum of a layout: section names, their sizes, and each section's first id.
func sectionChecksum(keys: [String], counts: [Int], firstIDs: [Int64]) -> Int {
    var sum = 0
    for (i, key) in keys.enumerated() { sum &+= (i + 1) &* (key.utf8.count &+ counts[i] &* 31 &+ Int(firstIDs[i])) }
    return sum
}

/// A checksum of a change set: positions of the inserted rows and sections.
func changeChecksum(insertions: [IndexPath], sectionsToInsert: [Int], deletions: [IndexPath]) -> Int {
    var sum = 0
    for p in insertions { sum &+= 1 &+ p.section &* 100_003 &+ p.item }
    for s in sectionsToInsert { sum &+= 7 &* (s + 1) }
    for p in deletions { sum &-= 1 &+ p.section &* 100_003 &+ p.item }
    return sum
}

@MainActor final class RealmSectionedEngine: SectionedEngine {
    let realm: Realm
    var token: NotificationToken?
    var lastChange = 0

    init(directory: URL) throws {
        var config = Realm.Configuration(fileURL: directory.appendingPathComponent("articles.realm"), objectTypes: [Article.self])
        config.maximumFileSize = profileMapSize
        realm = try Realm(configuration: config)
    }

    func load(_ rows: [Row]) throws {
        try realm.write {
            for row in rows { realm.add(RealmEngine.article(row)) }
        }
        token = realm.objects(Article.self).sectioned(by: \.section).observe { [unowned self] change in
            if case .update(_, let deletions, let insertions, _, let sectionsToInsert, _) = change {
                lastChange = changeChecksum(insertions: insertions, sectionsToInsert: Array(sectionsToInsert), deletions: deletions)
            }
        }
    }

    func sections() throws -> Int {
        let sections = realm.objects(Article.self).sectioned(by: \.section)
        return sectionChecksum(keys: sections.allKeys, counts: sections.map(\.count), firstIDs: sections.map { $0[0].id })
    }

    func insertAndDiff(_ row: Row) throws -> Int {
        // The observer runs inside the commit on this thread: the change set is ready when
        // `write` returns.
        try realm.write { realm.add(RealmEngine.article(row)) }
        return lastChange
    }
}

@MainActor final class SQLiteSectionedEngine: SectionedEngine {
    private let db: SQLiteDatabase
    /// The layout the list shows: ids per section.
    private var shown: (keys: [String], ids: [[Int64]]) = ([], [])

    init(directory: URL) throws {
        db = try SQLiteDatabase(directory.appendingPathComponent("articles.sqlite"), schema: sqliteSchema)
    }

    func load(_ rows: [Row]) throws {
        let insert = try db.prepare(sqliteInsert)
        defer { sqlite3_finalize(insert) }
        try db.exec("BEGIN")
        for row in rows {
            bindArticle(row, to: insert)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw db.lastError }
            sqlite3_reset(insert)
        }
        try db.exec("COMMIT")
        shown = try layout()
    }

    /// The articles' ids grouped by section, sections in order.
    private func layout() throws -> (keys: [String], ids: [[Int64]]) {
        let query = try db.prepare("SELECT section, id FROM article ORDER BY section, id")
        defer { sqlite3_finalize(query) }
        var keys: [String] = []
        var ids: [[Int64]] = []
        while sqlite3_step(query) == SQLITE_ROW {
            let bytes = sqlite3_column_text(query, 0)
            let count = Int(sqlite3_column_bytes(query, 0))
            let same = keys.last.map { last in last.utf8.count == count && last.utf8.elementsEqual(UnsafeBufferPointer(start: bytes, count: count)) } ?? false
            if !same {
                keys.append(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
                ids.append([])
            }
            ids[ids.count - 1].append(sqlite3_column_int64(query, 1))
        }
        return (keys, ids)
    }

    func sections() throws -> Int {
        let (keys, ids) = try layout()
        return sectionChecksum(keys: keys, counts: ids.map(\.count), firstIDs: ids.map { $0[0] })
    }

    func insertAndDiff(_ row: Row) throws -> Int {
        let insert = try db.prepare(sqliteInsert)
        defer { sqlite3_finalize(insert) }
        bindArticle(row, to: insert)
        guard sqlite3_step(insert) == SQLITE_DONE else { throw db.lastError }
        let new = try layout()
        let old = shown
        shown = new
        // Sections inserted and deleted; rows inserted and deleted in the sections kept.
        let oldIndex = Dictionary(uniqueKeysWithValues: old.keys.enumerated().map { ($1, $0) })
        var sectionsToInsert: [Int] = []
        var insertions: [IndexPath] = []
        var deletions: [IndexPath] = []
        for (s, key) in new.keys.enumerated() {
            guard let o = oldIndex[key] else {
                sectionsToInsert.append(s)
                continue
            }
            let before = Set(old.ids[o])
            let after = Set(new.ids[s])
            for (item, id) in new.ids[s].enumerated() where !before.contains(id) { insertions.append(IndexPath(item: item, section: s)) }
            for (item, id) in old.ids[o].enumerated() where !after.contains(id) { deletions.append(IndexPath(item: item, section: o)) }
        }
        return changeChecksum(insertions: insertions, sectionsToInsert: sectionsToInsert, deletions: deletions)
    }
}

/// Runs the sectioned workload: `rounds` rounds of both engines, alternating; prints a Markdown
/// table of medians (and writes it to `output/sectioned-latest.md`).
@MainActor func runSectioned(settings: Settings) throws {
    let n = settings.n
    let rows = makeRows(1...Int64(n))
    let inserts = makeRows(Int64(n + 1)...Int64(n + 20), seed: 9)
    let rounds = settings.effectiveRounds
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-sectioned-\(getpid())")
    defer { try? FileManager.default.removeItem(at: root) }
    log("sectioned: N = \(n) articles in \(sections.count) sections; \(rounds) rounds")
    var build: [String: [Double]] = [:]
    var change: [String: [Double]] = [:]
    var checks: [String: Int] = [:]
    for round in 0..<rounds {
        for name in ["LMDBRealm", "SQLite"] {
            let directory = root.appendingPathComponent("\(name)-\(round)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let engine: any SectionedEngine =
                name == "LMDBRealm" ? try RealmSectionedEngine(directory: directory) : try SQLiteSectionedEngine(directory: directory)
            try engine.load(rows)
            _ = try engine.sections()
            let (seconds, layout) = try timedQuery { try engine.sections() }
            var times: [Double] = []
            var sum = 0
            for row in inserts {
                let (t, c) = try timed { try engine.insertAndDiff(row) }
                times.append(t)
                sum &+= c
            }
            for (what, value) in [("sections", layout), ("changes", sum)] {
                precondition(checks[what] == nil || checks[what] == value, "\(name) \(what) gave \(value), the other engine \(checks[what]!)")
                checks[what] = value
            }
            build[name, default: []].append(seconds * 1000)
            change[name, default: []].append(times.sorted()[times.count / 2] * 1000)
            log("round \(round + 1)/\(rounds) \(name): sections \(String(format: "%.2f", seconds * 1000)) ms, insert + change set \(String(format: "%.2f", change[name]!.last!)) ms")
            try? FileManager.default.removeItem(at: directory)
        }
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let (a, b) = (median(build["LMDBRealm"]!), median(build["SQLite"]!))
    let (c, d) = (median(change["LMDBRealm"]!), median(change["SQLite"]!))
    let table = """
        Sectioned, N = \(n) articles in \(sections.count) sections; medians of \(rounds) rounds (lower is better)

        | operation | unit | LMDBRealm | SQLite | SQLite / LMDBRealm | what |
        |---|---|---:|---:|---:|---|
        | sectioned | ms | \(String(format: "%.2f", a)) | \(String(format: "%.2f", b)) | \(String(format: "%.2f", b / a))× | every article grouped by section: keys, counts, first of each (`sectioned(by: \\.section)`; SQLite: ORDER BY section, id, grouped while reading) |
        | sectioned_insert | ms | \(String(format: "%.2f", c)) | \(String(format: "%.2f", d)) | \(String(format: "%.2f", d / c))× | one durable insert, then the change set as index paths (LMDBRealm: the observer's; SQLite: the query again and the difference), median of 20 |

        """
    print(table)
    if let output = settings.output {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try table.write(toFile: output + "/sectioned-latest.md", atomically: true, encoding: .utf8)
    }
}
