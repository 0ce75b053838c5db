import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

struct Boom: Error, Equatable {}

@Suite struct WriteTests {
    @Test func writeReturnsTheBlocksValue() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let count = try realm.write {
                realm.add(Article(id: "a"))
                return realm.objects(Article.self).count
            }
            #expect(count == 1)
            #expect(!realm.isInWriteTransaction)
        }
    }

    @Test func aThrowingWriteLeavesTheFileByteForByteAsItWas() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write {
                for i in 0..<500 { realm.add(Article(id: "a\(i)", wordCount: i)) }
            }
            let before = try Data(contentsOf: config.fileURL!)
            #expect(throws: Boom.self) {
                try realm.write {
                    realm.deleteAll()
                    for i in 0..<5000 { realm.add(Article(id: "b\(i)")) }
                    realm.objects(Article.self).first!.wordCount = -1
                    throw Boom()
                }
            }
            #expect(!realm.isInWriteTransaction)
            #expect(try Data(contentsOf: config.fileURL!) == before)
            #expect(realm.objects(Article.self).count == 500)
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "b1") == nil)
            // And for a handle on another thread.
            let other = try onOtherThread { try Realm(configuration: config).objects(Article.self).count }
            #expect(other == 500)
        }
    }

    @Test func duplicatePrimaryKeyThrowsAndRollsBackTheWholeWrite() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write { realm.add(Article(id: "dup")) }
            do {
                try realm.write {
                    realm.add(Article(id: "fresh"))
                    realm.add(Article(id: "dup"))
                }
                Issue.record("expected primaryKeyExists")
            } catch let error as Realm.Error {
                #expect(error.code == .primaryKeyExists)
                #expect(error.message.contains("'Article'") && error.message.contains("'dup'"))
            }
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "fresh") == nil)
            #expect(realm.objects(Article.self).count == 1)
        }
    }

    @Test func duplicateWithinOneWriteThrowsToo() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            #expect(throws: Realm.Error.self) {
                try realm.write {
                    realm.add(IntKeyed.make(5))
                    realm.add(IntKeyed.make(5))
                }
            }
            #expect(realm.objects(IntKeyed.self).isEmpty)
        }
    }

    /// As in RealmSwift, `add` and `create` do not throw: a duplicate key is recorded in the
    /// write, the block runs on, and the write throws it and keeps nothing of the block.
    @Test func aDuplicateKeyMakesTheWriteThrowAndLeavesNothing() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Article(id: "kept")) }
            let duplicate = Article(id: "kept")
            var ranToTheEnd = false
            do {
                try realm.write {
                    realm.add(Article(id: "new"))
                    realm.add(duplicate)
                    realm.create(Article.self, value: ["id": "created"])
                    ranToTheEnd = true
                }
                Issue.record("the write did not throw")
            } catch let error as Realm.Error {
                #expect(error.code == .primaryKeyExists, "\(error)")
                #expect(error.message.contains("kept"), "\(error.message)")
            }
            #expect(ranToTheEnd)
            #expect(duplicate.realm == nil)
            #expect(realm.objects(Article.self).map(\.id) == ["kept"])
            let seenElsewhere = try onOtherThread { try Realm(configuration: config).objects(Article.self).map(\.id) }
            #expect(seenElsewhere == ["kept"])
            // The same through beginWrite/commitWrite.
            realm.beginWrite()
            realm.add(Article(id: "kept"))
            #expect(throws: Realm.Error.self) { try realm.commitWrite() }
            #expect(!realm.isInWriteTransaction)
            #expect(realm.objects(Article.self).count == 1)
        }
    }

    @Test func updatePoliciesReplaceStoredObjects() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write { realm.add(Article(id: "x", wordCount: 1)) }
            try realm.write { realm.add(Article(id: "x", wordCount: 2), update: .modified) }
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "x")?.wordCount == 2)
            try realm.write { realm.add([Article(id: "x", wordCount: 3), Article(id: "y")], update: .all) }
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "x")?.wordCount == 3)
            #expect(realm.objects(Article.self).count == 2)
        }
    }

    @Test func addedObjectsBecomeLiveAccessors() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let a = Article(id: "live", wordCount: 10)
            try realm.write { realm.add(a) }
            #expect(a.realm === realm)
            let b = try #require(realm.object(ofType: Article.self, forPrimaryKey: "live"))
            try realm.write { a.wordCount += 5 }
            #expect(b.wordCount == 15)
            try realm.write { realm.add(a) }  // adding a managed object again does nothing
            #expect(realm.objects(Article.self).count == 1)
        }
    }

    @Test func beginCommitAndCancel() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            realm.beginWrite()
            #expect(realm.isInWriteTransaction)
            realm.add(Article(id: "kept"))
            try realm.commitWrite()
            realm.beginWrite()
            let dropped = Article(id: "dropped")
            realm.add(dropped)
            #expect(realm.objects(Article.self).count == 2)  // a write sees its own changes
            realm.cancelWrite()
            #expect(!realm.isInWriteTransaction)
            #expect(dropped.isInvalidated)
            #expect(realm.objects(Article.self).map(\.id) == ["kept"])
        }
    }

    @Test func deleteInvalidatesTheObject() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let a = Article(id: "gone")
            let b = Article(id: "stays")
            try realm.write { realm.add([a, b]) }
            try realm.write { realm.delete(a) }
            #expect(a.isInvalidated)
            #expect(!b.isInvalidated)
            #expect(realm.objects(Article.self).map(\.id) == ["stays"])
            try realm.write { realm.delete(realm.objects(Article.self)) }
            #expect(b.isInvalidated)
            #expect(realm.objects(Article.self).isEmpty)
        }
    }

    @Test func deleteAllEmptiesEveryClassAndInvalidatesAccessors() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let realm = try Realm(configuration: config)
            let article = Article(id: "a")
            let entry = LogEntry()
            try realm.write {
                realm.add(article)
                realm.add(entry)
                realm.add(IntKeyed.make(1))
            }
            // A class this handle never touched, added by another handle on another thread.
            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write { other.add(UUIDKeyed()) }
            }
            realm.refresh()
            try realm.write { realm.deleteAll() }
            #expect(article.isInvalidated && entry.isInvalidated)
            #expect(realm.isEmpty)
            #expect(realm.objects(Article.self).isEmpty && realm.objects(LogEntry.self).isEmpty)
            #expect(realm.objects(UUIDKeyed.self).isEmpty && realm.objects(IntKeyed.self).isEmpty)
            // Auto-assigned keys keep working after deleteAll.
            try realm.write { realm.add([LogEntry(), LogEntry()]) }
            #expect(realm.objects(LogEntry.self).count == 2)
        }
    }

    @Test func classesWithoutPrimaryKeyKeepInsertionOrder() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write {
                for i in 0..<300 {
                    let e = LogEntry()
                    e.message = "m\(i)"
                    e.level = i
                    realm.add(e)
                }
            }
            try realm.write {
                let e = LogEntry()
                e.level = 300
                realm.add(e)
            }
            #expect(realm.objects(LogEntry.self).map(\.level) == Array(0...300))
        }
    }

    @Test func everyPrimaryKeyKindFindsItsObject() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let uuid = UUID()
            let oid = ObjectId.generate()
            try realm.write {
                for i in [-5, 0, 5, Int.max, Int.min] { realm.add(IntKeyed.make(i)) }
                let a = Int64Keyed()
                a.id = -9
                realm.add(a)
                let u = UUIDKeyed()
                u.id = uuid
                realm.add(u)
                let o = ObjectIdKeyed()
                o.id = oid
                realm.add(o)
                realm.add(OptionalStringKeyed())  // nil key
                let s = OptionalStringKeyed()
                s.id = "s"
                realm.add(s)
                realm.add(OptionalIntKeyed())
            }
            #expect(realm.objects(IntKeyed.self).map(\.id) == [Int.min, -5, 0, 5, Int.max])
            for i in [-5, 0, 5, Int.max, Int.min] { #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: i)?.name == "n\(i)") }
            #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: 6) == nil)
            #expect(realm.object(ofType: Int64Keyed.self, forPrimaryKey: Int64(-9)) != nil)
            #expect(realm.object(ofType: UUIDKeyed.self, forPrimaryKey: uuid) != nil)
            #expect(realm.object(ofType: ObjectIdKeyed.self, forPrimaryKey: oid) != nil)
            #expect(realm.object(ofType: OptionalStringKeyed.self, forPrimaryKey: "s") != nil)
            #expect(realm.object(ofType: OptionalStringKeyed.self, forPrimaryKey: String?.none) != nil)
            #expect(realm.object(ofType: OptionalIntKeyed.self, forPrimaryKey: Int?.none) != nil)
            #expect(realm.objects(OptionalStringKeyed.self).count == 2)
        }
    }

    @Test func overlongPrimaryKeyThrowsInvalidValue() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            do {
                try realm.write { realm.add(Article(id: String(repeating: "k", count: 600))) }
                Issue.record("expected invalidValue")
            } catch let error as Realm.Error {
                #expect(error.code == .invalidValue)
                #expect(error.message.contains("Article"))
            }
            #expect(realm.objects(Article.self).isEmpty)
        }
    }

    @Test func fileFullThrowsMapFullAndKeepsEarlierData() throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir)
            config.maximumFileSize = 1 << 20
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Article(id: "early")) }
            do {
                try realm.write {
                    for i in 0..<10_000 {
                        let a = Article(id: "big\(i)")
                        a.leadParagraph = String(repeating: "x", count: 500)
                        realm.add(a)
                    }
                }
                Issue.record("expected mapFull")
            } catch let error as Realm.Error {
                #expect(error.code == .mapFull)
                #expect(error.message.contains(config.fileURL!.path))
            }
            #expect(realm.objects(Article.self).map(\.id) == ["early"])
            try realm.write { realm.add(Article(id: "later")) }
            #expect(realm.objects(Article.self).count == 2)
        }
    }
}

extension IntKeyed {
    static func make(_ id: Int) -> IntKeyed {
        let o = IntKeyed()
        o.id = id
        o.name = "n\(id)"
        return o
    }
}

