import Foundation
import LMDBRealm

// A migration of N articles: version 0 has a title and a word count; version 1 adds a
// headline, which the block sets from the title. Run with `--profile migrate`.

final class MigratingArticleV0: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var title = ""
    @Persisted var wordCount = 0
    override class func className() -> String { "MigratingArticle" }
}

final class MigratingArticleV1: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var title = ""
    @Persisted var wordCount = 0
    @Persisted var headline = ""
    override class func className() -> String { "MigratingArticle" }
}

/// Writes `n` articles at version 0 into `directory`; returns the file.
func writeMigrationSource(_ directory: URL, n: Int) throws -> URL {
    let url = directory.appendingPathComponent("migrating.realm")
    var config = Realm.Configuration(fileURL: url, objectTypes: [MigratingArticleV0.self])
    config.maximumFileSize = profileMapSize
    let realm = try Realm(configuration: config)
    try realm.write {
        for i in 0..<n {
            let article = MigratingArticleV0()
            article.id = Int64(i)
            article.title = graphTitle(i)
            article.wordCount = i % 2000
            realm.add(article)
        }
    }
    return url
}

/// Migrates the file at `url` to version 1, setting every headline; returns the objects.
func migrate(_ url: URL, logger: Realm.Logger? = nil) throws -> Int {
    var config = Realm.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [MigratingArticleV1.self])
    config.maximumFileSize = profileMapSize
    config.logger = logger
    config.migrationBlock = { migration, _ in
        migration.enumerateObjects(ofType: "MigratingArticle") { old, new in
            new!["headline"] = old!["title"]
        }
    }
    let realm = try Realm(configuration: config)
    return realm.objects(MigratingArticleV1.self).count
}
