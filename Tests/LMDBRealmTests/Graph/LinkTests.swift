import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

final class Writer: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted var name: String
    @Persisted var age: Int?
}

final class Story: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted var title: String
    @Persisted var byline: Writer?
    @Persisted var editor: Writer?

    convenience init(_ id: String, title: String = "", byline: Writer? = nil) {
        self.init()
        self.id = id
        self.title = title
        self.byline = byline
    }
}

extension Writer {
    convenience init(_ id: String, _ name: String) {
        self.init()
        self.id = id
        self.name = name
    }
}

/// Objects without a primary key that link to their own class.
final class Peer: Object {
    @Persisted var name: String
    @Persisted var friend: Peer?
}

func linkConfiguration(_ dir: URL) -> Realm.Configuration {
    makeConfiguration(dir, types: [Story.self, Writer.self, Peer.self])
}

/// Adds two peers who are each other's friend, and one who is its own friend.
private func addPeerCycles(to realm: Realm) throws -> (a: Peer, b: Peer, loner: Peer) {
    let a = Peer()
    a.name = "a"
    let b = Peer()
    b.name = "b"
    a.friend = b
    b.friend = a
    let loner = Peer()
    loner.name = "self"
    loner.friend = loner
    try realm.write {
        realm.add(a)
        realm.add(loner)
    }
    return (a, b, loner)
}

@Suite struct LinkTests {
    @Test func addingAnObjectAddsTheUnmanagedObjectsItLinksTo() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let ada = Writer("w1", "Ada")
            let story = Story("s1", title: "Engines", byline: ada)
            try realm.write { realm.add(story) }
            #expect(ada.realm != nil, "the linked object is managed now")
            #expect(realm.objects(Writer.self).count == 1)
            let stored = try #require(realm.object(ofType: Story.self, forPrimaryKey: "s1"))
            #expect(stored.byline?.name == "Ada")
            #expect(stored.byline?.id == "w1")
            #expect(stored.editor == nil)
            #expect(stored.objectSchema["byline"]?.objectClassName == "Writer")
            #expect(stored.objectSchema["byline"]?.type == .object)
            #expect(stored.objectSchema["byline"]?.isOptional == true)
            #expect("\(stored.objectSchema["byline"]!)" == "byline: Writer?")
        }
    }

    @Test func managedTargetsAreLinkedNotCopied() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let ada = Writer("w1", "Ada")
            try realm.write { realm.add(ada) }
            let shared = Writer("w2", "Grace")
            try realm.write {
                realm.add(Story("s1", byline: ada))
                realm.add(Story("s2", byline: shared))
                // The same unmanaged writer, added with the first story, is managed by now.
                realm.add(Story("s3", byline: shared))
            }
            #expect(realm.objects(Writer.self).count == 2)
            try realm.write { ada.name = "Ada L." }
            #expect(realm.object(ofType: Story.self, forPrimaryKey: "s1")?.byline?.name == "Ada L.")
            #expect(realm.objects(Story.self).map { $0.byline?.id } == ["w1", "w2", "w2"])
        }
    }

    @Test func settingALinkStoresUnlinksAndAddsUnmanagedTargets() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let story = Story("s1")
            try realm.write { realm.add(story) }
            #expect(story.byline == nil)
            try realm.write { story.byline = Writer("w1", "Ada") }
            #expect(story.byline?.name == "Ada")
            #expect(realm.objects(Writer.self).count == 1)
            let grace = Writer("w2", "Grace")
            try realm.write {
                story.byline = grace
                story.editor = grace
                #expect(story.byline?.name == "Grace", "seen inside the write")
            }
            #expect(story.editor?.id == "w2")
            try realm.write { story.byline = nil }
            #expect(story.byline == nil)
            #expect(story.editor?.id == "w2")
            #expect(realm.objects(Writer.self).count == 2, "unlinking deletes nothing")
        }
    }

    @Test func aLinkedObjectsTakenPrimaryKeyFollowsThePolicy() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            try realm.write { realm.add(Writer("w1", "Ada")) }
            do {
                try realm.write { realm.add(Story("s1", byline: Writer("w1", "Someone else"))) }
                Issue.record("the write committed")
            } catch let error as Realm.Error {
                #expect(error.code == .primaryKeyExists)
            }
            #expect(realm.objects(Story.self).isEmpty, "the failed write is rolled back")
            #expect(realm.object(ofType: Writer.self, forPrimaryKey: "w1")?.name == "Ada")

            try realm.write { realm.add(Story("s1", byline: Writer("w1", "Ada Lovelace")), update: .modified) }
            #expect(realm.objects(Writer.self).count == 1)
            #expect(realm.object(ofType: Story.self, forPrimaryKey: "s1")?.byline?.name == "Ada Lovelace")

            // A setter that cannot add its target fails the write, and the commit says why.
            let story = realm.object(ofType: Story.self, forPrimaryKey: "s1")!
            do {
                try realm.write { story.editor = Writer("w1", "Duplicate") }
                Issue.record("the write committed")
            } catch let error as Realm.Error {
                #expect(error.code == .primaryKeyExists)
            }
            #expect(story.editor == nil)
        }
    }

    @Test func cyclesAreStoredWithBothEnds() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let (a, _, loner) = try addPeerCycles(to: realm)
            #expect(realm.objects(Peer.self).count == 3)
            #expect(a.friend?.name == "b")
            #expect(a.friend?.friend?.name == "a")
            #expect(loner.friend?.friend?.name == "self")
        }
    }

    @Test func deletingAnObjectNullifiesEveryLinkToIt() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let ada = Writer("w1", "Ada")
            let grace = Writer("w2", "Grace")
            let first = Story("s1", byline: ada)
            first.editor = ada
            let second = Story("s2", byline: ada)
            second.editor = grace
            try realm.write {
                realm.add(first)
                realm.add(second)
            }
            try realm.write { realm.delete(ada) }
            #expect(first.byline == nil && first.editor == nil && second.byline == nil)
            #expect(second.editor?.name == "Grace", "links to other objects stay")
            // An object added later under the same key is not linked by the old links.
            try realm.write { realm.add(Writer("w1", "Someone new")) }
            #expect(first.byline == nil && second.byline == nil)
            #expect(realm.indexProblems() == [])

            // Deleting through results, and a whole class: every link to them is gone.
            try realm.write {
                first.byline = realm.object(ofType: Writer.self, forPrimaryKey: "w1")
                realm.delete(realm.objects(Writer.self).where { $0.name == "Grace" })
            }
            #expect(second.editor == nil)
            #expect(first.byline?.name == "Someone new")
            try realm.write { realm.delete(realm.objects(Writer.self)) }
            #expect(first.byline == nil)
            #expect(realm.objects(Story.self).count == 2, "the linking objects stay")
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func deletingALinkingObjectOrALinkToItselfLeavesTheIndexesConsistent() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let (a, b, loner) = try addPeerCycles(to: realm)
            try realm.write {
                realm.delete(a)
                realm.delete(loner)
            }
            #expect(b.friend == nil)
            #expect(realm.objects(Peer.self).map(\.name) == ["b"])
            #expect(realm.indexProblems() == [])
            try realm.write { realm.deleteAll() }
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func linksSurviveReopeningAndAreSeenByOtherHandles() throws {
        try withTemporaryDirectory { dir in
            do {
                let realm = try Realm(configuration: linkConfiguration(dir))
                try realm.write { realm.add(Story("s1", title: "Engines", byline: Writer("w1", "Ada"))) }
                let other = try Realm(configuration: linkConfiguration(dir))
                #expect(other.object(ofType: Story.self, forPrimaryKey: "s1")?.byline?.name == "Ada")
            }
            let reopened = try Realm(configuration: linkConfiguration(dir))
            let story = try #require(reopened.object(ofType: Story.self, forPrimaryKey: "s1"))
            #expect(story.byline?.name == "Ada")
            #expect(story.title == "Engines")
        }
    }

    @Test func queriesFollowToOneLinks() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let seed = SeededGenerator.testSeed()
            var generator = SeededGenerator(state: seed)
            try realm.write {
                let writers = (0..<12).map { i in
                    let w = Writer("w\(i)", i == 5 ? "" : "W\(i % 7)")
                    w.age = i % 4 == 0 ? nil : 20 + i * 3
                    return w
                }
                for i in 0..<300 {
                    let story = Story("s\(1000 + i)", title: "t\(i % 9)")
                    story.byline = Int.random(in: 0..<5, using: &generator) == 0 ? nil : writers.randomElement(using: &generator)
                    story.editor = Bool.random(using: &generator) ? writers.randomElement(using: &generator) : nil
                    realm.add(story, update: .modified)
                }
                // Links to deleted writers are null.
                realm.delete(realm.objects(Writer.self).where { $0.id == "w3" || $0.id == "w8" })
            }
            let all = Array(realm.objects(Story.self))
            let ada = realm.object(ofType: Writer.self, forPrimaryKey: "w2")!
            func check(_ format: String, _ args: Any..., where expected: (Story) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
                let found = realm.objects(Story.self).filter(format, argumentArray: args).map(\.id)
                #expect(found == all.filter(expected).map(\.id), "\(format) (seed \(seed))", sourceLocation: sourceLocation)
            }
            try check("byline == nil", where: { $0.byline == nil })
            try check("byline != nil", where: { $0.byline != nil })
            try check("byline == %@", ada, where: { $0.byline?.id == "w2" })
            try check("byline != %@", ada, where: { $0.byline?.id != "w2" })
            try check("byline.name == 'W3'", where: { $0.byline?.name == "W3" })
            try check("byline.name != 'W3'", where: { $0.byline?.name != "W3" })
            try check("byline.name == nil", where: { $0.byline == nil })
            try check("byline.name BEGINSWITH 'W1'", where: { $0.byline?.name.hasPrefix("W1") == true })
            try check("byline.age > 35", where: { ($0.byline?.age ?? 0) > 35 })
            try check("byline.age == nil", where: { $0.byline?.age == nil })
            try check("byline.age BETWEEN {30, 40}", where: { (30...40).contains($0.byline?.age ?? -1) })
            try check("editor.name IN {'W1', 'W2'}", where: { ["W1", "W2"].contains($0.editor?.name ?? "-") })
            try check("byline.id == 'w4' AND title == 't2'", where: { $0.byline?.id == "w4" && $0.title == "t2" })
            try check("NOT (byline.name == 'W1') OR editor == nil", where: { $0.byline?.name != "W1" || $0.editor == nil })

            // The DSL reaches through links the same way.
            #expect(realm.objects(Story.self).where { $0.byline.name == "W3" }.map(\.id) == all.filter { $0.byline?.name == "W3" }.map(\.id))
            #expect(realm.objects(Story.self).where { $0.byline == nil }.count == all.filter { $0.byline == nil }.count)
            #expect(realm.objects(Story.self).where { $0.editor == ada }.map(\.id) == all.filter { $0.editor?.id == "w2" }.map(\.id))
            #expect(realm.objects(Story.self).where { $0.byline.age > 35 }.count == all.filter { ($0.byline?.age ?? 0) > 35 }.count)
        }
    }

    @Test func aKeyPathThroughSomethingOtherThanALinkIsRefused() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            #expect(throws: Realm.Error.self) { _ = try realm.objects(Story.self).filter(checking: "title.count == 2") }
            #expect(throws: Realm.Error.self) { _ = try realm.objects(Story.self).filter(checking: "byline.nickname == 'x'") }
            #expect(throws: Realm.Error.self) { _ = try realm.objects(Story.self).filter(checking: "byline > nil") }
            #expect(throws: Realm.Error.self) { _ = try realm.objects(Story.self).filter(checking: "byline.name == editor.name") }
        }
    }

    @Test func resultsSortThroughLinksWithNilFirst() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            try realm.write {
                let names = ["Cleo", "Ada", "Bea"]
                for (i, name) in names.enumerated() {
                    let w = Writer("w\(i)", name)
                    w.age = [40, nil, 30][i]
                    realm.add(Story("s\(i)", title: "t", byline: w))
                }
                realm.add(Story("s9", title: "u"))
                realm.add(Story("s8", title: "t", byline: Writer("gone", "Zed")))
                realm.delete(realm.object(ofType: Writer.self, forPrimaryKey: "gone")!)
            }
            let stories = realm.objects(Story.self)
            #expect(stories.sorted(byKeyPath: "byline.name").map(\.id) == ["s8", "s9", "s1", "s2", "s0"])
            #expect(stories.sorted(byKeyPath: "byline.name", ascending: false).map(\.id) == ["s0", "s2", "s1", "s8", "s9"])
            #expect(stories.sorted(byKeyPath: "byline.age").map(\.id) == ["s1", "s8", "s9", "s2", "s0"])
            let byTitleThenName = stories.sorted(by: [SortDescriptor(keyPath: "title"), SortDescriptor(keyPath: "byline.name", ascending: false)])
            #expect(byTitleThenName.map(\.id) == ["s0", "s2", "s1", "s8", "s9"])
            #expect(stories.filter("title == 't'").sorted(byKeyPath: "byline.name").map(\.id) == ["s8", "s1", "s2", "s0"])

            // The same by key path, as RealmSwift code writes it, on any collection.
            #expect(stories.sorted(by: \.byline?.name).map(\.id) == ["s8", "s9", "s1", "s2", "s0"])
            #expect(stories.sorted(by: \.byline?.age, ascending: false).map(\.id) == stories.sorted(byKeyPath: "byline.age", ascending: false).map(\.id))
            #expect(AnyRealmCollection(stories).sorted(by: \.byline?.name).map(\.id) == ["s8", "s9", "s1", "s2", "s0"])
            #expect(SortDescriptor(keyPath: \Story.editor?.name).keyPath == "editor.name")
        }
    }

    /// RealmSwift's `_name(for:)`: the key path string a key path stands for.
    @Test func keyPathsNameTheirPropertiesThroughLinks() {
        #expect(_name(for: \Story.title) == "title")
        #expect(_name(for: \Story.byline) == "byline")
        #expect(_name(for: \Story.byline?.name) == "byline.name")
        #expect(_name(for: \Story.editor?.age) == "editor.age")
    }
}
