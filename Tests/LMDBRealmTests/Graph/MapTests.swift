import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

final class Review: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var ratings: Map<String, Int>
    @Persisted var notes: Map<String, String?>
}

private func mapConfiguration(_ dir: URL) -> Realm.Configuration {
    makeConfiguration(dir, types: [Review.self])
}

@Suite struct MapTests {
    /// Random sets and removals on a stored map and on Swift's `Dictionary` agree.
    @Test func aStoredMapBehavesAsSwiftsDictionary() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: mapConfiguration(dir))
            let review = Review()
            review.id = 1
            review.ratings["seed"] = 1
            try realm.write { realm.add(review) }
            var model: [String: Int] = ["seed": 1]
            let seed: UInt64 = 11
            var rng = SeededGenerator(state: seed)
            for step in 0..<300 {
                let key = "k\(Int.random(in: 0..<12, using: &rng))"
                let value = Int.random(in: -5...5, using: &rng)
                try realm.write {
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0...5:
                        review.ratings[key] = value
                        model[key] = value
                    case 6...8:
                        review.ratings.removeObject(for: key)
                        model[key] = nil
                    default:
                        if step % 40 == 9 {
                            review.ratings.removeAll()
                            model.removeAll()
                        } else {
                            review.ratings[key] = nil
                            model[key] = nil
                        }
                    }
                }
                #expect(review.ratings.count == model.count, "seed \(seed), step \(step)")
                #expect(review.ratings[key] == model[key], "seed \(seed), step \(step)")
                #expect(Dictionary(uniqueKeysWithValues: review.ratings.map { ($0.key, $0.value) }) == model, "seed \(seed), step \(step)")
            }
            #expect(Set(review.ratings.keys) == Set(model.keys))
            // RealmSwift's merge: a key held already gets what `uniquingKeysWith` returns.
            try realm.write { review.ratings.merge([(key: "k1", value: 10), (key: "new", value: 7)]) { old, new in old + new } }
            #expect(review.ratings["new"] == 7 && review.ratings["k1"] == (model["k1"].map { $0 + 10 } ?? 10))
            #expect(review.objectSchema["ratings"]?.isMap == true)
            #expect("\(review.objectSchema["ratings"]!)" == "ratings: Map<string, int>")
        }
    }

    @Test func mapsAreQueriedByKeysAndValues() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: mapConfiguration(dir))
            let a = Review()
            a.id = 1
            a.ratings["home"] = 4
            a.ratings["away"] = 2
            a.notes["home"] = "loud"
            a.notes["away"] = nil
            let b = Review()
            b.id = 2
            b.ratings["home"] = 1
            b.notes["x"] = .some(nil)
            let c = Review()
            c.id = 3
            try realm.write {
                realm.add(a)
                realm.add(b)
                realm.add(c)
            }
            #expect(a.ratings["home"] == 4 && a.ratings["none"] == nil && a.notes.count == 1)
            #expect(b.notes.count == 1 && b.notes["x"] == .some(nil), "a stored nil value keeps its key")
            let reviews = realm.objects(Review.self)
            #expect(reviews.filter("ANY ratings.@values > 3").map(\.id) == [1])
            #expect(reviews.filter("ratings > 1").map(\.id) == [1], "values, as for a list")
            #expect(reviews.filter("ratings.@keys == 'away'").map(\.id) == [1])
            #expect(reviews.filter("ANY ratings.@keys BEGINSWITH 'h'").map(\.id) == [1, 2])
            #expect(reviews.filter("ratings.@count == 0").map(\.id) == [3])
            #expect(reviews.filter("ratings.@sum >= 5").map(\.id) == [1])
            #expect(reviews.filter("ANY notes == nil").map(\.id) == [2])
            #expect(reviews.filter("notes.@values CONTAINS 'loud'").map(\.id) == [1])
            #expect(reviews.filter("ratings['home'] > 3").map(\.id) == [1])
            #expect(reviews.filter("ratings['home'] >= 1").map(\.id) == [1, 2])
            #expect(reviews.filter("ratings[%@] == 2", "away").map(\.id) == [1])
            #expect(reviews.filter("ratings['a.b'] == 2").isEmpty, "a key with a dot is a key")
            #expect(reviews.filter("NOT ratings['home'] > 3").map(\.id) == [2, 3])
            #expect(reviews.where { $0.ratings["home"] > 3 }.map(\.id) == [1])
            #expect(reviews.where { $0.ratings.values > 3 }.map(\.id) == [1])
            #expect(reviews.where { $0.ratings.keys == "away" }.map(\.id) == [1])
            #expect(reviews.where { $0.ratings.count == 0 }.map(\.id) == [3])
            #expect(reviews.where { $0.ratings.contains(1) }.map(\.id) == [2])
            do {
                _ = try reviews.filter(checking: "id['x'] == 1")
                Issue.record("a subscript on a non-map was accepted")
            } catch let error as RealmError {
                #expect(error.message.contains("follows no Map"), "\(error.message)")
            }

            var seen = 0
            let token = reviews.observe(keyPaths: ["ratings"]) { _ in seen += 1 }
            defer { token.invalidate() }
            try realm.write { b.ratings["home"] = 1 }  // the same value: no change
            try realm.write { b.ratings["home"] = 5 }
            #expect(seen == 2, "the initial delivery and one real change")
            try realm.write { realm.delete(a) }
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func aMapIsObservedAndFrozen() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: mapConfiguration(dir))
            let review = Review()
            review.id = 1
            review.ratings["home"] = 1
            try realm.write { realm.add(review) }
            var seen: [String] = []
            let token = review.ratings.observe { change in
                switch change {
                case .initial(let map): seen.append("initial \(map.count)")
                case .update(let map, let d, let i, let m): seen.append("\(map.count) -\(d) +\(i) ~\(m)")
                case .error(let error): seen.append("\(error)")
                }
            }
            defer { token.invalidate() }
            try realm.write { review.ratings["away"] = 2 }
            try realm.write { review.ratings["home"] = 3 }
            try realm.write { review.ratings["away"] = nil }
            #expect(seen == ["initial 1", #"2 -[] +["away"] ~[]"#, #"2 -[] +[] ~["home"]"#, #"1 -["away"] +[] ~[]"#])
            let frozen = review.ratings.freeze()
            try realm.write { review.ratings["home"] = 9 }
            #expect(frozen.isFrozen && frozen["home"] == 3 && review.ratings["home"] == 9)
        }
    }
}

