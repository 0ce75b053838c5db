import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// A note as a feed reads it: the newest of a folder first.
final class FolderNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var folder = ""
    @Persisted var created = Date(timeIntervalSince1970: 0)
    @Persisted var pinned = false
    @Persisted var title = ""

    override class func compoundIndexes() -> [[String]] {
        [["folder", "created"], ["pinned", "folder", "created"]]
    }
}

/// A compound index that names a property the class does not have.
final class MisdeclaredNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var folder = ""
    override class func compoundIndexes() -> [[String]] { [["folder", "created"]] }
}

/// The same class as an earlier release declared it, without the compound indexes.
final class FolderNoteWithoutIndexes: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var folder = ""
    @Persisted var created = Date(timeIntervalSince1970: 0)
    @Persisted var pinned = false
    @Persisted var title = ""

    override class func className() -> String { "FolderNote" }
}

@Suite struct CompoundIndexTests {
    /// Folder names that share prefixes and hold zero bytes: a compound key must keep each
    /// folder's notes apart from the next one's.
    static let folders = ["", "a", "a\u{0}", "a\u{0}b", "ab", "b", "é", String(repeating: "long", count: 40)]

    struct Plain: Equatable {
        var id: Int
        var folder: String
        var created: Date
        var pinned: Bool
        var title: String
    }

    /// What a query must return, computed on plain values: descending sorts keep equal
    /// values in key order, as every sort of the realm does.
    static func expected(_ notes: [Plain], folder: String, pinned: Bool? = nil, ascending: Bool, limit: Int?) -> [Int] {
        let matching = notes.filter { $0.folder == folder && (pinned == nil || $0.pinned == pinned) }
        let sorted = matching.sorted {
            if $0.created != $1.created { return ascending ? $0.created < $1.created : $0.created > $1.created }
            return $0.id < $1.id
        }
        return (limit.map { Array(sorted.prefix($0)) } ?? sorted).map(\.id)
    }

    static func randomNote(_ id: Int, _ rng: inout SeededGenerator) -> Plain {
        Plain(
            id: id, folder: folders.randomElement(using: &rng)!,
            // Few distinct dates: many notes share one.
            created: Date(timeIntervalSince1970: Double(Int.random(in: 0..<40, using: &rng))),
            pinned: Bool.random(using: &rng), title: "t\(Int.random(in: 0..<5, using: &rng))")
    }

    static func add(_ note: Plain, to realm: Realm, update: Realm.UpdatePolicy = .error) throws {
        realm.add(
            FolderNote(value: ["id": note.id, "folder": note.folder, "created": note.created, "pinned": note.pinned, "title": note.title]),
            update: update)
    }

    /// Every folder, both directions, with and without a limit and a further filter, against
    /// the plain values; the plan is the compound index's.
    static func check(_ realm: Realm, _ notes: [Int: Plain], _ context: String) {
        let all = Array(notes.values)
        let objects = realm.objects(FolderNote.self)
        for folder in folders {
            for ascending in [false, true] {
                for limit in [nil, 1, 7] as [Int?] {
                    var results = objects.where { $0.folder == folder }.sorted(byKeyPath: "created", ascending: ascending)
                    if let limit { results = results.limit(limit) }
                    let want = expected(all, folder: folder, ascending: ascending, limit: limit)
                    #expect(results.map(\.id) == want, "\(context) \(folder.debugDescription) \(ascending) \(String(describing: limit))")
                    #expect(results.count == want.count)
                    #expect(results.explain().hasPrefix("compound index (FolderNote.folder, FolderNote.created)"), "\(results.explain())")
                }
                let pinned = objects.where { $0.pinned == true && $0.folder == folder }.sorted(byKeyPath: "created", ascending: ascending)
                #expect(pinned.map(\.id) == expected(all, folder: folder, pinned: true, ascending: ascending, limit: nil), "\(context)")
                #expect(pinned.explain().hasPrefix("compound index (FolderNote.pinned, FolderNote.folder, FolderNote.created)"))
            }
            // A further condition is tested on each object the index gives.
            let titled = objects.where { $0.folder == folder && $0.title == "t1" }.sorted(byKeyPath: "created", ascending: false).limit(3)
            let want = expected(all.filter { $0.title == "t1" }, folder: folder, ascending: false, limit: 3)
            #expect(titled.map(\.id) == want, "\(context) \(folder.debugDescription) t1")
            #expect(titled.explain().contains(", filtered"), "\(titled.explain())")
        }
        #expect(realm.indexProblems() == [], "\(context)")
    }

    /// Inserts, upserts, changes of either indexed property, deletes and a delete of all keep
    /// the index equal to the objects, and its walks equal to a sort of plain values.
    @Test func queriesAgreeWithASortThroughEveryKindOfChange() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [FolderNote.self]))
            let seed: UInt64 = 11
            var rng = SeededGenerator(state: seed)
            var notes: [Int: Plain] = [:]
            try realm.write {
                for id in 0..<600 {
                    let note = Self.randomNote(id, &rng)
                    notes[id] = note
                    try Self.add(note, to: realm)
                }
            }
            Self.check(realm, notes, "seed \(seed): inserted")

            try realm.write {
                for _ in 0..<300 {
                    let id = Int.random(in: 0..<800, using: &rng)
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0:
                        let note = Self.randomNote(id, &rng)
                        notes[id] = note
                        try Self.add(note, to: realm, update: .modified)
                    case 1:
                        guard let object = realm.object(ofType: FolderNote.self, forPrimaryKey: id) else { continue }
                        let folder = Self.folders.randomElement(using: &rng)!
                        object.folder = folder
                        notes[id]!.folder = folder
                    case 2:
                        guard let object = realm.object(ofType: FolderNote.self, forPrimaryKey: id) else { continue }
                        let created = Date(timeIntervalSince1970: Double(Int.random(in: 0..<40, using: &rng)))
                        object.created = created
                        notes[id]!.created = created
                    default:
                        guard let object = realm.object(ofType: FolderNote.self, forPrimaryKey: id) else { continue }
                        realm.delete(object)
                        notes[id] = nil
                    }
                }
            }
            Self.check(realm, notes, "seed \(seed): changed")

            try realm.write { realm.delete(realm.objects(FolderNote.self).where { $0.folder == "a" }) }
            notes = notes.filter { $0.value.folder != "a" }
            Self.check(realm, notes, "seed \(seed): deleted a folder")

            try realm.write { realm.deleteAll() }
            Self.check(realm, [:], "seed \(seed): deleted all")
        }
    }

    /// A release that adds the indexes builds them from the objects already there; one that
    /// goes back to no indexes empties them, and adding them again builds them anew (the
    /// objects written in between are in them).
    @Test func addingAndRemovingTheIndexesNeedsNoMigration() throws {
        try withTemporaryDirectory { dir in
            let seed: UInt64 = 5
            var rng = SeededGenerator(state: seed)
            var notes: [Int: Plain] = [:]
            func writeWithoutIndexes(_ ids: Range<Int>) throws {
                let (realm, queue) = try openOnQueue(makeConfiguration(dir, types: [FolderNoteWithoutIndexes.self]))
                try queue.sync {
                    try realm.write {
                        for id in ids {
                            let note = Self.randomNote(id, &rng)
                            notes[id] = note
                            realm.add(
                                FolderNoteWithoutIndexes(value: [
                                    "id": id, "folder": note.folder, "created": note.created, "pinned": note.pinned, "title": note.title,
                                ]))
                        }
                    }
                    #expect(
                        !realm.objects(FolderNoteWithoutIndexes.self).where { $0.folder == "a" }.sorted(byKeyPath: "created").explain()
                            .contains("compound"))
                }
            }
            try writeWithoutIndexes(0..<300)
            let built = try openOnQueue(makeConfiguration(dir, types: [FolderNote.self]))
            built.queue.sync { Self.check(built.realm, notes, "seed \(seed): built") }
            try writeWithoutIndexes(300..<500)
            let rebuilt = try openOnQueue(makeConfiguration(dir, types: [FolderNote.self]))
            rebuilt.queue.sync { Self.check(rebuilt.realm, notes, "seed \(seed): rebuilt") }
        }
    }

    /// The schema a file stores names its compound indexes; a file written without them reads
    /// the same schema as before.
    @Test func theStoredSchemaNamesTheIndexes() throws {
        #expect(FolderNote.sharedSchema().compoundIndexes == [["folder", "created"], ["pinned", "folder", "created"]])
        #expect(FolderNoteWithoutIndexes.sharedSchema().compoundIndexes == [])
        let encoded = try JSONEncoder().encode(FolderNoteWithoutIndexes.sharedSchema())
        #expect(!String(decoding: encoded, as: UTF8.self).contains("compoundIndexes"))
        let decoded = try JSONDecoder().decode(ObjectSchema.self, from: JSONEncoder().encode(FolderNote.sharedSchema()))
        #expect(decoded == FolderNote.sharedSchema())
    }

    /// A cancelled write leaves the compound index as it was: the entries it buffered and the
    /// ones it removed are undone with the records.
    @Test func aCancelledWriteLeavesTheIndexAsItWas() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [FolderNote.self]))
            let seed: UInt64 = 3
            var rng = SeededGenerator(state: seed)
            var notes: [Int: Plain] = [:]
            try realm.write {
                for id in 0..<200 {
                    let note = Self.randomNote(id, &rng)
                    notes[id] = note
                    try Self.add(note, to: realm)
                }
            }
            realm.beginWrite()
            for id in 200..<260 { try Self.add(Self.randomNote(id, &rng), to: realm) }
            realm.object(ofType: FolderNote.self, forPrimaryKey: 5)!.folder = "moved"
            realm.delete(realm.objects(FolderNote.self).where { $0.folder == "b" })
            realm.cancelWrite()
            Self.check(realm, notes, "seed \(seed): cancelled")
        }
    }

    /// A compound index naming a property the class lacks stops the process when the class is
    /// first used, with a message naming the class, the index and the property.
    @Test func anIndexNamingAMissingPropertyStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = MisdeclaredNote.sharedSchema()
        }
        let message = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(message.contains("The compound index [\"folder\", \"created\"] of MisdeclaredNote names 'created'"), "\(message)")
    }
}
