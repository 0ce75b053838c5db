import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct ResultsTests {
    @Test func countSubscriptFirstLastAndIterationAgree() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let ids = (0..<1500).map { String(format: "id%05d", $0) }
            let seed = SeededGenerator.testSeed()
            var random = SeededGenerator(state: seed)
            try realm.write {
                for id in ids.shuffled(using: &random) { realm.add(Article(id: id, wordCount: Int(id.dropFirst(2))!)) }
            }
            let results = realm.objects(Article.self)
            #expect(results.count == 1500)
            #expect(results.map(\.id) == ids, "iteration in primary-key order, across batches (added in the order of seed \(seed))")
            #expect(results[0].id == ids[0])
            #expect(results[777].id == ids[777])
            #expect(results[1499].wordCount == 1499)
            #expect(results.first?.id == ids.first)
            #expect(results.last?.id == ids.last)
            #expect(results.indices == 0..<1500)
            #expect(results.reduce(0) { $0 + $1.wordCount } == (0..<1500).reduce(0, +))
            #expect(results.description == "Results<Article> (1500 objects)")
        }
    }

    @Test func resultsAreLive() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let results = realm.objects(Article.self)
            #expect(results.isEmpty && results.first == nil && results.last == nil)
            try realm.write { realm.add(Article(id: "b")) }
            #expect(results.count == 1)
            try realm.write { realm.add(Article(id: "a")) }
            #expect(results.map(\.id) == ["a", "b"])
            #expect(results[1].id == "b")
            try realm.write { realm.delete(results[0]) }
            #expect(results.map(\.id) == ["b"])
        }
    }

    @Test func iterationSurvivesAWriteInsideTheLoop() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write { for i in 0..<2000 { realm.add(IntKeyed.make(i)) } }
            var seen = 0
            try realm.write {
                for o in realm.objects(IntKeyed.self) {
                    o.name = "renamed \(o.id)"
                    seen += 1
                }
            }
            #expect(seen == 2000)
            #expect(realm.objects(IntKeyed.self).allSatisfy { $0.name == "renamed \($0.id)" })
        }
    }

    @Test func accessorsHeldFromALoopAreNeverRePointed() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write { for i in 0..<1200 { realm.add(IntKeyed.make(i)) } }
            // Every third accessor kept: the loop re-points only those nothing holds.
            for results in [realm.objects(IntKeyed.self), realm.objects(IntKeyed.self).where { $0.id >= 0 }] {
                var kept: [IntKeyed] = []
                var seen: [Int] = []
                for o in results {
                    seen.append(o.id)
                    if o.id % 3 == 0 { kept.append(o) }
                }
                #expect(seen == Array(0..<1200))
                #expect(kept.map(\.id) == Array(stride(from: 0, to: 1200, by: 3)))
                #expect(kept.map(\.name) == stride(from: 0, to: 1200, by: 3).map { "n\($0)" })
                #expect(Set(kept.map { ObjectIdentifier($0) }).count == kept.count)
            }
        }
    }

    @Test func anUnknownClassHasEmptyResults() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let results = realm.objects(UUIDKeyed.self)
            #expect(results.count == 0)
            #expect(Array(results).isEmpty)
        }
    }

    @Test func outOfBoundsIndexStops() async {
        await #expect(processExitsWith: .failure) {
            let dir = try makeTemporaryDirectory()
            let realm = try Realm(configuration: makeConfiguration(dir))
            _ = realm.objects(Article.self)[0]
        }
    }
}
