import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

// Relationships, embedded objects, sets and maps as RealmSwift's documentation writes them
// (names and shapes from its "Model Data" and "CRUD" pages; `try` where LMDBRealm's `add` and
// `filter` throw, and property assignments where the documentation uses `init(value:)`).

final class DocsDog: Object {
    @Persisted var name = ""
    @Persisted var currentCity = ""
    @Persisted var citiesVisited: MutableSet<String>
    @Persisted var favoriteParksByCity: Map<String, String>
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<DocsPerson>
}

final class DocsPerson: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var dogs: List<DocsDog>
}

final class DocsAddress: EmbeddedObject {
    @Persisted var street: String?
    @Persisted var city: String?
    @Persisted var country: String?
    @Persisted var postalCode: String?
}

final class DocsContact: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var address: DocsAddress?
}

@Suite struct RealmSwiftDocsGraphTests {
    @Test func inverseRelationshipsSetsAndMaps() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [DocsDog.self, DocsPerson.self, DocsContact.self, DocsAddress.self]))
            let dog = DocsDog()
            dog.name = "Maui"
            dog.currentCity = "New York"
            // Sets: insert what the dog visited; a second insert of the same city adds nothing.
            dog.citiesVisited.insert(objectsIn: ["New York", "Boston", "Toronto"])
            dog.citiesVisited.insert("Boston")
            // Maps: a favourite park per city.
            dog.favoriteParksByCity["New York"] = "Domino Park"
            dog.favoriteParksByCity["Chicago"] = "Wiggly Field"
            dog.favoriteParksByCity.setValue("Bush Park", forKey: "Ottawa")
            let person = DocsPerson()
            person._id = ObjectId.generate()
            person.name = "Bridget"
            person.dogs.append(dog)
            try realm.write { realm.add(person) }

            #expect(dog.citiesVisited.count == 3 && dog.citiesVisited.contains("Toronto"))
            #expect(dog.favoriteParksByCity["New York"] == "Domino Park")
            #expect(dog.favoriteParksByCity.count == 3)
            var parks: [String: String] = [:]
            for element in dog.favoriteParksByCity { parks[element.key] = element.value }
            #expect(parks == ["New York": "Domino Park", "Chicago": "Wiggly Field", "Ottawa": "Bush Park"])
            try realm.write { dog.favoriteParksByCity.removeObject(for: "Chicago") }
            #expect(dog.favoriteParksByCity.keys.sorted() == ["New York", "Ottawa"])

            // The inverse relationship: the dog's owners, live.
            #expect(dog.owners.first?.name == "Bridget")
            let dogs = realm.objects(DocsDog.self)
            #expect(dogs.filter("ANY owners.name == %@", "Bridget").count == 1)
            #expect(dogs.filter("citiesVisited CONTAINS %@", "Boston").count == 1)
            #expect(dogs.filter("favoriteParksByCity.@keys == %@", "Ottawa").count == 1)
            #expect(dogs.filter("favoriteParksByCity['New York'] == 'Domino Park'").count == 1)
            #expect(dogs.where { $0.owners.name == "Bridget" }.count == 1)
            #expect(dogs.where { $0.citiesVisited.contains("New York") }.count == 1)
            #expect(dogs.where { $0.favoriteParksByCity["Ottawa"] == "Bush Park" }.count == 1)
        }
    }

    @Test func embeddedObjects() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [DocsContact.self, DocsAddress.self]))
            let address = DocsAddress()
            address.street = "123 Fake St"
            address.city = "Springfield"
            address.country = "USA"
            address.postalCode = "90710"
            let contact = DocsContact()
            contact._id = ObjectId.generate()
            contact.name = "Nick Riviera"
            contact.address = address
            try realm.write { realm.add(contact) }
            let losAngeles = realm.objects(DocsContact.self).filter("address.city = %@", "Springfield")
            #expect(losAngeles.map(\.name) == ["Nick Riviera"])
            // Updating an embedded property in place, then replacing the whole object.
            try realm.write { contact.address?.street = "124 Fake St" }
            #expect(contact.address?.street == "124 Fake St")
            let newAddress = DocsAddress()
            newAddress.city = "Shelbyville"
            try realm.write { contact.address = newAddress }
            #expect(contact.address?.city == "Shelbyville")
            // Deleting the parent deletes what it embeds.
            let held = contact.address!
            try realm.write { realm.delete(contact) }
            #expect(held.isInvalidated)
        }
    }
}
