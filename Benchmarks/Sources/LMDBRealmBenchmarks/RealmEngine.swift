import Foundation
import LMDBRealm

final class Article: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var url: String
    @Persisted var leadParagraph: String
    @Persisted(indexed: true) var section: String
    @Persisted(indexed: true) var pubDate: Date
    @Persisted var wordCount: Int
}

/// LMDBRealm through its object API, as an application writes it. Commits are durable
/// (LMDB's default: data and meta page flushed before `write` returns). Every record read is
/// checked against its checksum, as by default.
@MainActor class RealmEngine: Engine {
    nonisolated class var name: String { "LMDBRealm" }
    /// Whether reads check records' checksums.
    nonisolated class var verifiesChecksums: Bool { benchmarkVerifiesChecksums }
    let realm: Realm

    required convenience init(directory: URL) throws {
        try self.init(directory: directory, maximumFileSize: nil)
    }

    /// With `maximumFileSize`, a smaller memory map than the default 64 GiB (valgrind cannot
    /// reserve that much address space).
    init(directory: URL, maximumFileSize: Int?) throws {
        var config = Realm.Configuration(fileURL: directory.appendingPathComponent("articles.realm"), objectTypes: [Article.self])
        if let maximumFileSize { config.maximumFileSize = maximumFileSize }
        config.verifiesChecksums = Self.verifiesChecksums
        realm = try Realm(configuration: config)
    }

    nonisolated static func article(_ row: Row) -> Article {
        let a = Article()
        a.id = row.id
        a.url = row.url
        a.leadParagraph = row.lead
        a.section = row.section
        a.pubDate = row.pubDate
        a.wordCount = row.wordCount
        return a
    }

    func insertBulk(_ rows: [Row]) throws {
        try realm.write {
            for row in rows { realm.add(Self.article(row)) }
        }
    }

    func scanAll() throws -> Int {
        var sum = 0
        for a in realm.objects(Article.self) {
            sum &+= a.wordCount &+ a.url.utf8.count &+ a.leadParagraph.utf8.count
        }
        return sum
    }

    func get(_ ids: [Int64]) throws -> Int {
        var sum = 0
        for id in ids {
            if let a = realm.object(ofType: Article.self, forPrimaryKey: id) { sum &+= a.wordCount }
        }
        return sum
    }

    func countFilter() throws -> Int {
        realm.objects(Article.self).where { $0.wordCount > 1800 }.count
    }

    func countSection(_ section: String) throws -> Int {
        realm.objects(Article.self).where { $0.section == section }.count
    }

    func top100() throws -> Int {
        var sum = 0
        for a in realm.objects(Article.self).sorted(byKeyPath: "pubDate", ascending: false).limit(100) {
            sum &+= Int(a.id)
        }
        return sum
    }

    func updateAll() throws {
        try realm.write {
            for a in realm.objects(Article.self) { a.wordCount += 1 }
        }
    }

    func smallTransactions(_ rows: [Row]) throws {
        for row in rows {
            try realm.write { realm.add(Self.article(row)) }
        }
    }

    func deleteAll() throws {
        try realm.write { realm.delete(realm.objects(Article.self)) }
    }

    func settleFiles() throws {}

    func count() throws -> Int {
        _ = realm.refresh()
        return realm.objects(Article.self).count
    }
}

/// The same engine with `verifiesChecksums` off: what the check costs, beside it in each round.
@MainActor final class UncheckedRealmEngine: RealmEngine {
    nonisolated override class var name: String { "LMDBRealm-unchecked" }
    nonisolated override class var verifiesChecksums: Bool { false }
}
