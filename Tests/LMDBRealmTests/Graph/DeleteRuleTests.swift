import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

final class Clip: EmbeddedObject {
    @Persisted var url = ""
    @Persisted var width = 0
}

final class Memo: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var text = ""
    @Persisted(deleteRule: .cascade) var attachments: List<Memo>
}

final class Folder: Object {
    @Persisted(primaryKey: true) var name: String
    @Persisted(deleteRule: .cascade) var memos: List<Memo>
    @Persisted(deleteRule: .cascade) var pinned: Memo?
    @Persisted var archived: List<Memo>
    @Persisted var cover: Clip?
    @Persisted var clips: List<Clip>
}

func deleteRuleConfiguration(_ dir: URL) -> Realm.Configuration {
    makeConfiguration(dir, types: [Folder.self, Memo.self, Clip.self])
}

private func memo(_ id: Int, _ attachments: [Memo] = []) -> Memo {
    let m = Memo()
    m.id = id
    m.text = "memo \(id)"
    m.attachments.append(objectsIn: attachments)
    return m
}

private func clip(_ url: String, _ width: Int = 100) -> Clip {
    let c = Clip()
    c.url = url
    c.width = width
    return c
}

@Suite struct DeleteRuleTests {
    @Test func cascadeDeletesLinkedObjectsRecursivelyButKeepsThoseStillLinkedElsewhere() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: deleteRuleConfiguration(dir))
            let shared = memo(10)
            let folder = Folder()
            folder.name = "work"
            folder.memos.append(objectsIn: [memo(1, [memo(2, [memo(3)])]), memo(4), shared])
            folder.pinned = memo(5)
            let other = Folder()
            other.name = "other"
            other.archived.append(shared)  // a link that does not cascade keeps it
            try realm.write {
                realm.add(folder)
                realm.add(other)
            }
            #expect(realm.objects(Memo.self).count == 6)
            try realm.write { realm.delete(folder) }
            #expect(realm.objects(Memo.self).map(\.id) == [10], "1 → 2 → 3, 4 and the pinned 5 went; 10 is still archived")
            #expect(other.archived.map(\.id) == [10])
            #expect(realm.indexProblems() == [])

            // Once nothing else links to it, a cascade takes it.
            let again = Folder()
            again.name = "again"
            try realm.write {
                realm.add(again)
                again.memos.append(realm.object(ofType: Memo.self, forPrimaryKey: 10)!)
                other.archived.removeAll()
            }
            try realm.write { realm.delete(again) }
            #expect(realm.objects(Memo.self).isEmpty)

            // Deleting a whole class cascades too.
            let many = Folder()
            many.name = "many"
            many.memos.append(objectsIn: [memo(20), memo(21, [memo(22)])])
            many.clips.append(clip("x.png"))
            try realm.write { realm.add(many) }
            try realm.write { realm.delete(realm.objects(Folder.self)) }
            #expect(realm.objects(Memo.self).isEmpty)
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func cascadeCyclesEnd() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: deleteRuleConfiguration(dir))
            let a = memo(1)
            let b = memo(2)
            try realm.write {
                realm.add(a)
                realm.add(b)
                a.attachments.append(b)
                b.attachments.append(a)
            }
            try realm.write { realm.delete(a) }
            #expect(realm.objects(Memo.self).isEmpty, "b went with a: its only link was a's")
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func embeddedObjectsLiveAndDieWithTheirParent() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: deleteRuleConfiguration(dir))
            let folder = Folder()
            folder.name = "f"
            folder.cover = clip("a.jpg", 600)
            folder.clips.append(objectsIn: [clip("b.jpg", 300), clip("c.jpg", 800)])
            try realm.write { realm.add(folder) }
            #expect(folder.cover?.url == "a.jpg")
            #expect(folder.clips.map(\.width) == [300, 800])
            #expect(realm.objects(Folder.self).filter("ANY clips.width > 700").count == 1)
            #expect(realm.objects(Folder.self).where { $0.cover.width == 600 }.count == 1)

            // Replacing an embedded object deletes the old one.
            let first = folder.cover!
            try realm.write { folder.cover = clip("d.jpg") }
            #expect(first.isInvalidated)
            #expect(folder.cover?.url == "d.jpg")
            let removed = folder.clips[0]
            try realm.write { folder.clips.remove(at: 0) }
            #expect(removed.isInvalidated)
            #expect(folder.clips.map(\.url) == ["c.jpg"])

            // Deleting the parent deletes them all.
            let kept = folder.clips[0]
            let cover = folder.cover!
            try realm.write { realm.delete(folder) }
            #expect(kept.isInvalidated && cover.isInvalidated)
            #expect(realm.indexProblems() == [])
        }
    }
}
