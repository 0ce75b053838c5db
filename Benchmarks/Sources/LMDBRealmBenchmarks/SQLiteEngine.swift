import Foundation
import GRDBSQLite

struct SQLiteError: Error, CustomStringConvertible {
    var description: String
}

/// The Article table and its indexes, for every SQLite connection of the suite.
let sqliteSchema = """
    CREATE TABLE article(id INTEGER PRIMARY KEY, url TEXT NOT NULL, leadParagraph TEXT NOT NULL,
                         section TEXT NOT NULL, pubDate REAL NOT NULL, wordCount INTEGER NOT NULL);
    CREATE INDEX article_section ON article(section);
    CREATE INDEX article_pubDate ON article(pubDate);
    """

let sqliteInsert = "INSERT INTO article(id, url, leadParagraph, section, pubDate, wordCount) VALUES (?, ?, ?, ?, ?, ?)"

/// Binds `row` to the parameters of a prepared `sqliteInsert`; SQLite copies the text.
func bindArticle(_ row: Row, to statement: OpaquePointer?) {
    let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
    sqlite3_bind_int64(statement, 1, row.id)
    sqlite3_bind_text(statement, 2, row.url, -1, transient)
    sqlite3_bind_text(statement, 3, row.lead, -1, transient)
    sqlite3_bind_text(statement, 4, row.section, -1, transient)
    sqlite3_bind_double(statement, 5, row.pubDate.timeIntervalSince1970)
    sqlite3_bind_int64(statement, 6, Int64(row.wordCount))
}

/// SQLite through its C API: prepared statements kept and reused, WAL, `synchronous=FULL`
/// (every commit fsyncs the WAL), one transaction per bulk operation, indexes on `section`
/// and `pubDate`, and a page cache (1 GiB) that holds the whole file, as LMDB's map does
/// (SQLite's default 2 MiB cache sends random lookups to the kernel with a read per page).
@MainActor final class SQLiteEngine: Engine {
    nonisolated static let name = "SQLite"
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var select: OpaquePointer?
    private var byID: OpaquePointer?
    private var filter: OpaquePointer?
    private var bySection: OpaquePointer?
    private var newest: OpaquePointer?

    /// SQLITE_TRANSIENT: SQLite copies bound text.
    private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    init(directory: URL) throws {
        guard sqlite3_open(directory.appendingPathComponent("articles.sqlite").path, &db) == SQLITE_OK else {
            throw SQLiteError(description: "cannot open the database")
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        try exec("PRAGMA cache_size=-1048576")
        try exec(sqliteSchema)
        insert = try prepare(sqliteInsert)
        select = try prepare("SELECT id, url, leadParagraph, section, pubDate, wordCount FROM article")
        byID = try prepare("SELECT id, url, leadParagraph, section, pubDate, wordCount FROM article WHERE id = ?")
        filter = try prepare("SELECT count(*) FROM article WHERE wordCount > 1800")
        bySection = try prepare("SELECT count(*) FROM article WHERE section = ?")
        newest = try prepare("SELECT id FROM article ORDER BY pubDate DESC LIMIT 100")
    }

    isolated deinit {
        for statement in [insert, select, byID, filter, bySection, newest] { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    private func check(_ rc: Int32, _ what: String) throws {
        if rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW {
            throw SQLiteError(description: "\(what): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    private func exec(_ sql: String) throws {
        try check(sqlite3_exec(db, sql, nil, nil, nil), sql)
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), sql)
        return statement
    }

    private func text(_ statement: OpaquePointer?, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    private func bindAndInsert(_ row: Row) throws {
        bindArticle(row, to: insert)
        try check(sqlite3_step(insert), "insert")
        sqlite3_reset(insert)
    }

    func insertBulk(_ rows: [Row]) throws {
        try exec("BEGIN")
        for row in rows { try bindAndInsert(row) }
        try exec("COMMIT")
    }

    func scanAll() throws -> Int {
        var sum = 0
        defer { sqlite3_reset(select) }
        while sqlite3_step(select) == SQLITE_ROW {
            let url = text(select, 1)
            let lead = text(select, 2)
            sum &+= Int(sqlite3_column_int64(select, 5)) &+ url.utf8.count &+ lead.utf8.count
        }
        return sum
    }

    func get(_ ids: [Int64]) throws -> Int {
        var sum = 0
        try exec("BEGIN")
        for id in ids {
            sqlite3_bind_int64(byID, 1, id)
            if sqlite3_step(byID) == SQLITE_ROW { sum &+= Int(sqlite3_column_int64(byID, 5)) }
            sqlite3_reset(byID)
        }
        try exec("COMMIT")
        return sum
    }

    private func scalar(_ statement: OpaquePointer?) throws -> Int {
        defer { sqlite3_reset(statement) }
        try check(sqlite3_step(statement), "count")
        return Int(sqlite3_column_int64(statement, 0))
    }

    func countFilter() throws -> Int { try scalar(filter) }

    func countSection(_ section: String) throws -> Int {
        sqlite3_bind_text(bySection, 1, section, -1, transient)
        return try scalar(bySection)
    }

    func top100() throws -> Int {
        var sum = 0
        defer { sqlite3_reset(newest) }
        while sqlite3_step(newest) == SQLITE_ROW { sum &+= Int(sqlite3_column_int64(newest, 0)) }
        return sum
    }

    func updateAll() throws {
        try exec("BEGIN")
        try exec("UPDATE article SET wordCount = wordCount + 1")
        try exec("COMMIT")
    }

    func smallTransactions(_ rows: [Row]) throws {
        for row in rows {
            try exec("BEGIN")
            try bindAndInsert(row)
            try exec("COMMIT")
        }
    }

    func deleteAll() throws {
        try exec("BEGIN")
        try exec("DELETE FROM article")
        try exec("COMMIT")
    }

    func settleFiles() throws { try exec("PRAGMA wal_checkpoint(TRUNCATE)") }

    func count() throws -> Int {
        let statement = try prepare("SELECT count(*) FROM article")
        defer { sqlite3_finalize(statement) }
        return try scalar(statement)
    }
}
