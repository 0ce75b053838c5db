import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

final class Badge: Object {
    @Persisted(primaryKey: true) var name: String
    @Persisted var level = 0
}

final class Shelf: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: MutableSet<Int>
    @Persisted var badges: MutableSet<Badge>
}

private func setConfiguration(_ dir: URL) -> Realm.Configuration {
    makeConfiguration(dir, types: [Shelf.self, Badge.self])
}

@Suite struct MutableSetTests {
    /// Random operations on a stored set and on Swift's `Set` agree after every step.
    @Test func aStoredSetBehavesAsSwiftsSet() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: setConfiguration(dir))
            let shelf = Shelf()
            shelf.id = 1
            try realm.write { realm.add(shelf) }
            var model = Set<Int>()
            let seed: UInt64 = 7
            var rng = SeededGenerator(state: seed)
            for step in 0..<400 {
                let values = (0..<Int.random(in: 1...4, using: &rng)).map { _ in Int.random(in: 0..<20, using: &rng) }
                try realm.write {
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0...3:
                        shelf.scores.insert(values[0])
                        model.insert(values[0])
                    case 4, 5:
                        shelf.scores.remove(values[0])
                        model.remove(values[0])
                    case 6:
                        shelf.scores.formUnion(values)
                        model.formUnion(values)
                    case 7:
                        shelf.scores.subtract(values)
                        model.subtract(values)
                    case 8:
                        shelf.scores.formIntersection(values + Array(model.prefix(3)))
                        model.formIntersection(values + Array(model.prefix(3)))
                    default:
                        if step % 50 == 9 {
                            shelf.scores.removeAll()
                            model.removeAll()
                        }
                    }
                }
                #expect(Set(shelf.scores) == model, "seed \(seed), step \(step)")
                #expect(shelf.scores.count == model.count, "seed \(seed), step \(step)")
                #expect(values.allSatisfy { shelf.scores.contains($0) == model.contains($0) }, "seed \(seed), step \(step)")
            }
            #expect(shelf.scores.min() == model.min() && shelf.scores.max() == model.max())
            #expect(shelf.scores.sum() == model.reduce(0, +))
            #expect(shelf.objectSchema["scores"]?.isSet == true)
            #expect("\(shelf.objectSchema["scores"]!)" == "scores: MutableSet<int>")
        }
    }

    @Test func setsOfObjectsAreQueriedAndCleanedUp() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: setConfiguration(dir))
            let gold = Badge()
            gold.name = "gold"
            gold.level = 3
            let silver = Badge()
            silver.name = "silver"
            silver.level = 2
            let a = Shelf()
            a.id = 1
            a.tags.insert(objectsIn: ["swift", "lmdb", "swift"])
            a.badges.insert(gold)
            a.badges.insert(gold)
            let b = Shelf()
            b.id = 2
            b.tags.insert("linux")
            b.badges.formUnion([gold, silver])
            #expect(a.tags.count == 2 && a.badges.count == 1, "unmanaged sets keep distinct elements")
            try realm.write {
                realm.add(a)
                realm.add(b)
            }
            #expect(Set(a.tags) == ["swift", "lmdb"])
            #expect(realm.objects(Badge.self).count == 2)
            let shelves = realm.objects(Shelf.self)
            #expect(shelves.filter("'swift' IN tags").map(\.id) == [1])
            #expect(shelves.filter("tags CONTAINS 'linux'").map(\.id) == [2])
            #expect(shelves.filter("badges.@count == 2").map(\.id) == [2])
            #expect(shelves.filter("ANY badges.level == 2").map(\.id) == [2])
            #expect(shelves.where { $0.tags.contains("lmdb") }.map(\.id) == [1])
            #expect(shelves.where { $0.badges.name == "gold" }.count == 2)
            #expect(b.badges.sorted(byKeyPath: "level").map(\.name) == ["silver", "gold"])
            #expect(b.badges.sum(ofProperty: "level") == 5)
            #expect(a.badges.isSubset(of: b.badges) && !b.badges.isSubset(of: a.badges) && a.badges.intersects(b.badges))

            // Inserting what is there adds nothing; deleting a badge takes it out of every set.
            try realm.write {
                a.tags.insert("swift")
                a.badges.insert(realm.object(ofType: Badge.self, forPrimaryKey: "gold")!)
            }
            #expect(a.tags.count == 2 && a.badges.count == 1)
            try realm.write { realm.delete(realm.object(ofType: Badge.self, forPrimaryKey: "gold")!) }
            #expect(a.badges.isEmpty && b.badges.map(\.name) == ["silver"])
            #expect(realm.indexProblems() == [])

            var seen: [String] = []
            let token = a.tags.observe { change in
                switch change {
                case .initial(let set): seen.append("initial \(set.count)")
                case .update(let set, let d, let i, _): seen.append("\(set.count) -\(d.count) +\(i.count)")
                case .error(let error): seen.append("\(error)")
                }
            }
            defer { token.invalidate() }
            try realm.write { a.tags.insert("server") }
            #expect(seen == ["initial 2", "3 -0 +1"])
            let frozen = a.tags.freeze()
            try realm.write { a.tags.removeAll() }
            #expect(frozen.isFrozen && Set(frozen) == ["swift", "lmdb", "server"] && a.tags.isEmpty)
        }
    }

    @Test func aSetInsertThatCannotAddItsObjectFailsTheWholeWrite() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: setConfiguration(dir))
            let gold = Badge()
            gold.name = "gold"
            let shelf = Shelf()
            shelf.id = 1
            shelf.tags.insert("kept")
            try realm.write {
                realm.add(gold)
                realm.add(shelf)
            }
            let clash = Badge()
            clash.name = "gold"  // the primary key of a stored badge
            do {
                try realm.write {
                    shelf.tags.insert("lost")
                    shelf.badges.insert(clash)
                    shelf.scores.insert(1)
                }
                Issue.record("the write did not fail")
            } catch let error as RealmError {
                #expect(error.code == .primaryKeyExists, "\(error)")
            }
            #expect(Set(shelf.tags) == ["kept"] && shelf.badges.isEmpty && shelf.scores.isEmpty, "nothing of the write is left")
            let other = try onOtherThread { () -> Int in
                let r = try Realm(configuration: setConfiguration(dir))
                return r.object(ofType: Shelf.self, forPrimaryKey: 1)!.tags.count
            }
            #expect(other == 1)
        }
    }
}
