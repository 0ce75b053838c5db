import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

// A class whose primary key changes from an Int `id` to a String `code`, with links, a list
// and a map of it in other classes.
final class ShelfV1: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
    override class func className() -> String { "Rack" }
}

final class ShelfV2: Object {
    @Persisted(primaryKey: true) var code: String
    @Persisted var id = 0
    @Persisted var name = ""
    override class func className() -> String { "Rack" }
}

final class Volume: Object {
    @Persisted(primaryKey: true) var isbn: String
    @Persisted var shelf: ShelfV2?
}

final class VolumeV1: Object {
    @Persisted(primaryKey: true) var isbn: String
    @Persisted var shelf: ShelfV1?
    override class func className() -> String { "Volume" }
}

final class LibraryV1: Object {
    @Persisted(primaryKey: true) var name: String
    @Persisted var shelves: List<ShelfV1>
    @Persisted var byTopic: Map<String, ShelfV1?>
    override class func className() -> String { "Library" }
}

final class LibraryV2: Object {
    @Persisted(primaryKey: true) var name: String
    @Persisted var shelves: List<ShelfV2>
    @Persisted var byTopic: Map<String, ShelfV2?>
    override class func className() -> String { "Library" }
}

private func writeLibrary(_ dir: URL) throws -> Realm.Configuration {
    let config = makeConfiguration(dir, types: [ShelfV1.self, VolumeV1.self, LibraryV1.self])
    let realm = try Realm(configuration: config)
    try realm.write {
        let shelves = (1...3).map { i in
            let shelf = ShelfV1()
            shelf.id = i
            shelf.name = "shelf \(i)"
            return shelf
        }
        for shelf in shelves { realm.add(shelf) }
        for (isbn, shelf) in [("a", 0), ("b", 2), ("c", 2)] {
            let volume = VolumeV1()
            volume.isbn = isbn
            volume.shelf = shelves[shelf]
            realm.add(volume)
        }
        let library = LibraryV1()
        library.name = "city"
        library.shelves.append(objectsIn: [shelves[2], shelves[0], shelves[2]])
        library.byTopic["poetry"] = shelves[1]
        realm.add(library)
    }
    return config
}

private func version1(_ dir: URL, block: @escaping MigrationBlock) -> Realm.Configuration {
    var config = makeConfiguration(dir, types: [ShelfV2.self, Volume.self, LibraryV2.self])
    config.schemaVersion = 1
    config.migrationBlock = block
    return config
}

@Suite struct PrimaryKeyMigrationTests {
    @Test func aChangedPrimaryKeyReKeysTheObjectsAndEveryReferenceToThem() throws {
        try withTemporaryDirectory { dir in
            _ = try writeLibrary(dir)
            let realm = try Realm(configuration: version1(dir) { migration, _ in
                migration.enumerateObjects(ofType: "Rack") { old, new in
                    new!["code"] = "S\(old!["id"] as! Int)"
                }
            })
            let shelves = realm.objects(ShelfV2.self).sorted(byKeyPath: "id")
            #expect(shelves.map(\.code) == ["S1", "S2", "S3"])
            #expect(realm.object(ofType: ShelfV2.self, forPrimaryKey: "S2")?.name == "shelf 2")
            #expect(realm.objects(Volume.self).sorted(byKeyPath: "isbn").map { $0.shelf?.code } == ["S1", "S3", "S3"])
            let library = try #require(realm.object(ofType: LibraryV2.self, forPrimaryKey: "city"))
            #expect(library.shelves.map(\.code) == ["S3", "S1", "S3"])
            #expect(library.byTopic["poetry"]??.code == "S2")
            // (Queries through the link would name the class 'Rack', which two classes of this
            // test target declare; an app declares one.)
            #expect(realm.objects(Volume.self).filter { $0.shelf?.code == "S3" }.count == 2)
            #expect(realm.indexProblems() == [])
            // Deleting a re-keyed shelf unlinks it everywhere, through the rebuilt indexes.
            try realm.write { realm.delete(realm.object(ofType: ShelfV2.self, forPrimaryKey: "S3")!) }
            #expect(library.shelves.map(\.code) == ["S1"])
            #expect(realm.objects(Volume.self).filter { $0.shelf == nil }.count == 2)
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func duplicateKeysLeftByTheBlockRollEverythingBack() throws {
        try withTemporaryDirectory { dir in
            let old = try writeLibrary(dir)
            do {
                _ = try Realm(configuration: version1(dir) { migration, _ in
                    migration.enumerateObjects(ofType: "Rack") { _, new in new!["code"] = "same" }
                })
                Issue.record("duplicate keys must fail the migration")
            } catch let error as Realm.Error {
                #expect(error.code == .primaryKeyExists, "\(error)")
                #expect(error.message.contains("two objects with the primary key 'same'"), "\(error.message)")
            }
            #expect(try schemaVersionAtURL(dir.appendingPathComponent("test.realm")) == 0)
            let realm = try Realm(configuration: old)
            #expect(realm.objects(ShelfV1.self).count == 3)
            #expect(realm.object(ofType: LibraryV1.self, forPrimaryKey: "city")?.shelves.map(\.id) == [3, 1, 3])
        }
    }
}
