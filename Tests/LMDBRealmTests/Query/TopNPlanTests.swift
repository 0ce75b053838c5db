import Foundation
import LMDBRealm
import TestSupport
import Testing

final class FeedNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var folder = ""
    @Persisted(indexed: true) var stamp = 0
}

@Suite struct TopNPlanTests {
    /// "Newest N in a folder": a folder holding most notes is served by walking the stamp
    /// index newest first and stopping at N matches; a small folder by its index equality,
    /// then a sort. `explain()` says which, and both give the same notes as a plain sort.
    @Test func equalityPlusSortPlusLimitWalksTheSortIndexWhenThatIsCheaper() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [FeedNote.self]))
            let seed: UInt64 = 7
            var rng = SeededGenerator(state: seed)
            try realm.write {
                for id in 0..<3_000 {
                    let folder = id % 100 == 0 ? "rare" : "common"
                    realm.add(FeedNote(value: ["id": id, "folder": folder, "stamp": Int.random(in: 0..<1_000_000, using: &rng)]))
                }
            }
            let notes = realm.objects(FeedNote.self)
            for folder in ["common", "rare"] {
                let top = notes.where { $0.folder == folder }.sorted(byKeyPath: "stamp", ascending: false).limit(5)
                let expected = notes.filter { $0.folder == folder }.sorted { ($0.stamp, $1.id) > ($1.stamp, $0.id) }.prefix(5).map(\.id)
                #expect(top.map(\.id) == expected, "seed \(seed), \(folder): \(top.explain())")
                if folder == "common" {
                    #expect(top.explain().hasPrefix("index-ordered scan of FeedNote.stamp descending, filtered"), "\(top.explain())")
                } else {
                    #expect(top.explain().hasPrefix("index equality on FeedNote.folder"), "\(top.explain())")
                }
            }
        }
    }
}
