import Foundation
@_spi(Testing) import LMDBKit
import TestSupport
import Testing

@_spi(Testing) @testable import LMDBRealm
@_spi(Testing) @testable import LMDBRealmStorage

/// The author a covered note may link to: deleting one sets the link of its notes to nil.
final class CoveredAuthor: Object {
    @Persisted(primaryKey: true) var name = ""
}

/// A note whose feed query reads it from a covering index; some bodies are too long for a
/// copy, and those notes are looked up instead.
final class CoveredNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var folder = ""
    @Persisted var created = Date(timeIntervalSince1970: 0)
    @Persisted var pinned = false
    @Persisted var title = ""
    @Persisted var body = ""
    @Persisted var author: CoveredAuthor?

    override class func coveringIndexes() -> [[String]] { [["folder", "created"]] }
    override class func compoundIndexes() -> [[String]] { [["pinned", "folder", "created"]] }
}

/// The same class as an earlier release declared it, without indexes.
final class CoveredNoteWithoutIndexes: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var folder = ""
    @Persisted var created = Date(timeIntervalSince1970: 0)
    @Persisted var pinned = false
    @Persisted var title = ""
    @Persisted var body = ""
    @Persisted var author: CoveredAuthor?

    override class func className() -> String { "CoveredNote" }
}

/// A group declared both ways.
final class TwiceIndexedNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var folder = ""
    @Persisted var created = Date(timeIntervalSince1970: 0)
    override class func coveringIndexes() -> [[String]] { [["folder", "created"]] }
    override class func compoundIndexes() -> [[String]] { [["folder", "created"]] }
}

@Suite struct CoveringIndexTests {
    static let folders = ["", "a", "a\u{0}", "ab", "b", "é"]
    static let authors = ["ann", "bob", "cy"]

    struct Plain: Equatable {
        var id: Int
        var folder: String
        var created: Date
        var pinned: Bool
        var title: String
        var body: String
        var author: String?
    }

    static func randomNote(_ id: Int, _ rng: inout SeededGenerator) -> Plain {
        Plain(
            id: id, folder: folders.randomElement(using: &rng)!,
            created: Date(timeIntervalSince1970: Double(Int.random(in: 0..<30, using: &rng))),
            pinned: Bool.random(using: &rng), title: "t\(Int.random(in: 0..<5, using: &rng))", body: randomBody(&rng),
            author: Bool.random(using: &rng) ? authors.randomElement(using: &rng) : nil)
    }

    /// Mostly short; one in five too long for the index to hold a copy of the note.
    static func randomBody(_ rng: inout SeededGenerator) -> String {
        Int.random(in: 0..<5, using: &rng) == 0 ? String(repeating: "long body ", count: 60) : "b\(Int.random(in: 0..<100, using: &rng))"
    }

    static func add(_ note: Plain, to realm: Realm, update: Realm.UpdatePolicy = .error) {
        realm.add(
            CoveredNote(value: [
                "id": note.id, "folder": note.folder, "created": note.created, "pinned": note.pinned, "title": note.title, "body": note.body,
                "author": note.author.map { realm.object(ofType: CoveredAuthor.self, forPrimaryKey: $0)! } as Any,
            ]),
            update: update)
    }

    static func plain(_ note: CoveredNote) -> Plain {
        Plain(
            id: note.id, folder: note.folder, created: note.created, pinned: note.pinned, title: note.title, body: note.body,
            author: note.author?.name)
    }

    /// Every folder both ways, with and without a limit: the notes read through the covering
    /// index, every property of each, equal the plain values sorted; the index equals the
    /// objects; `verify` finds nothing.
    static func check(_ realm: Realm, _ notes: [Int: Plain], _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let all = Array(notes.values)
        for folder in folders {
            for ascending in [false, true] {
                for limit in [nil, 3] as [Int?] {
                    var results = realm.objects(CoveredNote.self).where { $0.folder == folder }.sorted(byKeyPath: "created", ascending: ascending)
                    if let limit { results = results.limit(limit) }
                    let sorted = all.filter { $0.folder == folder }.sorted {
                        if $0.created != $1.created { return ascending ? $0.created < $1.created : $0.created > $1.created }
                        return $0.id < $1.id
                    }
                    let want = limit.map { Array(sorted.prefix($0)) } ?? sorted
                    #expect(results.map(plain) == want, "\(context) \(folder.debugDescription) \(ascending)", sourceLocation: sourceLocation)
                    #expect(
                        results.explain().hasPrefix("covering index (CoveredNote.folder, CoveredNote.created)"), "\(results.explain())",
                        sourceLocation: sourceLocation)
                }
            }
        }
        #expect(realm.indexProblems() == [], "\(context)", sourceLocation: sourceLocation)
        let report = try realm.verify()
        #expect(report.isSound, "\(context): \(report)", sourceLocation: sourceLocation)
    }

    /// A new realm's authors and `count` random notes, written in one transaction.
    static func populate(_ realm: Realm, count: Int, _ rng: inout SeededGenerator) throws -> [Int: Plain] {
        var notes: [Int: Plain] = [:]
        try realm.write {
            for name in authors { realm.add(CoveredAuthor(value: ["name": name])) }
            for id in 0..<count {
                let note = randomNote(id, &rng)
                notes[id] = note
                add(note, to: realm)
            }
        }
        return notes
    }

    /// Inserts, upserts, a change of any property (indexed or not, a body growing past what a
    /// copy holds and shrinking back, a link set to nil by its target's deletion), deletes and
    /// a delete of all keep every copy equal to its object.
    @Test func copiesFollowEveryKindOfChange() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [CoveredNote.self, CoveredAuthor.self]))
            let seed: UInt64 = 17
            var rng = SeededGenerator(state: seed)
            var notes = try Self.populate(realm, count: 400, &rng)
            try Self.check(realm, notes, "seed \(seed): inserted")
            #expect(notes.values.contains { $0.body.count > 500 } && notes.values.contains { $0.body.count < 10 })

            try realm.write {
                for _ in 0..<400 {
                    let id = Int.random(in: 0..<500, using: &rng)
                    let object = realm.object(ofType: CoveredNote.self, forPrimaryKey: id)
                    switch Int.random(in: 0..<7, using: &rng) {
                    case 0:
                        let note = Self.randomNote(id, &rng)
                        notes[id] = note
                        Self.add(note, to: realm, update: .modified)
                    case 1:
                        guard let object else { continue }
                        object.folder = Self.folders.randomElement(using: &rng)!
                        notes[id]!.folder = object.folder
                    case 2:
                        guard let object else { continue }
                        object.created = Date(timeIntervalSince1970: Double(Int.random(in: 0..<30, using: &rng)))
                        notes[id]!.created = object.created
                    case 3:
                        guard let object else { continue }
                        object.title = "changed \(Int.random(in: 0..<9, using: &rng))"
                        notes[id]!.title = object.title
                    case 4:
                        guard let object else { continue }
                        object.body = Self.randomBody(&rng)
                        notes[id]!.body = object.body
                    case 5:
                        guard let object else { continue }
                        let name = Self.authors.randomElement(using: &rng)!
                        object.author = realm.object(ofType: CoveredAuthor.self, forPrimaryKey: name)
                        notes[id]!.author = name
                    default:
                        guard let object else { continue }
                        realm.delete(object)
                        notes[id] = nil
                    }
                }
            }
            try Self.check(realm, notes, "seed \(seed): changed")

            try realm.write { realm.delete(realm.object(ofType: CoveredAuthor.self, forPrimaryKey: "bob")!) }
            for id in notes.keys where notes[id]!.author == "bob" { notes[id]!.author = nil }
            try Self.check(realm, notes, "seed \(seed): an author deleted")

            try realm.write { realm.delete(realm.objects(CoveredNote.self).where { $0.folder == "a" }) }
            notes = notes.filter { $0.value.folder != "a" }
            try Self.check(realm, notes, "seed \(seed): a folder deleted")

            try realm.write { realm.delete(realm.objects(CoveredNote.self)) }
            try Self.check(realm, [:], "seed \(seed): deleted all")
        }
    }

    /// A cancelled write leaves the copies as they were.
    @Test func aCancelledWriteLeavesTheCopiesAsTheyWere() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [CoveredNote.self, CoveredAuthor.self]))
            let seed: UInt64 = 4
            var rng = SeededGenerator(state: seed)
            let notes = try Self.populate(realm, count: 150, &rng)
            realm.beginWrite()
            for id in 150..<200 { Self.add(Self.randomNote(id, &rng), to: realm) }
            realm.object(ofType: CoveredNote.self, forPrimaryKey: 5)!.title = "never"
            realm.object(ofType: CoveredNote.self, forPrimaryKey: 6)!.folder = "moved"
            realm.delete(realm.objects(CoveredNote.self).where { $0.folder == "b" })
            realm.cancelWrite()
            try Self.check(realm, notes, "seed \(seed): cancelled")
        }
    }

    /// A release that adds the covering index builds it from the objects there; going back
    /// empties it; adding it again builds it anew.
    @Test func addingAndRemovingTheIndexNeedsNoMigration() throws {
        try withTemporaryDirectory { dir in
            let seed: UInt64 = 8
            var rng = SeededGenerator(state: seed)
            var notes: [Int: Plain] = [:]
            func writeWithoutIndexes(_ ids: Range<Int>) throws {
                let (realm, queue) = try openOnQueue(makeConfiguration(dir, types: [CoveredNoteWithoutIndexes.self, CoveredAuthor.self]))
                try queue.sync {
                    try realm.write {
                        for id in ids {
                            var note = Self.randomNote(id, &rng)
                            note.author = nil
                            notes[id] = note
                            realm.add(
                                CoveredNoteWithoutIndexes(value: [
                                    "id": id, "folder": note.folder, "created": note.created, "pinned": note.pinned, "title": note.title,
                                    "body": note.body,
                                ]))
                        }
                    }
                }
            }
            try writeWithoutIndexes(0..<200)
            let built = try openOnQueue(makeConfiguration(dir, types: [CoveredNote.self, CoveredAuthor.self]))
            try built.queue.sync { try Self.check(built.realm, notes, "seed \(seed): built") }
            try writeWithoutIndexes(200..<300)
            let rebuilt = try openOnQueue(makeConfiguration(dir, types: [CoveredNote.self, CoveredAuthor.self]))
            try rebuilt.queue.sync { try Self.check(rebuilt.realm, notes, "seed \(seed): rebuilt") }
            #expect(CoveredNote.sharedSchema().coveringIndexes == [["folder", "created"]])
            let encoded = try JSONEncoder().encode(CoveredNoteWithoutIndexes.sharedSchema())
            #expect(!String(decoding: encoded, as: UTF8.self).contains("coveringIndexes"))
        }
    }

    /// Live results read through a covering index report a change to a property the index
    /// does not order by, and read the new value, after their own write and after another
    /// thread's.
    @Test func liveResultsSeeChangesToCopiedProperties() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [CoveredNote.self, CoveredAuthor.self])
            let realm = try Realm(configuration: config)
            try realm.write {
                for id in 0..<6 {
                    realm.add(CoveredNote(value: ["id": id, "folder": "f", "created": Date(timeIntervalSince1970: Double(id)), "title": "t\(id)"]))
                }
            }
            let newest = realm.objects(CoveredNote.self).where { $0.folder == "f" }.sorted(byKeyPath: "created", ascending: false).limit(3)
            #expect(newest.explain().hasPrefix("covering index"))
            var deltas: [Delta] = []
            let token = newest.observe { deltas.append(Delta($0)) }
            defer { token.invalidate() }
            #expect(deltas == [.initial(3)])

            try realm.write { realm.object(ofType: CoveredNote.self, forPrimaryKey: 4)!.title = "changed here" }
            #expect(deltas.last == Delta(modifications: [1], count: 3))
            #expect(newest.map(\.title) == ["t5", "changed here", "t3"])

            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write { other.object(ofType: CoveredNote.self, forPrimaryKey: 3)!.title = "changed there" }
            }
            realm.refresh()
            #expect(deltas.last == Delta(modifications: [2], count: 3))
            #expect(newest.map(\.title) == ["t5", "changed here", "changed there"])
        }
    }

    /// A migration that changes the notes' values rebuilds their copies; a realm that checks
    /// checksums reads the copies, checked, as the objects.
    @Test func aMigrationRewritesTheCopiesAndChecksumsCoverThem() throws {
        try withTemporaryDirectory { dir in
            let seed: UInt64 = 23
            var notes: [Int: Plain] = [:]
            do {
                let realm = try Realm(configuration: makeConfiguration(dir, types: [CoveredNote.self, CoveredAuthor.self]))
                var rng = SeededGenerator(state: seed)
                notes = try Self.populate(realm, count: 120, &rng)
            }
            var config = makeConfiguration(dir, types: [CoveredNote.self, CoveredAuthor.self])
            config.schemaVersion = 1
            config.migrationBlock = { migration, _ in
                migration.enumerateObjects(ofType: "CoveredNote") { old, new in
                    new?["title"] = "migrated \(old?["id"] as? Int ?? -1)"
                }
            }
            config.verifiesChecksums = true
            let realm = try Realm(configuration: config)
            for id in notes.keys { notes[id]!.title = "migrated \(id)" }
            try Self.check(realm, notes, "seed \(seed): migrated")
        }
    }

    /// A record changed behind the realm's back leaves a copy that differs from it: `verify`
    /// reports that entry, once, naming the object.
    @Test func verifyFindsACopyThatDiffersFromItsObject() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [CoveredNote.self, CoveredAuthor.self])
            do {
                let realm = try Realm(configuration: config)
                try realm.write {
                    for id in 0..<20 {
                        realm.add(CoveredNote(value: ["id": id, "folder": "f", "created": Date(timeIntervalSince1970: Double(id)), "title": "title"]))
                    }
                }
                #expect(try realm.verify().isSound)
            }
            try VerificationTests.waitUntilClosed(dir)
            var key: [UInt8] = []
            try VerificationTests.damage(config) { txn, open in
                try txn.forEach(in: open("class_CoveredNote")) { k, _ in
                    key = Array(k)
                    return false
                }
            }
            try VerificationTests.changeRecord(key, of: "CoveredNote", in: config) { record, column in
                let title = try column("title")
                record[title.lowerBound] = UInt8(ascii: "T")
            }
            let realm = try Realm(configuration: config)
            let report = try realm.verify()
            #expect(report.findings.count == 1, "\(report)")
            #expect(report.findings.first?.kind == .orphanIndexEntry, "\(report)")
            #expect(report.findings.first?.message.contains("holds a copy of this object that differs from it") == true, "\(report)")
            #expect(report.findings.first?.objectKey == "0", "\(report)")
        }
    }

    /// A group declared both as a compound and a covering index stops the process with a
    /// message saying so.
    @Test func aGroupDeclaredBothWaysStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = TwiceIndexedNote.sharedSchema()
        }
        let message = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(message.contains("TwiceIndexedNote declares [\"folder\", \"created\"] as both a compound and a covering index"), "\(message)")
    }

    /// The value format: key and copy, key alone when the copy does not fit, and values that
    /// are not one.
    @Test func coveringValuesSplitIntoKeyAndCopy() {
        let key: [UInt8] = [1, 2, 3]
        let record = [UInt8](repeating: 7, count: 10)
        var value: [UInt8] = []
        key.withUnsafeBytes { k in record.withUnsafeBytes { CoveringValue.append(key: k, record: $0, maximum: 511, to: &value) } }
        #expect(value.count == 15)
        value.withUnsafeBytes {
            let split = CoveringValue.split($0)
            #expect(split.map { Array($0.key) } == key)
            #expect(split?.record.map(Array.init) == record)
        }
        var short: [UInt8] = []
        key.withUnsafeBytes { k in record.withUnsafeBytes { CoveringValue.append(key: k, record: $0, maximum: 14, to: &short) } }
        #expect(short.count == 5)
        short.withUnsafeBytes {
            let split = CoveringValue.split($0)
            #expect(split.map { Array($0.key) } == key)
            #expect(split != nil && split!.record == nil)
        }
        for bad: [UInt8] in [[], [1, 2], [1, 0, 0], [1, 2, 9, 0], [1, 2, 3, 2, 0x80], [1, 2, 3, 3, 0]] {
            #expect(bad.withUnsafeBytes { CoveringValue.split($0) } == nil, "\(bad)")
        }
    }
}
