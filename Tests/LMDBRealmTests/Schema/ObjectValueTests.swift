import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct ObjectValueTests {
    /// RealmSwift's `Object(value:)`: from a dictionary (nested objects as dictionaries too), an
    /// array in property order, or another object; and `create`, which adds it or updates only
    /// the properties given.
    @Test func objectsAreMadeFromValuesAndCreated() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Post.self, Tag.self]))
            let post = Post(value: ["id": 1, "title": "from a dictionary", "scores": [1.5, 2.5], "tags": [["value": "swift"], ["value": "lmdb", "weight": 3]]])
            #expect(post.id == 1 && post.title == "from a dictionary")
            #expect(Array(post.scores) == [1.5, 2.5])
            #expect(post.tags.map(\.value) == ["swift", "lmdb"] && post.tags[1].weight == 3)
            let tag = Tag(value: ["t", 9])
            #expect(tag.value == "t" && tag.weight == 9)
            try realm.write { realm.add(post) }
            let copy = Post(value: post)
            #expect(copy.realm == nil && copy.id == 1 && copy.title == "from a dictionary" && Array(copy.scores) == [1.5, 2.5])

            try realm.write {
                let created = realm.create(Post.self, value: ["id": 2, "title": "created"])
                #expect(created.realm != nil)
                // An update names only what changes.
                realm.create(Post.self, value: ["id": 1, "title": "updated"], update: .modified)
            }
            #expect(realm.objects(Post.self).count == 2)
            #expect(post.title == "updated" && Array(post.scores) == [1.5, 2.5], "the unnamed properties stay")
            #expect(realm.objects(Tag.self).count == 2)
            do {
                try realm.write { realm.create(Post.self, value: ["id": 2]) }
                Issue.record("a duplicate key under .error must fail")
            } catch let error as Realm.Error {
                #expect(error.code == .primaryKeyExists)
            }
        }
    }
}
