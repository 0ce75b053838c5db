import Foundation
@_spi(Testing) import LMDBKit
import TestSupport
import Testing

@testable import LMDBRealm
@testable import LMDBRealmStorage

final class VerifyAuthor: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var name = ""
}

final class VerifyKeyword: Object {
    @Persisted(primaryKey: true) var value = ""
    @Persisted(originProperty: "keywords") var articles: LinkingObjects<VerifyArticle>
}

final class VerifyMedia: EmbeddedObject {
    @Persisted var url = ""
    @Persisted var width = 0
}

final class VerifyArticle: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted(indexed: true) var section = ""
    @Persisted var pubDate = Date(timeIntervalSince1970: 0)
    @Persisted var wordCount = 0
    @Persisted var byline: VerifyAuthor?
    @Persisted var keywords: List<VerifyKeyword>
    @Persisted var tags: List<String>
    @Persisted var labels: MutableSet<String>
    @Persisted var ratings: Map<String, Int>
    @Persisted var reviewers: Map<String, VerifyAuthor?>
    @Persisted var lead: VerifyMedia?
    @Persisted var media: List<VerifyMedia>
    @Persisted var extra: AnyRealmValue

    override class func compoundIndexes() -> [[String]] { [["section", "pubDate"]] }
}

/// A class without a primary key: its objects have auto-assigned 8-byte keys.
final class VerifyNote: Object {
    @Persisted(indexed: true) var score = 0
    @Persisted var text = ""
}

/// `Realm.verify()` finds nothing in a sound file, and names the kind, class and object of
/// each inconsistency made in it behind the realm's back (through LMDBKit, on a closed file).
@Suite struct VerificationTests {
    struct SetupFailed: Error, CustomStringConvertible {
        var description: String
    }

    static let types: [Object.Type] = [VerifyArticle.self, VerifyAuthor.self, VerifyKeyword.self, VerifyMedia.self, VerifyNote.self]

    // MARK: - Helpers

    /// Writes the graph every test starts from and closes the file: articles "a", "b" and "c",
    /// authors "x" (a's byline only), "y" and "z", keywords "k1", "k2" and "k3" (c's only),
    /// three embedded media and two notes: 14 objects.
    static func makeFile(in directory: URL) throws -> Realm.Configuration {
        let config = makeConfiguration(directory, types: types)
        do {
            let realm = try Realm(configuration: config)
            try realm.write {
                let x = VerifyAuthor(value: ["id": "x", "name": "Xavier"])
                let y = VerifyAuthor(value: ["id": "y", "name": "Yolanda"])
                let z = VerifyAuthor(value: ["id": "z", "name": "Zeno"])
                let k1 = VerifyKeyword(value: ["value": "k1"])
                let k2 = VerifyKeyword(value: ["value": "k2"])
                let k3 = VerifyKeyword(value: ["value": "k3"])

                let a = VerifyArticle()
                a.id = "a"
                a.section = "Arts"
                a.pubDate = Date(timeIntervalSince1970: 1_000)
                a.wordCount = 101
                a.byline = x
                a.keywords.append(objectsIn: [k1, k2, k1])
                a.tags.append(objectsIn: ["red", "green"])
                a.labels.insert(objectsIn: ["p", "q"])
                a.ratings["stars"] = 4
                a.reviewers["main"] = z
                a.lead = VerifyMedia(value: ["url": "https://example.com/a.jpg", "width": 640])
                a.media.append(VerifyMedia(value: ["url": "https://example.com/a1.jpg", "width": 320]))
                a.media.append(VerifyMedia(value: ["url": "https://example.com/a2.jpg", "width": 160]))
                a.extra = .string("hi")

                let b = VerifyArticle()
                b.id = "b"
                b.section = "Sports"
                b.pubDate = Date(timeIntervalSince1970: 2_000)
                b.wordCount = 102
                b.byline = y
                b.keywords.append(k2)
                b.reviewers["main"] = y
                b.reviewers["none"] = .some(nil)
                b.extra = .object(y)

                let c = VerifyArticle()
                c.id = "c"
                c.section = "World"
                c.wordCount = 103
                c.keywords.append(k3)
                c.extra = .int(3)

                realm.add([a, b, c])
                realm.add(VerifyNote(value: ["score": 5, "text": "five"]))
                realm.add(VerifyNote(value: ["score": 7, "text": "seven"]))
            }
        }
        try waitUntilClosed(directory)
        return config
    }

    /// Waits until this process has nothing open in `directory`.
    static func waitUntilClosed(_ directory: URL) throws {
        let open = Environment.waitUntilClosed(under: directory.path + "/", timeout: eventTimeout)
        guard open.isEmpty else { throw SetupFailed(description: "still open: \(open)") }
    }

    /// Changes the closed file of `config` in one LMDB write through LMDBKit, as another
    /// program could, and closes it again. `body` gets the write and opens databases by name.
    static func damage(_ config: Realm.Configuration, _ body: (borrowing Transaction, (String) throws -> Database) throws -> Void) throws {
        do {
            var options = Environment.Options()
            options.mapSize = 1 << 30
            options.maxDatabases = 256
            let environment = try Environment.open(path: config.fileURL!.path, options: options)
            try environment.write { txn in
                try body(txn) { name in
                    guard let db = try txn.openDatabase(named: name) else { throw SetupFailed(description: "the file has no database \(name)") }
                    return db
                }
            }
        }
        try waitUntilClosed(config.fileURL!.deletingLastPathComponent())
    }

    /// The key of the object whose string primary key is `id`, or the index key of the string
    /// `id`: a tag byte, then the UTF-8.
    static func key(_ id: String) -> [UInt8] {
        var key: [UInt8] = []
        Array(id.utf8).withUnsafeBytes { KeyEncoding.append($0, type: .string, to: &key) }
        return key
    }

    /// Replaces the record under `key` in `table` with what `change` makes of it; `column`
    /// gives the range of a stored column's bytes in the record.
    static func changeRecord(
        _ key: [UInt8], of className: String, in config: Realm.Configuration,
        _ change: (inout [UInt8], _ column: (String) throws -> Range<Int>) throws -> Void
    ) throws {
        try damage(config) { txn, open in
            let table = try open("class_" + className)
            let catalog = try open("__lmdbrealm_catalog")
            let schema = try txn.get(Array(className.utf8), in: catalog) { stored in
                try Array(className.utf8).withUnsafeBytes { key in
                    try JSONDecoder().decode(ObjectSchema.self, from: Data(SealedValue.open(stored, key: key).get()))
                }
            }
            guard let schema, var record = try txn.get(key, in: table, { Array($0) }) else {
                throw SetupFailed(description: "no record \(key) of \(className)")
            }
            let original = record
            try change(&record) { name in
                guard let column = schema.properties.firstIndex(where: { $0.name == name }) else {
                    throw SetupFailed(description: "no column \(name)")
                }
                return try original.withUnsafeBytes { bytes in
                    guard case .value(let field) = Record.field(bytes.baseAddress!, size: bytes.count, column: column, fixedSize: 0) else {
                        throw SetupFailed(description: "column \(name) holds no value")
                    }
                    let start = field.baseAddress.map { $0 - bytes.baseAddress! } ?? 0
                    return start..<(start + field.count)
                }
            }
            // The checksum made again: the damage is a writer's, which the field checks find.
            try txn.put(Record.resealed(record), forKey: key, in: table)
        }
    }

    /// Verifies the file of `config` in a new realm.
    static func verify(_ config: Realm.Configuration) throws -> VerificationReport {
        let realm = try Realm(configuration: config)
        return try realm.verify()
    }

    /// Expects exactly one finding, of `kind` about object `objectKey` of `className`, whose
    /// message contains each of `words`.
    static func expectOnly(
        _ kind: VerificationReport.Kind, className: String, objectKey: String?, saying words: [String] = [], in report: VerificationReport,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(report.findings.count == 1, "\(report)", sourceLocation: sourceLocation)
        guard let finding = report.findings.first else { return }
        #expect(finding.kind == kind, "\(report)", sourceLocation: sourceLocation)
        #expect(finding.className == className, "\(report)", sourceLocation: sourceLocation)
        #expect(finding.objectKey == objectKey, "\(report)", sourceLocation: sourceLocation)
        for word in words {
            #expect(finding.message.contains(word), "\(report)", sourceLocation: sourceLocation)
        }
        #expect(!report.isSound)
    }

    // MARK: - A sound file

    @Test func aSoundGraphIsSound() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            let realm = try Realm(configuration: config)
            let report = try realm.verify()
            #expect(report.isSound, "\(report)")
            #expect(report.objectsChecked == 14)
            #expect(report.description == "Checked 14 objects: sound.")

            // Inside a write, the write's own changes are checked.
            realm.beginWrite()
            realm.add(VerifyNote(value: ["score": 9]))
            let inWrite = try realm.verify()
            realm.cancelWrite()
            #expect(inWrite.isSound, "\(inWrite)")
            #expect(inWrite.objectsChecked == 15)

            // After invalidate, a fresh snapshot.
            realm.invalidate()
            let fresh = try realm.verify()
            #expect(fresh.isSound && fresh.objectsChecked == 14, "\(fresh)")
        }
    }

    @Test func aFileChangedThroughTheRealmStaysSound() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            let realm = try Realm(configuration: config)
            try realm.write {
                let a = realm.object(ofType: VerifyArticle.self, forPrimaryKey: "a")!
                let b = realm.object(ofType: VerifyArticle.self, forPrimaryKey: "b")!
                a.section = "Science"
                a.keywords.remove(at: 0)
                a.tags.removeAll()
                b.byline = nil
                b.labels.insert("new")
                realm.delete(realm.object(ofType: VerifyAuthor.self, forPrimaryKey: "z")!)
                realm.delete(realm.object(ofType: VerifyKeyword.self, forPrimaryKey: "k2")!)
                realm.delete(realm.objects(VerifyNote.self).first!)
            }
            let report = try realm.verify()
            #expect(report.isSound, "\(report)")
        }
    }

    @Test func progressIsReportedEveryThousandObjects() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [VerifyNote.self]))
            try realm.write {
                for i in 0..<2_500 { realm.add(VerifyNote(value: ["score": i % 10])) }
            }
            var calls: [[Int]] = []
            let report = try realm.verify { checked, total in calls.append([checked, total]) }
            #expect(report.isSound, "\(report)")
            #expect(report.objectsChecked == 2_500)
            #expect(calls == [[0, 2_500], [1_000, 2_500], [2_000, 2_500], [2_500, 2_500]])
        }
    }

    // MARK: - Damaged records

    @Test func aTruncatedRecordIsADamagedRecord() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.changeRecord(Self.key("a"), of: "VerifyArticle", in: config) { record, _ in record.removeLast(record.count - 2) }
            let report = try Self.verify(config)
            // Its index entries and list references are not reported again.
            Self.expectOnly(.damagedRecord, className: "VerifyArticle", objectKey: "a", saying: ["shorter than its header"], in: report)
            #expect(report.objectsChecked == 14)
        }
    }

    @Test func aStringThatIsNotUTF8IsADamagedRecord() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.changeRecord(Self.key("b"), of: "VerifyArticle", in: config) { record, column in
                for i in try column("section") { record[i] = 0xFF }
            }
            let report = try Self.verify(config)
            Self.expectOnly(.damagedRecord, className: "VerifyArticle", objectKey: "b", saying: ["'section'", "UTF-8"], in: report)
        }
    }

    @Test func aFieldPastTheEndOfItsRecordIsADamagedRecord() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.changeRecord(Self.key("c"), of: "VerifyArticle", in: config) { record, _ in
                // The offset table's last entry: the end of the last column, far past the record.
                let columns = Int(record[2]) | Int(record[3]) << 8
                withUnsafeBytes(of: UInt32(100_000).littleEndian) { record.replaceSubrange((4 * columns)..<(4 * columns + 4), with: $0) }
            }
            let report = try Self.verify(config)
            Self.expectOnly(.damagedRecord, className: "VerifyArticle", objectKey: "c", saying: ["'extra'", "spans bytes"], in: report)
        }
    }

    @Test func aMixedValueOfUnknownTagIsADamagedRecord() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.changeRecord(Self.key("c"), of: "VerifyArticle", in: config) { record, column in
                record[try column("extra").lowerBound] = 99
            }
            let report = try Self.verify(config)
            Self.expectOnly(.damagedRecord, className: "VerifyArticle", objectKey: "c", saying: ["'extra'", "unknown tag 99"], in: report)
        }
    }

    @Test func anObjectWithoutPrimaryKeyIsNamedByItsKeyInHex() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            var noteKey: [UInt8] = []
            KeyEncoding.appendBigEndian(1, to: &noteKey)
            try Self.changeRecord(noteKey, of: "VerifyNote", in: config) { record, column in
                // An int of 8 bytes made 7 long: the record is cut after it.
                let score = try column("score")
                record.remove(at: score.upperBound - 1)
            }
            let report = try Self.verify(config)
            #expect(report.findings.first?.kind == .damagedRecord, "\(report)")
            #expect(report.findings.first?.className == "VerifyNote", "\(report)")
            #expect(report.findings.first?.objectKey == "0000000000000001", "\(report)")
            #expect(report.findings.count == 1, "\(report)")
        }
    }

    // MARK: - Indexes

    @Test func aDeletedIndexEntryIsAMissingIndexEntry() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                let index = try open("index_VerifyArticle_section")
                let deleted = try Self.key("Arts").withUnsafeBytes { k in
                    try Self.key("a").withUnsafeBytes { try txn.unsafeWrite.delete(index.dbi, key: k, value: $0) }
                }
                #expect(deleted)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.missingIndexEntry, className: "VerifyArticle", objectKey: "a", saying: ["VerifyArticle.section"], in: report)
        }
    }

    @Test func aDeletedCompoundIndexEntryIsAMissingIndexEntry() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                let index = try open("cindex_VerifyArticle_section+pubDate")
                var doomed: [([UInt8], [UInt8])] = []
                try txn.forEach(in: index) { key, value in
                    if value.elementsEqual(Self.key("b")) { doomed.append((Array(key), Array(value))) }
                    return true
                }
                #expect(doomed.count == 1)
                for (key, value) in doomed {
                    _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { try txn.unsafeWrite.delete(index.dbi, key: k, value: $0) } }
                }
            }
            let report = try Self.verify(config)
            Self.expectOnly(.missingIndexEntry, className: "VerifyArticle", objectKey: "b", saying: ["VerifyArticle.(section, pubDate)"], in: report)
        }
    }

    @Test func anAddedIndexEntryIsAnOrphanIndexEntry() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                let index = try open("index_VerifyArticle_section")
                try txn.put(Self.key("a"), forKey: Self.key("Nowhere"), in: index)
            }
            let report = try Self.verify(config)
            Self.expectOnly(
                .orphanIndexEntry, className: "VerifyArticle", objectKey: "a", saying: ["VerifyArticle.section", "a value it does not hold"],
                in: report)
        }
    }

    @Test func anIndexEntryForAnObjectNotStoredIsAnOrphanIndexEntry() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                let index = try open("index_VerifyNote_score")
                var noteKey: [UInt8] = []
                KeyEncoding.appendBigEndian(99, to: &noteKey)
                var score: [UInt8] = []
                withUnsafeBytes(of: Int64(5).littleEndian) { KeyEncoding.append($0, type: .int, to: &score) }
                try txn.put(noteKey, forKey: score, in: index)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.orphanIndexEntry, className: "VerifyNote", objectKey: "0000000000000063", saying: ["not stored"], in: report)
        }
    }

    // MARK: - Links and backlinks

    @Test func aDeletedTargetMakesALinkDangle() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                let table = try open("class_VerifyAuthor")
                let deleted = try txn.delete(Self.key("x"), in: table)
                #expect(deleted)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.danglingLink, className: "VerifyArticle", objectKey: "a", saying: ["'byline'", "x", "VerifyAuthor"], in: report)
        }
    }

    @Test func anEmbeddedObjectNoObjectOwnsIsUnowned() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                // A copy of the first medium under a key of its own: nothing links to it.
                let media = try open("class_VerifyMedia")
                var first: [UInt8]?
                try txn.forEach(in: media) { _, value in
                    first = Array(value)
                    return false
                }
                var key: [UInt8] = []
                KeyEncoding.appendBigEndian(1_000, to: &key)
                try txn.put(first!, forKey: key, in: media)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.unownedEmbeddedObject, className: "VerifyMedia", objectKey: "00000000000003e8", saying: ["no object owns it"], in: report)
        }
    }

    @Test func anEmbeddedObjectTwoObjectsOwnIsReported() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                // Article b named as a second owner of a's lead in the link's index (whose
                // entries under a null key are the articles without a lead).
                let backlinks = try open("index_VerifyArticle_lead")
                var entry: [UInt8]?
                try txn.forEach(in: backlinks) { key, _ in
                    guard key.count > 1 else { return true }
                    entry = Array(key)
                    return false
                }
                try txn.put(Self.key("b"), forKey: entry!, in: backlinks)
            }
            let report = try Self.verify(config)
            #expect(report.findings.contains { $0.kind == .backlinkMismatch }, "\(report)")
            let unowned = report.findings.filter { $0.kind == .unownedEmbeddedObject }
            #expect(unowned.count == 1 && unowned.first?.className == "VerifyMedia", "\(report)")
            #expect(unowned.first?.message.contains("2 objects own it") == true, "\(report)")
        }
    }

    @Test func aDeletedTargetMakesAListElementDangle() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                let table = try open("class_VerifyKeyword")
                let deleted = try txn.delete(Self.key("k3"), in: table)
                #expect(deleted)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.danglingLink, className: "VerifyArticle", objectKey: "c", saying: ["'keywords'", "k3"], in: report)
        }
    }

    @Test func aDeletedTargetMakesAMapValueDangle() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                let table = try open("class_VerifyAuthor")
                let deleted = try txn.delete(Self.key("z"), in: table)
                #expect(deleted)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.danglingLink, className: "VerifyArticle", objectKey: "a", saying: ["'reviewers'", "z"], in: report)
        }
    }

    @Test func aRemovedBacklinkEntryIsABacklinkMismatch() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                // The index of a to-one link maps the target's key (after a tag) to the origins.
                let backlinks = try open("index_VerifyArticle_byline")
                let deleted = try ([1] + Self.key("x")).withUnsafeBytes { k in
                    try Self.key("a").withUnsafeBytes { try txn.unsafeWrite.delete(backlinks.dbi, key: k, value: $0) }
                }
                #expect(deleted)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.backlinkMismatch, className: "VerifyArticle", objectKey: "a", saying: ["VerifyArticle.byline"], in: report)
        }
    }

    @Test func aBacklinkEntryForAnotherTargetIsABacklinkMismatch() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                try txn.put(Self.key("b"), forKey: [1] + Self.key("z"), in: open("index_VerifyArticle_byline"))
            }
            let report = try Self.verify(config)
            Self.expectOnly(.backlinkMismatch, className: "VerifyArticle", objectKey: "b", saying: ["VerifyArticle.byline"], in: report)
        }
    }

    @Test func aRemovedListReferenceIsABacklinkMismatch() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                let references = try open("listrefs_VerifyArticle_keywords")
                let deleted = try Self.key("k2").withUnsafeBytes { k in
                    try Self.key("b").withUnsafeBytes { try txn.unsafeWrite.delete(references.dbi, key: k, value: $0) }
                }
                #expect(deleted)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.backlinkMismatch, className: "VerifyArticle", objectKey: "b", saying: ["'keywords'", "k2"], in: report)
        }
    }

    @Test func anExtraListReferenceIsABacklinkMismatch() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                try txn.put(Self.key("b"), forKey: Self.key("k3"), in: open("listrefs_VerifyArticle_keywords"))
            }
            let report = try Self.verify(config)
            Self.expectOnly(.backlinkMismatch, className: "VerifyArticle", objectKey: "b", saying: ["'keywords'", "k3", "do not"], in: report)
        }
    }

    // MARK: - Lists

    @Test func elementsOfAnObjectNotStoredAreADamagedList() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                var chunk: [UInt8] = []
                ListChunk.append(Array("orphan".utf8), to: &chunk)
                let key = Self.key("ghost").withUnsafeBytes { ListKey.key(ListKey.prefix($0), 0) }
                try txn.put(chunk, forKey: key, in: open("list_VerifyArticle_tags"))
            }
            let report = try Self.verify(config)
            Self.expectOnly(.damagedList, className: "VerifyArticle", objectKey: "ghost", saying: ["'tags'", "not stored"], in: report)
        }
    }

    @Test func aChunkOfBadBytesIsADamagedList() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                // Five elements announced, one begun, its length past the chunk's end.
                let key = Self.key("a").withUnsafeBytes { ListKey.key(ListKey.prefix($0), 0) }
                try txn.put([0, 5, 1, 200], forKey: key, in: open("list_VerifyArticle_tags"))
            }
            let report = try Self.verify(config)
            Self.expectOnly(.damagedList, className: "VerifyArticle", objectKey: "a", saying: ["'tags'", "element 0"], in: report)
        }
    }

    @Test func aLengthThatDoesNotEndIsADamagedList() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                // Two elements announced: "ok", then a value whose length's last byte says
                // another follows, at the chunk's end (read as it was, it made an empty string).
                var chunk: [UInt8] = []
                ListChunk.append(Array("ok".utf8), to: &chunk)
                chunk[1] = 2
                chunk += [1, 0x80]
                let key = Self.key("a").withUnsafeBytes { ListKey.key(ListKey.prefix($0), 0) }
                try txn.put(chunk, forKey: key, in: open("list_VerifyArticle_tags"))
            }
            let report = try Self.verify(config)
            Self.expectOnly(.damagedList, className: "VerifyArticle", objectKey: "a", saying: ["'tags'", "element 1"], in: report)
            // Reads walk the elements that make sense and stop where the chunk stops making it.
            let realm = try Realm(configuration: config)
            let article = try #require(realm.object(ofType: VerifyArticle.self, forPrimaryKey: "a"))
            var tags: [String] = []
            for tag in article.tags { tags.append(tag) }
            #expect(tags == ["ok"])
        }
    }

    @Test func aRepeatedSetElementIsADamagedList() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damage(config) { txn, open in
                var chunk: [UInt8] = []
                ListChunk.append(Array("p".utf8), to: &chunk)
                ListChunk.append(Array("p".utf8), to: &chunk)
                let key = Self.key("a").withUnsafeBytes { ListKey.key(ListKey.prefix($0), 0) }
                try txn.put(chunk, forKey: key, in: open("list_VerifyArticle_labels"))
            }
            let report = try Self.verify(config)
            Self.expectOnly(.damagedList, className: "VerifyArticle", objectKey: "a", saying: ["'labels'", "repeats"], in: report)
        }
    }

    /// The stored chunk of `a`'s tags, made over by `change` (with the key it is stored under).
    static func changeTagsChunk(of config: Realm.Configuration, _ change: ([UInt8], UnsafeRawBufferPointer) -> [UInt8]) throws {
        try damage(config) { txn, open in
            let list = try open("list_VerifyArticle_tags")
            let key = Self.key("a").withUnsafeBytes { ListKey.key(ListKey.prefix($0), 0) }
            guard let stored = try txn.get(key, in: list, { Array($0) }) else { throw SetupFailed(description: "a's tags are not stored") }
            let changed = key.withUnsafeBytes { change(stored, $0) }
            try txn.put(changed, forKey: key, in: list)
        }
    }

    @Test func aFlippedBitInAListChunkIsFoundByItsChecksum() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.changeTagsChunk(of: config) { stored, _ in
                var damaged = stored
                let at = (0...(damaged.count - 5)).first { Array(damaged[$0..<($0 + 5)]) == Array("green".utf8) }!
                damaged[at] ^= 1
                return damaged
            }
            // Without checksums on reads (the default) the flipped bit reads as another value;
            // `verify` checks every chunk's checksum.
            var trusting = config
            trusting.verifiesChecksums = false
            #expect(
                try Realm(configuration: trusting).object(ofType: VerifyArticle.self, forPrimaryKey: "a").map { Array($0.tags) } == ["red", "freen"])
            let report = try Self.verify(config)
            Self.expectOnly(.damagedList, className: "VerifyArticle", objectKey: "a", saying: ["'tags'", "checksum"], in: report)
        }
    }

    @Test func aChunkMovedUnderAnotherKeyIsFoundByItsChecksum() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            // a's tags, stored (with their checksum) as c's: the checksum covers the key too.
            try Self.damage(config) { txn, open in
                let list = try open("list_VerifyArticle_tags")
                let from = Self.key("a").withUnsafeBytes { ListKey.key(ListKey.prefix($0), 0) }
                let to = Self.key("c").withUnsafeBytes { ListKey.key(ListKey.prefix($0), 0) }
                guard let stored = try txn.get(from, in: list, { Array($0) }) else { throw SetupFailed(description: "a's tags are not stored") }
                try txn.put(stored, forKey: to, in: list)
            }
            let report = try Self.verify(config)
            Self.expectOnly(.damagedList, className: "VerifyArticle", objectKey: "c", saying: ["'tags'", "checksum"], in: report)
        }
    }

    @Test func aChunkWrittenBeforeChecksumsReadsAndTakesMoreElements() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.changeTagsChunk(of: config) { stored, _ in
                let opened = stored.withUnsafeBytes { ListChunk.opened($0) }
                #expect(opened.count == stored.count - ListChunk.checksumSize && opened[0] & ListChunk.sealedFlag == 0)
                return opened
            }
            var checking = config
            checking.verifiesChecksums = true
            let realm = try Realm(configuration: checking)
            #expect(try realm.verify().isSound)
            let a = try #require(realm.object(ofType: VerifyArticle.self, forPrimaryKey: "a"))
            #expect(Array(a.tags) == ["red", "green"])
            try realm.write { a.tags.append("blue") }
            #expect(Array(a.tags) == ["red", "green", "blue"])
            #expect(try realm.verify().isSound)
        }
    }

    @Test func readingAListChunkWithAFlippedBitStopsOnItsChecksum() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = try VerificationTests.makeFile(in: try makeTemporaryDirectory())
            try VerificationTests.changeTagsChunk(of: config) { stored, _ in
                var damaged = stored
                damaged[damaged.count - 6] ^= 1  // in the last element's bytes
                return damaged
            }
            var checking = config
            checking.verifiesChecksums = true
            let realm = try Realm(configuration: checking)
            FileHandle.standardError.write(Data("realm file: \(config.fileURL!.path)\n".utf8))
            let a = realm.object(ofType: VerifyArticle.self, forPrimaryKey: "a")!
            FileHandle.standardError.write(Data("tags: \(Array(a.tags))\n".utf8))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let path = stderr.split(separator: "\n").first { $0.hasPrefix("realm file: ") }?.dropFirst("realm file: ".count) ?? "?"
        #expect(stderr.contains("'\(path)'") && stderr.contains("damaged") && stderr.contains("checksum"), "stderr was: \(stderr)")
        #expect(!stderr.contains("tags:"), "the damaged chunk was read: \(stderr)")
    }

    // MARK: - Index entries and references, checked on reads

    /// The file of ``makeFile(in:)`` with two entries that no record agrees with: the section
    /// index's entry of "a" (under "Arts") names "b" instead, and the keywords' references say
    /// "b" holds "k3".
    static func makeFileWithDamagedEntries(in directory: URL) throws -> Realm.Configuration {
        let config = try makeFile(in: directory)
        try damage(config) { txn, open in
            let index = try open("index_VerifyArticle_section")
            let deleted = try key("Arts").withUnsafeBytes { k in
                try key("a").withUnsafeBytes { try txn.unsafeWrite.delete(index.dbi, key: k, value: $0) }
            }
            guard deleted else { throw SetupFailed(description: "no index entry of a under Arts") }
            try txn.put(key("b"), forKey: key("Arts"), in: index)
            try txn.put(key("b"), forKey: key("k3"), in: open("listrefs_VerifyArticle_keywords"))
        }
        return config
    }

    @Test func damagedIndexEntriesAndReferencesAreReadAsTheySayUnlessChecksumsAreChecked() throws {
        try withTemporaryDirectory { dir in
            var config = try Self.makeFileWithDamagedEntries(in: dir)
            config.verifiesChecksums = false
            let realm = try Realm(configuration: config)
            // Without checksums on reads (the default), entries are trusted: wrong answers.
            #expect(Array(realm.objects(VerifyArticle.self).where { $0.section == "Arts" }.map(\.id)) == ["b"])
            #expect(realm.object(ofType: VerifyKeyword.self, forPrimaryKey: "k3")?.articles.count == 2)
            // `verify` compares every index and reference with the records.
            let kinds = Set(try realm.verify().findings.map(\.kind))
            #expect(kinds == [.missingIndexEntry, .orphanIndexEntry, .backlinkMismatch])
        }
    }

    /// Reads the file of ``makeFileWithDamagedEntries(in:)`` with checksums checked, one `way`,
    /// and prints what it read (which it should not get to).
    static func readDamagedEntries(_ way: String) throws {
        var config = try makeFileWithDamagedEntries(in: try makeTemporaryDirectory())
        config.verifiesChecksums = true
        let realm = try Realm(configuration: config)
        FileHandle.standardError.write(Data("realm file: \(config.fileURL!.path)\n".utf8))
        let arts = realm.objects(VerifyArticle.self).where { $0.section == "Arts" }
        let read: String
        switch way {
        case "query": read = "\(Array(arts.map(\.id)))"
        case "count": read = "\(arts.count)"
        case "sort": read = "\(Array(realm.objects(VerifyArticle.self).sorted(byKeyPath: "section").map(\.id)))"
        case "backlinks": read = "\(realm.object(ofType: VerifyKeyword.self, forPrimaryKey: "k3")!.articles.count)"
        default: read = "nothing"
        }
        FileHandle.standardError.write(Data("read: \(read)\n".utf8))
    }

    /// Expects a process that ran ``readDamagedEntries(_:)`` to have stopped naming its file
    /// and the damaged entry, before printing what it read.
    static func expectStopOnDamagedEntry(_ result: ExitTest.Result?, saying words: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let path = stderr.split(separator: "\n").first { $0.hasPrefix("realm file: ") }?.dropFirst("realm file: ".count) ?? "?"
        #expect(stderr.contains("'\(path)'") && stderr.contains("damaged"), "stderr was: \(stderr)", sourceLocation: sourceLocation)
        for word in words { #expect(stderr.contains(word), "stderr was: \(stderr)", sourceLocation: sourceLocation) }
        #expect(!stderr.contains("read:"), "the damaged entry was read: \(stderr)", sourceLocation: sourceLocation)
    }

    @Test func aQueryThroughAnIndexEntryNamingAnotherObjectStopsWhenChecksumsAreChecked() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try VerificationTests.readDamagedEntries("query")
        }
        Self.expectStopOnDamagedEntry(result, saying: ["index entry of 'VerifyArticle'"])
    }

    @Test func aCountFromAnIndexChecksItsEntriesWhenChecksumsAreChecked() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try VerificationTests.readDamagedEntries("count")
        }
        Self.expectStopOnDamagedEntry(result, saying: ["index entry of 'VerifyArticle'"])
    }

    @Test func aSortInIndexOrderChecksItsEntriesWhenChecksumsAreChecked() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try VerificationTests.readDamagedEntries("sort")
        }
        Self.expectStopOnDamagedEntry(result, saying: ["index entry of 'VerifyArticle'"])
    }

    @Test func aBacklinkCountChecksItsReferencesWhenChecksumsAreChecked() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try VerificationTests.readDamagedEntries("backlinks")
        }
        Self.expectStopOnDamagedEntry(result, saying: ["backlink of 'VerifyArticle'"])
    }

    // MARK: - Random damage

    // Seeded by the test module's SeededGenerator (SplitMix64), so a failure names its seed.

    @Test(arguments: 0..<16) func randomDamageIsReportedWithoutCrashing(seed: UInt64) throws {
        try withTemporaryDirectory { dir in
            let original = try Self.makeFile(in: dir)
            let config = makeConfiguration(dir, "damaged.realm", types: Self.types)
            try FileManager.default.copyItem(at: original.fileURL!, to: config.fileURL!)
            var rng = SeededGenerator(state: seed)
            let databases = [
                "class_VerifyArticle", "class_VerifyAuthor", "class_VerifyKeyword", "class_VerifyMedia", "class_VerifyNote",
                "list_VerifyArticle_keywords", "list_VerifyArticle_tags", "list_VerifyArticle_labels", "list_VerifyArticle_ratings",
                "list_VerifyArticle_reviewers", "list_VerifyArticle_media",
            ]
            var changed = 0
            try Self.damage(config) { txn, open in
                for name in databases {
                    let db = try open(name)
                    var entries: [([UInt8], [UInt8])] = []
                    try txn.forEach(in: db) { key, value in
                        entries.append((Array(key), Array(value)))
                        return true
                    }
                    for (key, value) in entries {
                        var damaged = value
                        switch Int.random(in: 0..<6, using: &rng) {
                        case 0 where !damaged.isEmpty:
                            damaged[Int.random(in: 0..<damaged.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                        case 1: damaged.removeLast(Int.random(in: 0...damaged.count, using: &rng))
                        case 2: damaged += (0..<Int.random(in: 1...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                        case 3 where !damaged.isEmpty: damaged[Int.random(in: 0..<damaged.count, using: &rng)] = 0xFF
                        default: continue
                        }
                        if damaged != value { changed += 1 }
                        try txn.put(damaged, forKey: key, in: db)
                    }
                }
            }
            // Whatever the damage, the check ends with a report: no crash, no read out of bounds.
            let report = try Self.verify(config)
            #expect(report.objectsChecked == 14, "\(report)")
            if changed == 0 { #expect(report.isSound, "\(report)") }
            for finding in report.findings { #expect(!finding.message.isEmpty) }
        }
    }

    // MARK: - Catalog

    /// The stored value under `key` of the file's database `name`, made over by `change`.
    static func changeStoredValue(_ key: String, in name: String, of config: Realm.Configuration, _ change: (inout [UInt8]) -> Void) throws {
        try damage(config) { txn, open in
            let db = try open(name)
            guard var value = try txn.get(Array(key.utf8), in: db, { Array($0) }) else { throw SetupFailed(description: "nothing under \(key)") }
            change(&value)
            try txn.put(value, forKey: Array(key.utf8), in: db)
        }
    }

    @Test func aFlippedBitInAStoredSchemaIsRefusedAtOpenNamingTheFile() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            // "wordCount" becomes "wordCoumt": without the checksum, another schema.
            try Self.changeStoredValue("VerifyArticle", in: "__lmdbrealm_catalog", of: config) { value in
                let at = (0...(value.count - 9)).first { Array(value[$0..<($0 + 9)]) == Array("wordCount".utf8) }!
                value[at + 7] ^= 0x18
            }
            let error = try #require(throws: Realm.Error.self) { try Realm(configuration: config) }
            #expect(error.code == .invalidDatabase, "\(error)")
            #expect(error.description.contains(config.fileURL!.path) && error.description.contains("VerifyArticle"), "\(error)")
            #expect(error.description.contains("checksum"), "\(error)")
        }
    }

    /// The file of ``makeFile(in:)``, opened once at schema version 3 (which it records).
    static func makeFileAtVersion3(in dir: URL) throws -> Realm.Configuration {
        var config = try makeFile(in: dir)
        config.schemaVersion = 3
        do { _ = try Realm(configuration: config) }
        try waitUntilClosed(dir)
        return config
    }

    @Test func aFlippedBitInTheSchemaVersionIsRefusedAtOpen() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFileAtVersion3(in: dir)
            try Self.changeStoredValue("schemaVersion", in: "__lmdbrealm_meta", of: config) { $0[0] ^= 0x04 }
            let error = try #require(throws: Realm.Error.self) { try Realm(configuration: config) }
            #expect(error.code == .invalidDatabase && error.description.contains("schema version"), "\(error)")
            #expect(error.description.contains(config.fileURL!.path) && error.description.contains("checksum"), "\(error)")
        }
    }

    @Test func valuesWrittenBeforeChecksumsStillRead() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFileAtVersion3(in: dir)
            // The schema and the versions as they were stored before they were sealed.
            for (key, name) in [
                ("VerifyArticle", "__lmdbrealm_catalog"), ("schemaVersion", "__lmdbrealm_meta"), ("catalogVersion", "__lmdbrealm_meta"),
            ] {
                try Self.changeStoredValue(key, in: name, of: config) { value in
                    #expect(value.last == SealedValue.marker, "\(key) is not sealed")
                    value.removeLast(SealedValue.trailerSize)
                }
            }
            let realm = try Realm(configuration: config)
            #expect(realm.objects(VerifyArticle.self).count == 3)
            #expect(try schemaVersionAtURL(config.fileURL!) == 3)
            #expect(try realm.verify().isSound)
        }
    }

    @Test func aStoredSchemaThatDoesNotDecodeIsADamagedCatalog() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            let realm = try Realm(configuration: config)
            // The file was loaded whole; its catalog is damaged afterwards, through the
            // environment this process has open (a second one would be refused).
            try realm.file.environment.write { txn in
                try txn.put(Array("{not json".utf8), forKey: Array("VerifyNote".utf8), in: realm.file.catalog)
            }
            realm.refresh()
            let report = try realm.verify()
            Self.expectOnly(.damagedCatalog, className: "VerifyNote", objectKey: nil, saying: ["schema"], in: report)
            // The other classes are still checked.
            #expect(report.objectsChecked == 12)
        }
    }
}
