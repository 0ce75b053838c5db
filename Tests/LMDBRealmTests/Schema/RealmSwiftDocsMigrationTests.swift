import Foundation
import LMDBRealm
import TestSupport
import Testing

// RealmSwift's documented migration, as a user ports it: version 0 has a first and a last
// name; version 1 has a full name instead, which the block makes from them.

final class PersonBeforeMigration: Object {
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0
    override class func className() -> String { "MigratingPerson" }
}

final class Person2: Object {
    @Persisted var fullName = ""
    @Persisted var age = 0
    override class func className() -> String { "MigratingPerson" }
}

@Suite struct RealmSwiftDocsMigrationTests {
    @Test func theDocumentedMigrationRuns() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("people.realm")
            do {
                let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [PersonBeforeMigration.self]))
                try realm.write {
                    let person = PersonBeforeMigration()
                    person.firstName = "Ada"
                    person.lastName = "Lovelace"
                    person.age = 36
                    realm.add(person)
                }
            }
            // As RealmSwift's documentation writes it, with the file and the class named.
            let config = Realm.Configuration(
                fileURL: url,
                schemaVersion: 1,
                migrationBlock: { migration, oldSchemaVersion in
                    if oldSchemaVersion < 1 {
                        migration.enumerateObjects(ofType: Person2.className()) { oldObject, newObject in
                            let firstName = oldObject!["firstName"] as! String
                            let lastName = oldObject!["lastName"] as! String
                            newObject!["fullName"] = "\(firstName) \(lastName)"
                        }
                    }
                },
                objectTypes: [Person2.self])
            let realm = try Realm(configuration: config)
            let people = realm.objects(Person2.self)
            #expect(people.map(\.fullName) == ["Ada Lovelace"])
            #expect(people.first?.age == 36)
            #expect(try schemaVersionAtURL(url) == 1)
        }
    }
}
