import Foundation
import TestSupport
import Testing

@testable import LMDBRealm
@testable import LMDBRealmStorage

final class SyncFolder: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var name = ""
}

final class SyncNote: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var title = ""
    @Persisted var body = ""
    @Persisted var stars = 0
    @Persisted var folder: SyncFolder?
    @Persisted var tags: List<String>
    @Persisted var related: List<SyncNote>
}

final class SyncCaption: EmbeddedObject {
    @Persisted var text = ""
}

final class SyncPhoto: EmbeddedObject {
    @Persisted var url = ""
    @Persisted var width = 0
    @Persisted var caption: SyncCaption?
    @Persisted var folder: SyncFolder?
}

final class SyncAlbum: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var cover: SyncPhoto?
    @Persisted var photos: List<SyncPhoto>
}

/// Every album of `realm` with its embedded photos, as comparable text.
private func albums(_ realm: Realm) -> [String] {
    realm.refresh()
    func photo(_ p: SyncPhoto?) -> String {
        guard let p else { return "-" }
        return "\(p.url):\(p.width):\(p.caption?.text ?? "-"):\(p.folder?.id ?? "-")"
    }
    return realm.objects(SyncAlbum.self).sorted(byKeyPath: "id").map { album in
        "\(album.id) cover \(photo(album.cover)) photos \(album.photos.map(photo))"
    }
}

/// The next release of `SyncNote`: one property added (schema version 1).
final class SyncNoteV2: Object {
    override class func className() -> String { "SyncNote" }
    @Persisted(primaryKey: true) var id = ""
    @Persisted var title = ""
    @Persisted var body = ""
    @Persisted var stars = 0
    @Persisted var folder: SyncFolder?
    @Persisted var tags: List<String>
    @Persisted var related: List<SyncNoteV2>
    @Persisted var priority = 0
}

/// The shared log as PostgreSQL keeps it for LMDBRealmSync — change sets in one global order —
/// held in memory, so that the merge rules are tested on real files without a server.
final class SharedLog {
    private(set) var entries: [SyncIncoming] = []

    /// Moves `realm`'s outbox into the log (as the pusher does) and empties it.
    func push(_ realm: Realm) throws {
        let node = try #require(try realm.syncState()).node
        let outbox = try realm.syncOutbox(after: 0, limit: .max)
        for entry in outbox {
            entries.append(SyncIncoming(sequence: Int64(entries.count + 1), node: node, changes: entry.changes))
        }
        if let last = outbox.last { try realm.removeSyncOutbox(through: last.sequence) }
    }

    /// Applies to `realm` what the log holds after its cursor (as the puller does).
    func pull(_ realm: Realm) throws {
        let cursor = try #require(try realm.syncState()).cursor
        try realm.applySyncChanges(Array(entries.dropFirst(Int(cursor))))
    }
}

/// A synced file of its own, as node `node`.
private func makeNode(_ node: String, in directory: URL) throws -> Realm {
    let realm = try Realm(configuration: makeConfiguration(directory, "\(node).realm", types: [SyncNote.self, SyncFolder.self]))
    try realm.enableSync(node: node)
    return realm
}

/// Every note and folder of `realm`, as comparable text.
private func contents(_ realm: Realm) -> [String] {
    realm.refresh()
    let folders = realm.objects(SyncFolder.self).sorted(byKeyPath: "id").map { "folder \($0.id) \($0.name)" }
    let notes = realm.objects(SyncNote.self).sorted(byKeyPath: "id").map { note in
        "note \(note.id) \(note.title)|\(note.body)|\(note.stars)|\(note.folder?.id ?? "-")|\(Array(note.tags))|\(note.related.map(\.id))"
    }
    return Array(folders) + Array(notes)
}

@Suite struct SyncMergeTests {
    @Test func aLocalCommitWritesOneOutboxEntryInItsOwnTransaction() throws {
        try withTemporaryDirectory { dir in
            let realm = try makeNode("a", in: dir)
            #expect(try realm.syncOutboxCount() == 0)
            try realm.write {
                realm.add(SyncNote(value: ["id": "n1", "title": "one"]))
                realm.add(SyncNote(value: ["id": "n2", "title": "two"]))
            }
            let outbox = try realm.syncOutbox(after: 0, limit: 10)
            #expect(outbox.count == 1)
            let set = try SyncChangeSet(decoding: try #require(outbox.first).changes)
            #expect(set.changes.map(\.kind) == [.insert, .insert])
            #expect(set.changes.map(\.className) == ["SyncNote", "SyncNote"])

            // A write that throws leaves no entry; the next one takes the next sequence.
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try realm.write {
                    realm.add(SyncNote(value: ["id": "n3"]))
                    throw Stop()
                }
            }
            #expect(try realm.syncOutboxCount() == 1)
            try realm.write { realm.objects(SyncNote.self).first!.stars = 5 }
            let entries = try realm.syncOutbox(after: 0, limit: 10)
            #expect(entries.map(\.sequence) == [1, 2])
            let update = try SyncChangeSet(decoding: entries[1].changes)
            #expect(update.changes.count == 1)
            #expect(update.changes[0].kind == .update)
            #expect(update.changes[0].values.map(\.property) == ["stars"])
            #expect(update.clock > set.clock)
        }
    }

    /// A process that had the file open before sync was enabled (by another process) finds the
    /// sync state at its next write: that write is in the outbox too.
    @Test func aProcessThatOpenedTheFileBeforeSyncWasEnabledRecordsItsWrites() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("shared.realm")
            let (process, input, _) = try start(builtExecutable(named: "RealmTestHelper"), ["write-when-told", url.path], waitingFor: "open")
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [SyncNote.self, SyncFolder.self]))
            try realm.enableSync(node: "a")
            try realm.write { realm.add(SyncNote(value: ["id": "n1"])) }
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            realm.refresh()
            let entries = try realm.syncOutbox(after: 0, limit: 10)
            let sets = try entries.map { try SyncChangeSet(decoding: $0.changes) }
            #expect(sets.map { $0.changes.map(\.className) } == [["SyncNote"], ["Person"]])
            #expect(sets.count == 2 && sets[1].clock > sets[0].clock)
        }
    }

    @Test func aFileThatIsNotSyncedWritesNoOutbox() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [SyncNote.self, SyncFolder.self]))
            try realm.write { realm.add(SyncNote(value: ["id": "n1"])) }
            #expect(try realm.syncState() == nil)
            #expect(try realm.syncOutboxCount() == 0)
        }
    }

    @Test func theNodeNameIsKeptAndAnotherIsRefused() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, "a.realm", types: [SyncNote.self, SyncFolder.self])
            do {
                let realm = try Realm(configuration: config)
                try realm.enableSync(node: "a")
                try realm.enableSync(node: "a")
                let error = #expect(throws: Realm.Error.self) { try realm.enableSync(node: "b") }
                #expect(error?.localizedDescription.contains("synced as node 'a'") == true)
            }
            // Another handle (the file stays open in this process) and the state it reads.
            let again = try Realm(configuration: config)
            #expect(try again.syncState()?.node == "a")
        }
    }

    @Test func objectsLinksAndListsReachAnotherFile() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            let log = SharedLog()
            try a.write {
                let work = SyncFolder(value: ["id": "work", "name": "Work"])
                let first = SyncNote(value: ["id": "n1", "title": "one", "stars": 3, "folder": work, "tags": ["x", "y"]])
                let second = SyncNote(value: ["id": "n2", "title": "two", "related": [first]])
                a.add([first, second])
            }
            try log.push(a)
            try log.pull(b)
            #expect(contents(b) == contents(a))
            #expect(contents(b).count == 3)
            #expect(b.object(ofType: SyncNote.self, forPrimaryKey: "n2")?.related.first?.title == "one")
            #expect(try b.syncState()?.cursor == 1)

            // Changes, and a deletion, follow; the deleted folder's link is null on both.
            try a.write {
                let n1 = a.object(ofType: SyncNote.self, forPrimaryKey: "n1")!
                n1.tags.append("z")
                n1.body = "more"
                a.delete(a.object(ofType: SyncFolder.self, forPrimaryKey: "work")!)
            }
            try log.push(a)
            try log.pull(b)
            #expect(contents(b) == contents(a))
            #expect(b.object(ofType: SyncNote.self, forPrimaryKey: "n1")?.folder == nil)
            #expect(Array(b.object(ofType: SyncNote.self, forPrimaryKey: "n1")!.tags) == ["x", "y", "z"])
            // B's applying wrote nothing to its own outbox.
            #expect(try b.syncOutboxCount() == 0)
            // Both files, their sync state with them, are sound.
            for realm in [a, b] {
                let report = try realm.verify()
                #expect(report.isSound, "\(report)")
            }
        }
    }

    @Test func eachChangeSetIsAppliedOnceAndTheFilesOwnArePassedOver() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            let log = SharedLog()
            try a.write { a.add(SyncNote(value: ["id": "n1", "stars": 1])) }
            try log.push(a)
            try a.write { a.objects(SyncNote.self).first!.stars += 1 }
            try log.push(a)
            try log.pull(b)
            // The same change sets again (a puller that restarted before its cursor was read).
            try b.applySyncChanges(log.entries)
            #expect(b.objects(SyncNote.self).first?.stars == 2)
            #expect(try b.syncState()?.cursor == 2)
            // A's own change sets come back to it: passed over, the cursor moves.
            try log.pull(a)
            #expect(try a.syncState()?.cursor == 2)
            #expect(a.objects(SyncNote.self).first?.stars == 2)
        }
    }

    @Test func concurrentWritesOfOneObjectMergePropertyByProperty() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            let log = SharedLog()
            try a.write { a.add(SyncNote(value: ["id": "n1", "title": "t", "body": "b", "stars": 1])) }
            try log.push(a)
            try log.pull(b)
            // Both change the note without having seen the other's change.
            try a.write {
                let n = a.objects(SyncNote.self).first!
                n.title = "title from a"
                n.stars = 10
            }
            try b.write {
                let n = b.objects(SyncNote.self).first!
                n.body = "body from b"
                n.stars = 20
            }
            try log.push(a)
            try log.push(b)
            try log.pull(a)
            try log.pull(b)
            #expect(contents(a) == contents(b))
            let n = try #require(a.objects(SyncNote.self).first)
            // Properties only one wrote keep that write; the one both wrote takes the later.
            #expect(n.title == "title from a")
            #expect(n.body == "body from b")
            let aStamp = try SyncChangeSet(decoding: log.entries[1].changes).clock
            let bStamp = try SyncChangeSet(decoding: log.entries[2].changes).clock
            #expect(n.stars == (SyncStamp(clock: aStamp, node: "a") > SyncStamp(clock: bStamp, node: "b") ? 10 : 20))
        }
    }

    @Test func aWriteMadeAfterSeeingAnotherWinsOverIt() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            let log = SharedLog()
            try a.write { a.add(SyncNote(value: ["id": "n1", "title": "a's"])) }
            try log.push(a)
            try log.pull(b)
            try b.write { b.objects(SyncNote.self).first!.title = "b's, after a's" }
            try log.push(b)
            try log.pull(a)
            #expect(a.objects(SyncNote.self).first?.title == "b's, after a's")
        }
    }

    /// Two nodes edit one list without seeing each other's edits: the edits merge element by
    /// element (an insertion stays where it was made, a removal removes its element only)
    /// instead of one list replacing the other.
    @Test func concurrentEditsOfOneListMergeByElement() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            let log = SharedLog()
            try a.write { a.add(SyncNote(value: ["id": "n1", "tags": ["x", "y"]])) }
            try log.push(a)
            try log.pull(b)
            try a.write { a.objects(SyncNote.self).first!.tags.insert("from a", at: 1) }
            try b.write {
                let tags = b.objects(SyncNote.self).first!.tags
                tags.append("from b")
                tags.remove(at: 0)
            }
            try log.push(a)
            try log.push(b)
            try log.pull(a)
            try log.pull(b)
            #expect(Array(a.objects(SyncNote.self).first!.tags) == ["from a", "y", "from b"])
            #expect(contents(a) == contents(b))
            // Each change set carried what its write did to the list, not the whole list.
            let sent = try log.entries.dropFirst().map { try SyncChangeSet(decoding: $0.changes) }
            for set in sent {
                guard case .operations(let operations) = try #require(set.changes.first?.values.first).field else {
                    Issue.record("\(set.changes)")
                    continue
                }
                #expect(operations.count <= 2)
            }
        }
    }

    /// A list created empty merges too: its first elements, added on two nodes at once, both
    /// stay.
    @Test func firstElementsAddedToAnEmptyListOnTwoNodesBothStay() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            let log = SharedLog()
            try a.write { a.add(SyncNote(value: ["id": "n1"])) }
            try log.push(a)
            try log.pull(b)
            try a.write { a.objects(SyncNote.self).first!.tags.append("from a") }
            try b.write { b.objects(SyncNote.self).first!.tags.append(objectsIn: ["from b", "and b"]) }
            try log.push(b)
            try log.push(a)
            try log.pull(a)
            try log.pull(b)
            #expect(Set(a.objects(SyncNote.self).first!.tags) == ["from a", "from b", "and b"])
            #expect(contents(a) == contents(b))
        }
    }

    @Test func aDeleteWinsOverAConcurrentUpdate() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            let log = SharedLog()
            try a.write { a.add(SyncNote(value: ["id": "n1", "title": "t"])) }
            try log.push(a)
            try log.pull(b)
            try b.write { b.objects(SyncNote.self).first!.title = "updated by b" }
            try a.write { a.delete(a.objects(SyncNote.self).first!) }
            // Whatever the order: b's update first, then a's delete, in the log.
            try log.push(b)
            try log.push(a)
            try log.pull(a)
            try log.pull(b)
            #expect(a.objects(SyncNote.self).isEmpty)
            #expect(b.objects(SyncNote.self).isEmpty)
        }
    }

    @Test func aLinkToAnObjectDeletedElsewhereIsNull() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            let log = SharedLog()
            try a.write {
                a.add(SyncFolder(value: ["id": "f", "name": "F"]))
                a.add(SyncNote(value: ["id": "n1"]))
            }
            try log.push(a)
            try log.pull(b)
            // A links the note to the folder while B deletes the folder.
            try a.write { a.objects(SyncNote.self).first!.folder = a.objects(SyncFolder.self).first }
            try b.write { b.delete(b.objects(SyncFolder.self).first!) }
            try log.push(b)
            try log.push(a)
            try log.pull(a)
            try log.pull(b)
            #expect(contents(a) == contents(b))
            #expect(a.objects(SyncNote.self).first?.folder == nil)
        }
    }

    @Test func aChangeSetOfAnUnknownClassIsRefusedAndNothingIsApplied() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            try a.write { a.add(SyncFolder(value: ["id": "f"])) }
            let known = try #require(try a.syncOutbox(after: 0, limit: 1).first).changes
            let unknown = SyncChangeSet(clock: 2 << 16, schemaVersion: 0, changes: [SyncChange(kind: .insert, className: "Elsewhere", key: [1])])
            let error = #expect(throws: Realm.Error.self) {
                try b.applySyncChanges([
                    SyncIncoming(sequence: 1, node: "a", changes: known),
                    SyncIncoming(sequence: 2, node: "a", changes: unknown.encoded()),
                ])
            }
            #expect(error?.code == .schemaMismatch)
            #expect(error?.localizedDescription.contains("'Elsewhere'") == true)
            #expect(try b.syncState()?.cursor == 0)
            #expect(b.objects(SyncFolder.self).isEmpty)

            let newer = SyncChangeSet(clock: 3 << 16, schemaVersion: 7, changes: [])
            let refused = #expect(throws: Realm.Error.self) {
                try b.applySyncChanges([SyncIncoming(sequence: 1, node: "a", changes: newer.encoded())])
            }
            #expect(refused?.code == .schemaMismatch)
            #expect(refused?.localizedDescription.contains("schema version 7") == true)

            // A key no object can have is the change set's fault, said as such.
            let badKey = SyncChangeSet(clock: 4 << 16, schemaVersion: 0, changes: [SyncChange(kind: .delete, className: "SyncFolder", key: [])])
            let bad = #expect(throws: Realm.Error.self) {
                try b.applySyncChanges([SyncIncoming(sequence: 1, node: "a", changes: badKey.encoded())])
            }
            #expect(bad?.code == .invalidValue)
            #expect(bad?.localizedDescription.contains("key of 0 bytes") == true)
        }
    }

    @Test func theWriteThatAppliesChangeSetsRemovesWhatWasSentAndARefusedOneRemovesNothing() throws {
        try withTemporaryDirectory { dir in
            let a = try makeNode("a", in: dir)
            let b = try makeNode("b", in: dir)
            try a.write { a.add(SyncFolder(value: ["id": "f1"])) }
            try a.write { a.add(SyncFolder(value: ["id": "f2"])) }
            try b.write { b.add(SyncFolder(value: ["id": "g"])) }
            let sent = try a.syncOutbox(after: 0, limit: 10)
            #expect(sent.map(\.sequence) == [1, 2])
            let incoming = try #require(try b.syncOutbox(after: 0, limit: 1).first)
            let theirs = SyncIncoming(sequence: 1, node: "b", changes: incoming.changes)
            // Refused (a class a does not have, after b's set): nothing applied, nothing removed.
            let unknown = SyncChangeSet(clock: 9 << 16, schemaVersion: 0, changes: [SyncChange(kind: .insert, className: "Elsewhere", key: [1])])
            #expect(throws: Realm.Error.self) {
                try a.applySyncChanges([theirs, SyncIncoming(sequence: 2, node: "b", changes: unknown.encoded())], removingOutboxThrough: 1)
            }
            #expect(try a.syncOutboxCount() == 2)
            #expect(try a.syncState()?.cursor == 0)
            // Applied: one write brings b's folder and leaves only the unsent entry in the outbox.
            try a.applySyncChanges([theirs], removingOutboxThrough: 1)
            #expect(try a.syncOutbox(after: 0, limit: 10).map(\.sequence) == [2])
            #expect(try a.syncState()?.cursor == 1)
            #expect(a.objects(SyncFolder.self).map(\.id).sorted() == ["f1", "f2", "g"])
        }
    }

    /// Node a moves to the next schema release (a property added) while b stays on the first:
    /// b refuses a's change sets of the new release, applies nothing of them, and goes on sending
    /// its own, which a applies; once b has the new release too, it applies what it refused.
    @Test func anAdditiveMigrationOnOneNodeReachesTheOthersOnceTheyHaveIt() throws {
        try withTemporaryDirectory { dir in
            /// Node `node`'s file, opened with the schema of `release` (1 or 2).
            func open(_ node: String, release: Int) throws -> Realm {
                var config = makeConfiguration(
                    dir, "\(node).realm", types: release == 1 ? [SyncNote.self, SyncFolder.self] : [SyncNoteV2.self, SyncFolder.self])
                config.schemaVersion = UInt64(release - 1)
                let realm = try Realm(configuration: config)
                try realm.enableSync(node: node)
                return realm
            }
            let log = SharedLog()
            do {
                let a = try open("a", release: 1)
                let b = try open("b", release: 1)
                try a.write { a.add(SyncNote(value: ["id": "n1", "title": "first"])) }
                try log.push(a)
                try log.pull(b)
            }
            do {
                let a = try open("a", release: 2)
                try a.write {
                    a.object(ofType: SyncNoteV2.self, forPrimaryKey: "n1")!.priority = 5
                    a.add(SyncNoteV2(value: ["id": "n2", "title": "second", "priority": 2]))
                }
                try log.push(a)
                // b, on the first release, refuses a's new change sets and applies nothing.
                let b = try open("b", release: 1)
                let cursor = try #require(try b.syncState()).cursor
                let error = #expect(throws: Realm.Error.self) { try log.pull(b) }
                #expect(error?.code == .schemaMismatch)
                #expect(error?.localizedDescription.contains("schema version 1") == true)
                #expect(try b.syncState()?.cursor == cursor)
                #expect(Array(b.objects(SyncNote.self).map(\.id)) == ["n1"])
                // b's own writes still reach a.
                try b.write { b.object(ofType: SyncNote.self, forPrimaryKey: "n1")!.body = "from b" }
                try log.push(b)
                try log.pull(a)
                #expect(a.object(ofType: SyncNoteV2.self, forPrimaryKey: "n1")?.body == "from b")
            }
            // b on the new release applies what it refused; both files agree.
            let a = try open("a", release: 2)
            let b = try open("b", release: 2)
            try log.push(b)
            try log.pull(b)
            try log.pull(a)
            func lines(_ realm: Realm) -> [String] {
                realm.objects(SyncNoteV2.self).sorted(byKeyPath: "id").map { "\($0.id) \($0.title) \($0.body) \($0.priority)" }
            }
            #expect(lines(b) == ["n1 first from b 5", "n2 second  2"])
            #expect(lines(a) == lines(b))
        }
    }

    /// Embedded objects travel inside their parent's property, at any depth, with links to
    /// objects with a primary key; one changed in place sends its parent's property again.
    @Test func embeddedObjectsReachAnotherFileWithTheirParent() throws {
        try withTemporaryDirectory { dir in
            func open(_ node: String) throws -> Realm {
                let realm = try Realm(
                    configuration: makeConfiguration(
                        dir, "\(node).realm", types: [SyncAlbum.self, SyncPhoto.self, SyncCaption.self, SyncFolder.self]))
                try realm.enableSync(node: node)
                return realm
            }
            let (a, b) = (try open("a"), try open("b"))
            let log = SharedLog()
            try a.write {
                let folder = a.create(SyncFolder.self, value: ["id": "f1", "name": "trips"])
                a.add(
                    SyncAlbum(value: [
                        "id": "album",
                        "cover": ["url": "c.jpg", "width": 10, "caption": ["text": "cover"], "folder": folder],
                        "photos": [["url": "1.jpg", "width": 1], ["url": "2.jpg", "width": 2, "caption": ["text": "two"]]],
                    ]))
            }
            try log.push(a)
            try log.pull(b)
            #expect(albums(b) == ["album cover c.jpg:10:cover:f1 photos [\"1.jpg:1:-:-\", \"2.jpg:2:two:-\"]"])
            #expect(albums(b) == albums(a))

            // Changed in place, two levels down and in a list.
            try a.write {
                let album = a.object(ofType: SyncAlbum.self, forPrimaryKey: "album")!
                album.cover!.caption!.text = "new cover"
                album.photos[1].width = 99
            }
            try log.push(a)
            try log.pull(b)
            #expect(albums(b) == ["album cover c.jpg:10:new cover:f1 photos [\"1.jpg:1:-:-\", \"2.jpg:99:two:-\"]"])

            // Replaced and removed on b; a applies it.
            try b.write {
                let album = b.object(ofType: SyncAlbum.self, forPrimaryKey: "album")!
                album.cover = SyncPhoto(value: ["url": "d.jpg", "width": 5])
                album.photos.remove(at: 0)
            }
            try log.push(b)
            try log.pull(a)
            #expect(albums(a) == ["album cover d.jpg:5:-:- photos [\"2.jpg:99:two:-\"]"])
            #expect(albums(a) == albums(b))

            // A file that starts from a snapshot of the log has them too.
            let d = try open("d")
            var objects: [SyncObjectID: SyncSnapshotObject] = [:]
            try SyncFold(log.entries).fold(into: &objects)
            try d.applySyncSnapshot(Array(objects.values), links: false)
            try d.applySyncSnapshot(objects.values.filter(\.hasLinks), links: true, through: (Int64(log.entries.count), 0))
            #expect(albums(d) == albums(a))

            // Nothing is left behind: embedded objects replaced on the way were deleted, and
            // the rest go with their album.
            try a.write { a.deleteAll() }
            try log.push(a)
            for realm in [b, d] { try log.pull(realm) }
            for realm in [a, b, d] { #expect(realm.isEmpty) }
        }
    }

    @Test func malformedChangeSetBytesAreRefused() throws {
        let set = SyncChangeSet(
            clock: 42, schemaVersion: 3,
            changes: [
                SyncChange(
                    kind: .update, className: "C", key: [1, 2],
                    values: [
                        SyncValue(property: "p", type: "int", field: .value([1, 0, 0, 0, 0, 0, 0, 0])),
                        SyncValue(property: "q", type: "string", field: .null),
                        SyncValue(property: "l", type: "string", field: .elements([[65], nil])),
                    ])
            ])
        let bytes = set.encoded()
        #expect(try SyncChangeSet(decoding: bytes) == set)
        for cut in 0..<bytes.count {
            #expect(throws: SyncBytes.Malformed.self) { try SyncChangeSet(decoding: Array(bytes[..<cut])) }
        }
        #expect(throws: SyncBytes.Malformed.self) { try SyncChangeSet(decoding: bytes + [0]) }
    }
}

/// Random writes on three files, pushed and pulled in random order: once every change set has
/// reached every file, the files hold the same objects. Seeded, so a failure names its seed.
@Suite struct SyncConvergenceTests {
    @Test(arguments: 0..<16) func threeNodesConvergeWhateverTheOrder(seed: UInt64) throws {
        try withTemporaryDirectory { dir in
            var random = SeededGenerator(state: seed)
            let (nodes, log) = try randomWrites(&random, in: dir)
            for realm in nodes { try log.push(realm) }
            for realm in nodes { try log.pull(realm) }
            let expected = contents(nodes[0])
            for realm in nodes.dropFirst() {
                #expect(contents(realm) == expected, "seed \(seed)")
            }
        }
    }

    /// A file that loads a snapshot folded from the log's first change sets (in several
    /// steps, through the snapshot's bytes), then applies the rest, holds what the files that
    /// applied the whole log hold.
    @Test(arguments: 0..<16) func aSnapshotOfTheLogsStartAndTheRestMakeWhatTheWholeLogMakes(seed: UInt64) throws {
        try withTemporaryDirectory { dir in
            var random = SeededGenerator(state: seed)
            let (nodes, log) = try randomWrites(&random, in: dir)
            for realm in nodes { try log.push(realm) }
            for realm in nodes { try log.pull(realm) }
            let cut = Int.random(in: 0...log.entries.count, using: &random)
            let step = Int.random(in: 0...cut, using: &random)
            var folded: [SyncObjectID: SyncSnapshotObject] = [:]
            for part in [log.entries[..<step], log.entries[step..<cut]] {
                let fold = try SyncFold(Array(part))
                // What the snapshot holds of the objects the part changes, read back from bytes.
                var objects = try folded.filter { fold.objects.contains($0.key) }.mapValues {
                    try SyncSnapshotObject(className: $0.className, key: $0.key, decoding: $0.encoded())
                }
                fold.fold(into: &objects)
                folded.merge(objects) { _, new in new }
            }
            let clock = try SyncFold(Array(log.entries[..<cut])).clock
            // A new node with writes of its own, made before it loads the snapshot.
            let late = try makeNode("d", in: dir)
            try late.write { late.add(SyncNote(value: ["id": "n9", "title": "late"])) }
            let objects = folded.values.sorted {
                $0.className != $1.className ? $0.className < $1.className : $0.key.lexicographicallyPrecedes($1.key)
            }
            try late.applySyncSnapshot(objects, links: false)
            try late.applySyncSnapshot(objects.filter(\.hasLinks), links: true, through: (Int64(cut), clock))
            #expect(try late.syncState()?.cursor == Int64(cut))
            try log.pull(late)
            try log.push(late)
            for realm in nodes { try log.pull(realm) }
            let expected = contents(nodes[0])
            #expect(expected.contains { $0.hasPrefix("note n9 late") })
            #expect(contents(late) == expected, "seed \(seed), cut \(cut) of \(log.entries.count)")
        }
    }
}

/// Random writes on three files, some of them pushed to and pulled from the log returned.
private func randomWrites(_ random: inout SeededGenerator, in dir: URL) throws -> ([Realm], SharedLog) {
    let nodes = try ["a", "b", "c"].map { try makeNode($0, in: dir) }
    let log = SharedLog()
    let ids = ["n0", "n1", "n2", "n3"]
    let folders = ["f0", "f1"]
    for _ in 0..<40 {
        let realm = nodes.randomElement(using: &random)!
        let note = ids.randomElement(using: &random)!
        let existing = realm.object(ofType: SyncNote.self, forPrimaryKey: note)
        let word = ["red", "green", "blue"].randomElement(using: &random)!
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            try log.push(realm)
        case 1:
            try log.pull(realm)
        case 2:
            try realm.write {
                if let existing { realm.delete(existing) } else { realm.add(SyncNote(value: ["id": note, "title": word])) }
            }
        case 3:
            let folder = folders.randomElement(using: &random)!
            try realm.write {
                if let f = realm.object(ofType: SyncFolder.self, forPrimaryKey: folder) {
                    if Bool.random(using: &random) { realm.delete(f) } else { f.name = word }
                } else {
                    realm.add(SyncFolder(value: ["id": folder, "name": word]))
                }
            }
        case 4:
            guard let existing else { continue }
            let folder = realm.object(ofType: SyncFolder.self, forPrimaryKey: folders.randomElement(using: &random)!)
            try realm.write { existing.folder = folder }
        case 5:
            guard let existing else { continue }
            try realm.write { existing.tags.append(word) }
        case 6:
            guard let existing, let other = realm.object(ofType: SyncNote.self, forPrimaryKey: ids.randomElement(using: &random)!) else {
                continue
            }
            try realm.write { existing.related.append(other) }
        default:
            guard let existing else { continue }
            let stars = Int.random(in: 0..<5, using: &random)
            try realm.write {
                if Bool.random(using: &random) { existing.title = word } else { existing.body = word }
                existing.stars = stars
            }
        }
    }
    return (nodes, log)
}
