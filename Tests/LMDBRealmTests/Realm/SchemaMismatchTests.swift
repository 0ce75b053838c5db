import Foundation
import LMDBRealm
import TestSupport
import Testing

// Two versions of one model, as two releases of a program would declare it. Each module
// stores a class under its bare name, so `className()` makes these the same class.
final class ProfileV1: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var email = ""
    override class func className() -> String { "Profile" }
}

final class ProfileV2: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name: String?  // made optional
    @Persisted var age = ""  // type changed
    @Persisted var nickname = ""  // added; email removed
    override class func className() -> String { "Profile" }
}

/// The same properties as ProfileV1 in another order, and an index added: no mismatch.
final class ProfileReordered: Object {
    @Persisted var email = ""
    @Persisted(indexed: true) var age = 0
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
    override class func className() -> String { "Profile" }
}

// Two classes stored under one name, as two modules of a program may declare them.
final class TwinShort: Object {
    @Persisted(primaryKey: true) var id = 0
    override class func className() -> String { "Twin" }
}

final class TwinLong: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var note = ""
    override class func className() -> String { "Twin" }
}

// A parent's embedded child, and a top-level class stored under the child's name in another
// file, as two modules may each declare a "Part".
final class TwinPartEmbedded: EmbeddedObject {
    @Persisted var size = 0
    @Persisted var gears: List<TwinGear>
    override class func className() -> String { "TwinPart" }
}

final class TwinGear: Object {
    @Persisted var teeth = 0
}

final class TwinPartTopLevel: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var size = 0
    override class func className() -> String { "TwinPart" }
}

final class TwinAssembly: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var part: TwinPartEmbedded?
}

@Suite struct SchemaMismatchTests {
    @Test func changedClassThrowsListingEveryDifference() throws {
        try withTemporaryDirectory { dir in
            do {
                let realm = try Realm(configuration: makeConfiguration(dir, types: [ProfileV1.self]))
                try realm.write {
                    let p = ProfileV1()
                    p.id = 1
                    realm.add(p)
                }
            }
            let url = dir.appendingPathComponent("test.realm")
            let before = try Data(contentsOf: url)
            do {
                _ = try Realm(configuration: makeConfiguration(dir, types: [ProfileV2.self]))
                Issue.record("expected a schema mismatch")
            } catch let error as Realm.Error {
                #expect(error.code == .schemaMismatch)
                #expect(error.message.contains("Property 'Profile.nickname' has been added."))
                #expect(error.message.contains("Property 'Profile.email' has been removed."))
                #expect(error.message.contains("Property 'Profile.age' has been changed from 'int' to 'string'."))
                #expect(error.message.contains("Property 'Profile.name' has been made optional."))
            }
            #expect(try Data(contentsOf: url) == before, "a refused open must not change the file")
        }
    }

    @Test func catchMatchesTheCode() throws {
        try withTemporaryDirectory { dir in
            _ = try Realm(configuration: makeConfiguration(dir, types: [ProfileV1.self]))
            var matched = false
            do {
                _ = try Realm(configuration: makeConfiguration(dir, types: [ProfileV2.self]))
            } catch Realm.Error.schemaMismatch {
                matched = true
            }
            #expect(matched)
        }
    }

    @Test func reorderedPropertiesAreNoMismatchAndReadTheRightColumns() throws {
        try withTemporaryDirectory { dir in
            do {
                let realm = try Realm(configuration: makeConfiguration(dir, types: [ProfileV1.self]))
                try realm.write {
                    let p = ProfileV1()
                    p.id = 7
                    p.name = "Ada"
                    p.age = 36
                    p.email = "ada@example.com"
                    realm.add(p)
                }
            }
            let realm = try Realm(configuration: makeConfiguration(dir, types: [ProfileReordered.self]))
            let p = try #require(realm.object(ofType: ProfileReordered.self, forPrimaryKey: 7))
            #expect(p.name == "Ada" && p.age == 36 && p.email == "ada@example.com")
            try realm.write {
                p.age = 37
                let q = ProfileReordered()
                q.id = 8
                q.name = "Grace"
                q.email = "grace@example.com"
                q.age = 85
                realm.add(q)
            }
            #expect(realm.object(ofType: ProfileReordered.self, forPrimaryKey: 7)?.age == 37)
            let q = try #require(realm.object(ofType: ProfileReordered.self, forPrimaryKey: 8))
            #expect(q.name == "Grace" && q.age == 85 && q.email == "grace@example.com")
        }
    }

    @Test func newClassesAreAddedToAnExistingFile() throws {
        try withTemporaryDirectory { dir in
            do {
                let realm = try Realm(configuration: makeConfiguration(dir, types: [ProfileV1.self]))
                try realm.write { realm.add(ProfileV1()) }
            }
            let realm = try Realm(configuration: makeConfiguration(dir, types: [ProfileV1.self, Article.self]))
            try realm.write { realm.add(Article(id: "new")) }
            #expect(realm.objects(Article.self).count == 1)
            #expect(realm.objects(ProfileV1.self).count == 1)
        }
    }

    @Test func classesRegisterOnFirstUseWithoutObjectTypes() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            #expect(realm.objects(Article.self).isEmpty)
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "none") == nil)
            try realm.write { realm.add(Article(id: "first")) }
            #expect(realm.objects(Article.self).count == 1)
        }
    }

    /// Without `objectTypes`, a stored class is compared with the Swift class that stored it,
    /// though another class of its name was used first in the process.
    @Test func aFileIsComparedWithTheClassThatStoredItWithoutObjectTypes() throws {
        try withTemporaryDirectory { dir in
            do {
                let other = try Realm(configuration: makeConfiguration(dir, "other.realm", types: [TwinLong.self]))
                try other.write { other.add(TwinLong()) }
            }
            do {
                let realm = try Realm(configuration: makeConfiguration(dir, types: [TwinShort.self]))
                try realm.write { realm.add(TwinShort()) }
            }
            let realm = try Realm(configuration: makeConfiguration(dir))
            #expect(realm.objects(TwinShort.self).count == 1)
        }
    }

    /// A link's target class is the one the realm's file was opened with, though another
    /// class of its name was described first in the process: replacing an embedded object
    /// deletes the one it replaces, and a query through the link reads the embedded class.
    @Test func aLinksTargetIsTheClassOfTheRealmsFileNotAnotherOfItsName() throws {
        try withTemporaryDirectory { dir in
            do {
                let other = try Realm(configuration: makeConfiguration(dir, "other.realm", types: [TwinPartTopLevel.self]))
                try other.write { other.add(TwinPartTopLevel()) }
            }
            let realm = try Realm(configuration: makeConfiguration(dir, types: [TwinAssembly.self, TwinPartEmbedded.self, TwinGear.self]))
            let assembly = TwinAssembly()
            try realm.write {
                assembly.part = TwinPartEmbedded()
                assembly.part!.size = 1
                realm.add(assembly)
            }
            try realm.write {
                let part = TwinPartEmbedded()
                part.size = 2
                assembly.part = part
            }
            // Embedded objects are counted through the dynamic API (they cannot be queried alone).
            #expect(realm.dynamicObjects("TwinPart").count == 1, "the replaced embedded object is deleted")
            #expect(assembly.part?.size == 2)
            #expect(try realm.objects(TwinAssembly.self).filter(checking: "part.size == 2").count == 1)
            // A key path through the link into the embedded class's list (the other class of
            // its name has no such list).
            try realm.write {
                assembly.part!.gears.append(objectsIn: [TwinGear(value: ["teeth": 10]), TwinGear(value: ["teeth": 20])])
            }
            #expect(realm.objects(TwinAssembly.self).where { $0.part.gears.teeth > 15 }.count == 1)
            #expect(realm.objects(TwinAssembly.self).where { $0.part.gears.teeth > 25 }.isEmpty)
            try realm.write { realm.delete(assembly) }
            #expect(realm.dynamicObjects("TwinPart").isEmpty, "the embedded object goes with its parent")
            #expect(try realm.verify().findings.isEmpty)
        }
    }

    @Test func aClassAddedInACancelledWriteIsGone() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            realm.beginWrite()
            realm.add(LogEntry())
            realm.cancelWrite()
            #expect(realm.objects(LogEntry.self).isEmpty)
            try realm.write { realm.add(LogEntry()) }
            #expect(realm.objects(LogEntry.self).count == 1)
        }
    }
}
