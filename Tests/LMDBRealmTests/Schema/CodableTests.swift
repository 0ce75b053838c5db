import Foundation
import Synchronization
import LMDBRealm
import TestSupport
import Testing

/// Models that declare `Codable`, as RealmSwift's documentation shows them.
final class CodableOwner: Object, Codable {
    @Persisted(primaryKey: true) var name: String
    @Persisted var age = 0
    @Persisted var nickname: String?
    @Persisted var born: Date
    @Persisted var id: ObjectId
    @Persisted var pet: CodablePet?
    @Persisted var pets: List<CodablePet>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

final class CodablePet: Object, Codable {
    @Persisted var name = ""
    @Persisted var legs = 4
}

@Suite struct CodableTests {
    // Computed, not stored: a stored static Data's storage is held in bits LeakSanitizer does
    // not read as a pointer, and is reported as leaked.
    static var json: Data {
        Data(
            #"""
            {"name": "Ann", "age": 41, "born": 0, "id": "5f1d2c3b4a5968778695a4b3",
             "pet": {"name": "Rex", "legs": 4}, "pets": [{"name": "Tom", "legs": 3}, {"name": "Kit", "legs": 4}],
             "tags": ["a", "b", "a"], "scores": {"home": 3}}
            """#.utf8)
    }

    /// A decoded object holds the input's values, missing optionals are nil and missing
    /// collections empty, and once added it reads and writes as any managed object (its
    /// wrappers know their columns).
    @Test func decodedObjectsAreAddedAndRead() throws {
        try withTemporaryDirectory { dir in
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            let owner = try decoder.decode(CodableOwner.self, from: Self.json)
            #expect(owner.name == "Ann" && owner.age == 41 && owner.nickname == nil)
            #expect(owner.born == Date(timeIntervalSince1970: 0))
            #expect(owner.id == (try ObjectId(string: "5f1d2c3b4a5968778695a4b3")))
            #expect(owner.pet?.name == "Rex" && owner.pet?.legs == 4)
            #expect(owner.pets.map(\.name) == ["Tom", "Kit"] && owner.pets[0].legs == 3)
            #expect(Set(owner.tags) == ["a", "b"] && owner.tags.count == 2)
            #expect(owner.scores["home"] == 3)

            let realm = try Realm(
                configuration: makeConfiguration(dir, types: [CodableOwner.self, CodablePet.self]))
            try realm.write { realm.add(owner) }
            let stored = try #require(realm.object(ofType: CodableOwner.self, forPrimaryKey: "Ann"))
            #expect(stored.age == 41 && stored.nickname == nil && stored.pet?.name == "Rex")
            #expect(stored.pets.map(\.legs) == [3, 4])
            #expect(realm.objects(CodablePet.self).count == 3)
            try realm.write {
                owner.age = 42
                owner.nickname = "A"
            }
            #expect(stored.age == 42 && stored.nickname == "A")
            #expect(realm.objects(CodableOwner.self).where { $0.age == 42 }.count == 1)
        }
    }

    /// A managed object encodes what is stored, not what its wrappers held: the object that was
    /// added (its wrappers hold the values it was added with) and an accessor read from the
    /// realm (its wrappers hold defaults) both encode a write made since on another thread.
    @Test func managedObjectsEncodeTheirStoredValues() throws {
        try withTemporaryDirectory { dir in
            let configuration = makeConfiguration(dir, types: [CodableOwner.self, CodablePet.self])
            let realm = try Realm(configuration: configuration)
            let added = try JSONDecoder().decode(CodableOwner.self, from: Self.json)
            try realm.write { realm.add(added) }
            let read = try #require(realm.object(ofType: CodableOwner.self, forPrimaryKey: "Ann"))

            let written = DispatchSemaphore(value: 0)
            let failure = Mutex<String?>(nil)
            let writer = Thread {
                defer { written.signal() }
                do {
                    let other = try Realm(configuration: configuration)
                    let owner = other.object(ofType: CodableOwner.self, forPrimaryKey: "Ann")!
                    try other.write {
                        owner.age = 50
                        owner.nickname = "Z"
                        owner.pet!.name = "Max"
                        owner.pets.append(CodablePet(value: ["name": "Sam", "legs": 2]))
                        owner.tags.insert("c")
                        owner.scores["home"] = 9
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
            }
            writer.start()
            #expect(written.wait(timeout: .now() + 30) == .success, "the other thread's write did not end")
            #expect(failure.withLock { $0 } == nil)
            realm.refresh()

            for object in [added, read] {
                let back = try JSONDecoder().decode(CodableOwner.self, from: try JSONEncoder().encode(object))
                #expect(back.name == "Ann" && back.age == 50 && back.nickname == "Z")
                #expect(back.id == read.id && back.born == read.born)
                #expect(back.pet?.name == "Max" && back.pet?.legs == 4)
                #expect(back.pets.map(\.name) == ["Tom", "Kit", "Sam"] && back.pets.map(\.legs) == [3, 4, 2])
                #expect(Set(back.tags) == ["a", "b", "c"] && back.scores["home"] == 9)
            }
            // A detached copy encodes the same.
            let copy = CodableOwner(value: read)
            #expect(try JSONDecoder().decode(CodableOwner.self, from: try JSONEncoder().encode(copy)).age == 50)
        }
    }

    /// An unmanaged object encodes its values; decoding that gives the same values back.
    @Test func unmanagedObjectsRoundTrip() throws {
        let owner = CodableOwner(value: [
            "name": "Bo", "age": 7, "nickname": "b", "pets": [["name": "P"]], "scores": ["x": 1],
        ])
        let encoded = try JSONEncoder().encode(owner)
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(
            object["name"] as? String == "Bo" && object["age"] as? Int == 7
                && object["nickname"] as? String == "b")
        #expect((object["pets"] as? [[String: Any]])?.first?["name"] as? String == "P")
        let back = try JSONDecoder().decode(CodableOwner.self, from: encoded)
        #expect(
            back.name == "Bo" && back.age == 7 && back.nickname == "b" && back.pets.map(\.name) == ["P"])
        #expect(back.scores["x"] == 1 && back.id == owner.id)
    }

    /// A required property missing from the input is a decoding error naming it, as in
    /// RealmSwift (missing optionals and collections are not).
    @Test func aMissingRequiredPropertyIsAnError() throws {
        do {
            _ = try JSONDecoder().decode(
                CodableOwner.self,
                from: Data(#"{"age": 1, "born": 0, "id": "5f1d2c3b4a5968778695a4b3"}"#.utf8))
            Issue.record("decoding without the primary key must fail")
        } catch DecodingError.keyNotFound(let key, _) {
            #expect(key.stringValue == "name")
        }
    }

    /// A decode that fails halfway (after the object's defaults were made) leaves nothing
    /// behind on the thread: objects made next, by `init()` or as accessors, read and write
    /// their own properties.
    @Test func aFailedDecodeLeavesLaterObjectsAlone() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [CodablePet.self]))
            try realm.write { realm.add(CodablePet(value: ["name": "A", "legs": 2])) }
            #expect((try? JSONDecoder().decode(CodableOwner.self, from: Data(#"{"age": 1}"#.utf8))) == nil)
            let pet = CodablePet()
            pet.name = "B"
            pet.legs = 3
            try realm.write { realm.add(pet) }
            #expect(pet.name == "B" && pet.legs == 3)
            try realm.write { pet.legs = 5 }
            #expect(pet.legs == 5 && pet.name == "B")
            #expect((try? JSONDecoder().decode(CodableOwner.self, from: Data("[]".utf8))) == nil)
            let stored = try #require(realm.objects(CodablePet.self).sorted(byKeyPath: "name").first)
            #expect(stored.name == "A" && stored.legs == 2)
        }
    }
}
