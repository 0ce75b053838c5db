import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct ObjectIdentityTests {
    /// Two accessors of one stored object are equal and hash alike (so sets and dictionaries of
    /// objects work); unmanaged objects equal only themselves; frozen and live differ.
    @Test func managedObjectsAreEqualByStoredIdentity() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            let a = Article(id: "a")
            let twin = Article(id: "a")
            #expect(a != twin && a == a)
            try realm.write {
                realm.add(a)
                realm.add(Article(id: "b"))
            }
            let found = try #require(realm.object(ofType: Article.self, forPrimaryKey: "a"))
            #expect(found == a && found.isSameObject(as: a) && found !== a)
            #expect(found.hashValue == a.hashValue)
            #expect(Set(realm.objects(Article.self)).count == 2)
            #expect(Set([found, a]).count == 1)
            #expect(found != realm.object(ofType: Article.self, forPrimaryKey: "b"))
            #expect(!found.isSameObject(as: nil))
            let frozen = found.freeze()
            #expect(frozen != found && frozen == found.freeze())
        }
    }

    @Test func anObjectDescribesItsClassAndValues() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            let article = Article(id: "a", section: "Arts", wordCount: 7)
            #expect(article.description.hasPrefix("Article {\n\tid = a;"))
            #expect(article.description.contains("\tsection = Arts;"))
            try realm.write { realm.add(article) }
            #expect(article.description.contains("\twordCount = 7;"))
            #expect("\(article)".hasSuffix("\n}"))
            try realm.write { realm.delete(article) }
            #expect(article.description == "[invalid object]")
        }
    }
}

@Suite struct ObjectSubscriptTests {
    /// Properties read and written by name, on unmanaged and managed objects, as RealmSwift's
    /// key-value access.
    @Test func propertiesAreReadAndWrittenByName() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Post.self, Tag.self]))
            let post = Post()
            post["id"] = 7
            post["title"] = "by name"
            #expect(post.id == 7 && post.title == "by name")
            #expect(post["title"] as? String == "by name")
            try realm.write { realm.add(post) }
            #expect(post["id"] as? Int == 7)
            try realm.write {
                post["title"] = "changed"
                (post["scores"] as? List<Double>)?.append(2.5)
                post["labels"] = List<String?>()
            }
            #expect(post.title == "changed" && Array(post.scores) == [2.5])
            #expect((post["tags"] as? List<Tag>)?.count == 0)
        }
    }

    /// As RealmSwift's: `ObjectKeyIdentifiable` makes a class `Identifiable`, one `id` per
    /// stored object whichever accessor or handle reads it.
    @Test func objectKeyIdentifiableGivesOneIdPerStoredObject() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [IdentifiedNote.self])
            let realm = try Realm(configuration: config)
            let first = IdentifiedNote()
            first.title = "first"
            let second = IdentifiedNote()
            second.title = "second"
            #expect(first.id != second.id, "unmanaged objects have ids of their own")
            try realm.write {
                realm.add(first)
                realm.add(second)
            }
            let notes = realm.objects(IdentifiedNote.self)
            #expect(notes[0].id == first.id && notes[1].id == second.id && notes[0] !== first)
            #expect(Set(notes.map(\.id)).count == 2)
            let fromAnotherThread = try onOtherThread {
                try Realm(configuration: config).objects(IdentifiedNote.self).map(\.id)
            }
            #expect(fromAnotherThread == [first.id, second.id])
            func ids<T: Identifiable>(_ items: [T]) -> [T.ID] { items.map(\.id) }
            #expect(ids(Array(notes)) == [first.id, second.id])
        }
    }
}

final class IdentifiedNote: Object, ObjectKeyIdentifiable {
    @Persisted var title: String
}
