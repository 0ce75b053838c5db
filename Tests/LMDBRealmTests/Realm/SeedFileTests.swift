import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct SeedFileTests {
    /// A missing file starts as a copy of the seed; an existing one is left alone; no copy in
    /// progress is left behind.
    @Test func theSeedIsCopiedOnlyWhenNoFileIsThere() throws {
        try withTemporaryDirectory { dir in
            let seed = dir.appendingPathComponent("seed.realm")
            do {
                let realm = try Realm(configuration: makeConfiguration(dir, "seed.realm", types: [Article.self]))
                try realm.write {
                    realm.add(Article(id: "seeded"))
                }
            }
            let target = dir.appendingPathComponent("app").appendingPathComponent("articles.realm")
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            var config = Realm.Configuration(fileURL: target, objectTypes: [Article.self])
            config.seedFilePath = seed
            do {
                let realm = try Realm(configuration: config)
                #expect(realm.objects(Article.self).map(\.id) == ["seeded"])
                try realm.write { realm.add(Article(id: "mine")) }
            }
            do {
                let realm = try Realm(configuration: config)
                #expect(realm.objects(Article.self).count == 2, "the existing file is not replaced")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: target.deletingLastPathComponent().path)
            #expect(left.sorted() == ["articles.realm", "articles.realm-lock"])

            var missing = config
            missing.fileURL = dir.appendingPathComponent("other.realm")
            missing.seedFilePath = dir.appendingPathComponent("no-such-seed.realm")
            #expect(throws: Realm.Error.self) { try Realm(configuration: missing) }
        }
    }
}
