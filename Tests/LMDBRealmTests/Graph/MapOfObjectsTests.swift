import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

final class Pet: Object {
    @Persisted(primaryKey: true) var name: String
    @Persisted var age: Int
}

final class Collar: EmbeddedObject {
    @Persisted var colour: String
}

final class Keeper: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var pets: Map<String, Pet?>
    @Persisted var collars: Map<String, Collar?>
    @Persisted(deleteRule: .cascade) var owned: Map<String, Pet?>
}

private func keeperConfiguration(_ dir: URL) -> Realm.Configuration {
    makeConfiguration(dir, types: [Keeper.self, Pet.self, Collar.self])
}

private func pet(_ name: String, age: Int = 1) -> Pet {
    let pet = Pet()
    pet.name = name
    pet.age = age
    return pet
}

@Suite struct MapOfObjectsTests {
    /// `add` stores the objects an unmanaged map holds; a managed map adds an unmanaged object
    /// it is given, links a managed one, and keeps a `nil` value as an entry.
    @Test func aMapHoldsObjectsAndNils() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: keeperConfiguration(dir))
            let keeper = Keeper()
            keeper.id = 1
            keeper.pets["first"] = pet("Rex", age: 3)
            try realm.write { realm.add(keeper) }
            #expect(realm.objects(Pet.self).count == 1)
            #expect(keeper.pets["first"]??.name == "Rex")
            #expect(keeper.pets["first"]??.realm != nil)
            try realm.write {
                keeper.pets["second"] = pet("Tom", age: 5)                          // added
                keeper.pets["third"] = realm.object(ofType: Pet.self, forPrimaryKey: "Rex")  // linked
                keeper.pets["none"] = Pet?.none                                       // a nil value
            }
            #expect(realm.objects(Pet.self).count == 2)
            #expect(keeper.pets.count == 4)
            #expect(keeper.pets.keys == ["first", "second", "third", "none"])
            #expect(keeper.pets.values.map { $0?.name } == ["Rex", "Tom", "Rex", nil])
            #expect(keeper.pets["none"] != nil && keeper.pets["none"]! == nil)
            #expect(keeper.pets["absent"] == nil)
            try realm.write { keeper.pets["third"] = nil }  // removes the key
            #expect(keeper.pets.keys == ["first", "second", "none"])
            #expect(realm.indexProblems() == [])
            #expect("\(keeper.objectSchema["pets"]!)" == "pets: Map<string, Pet?>")
        }
    }

    /// Deleting an object keeps its keys in every map that held it, with `nil` values, and the
    /// map's owner is reported modified.
    @Test func deletingAnObjectNullifiesItsEntries() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: keeperConfiguration(dir))
            let rex = pet("Rex")
            let a = Keeper()
            a.id = 1
            a.pets["x"] = rex
            a.pets["y"] = rex
            a.pets["z"] = pet("Tom")
            let b = Keeper()
            b.id = 2
            b.pets["only"] = rex
            try realm.write {
                realm.add(a)
                realm.add(b)
            }
            var modified: [[Int]] = []
            let token = realm.objects(Keeper.self).observe { change in
                if case .update(_, _, _, let modifications) = change { modified.append(modifications) }
            }
            defer { token.invalidate() }
            try realm.write { realm.delete(realm.object(ofType: Pet.self, forPrimaryKey: "Rex")!) }
            #expect(a.pets.keys == ["x", "y", "z"])
            #expect(a.pets.values.map { $0?.name } == [nil, nil, "Tom"])
            #expect(b.pets.count == 1 && b.pets["only"]! == nil)
            #expect(modified == [[0, 1]])
            #expect(realm.indexProblems() == [])
            // Every object deleted: every value is nil, the keys stay.
            try realm.write { realm.delete(realm.objects(Pet.self)) }
            #expect(a.pets.values.allSatisfy { $0 == nil } && a.pets.count == 3)
            #expect(realm.indexProblems() == [])
        }
    }

    /// Embedded objects in a map die when replaced or removed, and with their parent; a
    /// cascading map deletes its objects with its owner.
    @Test func embeddedAndCascadingMaps() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: keeperConfiguration(dir))
            let keeper = Keeper()
            keeper.id = 1
            let red = Collar()
            red.colour = "red"
            keeper.collars["rex"] = red
            keeper.owned["a"] = pet("A")
            keeper.owned["b"] = pet("B")
            keeper.pets["b"] = realm.object(ofType: Pet.self, forPrimaryKey: "B")
            try realm.write { realm.add(keeper) }
            let first = keeper.collars["rex"]!!
            let blue = Collar()
            blue.colour = "blue"
            try realm.write { keeper.collars["rex"] = blue }
            #expect(keeper.collars["rex"]??.colour == "blue")
            #expect(first.isInvalidated)
            let second = keeper.collars["rex"]!!
            try realm.write { keeper.collars.removeObject(for: "rex") }
            #expect(second.isInvalidated)
            let green = Collar()
            green.colour = "green"
            try realm.write { keeper.collars["tom"] = green }
            let third = keeper.collars["tom"]!!
            try realm.write { realm.delete(keeper) }
            #expect(third.isInvalidated)
            #expect(realm.objects(Pet.self).count == 0)
            #expect(realm.indexProblems() == [])
        }
    }

    /// Queries reach a map's objects as a list's: through their properties, by the object
    /// itself, and with aggregates; a nil value matches no test of an object's property.
    @Test func queriesThroughAMapOfObjects() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: keeperConfiguration(dir))
            for (id, pets) in [(1, [("a", "Rex", 3), ("b", "Tom", 9)]), (2, [("a", "Kit", 1)]), (3, [])] {
                let keeper = Keeper()
                keeper.id = id
                for (key, name, age) in pets { keeper.pets[key] = pet(name, age: age) }
                if id == 3 { keeper.pets["none"] = Pet?.none }
                try realm.write { realm.add(keeper) }
            }
            let keepers = realm.objects(Keeper.self)
            func ids(_ results: Results<Keeper>) -> [Int] { results.map(\.id).sorted() }
            #expect(ids(keepers.filter("ANY pets.name == 'Rex'")) == [1])
            #expect(ids(keepers.filter("ANY pets.age > 2")) == [1])
            #expect(ids(keepers.filter("ALL pets.age < 5")) == [2])
            #expect(ids(keepers.filter("pets.@count == 1")) == [2, 3])
            #expect(ids(keepers.filter("pets.@sum.age > 5")) == [1])
            #expect(ids(keepers.filter("ANY pets == %@", realm.object(ofType: Pet.self, forPrimaryKey: "Kit")!)) == [2])
            #expect(ids(keepers.filter("pets.@keys == 'b'")) == [1])
            #expect(ids(keepers.where { $0.pets.values.age > 5 }) == [1])
            #expect(ids(keepers.where { $0.pets.keys == "none" }) == [3])
        }
    }

    /// A renamed pet is a modification of the keeper whose map holds it.
    @Test func aChangedObjectIsAModificationOfItsMapsOwner() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: keeperConfiguration(dir))
            let keeper = Keeper()
            keeper.id = 1
            keeper.pets["a"] = pet("Rex")
            let other = Keeper()
            other.id = 2
            try realm.write {
                realm.add(keeper)
                realm.add(other)
            }
            var modified: [[Int]] = []
            let token = realm.objects(Keeper.self).sorted(byKeyPath: "id").observe(keyPaths: ["pets.age"]) { change in
                if case .update(_, _, _, let modifications) = change { modified.append(modifications) }
            }
            defer { token.invalidate() }
            try realm.write { keeper.pets["a"]??.age = 7 }
            #expect(modified == [[0]])
        }
    }

    /// A map crosses threads by reference, its objects read on the other side.
    @Test func aMapCrossesThreadsByReference() throws {
        try withTemporaryDirectory { dir in
            let config = keeperConfiguration(dir)
            let realm = try Realm(configuration: config)
            let keeper = Keeper()
            keeper.id = 1
            keeper.pets["a"] = pet("Rex")
            keeper.pets["b"] = Pet?.none
            try realm.write { realm.add(keeper) }
            let reference = ThreadSafeReference(to: keeper.pets)
            let read = try onOtherThread { () -> [String] in
                let other = try Realm(configuration: config)
                return other.resolve(reference)!.map { "\($0.key)=\($0.value?.name ?? "nil")" }
            }
            #expect(read == ["a=Rex", "b=nil"])
            #expect(reference.isInvalidated)
        }
    }

    /// Random sets, removals and deletions of the objects themselves, on a stored map and on a
    /// Swift `Dictionary` of names, agree; the references stay consistent throughout.
    @Test func aStoredMapOfObjectsBehavesAsSwiftsDictionary() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: keeperConfiguration(dir))
            let keeper = Keeper()
            keeper.id = 1
            try realm.write { realm.add(keeper) }
            var model: [String: String?] = [:]
            let seed: UInt64 = 5
            var rng = SeededGenerator(state: seed)
            for step in 0..<200 {
                let key = "k\(Int.random(in: 0..<8, using: &rng))"
                let name = "p\(Int.random(in: 0..<6, using: &rng))"
                try realm.write {
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0...4:
                        // An unmanaged pet is added; a stored one is linked.
                        keeper.pets[key] = realm.object(ofType: Pet.self, forPrimaryKey: name) ?? pet(name)
                        model[key] = .some(name)
                    case 5:
                        keeper.pets[key] = Pet?.none
                        model[key] = .some(nil)
                    case 6...7:
                        keeper.pets.removeObject(for: key)
                        model[key] = nil
                    default:
                        if let stored = realm.object(ofType: Pet.self, forPrimaryKey: name) { realm.delete(stored) }
                        for (k, v) in model where v == name { model[k] = .some(nil) }
                    }
                }
                let stored = Dictionary(uniqueKeysWithValues: keeper.pets.map { ($0.key, $0.value?.name) })
                #expect(stored == model, "seed \(seed), step \(step)")
            }
            #expect(realm.indexProblems() == [], "seed \(seed)")
        }
    }
}
