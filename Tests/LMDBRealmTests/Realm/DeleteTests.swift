import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

@Suite struct DeleteTests {
    @Test func deletingAWholeClassEmptiesItAndItsIndexesOnly() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self, IntKeyed.self]))
            try loadArticles(realm)
            try realm.write { for i in 0..<30 { realm.add(IntKeyed.make(i)) } }
            let first = realm.objects(Article.self).first!
            let other = realm.object(ofType: IntKeyed.self, forPrimaryKey: 7)!
            try realm.write {
                realm.delete(realm.objects(Article.self))
                #expect(realm.objects(Article.self).isEmpty, "seen inside the write")
                #expect(realm.objects(Article.self).where { $0.section == "Sports" }.count == 0)
            }
            #expect(first.isInvalidated)
            #expect(!other.isInvalidated && other.name == "n7")
            #expect(realm.objects(Article.self).count == 0)
            #expect(realm.objects(IntKeyed.self).count == 30)
            #expect(realm.indexProblems() == [])
            // The class takes new objects, in the same write as the delete too.
            try realm.write {
                realm.add(Article(id: "z", section: "Arts"))
                realm.delete(realm.objects(Article.self))
                realm.add(Article(id: "b", section: "Sports"))
                realm.add(Article(id: "a", section: "Sports"))
            }
            #expect(realm.objects(Article.self).map(\.id) == ["a", "b"])
            #expect(realm.objects(Article.self).where { $0.section == "Sports" }.count == 2)
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func deletingFilteredResultsRemovesTheirObjectsOnly() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try loadArticles(realm)
            let all = Array(realm.objects(Article.self)).map { (id: $0.id, section: $0.section, words: $0.wordCount) }
            let arts = realm.objects(Article.self).where { $0.section == "Arts" }
            let keptArticle = realm.objects(Article.self).where { $0.section == "World" }.first!
            let doomed = arts.first!
            try realm.write { realm.delete(arts) }
            #expect(doomed.isInvalidated)
            #expect(!keptArticle.isInvalidated)
            #expect(arts.isEmpty)
            #expect(realm.objects(Article.self).map(\.id) == all.filter { $0.section != "Arts" }.map(\.id))
            #expect(realm.indexProblems() == [])

            // Sorted and limited: exactly the objects the results held.
            let longest = realm.objects(Article.self).sorted(byKeyPath: "wordCount", ascending: false).limit(7)
            let longestIDs = Array(longest).map(\.id)
            try realm.write { realm.delete(longest) }
            let left = Set(realm.objects(Article.self).map(\.id))
            #expect(left.isDisjoint(with: longestIDs))
            #expect(left.count == all.count - all.filter { $0.section == "Arts" }.count - 7)
            #expect(realm.indexProblems() == [])

            // Ordered by the index, and a filter on a plain property.
            try realm.write {
                realm.delete(realm.objects(Article.self).sorted(byKeyPath: "section").limit(5))
                realm.delete(realm.objects(Article.self).where { $0.wordCount < 100 })
            }
            #expect(realm.objects(Article.self).where { $0.wordCount < 100 }.isEmpty)
            #expect(realm.indexProblems() == [])

            // Nothing matches: nothing changes.
            let before = realm.objects(Article.self).count
            try realm.write { realm.delete(realm.objects(Article.self).where { $0.section == "None" }) }
            #expect(realm.objects(Article.self).count == before)
        }
    }

    @Test func deletingResultsSeesObjectsAddedInTheSameWrite() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try realm.write {
                for i in 0..<100 { realm.add(Article(id: String(format: "n%03d", i), section: i % 2 == 0 ? "Even" : "Odd")) }
                // The index entries of these objects are still buffered.
                realm.delete(realm.objects(Article.self).where { $0.section == "Odd" })
            }
            #expect(realm.objects(Article.self).count == 50)
            #expect(realm.objects(Article.self).allSatisfy { $0.section == "Even" })
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func aCancelledWriteRestoresDeletedObjectsAndIndexes() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self, LogEntry.self]))
            try loadArticles(realm)
            try realm.write {
                for i in 0..<10 {
                    let e = LogEntry()
                    e.message = "m\(i)"
                    realm.add(e)
                }
            }
            let sports = realm.objects(Article.self).where { $0.section == "Sports" }.first!
            let arts = realm.objects(Article.self).where { $0.section == "Arts" }.first!
            realm.beginWrite()
            realm.delete(realm.objects(Article.self).where { $0.section == "Sports" })
            realm.delete(realm.objects(LogEntry.self))
            #expect(sports.isInvalidated)
            realm.delete(realm.objects(Article.self))
            #expect(arts.isInvalidated)
            realm.add(Article(id: "new", section: "Sports"))
            realm.cancelWrite()
            #expect(!sports.isInvalidated && sports.section == "Sports")
            #expect(!arts.isInvalidated && arts.section == "Arts")
            #expect(realm.objects(Article.self).count == 200)
            #expect(realm.objects(Article.self).where { $0.section == "Sports" }.count == 40)
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "new") == nil)
            #expect(realm.objects(LogEntry.self).map(\.message) == (0..<10).map { "m\($0)" })
            #expect(realm.indexProblems() == [])
            // Auto-assigned keys carry on after the cancelled delete.
            try realm.write {
                let e = LogEntry()
                e.message = "m10"
                realm.add(e)
            }
            #expect(realm.objects(LogEntry.self).map(\.message) == (0...10).map { "m\($0)" })
        }
    }

    @Test func deletingResultsOfAClassTheFileLacksDoesNothing() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write { realm.delete(realm.objects(IntKeyed.self)) }
            #expect(realm.objects(IntKeyed.self).isEmpty)
        }
    }
}
