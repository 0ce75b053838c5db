import Foundation
import LMDBRealm
import TestSupport
import Testing

final class ProjectedAddress: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var country = ""
}

final class ProjectedPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var address: ProjectedAddress?
    @Persisted var friends: List<ProjectedPerson>
}

/// A projection as RealmSwift's documentation declares one: renamed, flattened through a link,
/// a list mapped.
final class PersonCard: Projection<ProjectedPerson> {
    @Projected(\ProjectedPerson.firstName) var name
    @Projected(\ProjectedPerson.lastName) var surname
    @Projected(\ProjectedPerson.address?.city) var homeCity
    @Projected(\ProjectedPerson.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
}

@Suite struct ProjectionTests {
    private func seed(_ realm: Realm) throws {
        try realm.write {
            let ann = realm.create(
                ProjectedPerson.self, value: ["id": 1, "firstName": "Ann", "lastName": "Lee"])
            ann.address = ProjectedAddress(value: ["city": "Oslo", "country": "NO"])
            let bo = realm.create(
                ProjectedPerson.self, value: ["id": 2, "firstName": "Bo", "lastName": "Ng"])
            let cy = realm.create(
                ProjectedPerson.self, value: ["id": 3, "firstName": "Cy", "lastName": "Oh"])
            ann.friends.append(objectsIn: [bo, cy])
        }
    }

    @Test func projectionsReadRenamedFlattenedAndMappedProperties() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let cards = realm.objects(PersonCard.self)
            #expect(cards.count == 3)
            let ann = try #require(cards.first)
            #expect(ann.name == "Ann" && ann.surname == "Lee")
            #expect(ann.homeCity == "Oslo")
            #expect(Array(ann.friendNames) == ["Bo", "Cy"])
            #expect(cards[1].homeCity == nil)
            #expect(cards.where { $0.lastName == "Oh" }.map(\.name) == ["Cy"])
            #expect(
                cards.sorted(byKeyPath: "firstName", ascending: false).map(\.name) == ["Cy", "Bo", "Ann"])
            #expect(ann.rootObject.id == 1)
            #expect(PersonCard(projecting: ann.rootObject) == ann)
            #expect(ann.description.contains("homeCity = Optional(\"Oslo\")"), "\(ann.description)")
        }
    }

    /// Live: a projection reads what its object reads now; setting a projected property writes
    /// the object inside a write.
    @Test func projectionsAreLiveAndWriteThrough() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let ann = try #require(realm.objects(PersonCard.self).first)
            try realm.write {
                realm.object(ofType: ProjectedPerson.self, forPrimaryKey: 2)!.firstName = "Bob"
            }
            #expect(Array(ann.friendNames) == ["Bob", "Cy"])
            try realm.write { ann.name = "Anna" }
            #expect(realm.object(ofType: ProjectedPerson.self, forPrimaryKey: 1)!.firstName == "Anna")
            let frozen = ann.freeze()
            try realm.write { ann.surname = "Li" }
            #expect(frozen.surname == "Lee" && frozen.isFrozen)
            #expect(ann.surname == "Li")
        }
    }

    /// Observing a projection reports its own property names.
    @Test func projectionChangesNameTheProjectedProperties() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let ann = try #require(realm.objects(PersonCard.self).first)
            var seen: [String] = []
            let token = ann.observe { change in
                switch change {
                case .change(let card, let properties):
                    let names: [String] = properties.map { property in
                        let value: String = property.newValue.map { "\($0)" } ?? "-"
                        return property.name + "=" + value
                    }
                    seen.append(card.name + ": " + names.joined(separator: ","))
                case .deleted: seen.append("deleted")
                case .error(let error): seen.append("\(error)")
                }
            }
            defer { token.invalidate() }
            try realm.write { ann.rootObject.firstName = "Anna" }
            try realm.write { ann.rootObject.address!.city = "Bergen" }
            try realm.write { realm.delete(ann.rootObject) }
            #expect(seen == ["Anna: name=Anna", "Anna: homeCity=-", "deleted"])
        }
    }

    /// Results of projections are observed as results are.
    @Test func projectionResultsAreObserved() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try seed(realm)
            let cards = realm.objects(PersonCard.self)
            var seen: [String] = []
            let token = cards.observe { change in
                switch change {
                case .initial(let cards): seen.append("initial \(cards.map(\.name))")
                case .update(let cards, let deletions, let insertions, let modifications):
                    seen.append("\(cards.map(\.name)) -\(deletions) +\(insertions) ~\(modifications)")
                case .error(let error): seen.append("\(error)")
                }
            }
            defer { token.invalidate() }
            try realm.write { realm.create(ProjectedPerson.self, value: ["id": 4, "firstName": "Di"]) }
            #expect(
                seen == [
                    "initial [\"Ann\", \"Bo\", \"Cy\"]", "[\"Ann\", \"Bo\", \"Cy\", \"Di\"] -[] +[3] ~[]",
                ])
        }
    }
}
