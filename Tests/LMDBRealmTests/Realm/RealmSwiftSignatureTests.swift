import LMDBRealm
import TestSupport
import Testing

// RealmSwift calls as its documentation writes them, each compiled and run against a real file.
final class SigDog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "friends") var friendOf: LinkingObjects<SigPerson>
}

final class SigTag: Object, Encodable {
    @Persisted var label = ""
}

final class SigPerson: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var dogs: List<SigDog>
    @Persisted var favoriteParks: Map<String, String>
    @Persisted var dogsByNickname: Map<String, SigDog?>
    @Persisted var friends: MutableSet<SigDog>
}

private let sigTypes: [Object.Type] = [SigDog.self, SigPerson.self, SigTag.self]

@Suite struct RealmSwiftSignatureTests {
    /// `Realm(fileURL:)`, `Realm(configuration:queue: nil)`, `fileExists(for:)`,
    /// `performMigration(for:)` and `writeCopy(configuration:)`.
    @Test func realmOpensCopiesAndMigratesAsRealmSwiftSpellsIt() throws {
        try withTemporaryDirectory { dir in
            var config = Realm.Configuration(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes)
            #expect(!Realm.fileExists(for: config))
            let realm = try Realm(configuration: config, queue: nil)
            #expect(Realm.fileExists(for: config))
            try realm.write { realm.add(SigDog(value: ["name": "Rex", "age": 3])) }

            let copy = Realm.Configuration(fileURL: dir.appendingPathComponent("copy.realm"), objectTypes: sigTypes)
            try realm.writeCopy(configuration: copy)
            #expect(try Realm(configuration: copy).objects(SigDog.self).first?.name == "Rex")
            #expect(throws: Realm.Error.self) { try realm.writeCopy(configuration: .init(inMemoryIdentifier: "x")) }

            config.schemaVersion = 1
            config.migrationBlock = { migration, _ in
                migration.enumerateObjects(ofType: "SigDog") { _, new in new?.age = 4 }
            }
            try Realm.performMigration(for: config)
            #expect(try schemaVersionAtURL(config.fileURL!) == 1)
            let reopened = try Realm(configuration: config)
            #expect(reopened.objects(SigDog.self).first?.age == 4)

            // Realm(fileURL:) takes the default configuration's other settings.
            let plain = try Realm(fileURL: dir.appendingPathComponent("plain.realm"))
            #expect(plain.configuration.fileURL?.lastPathComponent == "plain.realm")
        }
    }

    /// List's range and offset mutators, as Swift's collections and SwiftUI's callbacks give
    /// them; Map's `updateValue`, `merge` and `contains(where:)`.
    @Test func listAndMapMutatorsFollowRealmSwift() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: .init(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes))
            let person = SigPerson(value: ["name": "Ann"])
            try realm.write {
                realm.add(person)
                for name in ["a", "b", "c", "d", "e", "f"] { person.dogs.append(SigDog(value: ["name": name])) }
            }
            let names = { person.dogs.map(\.name).joined() }
            try realm.write {
                person.dogs.removeFirst()
                person.dogs.removeLast(2)
            }
            #expect(names() == "bcd")
            try realm.write { person.dogs.insert(contentsOf: [SigDog(value: ["name": "x"]), SigDog(value: ["name": "y"])], at: 1) }
            #expect(names() == "bxycd")
            try realm.write { person.dogs.removeSubrange(1..<3) }
            #expect(names() == "bcd")
            try realm.write { person.dogs.replaceSubrange(0...1, with: [SigDog(value: ["name": "z"])]) }
            #expect(names() == "zd")
            try realm.write { for name in ["1", "2", "3"] { person.dogs.append(SigDog(value: ["name": name])) } }
            try realm.write { person.dogs.remove(atOffsets: IndexSet([0, 2])) }
            #expect(names() == "d23")
            try realm.write { person.dogs.move(fromOffsets: IndexSet([0, 1]), toOffset: 3) }
            #expect(names() == "3d2")
            try realm.write { person.dogs.move(fromOffsets: IndexSet([2]), toOffset: 0) }
            #expect(names() == "23d")
            #expect(person.dogs.objects(at: IndexSet([0, 2])).map(\.name) == ["2", "d"])

            // The same on an unmanaged list.
            let unmanaged = List<Int>()
            unmanaged.append(objectsIn: [1, 2, 3, 4, 5])
            unmanaged.move(fromOffsets: IndexSet([0]), toOffset: 5)
            unmanaged.removeLast(1)
            #expect(Array(unmanaged) == [2, 3, 4, 5])

            try realm.write {
                person.favoriteParks.updateValue("Bush Park", forKey: "Ottawa")
                let more = Map<String, String>()
                more["Ottawa"] = "Major's Hill"
                more["Toronto"] = "High Park"
                person.favoriteParks.merge(more) { current, _ in current }
            }
            #expect(person.favoriteParks["Ottawa"] == "Bush Park" && person.favoriteParks["Toronto"] == "High Park")
            #expect(person.favoriteParks.contains { key, value in key == "Toronto" && value.hasPrefix("High") })
            #expect(!person.favoriteParks.contains { _, value in value.isEmpty })
        }
    }

    /// String-literal sort descriptors, ObjectId literals and timestamps, variadic `filter` on
    /// any RealmCollection, Encodable results, and tokens kept in a `Set`.
    @Test func smallerSpellings() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: .init(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes))
            let id = ObjectId("6b08fe720f9619cbbf212f39")
            #expect(id.stringValue == "6b08fe720f9619cbbf212f39")
            let stamped = ObjectId(timestamp: Date(timeIntervalSince1970: 1_700_000_000), machineId: 0xABCDEF, processId: 0x1234)
            #expect(stamped.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
            #expect(stamped.stringValue.dropFirst(8).prefix(10) == "abcdef1234")
            try realm.write {
                realm.add(SigDog(value: ["_id": id, "name": "Rex", "age": 3]))
                realm.add(SigDog(value: ["name": "Bo", "age": 3]))
                realm.add(SigDog(value: ["name": "Ace", "age": 5]))
            }
            let dogs = realm.objects(SigDog.self)
            #expect(dogs.sorted(by: ["age", "name"]).map(\.name) == ["Bo", "Rex", "Ace"])
            let any = AnyRealmCollection(dogs)
            #expect(any.filter("age == %@ AND name BEGINSWITH %@", 3, "R").map(\.name) == ["Rex"])
            try realm.write { for label in ["b", "c", "a"] { realm.add(SigTag(value: ["label": label])) } }
            let tags = realm.objects(SigTag.self)
            let json = try JSONEncoder().encode(tags.sorted(byKeyPath: "label"))
            let decoded = try JSONSerialization.jsonObject(with: json) as? [[String: Any]]
            #expect(decoded?.compactMap { $0["label"] as? String } == ["a", "b", "c"])
            #expect(try JSONEncoder().encode(AnyRealmCollection(tags)).count == json.count)

            var tokens = Set<NotificationToken>()
            tokens.insert(dogs.observe { _ in })
            tokens.insert(dogs.observe { _ in })
            #expect(tokens.count == 2)
            tokens.forEach { $0.invalidate() }
        }
    }
}

extension RealmSwiftSignatureTests {
    /// Key-value coding over a collection: read every object's property, set it on all of them
    /// (objects leaving the query's results as they change included).
    @Test func keyValueCodingOverCollections() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: .init(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes))
            try realm.write {
                for (name, age) in [("Rex", 1), ("Bo", 1), ("Ace", 5)] { realm.add(SigDog(value: ["name": name, "age": age])) }
            }
            let puppies = realm.objects(SigDog.self).filter("age < 2")
            #expect(
                puppies.value(forKey: "name") as? [String] == ["Rex", "Bo"]
                    || Set(puppies.value(forKey: "name").compactMap { $0 as? String }) == ["Rex", "Bo"])
            try realm.write { puppies.setValue(2, forKey: "age") }
            #expect(puppies.isEmpty)
            #expect(realm.objects(SigDog.self).filter("age == 2").count == 2)
        }
    }
}

/// Generic code over RealmSwift's protocols, as its threading guide writes it.
private func passAcross<T: ThreadConfined & SendableMetatype>(
    _ value: T, configuration: Realm.Configuration, _ read: @escaping @Sendable (T?) -> Void
) throws {
    let reference = ThreadSafeReference(to: value)
    let done = Collector<Bool>()
    let thread = Thread {
        let realm = try! Realm(configuration: configuration)
        read(realm.resolve(reference))
        done.append(true)
    }
    thread.start()
    _ = try #require(done.wait(count: 1, timeout: eventTimeout))
}

private func names<C: RealmCollection>(_ collection: C) -> [String] where C.ElementType == SigDog {
    collection.map(\.name)
}

extension RealmSwiftSignatureTests {
    /// `ThreadSafeReference(to:)` and `resolve` for any `ThreadConfined` value; `C.ElementType`;
    /// an object's key-value coding; Foundation's types through `import LMDBRealm` alone (this
    /// file imports nothing else of Foundation).
    @Test func genericThreadingAndKeyValueCoding() throws {
        try withTemporaryDirectory { dir in
            let config = Realm.Configuration(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes)
            let realm = try Realm(configuration: config)
            let born: Date = Date(timeIntervalSince1970: 0)
            #expect(born.timeIntervalSince1970 == 0)
            try realm.write {
                realm.add(SigDog(value: ["name": "Rex", "age": 3]))
                realm.add(SigDog(value: ["name": "Bo", "age": 5]))
            }
            let dogs = realm.objects(SigDog.self).sorted(byKeyPath: "name")
            #expect(names(dogs) == ["Bo", "Rex"])
            let seen = Collector<[String]>()
            try passAcross(dogs, configuration: config) { resolved in seen.append(resolved.map { Array($0.map(\.name)) } ?? []) }
            try passAcross(dogs[0], configuration: config) { resolved in seen.append([resolved?.name ?? "gone"]) }
            #expect(seen.all == [["Bo", "Rex"], ["Bo"]])

            let rex = try #require(dogs.last)
            #expect(rex.value(forKey: "age") as? Int == 3)
            try realm.write { rex.setValue("Sparky", forKey: "name") }
            #expect(rex.name == "Sparky")
        }
    }
}

extension RealmSwiftSignatureTests {
    /// `asyncOpen` delivers a realm confined to its queue (or the error); a cancelled task
    /// calls nothing; handles compare equal on one thread; `freeze`/`thaw` through the realm;
    /// `delete(map)`; `UpdatePolicy`'s raw values.
    @Test func asyncOpenFreezeAndDeleteAsRealmSwiftSpellsThem() throws {
        try withTemporaryDirectory { dir in
            let config = Realm.Configuration(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes)
            let queue = DispatchQueue(label: "open")
            let opened = Collector<String>()
            Realm.asyncOpen(configuration: config, callbackQueue: queue) { result in
                switch result {
                case .success(let realm): opened.append("opened \(realm.objects(SigDog.self).count)")
                case .failure(let error): opened.append("failed \(error)")
                }
            }
            var bad = config
            bad.encryptionKey = Data(count: 64)
            Realm.asyncOpen(configuration: bad, callbackQueue: queue) { result in
                if case .failure(let error as Realm.Error) = result { opened.append("failed \(error.code)") }
            }
            let cancelled = Realm.asyncOpen(configuration: config, callbackQueue: queue) { _ in opened.append("cancelled one called") }
            cancelled.cancel()
            queue.sync {}
            #expect(try #require(opened.wait(count: 2, timeout: eventTimeout)) == ["opened 0", "failed encryptionNotSupported"])

            let realm = try Realm(configuration: config)
            #expect(try realm == Realm(configuration: config))
            let person = SigPerson(value: ["name": "Ann"])
            try realm.write {
                realm.add(person)
                person.favoriteParks["home"] = "x"
                person.dogs.append(SigDog(value: ["name": "Rex"]))
            }
            let frozen = realm.freeze(person)
            #expect(frozen.isFrozen && realm.thaw(frozen)?.name == "Ann")
            #expect(realm.freeze(realm.objects(SigDog.self)).isFrozen)
            #expect(UpdatePolicy(rawValue: 3) == .modified && UpdatePolicy.all.rawValue == 2)

            let dogs = realm.objects(SigDog.self)
            #expect(dogs.index(matching: "name == %@", "Rex") == 0)
            #expect(dogs.index(matching: { $0.name == "Nobody" }) == nil)
            #expect(person.dogs.sorted(by: \SigDog.name).count == 1)
            #expect(dogs.distinct(by: [\SigDog.age]).count == 1)

            try realm.write {
                person.dogsByNickname["r"] = dogs.first
                person.dogsByNickname["b"] = SigDog(value: ["name": "Bo"])
            }
            #expect(dogs.count == 2)
            try realm.write { realm.delete(person.dogsByNickname) }
            #expect(dogs.isEmpty && person.dogs.isEmpty)
            #expect(person.dogsByNickname.count == 2 && person.dogsByNickname["r"] == .some(nil))
        }
    }
}

extension RealmSwiftSignatureTests {
    /// `List.observe(keyPaths:)` and `MutableSet.observe(keyPaths:)`: a change to another
    /// property of a listed object is no modification; one to a named property is; the list's
    /// own changes always count.
    @Test func listsAndSetsObserveNamedPropertiesOfTheirObjects() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: .init(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes))
            let person = SigPerson(value: ["name": "Ann"])
            try realm.write {
                realm.add(person)
                person.dogs.append(SigDog(value: ["name": "Rex", "age": 1]))
            }
            var byName: [String] = []
            var byKeyPath: [String] = []
            var all: [String] = []
            func record(_ change: RealmCollectionChange<List<SigDog>>, into log: inout [String]) {
                switch change {
                case .initial(let list): log.append("initial \(list.count)")
                case .update(_, let d, let i, let m): log.append("-\(d) +\(i) ~\(m)")
                case .error(let error): log.append("\(error)")
                }
            }
            let t1 = person.dogs.observe(keyPaths: ["name"]) { record($0, into: &byName) }
            let t2 = person.dogs.observe(keyPaths: [\SigDog.name]) { record($0, into: &byKeyPath) }
            let t3 = person.dogs.observe { record($0, into: &all) }
            defer { [t1, t2, t3].forEach { $0.invalidate() } }
            try realm.write { person.dogs[0].age = 2 }
            try realm.write { person.dogs[0].name = "Max" }
            try realm.write { person.dogs.append(SigDog(value: ["name": "Bo"])) }
            #expect(byName == ["initial 1", "-[] +[] ~[0]", "-[] +[1] ~[]"])
            #expect(byKeyPath == byName)
            #expect(all == ["initial 1", "-[] +[] ~[0]", "-[] +[] ~[0]", "-[] +[1] ~[]"])
        }
    }
}

extension RealmSwiftSignatureTests {
    /// Observing from a queue with Swift key paths, results and objects alike.
    @Test func keyPathObservationFromAQueue() throws {
        try withTemporaryDirectory { dir in
            let config = Realm.Configuration(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes)
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(SigDog(value: ["name": "Rex", "age": 1])) }
            let queue = DispatchQueue(label: "observer")
            let seen = Collector<String>()
            let t1 = realm.objects(SigDog.self).observe(keyPaths: [\SigDog.name], on: queue) { change in
                if case .update(_, _, _, let m) = change { seen.append("results ~\(m)") }
            }
            let t2 = realm.objects(SigDog.self).first!.observe(keyPaths: [\SigDog.name], on: queue) { change in
                if case .change(_, let properties) = change { seen.append("object names \(properties.contains { $0.name == "name" })") }
            }
            defer { [t1, t2].forEach { $0.invalidate() } }
            queue.sync {}  // both registered (their .initial comes first on the queue)
            try realm.write { realm.objects(SigDog.self).first!.age = 2 }
            try realm.write { realm.objects(SigDog.self).first!.name = "Max" }
            let got = try #require(seen.wait(count: 2, timeout: eventTimeout))
            #expect(Set(got) == ["results ~[0]", "object names true"])
        }
    }
}

extension RealmSwiftSignatureTests {
    /// A map observed from a queue reports keys; a map or set of objects observed with key paths
    /// counts only changes to the named properties of its objects; backlinks take Swift key paths.
    @Test func mapsSetsAndBacklinksObserveAsRealmSwiftDoes() throws {
        try withTemporaryDirectory { dir in
            let config = Realm.Configuration(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes)
            let realm = try Realm(configuration: config)
            let person = SigPerson(value: ["name": "Ann"])
            try realm.write {
                realm.add(person)
                person.dogsByNickname["r"] = SigDog(value: ["name": "Rex"])
                person.friends.insert(SigDog(value: ["name": "Bo"]))
            }
            let queue = DispatchQueue(label: "maps")
            let fromQueue = Collector<String>()
            let t1 = person.dogsByNickname.observe(keyPaths: ["name"], on: queue) { change in
                switch change {
                case .initial(let map): fromQueue.append("initial \(map.keys)")
                case .update(_, let d, let i, let m): fromQueue.append("-\(d) +\(i) ~\(m)")
                case .error(let error): fromQueue.append("\(error)")
                }
            }
            var sets: [String] = []
            let t2 = person.friends.observe(keyPaths: [\SigDog.name]) { change in
                if case .update(_, _, _, let m) = change { sets.append("~\(m)") }
            }
            var owners: [String] = []
            let bo = person.friends.first!
            let t3 = bo.friendOf.observe(keyPaths: [\SigPerson.favoriteParks]) { change in
                if case .update(_, _, _, let m) = change { owners.append("~\(m)") }
            }
            defer { [t1, t2, t3].forEach { $0.invalidate() } }
            // Each expected change is awaited before the next commit (commits the queue reads
            // together arrive as one change).
            _ = try #require(fromQueue.wait(count: 1, timeout: eventTimeout))
            try realm.write { person.dogsByNickname["r"]!!.age = 3 }  // not a named property
            try realm.write { person.dogsByNickname["r"]!!.name = "Max" }
            _ = try #require(fromQueue.wait(count: 2, timeout: eventTimeout))
            try realm.write { person.dogsByNickname["b"] = bo }
            _ = try #require(fromQueue.wait(count: 3, timeout: eventTimeout))
            try realm.write { bo.age = 4 }
            try realm.write { bo.name = "Bob" }
            try realm.write { person.dogs.append(bo) }  // not a named property
            try realm.write { person.favoriteParks["home"] = "Bush Park" }
            let got = try #require(fromQueue.wait(count: 4, timeout: eventTimeout))
            #expect(got == [#"initial ["r"]"#, #"-[] +[] ~["r"]"#, #"-[] +["b"] ~[]"#, #"-[] +[] ~["b"]"#])
            #expect(sets == ["~[0]"])
            #expect(owners == ["~[0]"])
        }
    }
}

extension RealmSwiftSignatureTests {
    /// A map's aggregates and its entries as pairs; backlinks observed from a queue arrive as
    /// backlinks of the queue's realm.
    @Test func mapAggregatesAndBacklinksFromAQueue() throws {
        try withTemporaryDirectory { dir in
            let config = Realm.Configuration(fileURL: dir.appendingPathComponent("dogs.realm"), objectTypes: sigTypes)
            let realm = try Realm(configuration: config)
            let person = SigPerson(value: ["name": "Ann"])
            let bo = SigDog(value: ["name": "Bo"])
            try realm.write {
                realm.add(person)
                person.favoriteParks["Ottawa"] = "Major's Hill"
                person.favoriteParks["Toronto"] = "High Park"
            }
            let parks = person.favoriteParks
            #expect(parks.min() == "High Park" && parks.max() == "Major's Hill" && parks.sorted(ascending: false) == ["Major's Hill", "High Park"])
            #expect(parks.asKeyValueSequence().map { "\($0.key)=\($0.value)" } == ["Ottawa=Major's Hill", "Toronto=High Park"])
            let scores = Map<String, Int>()
            scores["a"] = 3
            scores["b"] = 5
            #expect(scores.sum() == 8 && scores.average() == 4.0 && Map<String, Double>().average() as Double? == nil)

            try realm.write { realm.add(bo) }
            let queue = DispatchQueue(label: "backlinks")
            let seen = Collector<String>()
            let token = bo.friendOf.observe(on: queue) { change in
                switch change {
                case .initial(let owners): seen.append("initial \(owners.count)")
                case .update(let owners, _, let i, _): seen.append("+\(i) \(owners.map(\.name))")
                case .error(let error): seen.append("\(error)")
                }
            }
            defer { token.invalidate() }
            _ = try #require(seen.wait(count: 1, timeout: eventTimeout))
            try realm.write { person.friends.insert(bo) }
            #expect(try #require(seen.wait(count: 2, timeout: eventTimeout)) == ["initial 0", "+[0] [\"Ann\"]"])
        }
    }
}
