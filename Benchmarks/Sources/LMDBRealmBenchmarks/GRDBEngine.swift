import Foundation
import GRDB

/// The record as GRDB users write it: Codable, with the table's schema derived from it.
struct ArticleRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "article"
    var id: Int64
    var url: String
    var leadParagraph: String
    var section: String
    var pubDate: Date
    var wordCount: Int

    enum Columns {
        static let pubDate = Column(CodingKeys.pubDate)
        static let section = Column(CodingKeys.section)
        static let wordCount = Column(CodingKeys.wordCount)
    }
}

/// GRDB records over a `DatabaseQueue` in WAL mode with `synchronous=FULL`, one transaction
/// per bulk operation, the same 1 GiB page cache as the C API engine; dates in GRDB's
/// default storage (ISO-8601 text).
@MainActor final class GRDBEngine: Engine {
    nonisolated static let name = "GRDB"
    let queue: DatabaseQueue

    init(directory: URL) throws {
        var config = Configuration()
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous=FULL")
            try db.execute(sql: "PRAGMA cache_size=-1048576")
        }
        queue = try DatabaseQueue(path: directory.appendingPathComponent("articles.sqlite").path, configuration: config)
        _ = try queue.writeWithoutTransaction { db in
            try String.fetchOne(db, sql: "PRAGMA journal_mode=WAL")
        }
        try queue.write { db in
            try db.create(table: "article") { t in
                t.primaryKey("id", .integer)
                t.column("url", .text).notNull()
                t.column("leadParagraph", .text).notNull()
                t.column("section", .text).notNull().indexed()
                t.column("pubDate", .datetime).notNull().indexed()
                t.column("wordCount", .integer).notNull()
            }
        }
    }

    private func record(_ row: Row) -> ArticleRecord {
        ArticleRecord(id: row.id, url: row.url, leadParagraph: row.lead, section: row.section, pubDate: row.pubDate, wordCount: row.wordCount)
    }

    func insertBulk(_ rows: [Row]) throws {
        try queue.write { db in
            for row in rows { try record(row).insert(db) }
        }
    }

    func scanAll() throws -> Int {
        try queue.read { db in
            var sum = 0
            let cursor = try ArticleRecord.fetchCursor(db)
            while let a = try cursor.next() {
                sum &+= a.wordCount &+ a.url.utf8.count &+ a.leadParagraph.utf8.count
            }
            return sum
        }
    }

    func get(_ ids: [Int64]) throws -> Int {
        try queue.read { db in
            var sum = 0
            for id in ids {
                if let a = try ArticleRecord.fetchOne(db, key: id) { sum &+= a.wordCount }
            }
            return sum
        }
    }

    func countFilter() throws -> Int {
        try queue.read { db in try ArticleRecord.filter(ArticleRecord.Columns.wordCount > 1800).fetchCount(db) }
    }

    func countSection(_ section: String) throws -> Int {
        try queue.read { db in try ArticleRecord.filter(ArticleRecord.Columns.section == section).fetchCount(db) }
    }

    func top100() throws -> Int {
        try queue.read { db in
            try ArticleRecord.order(ArticleRecord.Columns.pubDate.desc).limit(100).fetchAll(db).reduce(0) { $0 &+ Int($1.id) }
        }
    }

    func updateAll() throws {
        _ = try queue.write { db in
            try ArticleRecord.updateAll(db, ArticleRecord.Columns.wordCount += 1)
        }
    }

    func smallTransactions(_ rows: [Row]) throws {
        for row in rows {
            try queue.write { db in try record(row).insert(db) }
        }
    }

    func deleteAll() throws {
        _ = try queue.write { db in try ArticleRecord.deleteAll(db) }
    }

    func settleFiles() throws {
        _ = try queue.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
    }

    func count() throws -> Int {
        try queue.read { db in try ArticleRecord.fetchCount(db) }
    }
}
