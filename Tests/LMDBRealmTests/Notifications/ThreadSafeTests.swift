import Dispatch
import Foundation
import LMDBRealm
import TestSupport
import Testing

/// A `Sendable` holder of live values, as Swift 6 code keeps them.
struct PersonHolder: Sendable {
    @ThreadSafe var person: Person?
    @ThreadSafe var adults: Results<Person>?

    init(person: Person?, adults: Results<Person>?) {
        self.person = person
        self.adults = adults
    }
}

/// `@ThreadSafe`, written as RealmSwift's documentation uses it.
@Suite struct ThreadSafeTests {
    /// A managed object set on one thread is changed on a queue through the queue's realm.
    @Test func anObjectIsReadAndWrittenOnAnotherQueue() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let realm = try Realm(configuration: config)
            let person = Person()
            person.id = 1
            person.name = "Jack"
            try realm.write { realm.add(person) }

            @ThreadSafe var personRef = person
            let done = Collector<String>()
            DispatchQueue(label: "background").async { [_personRef] in
                let realm = try! Realm(configuration: config)
                let ref = _personRef.wrappedValue
                try! realm.write {
                    ref?.name = "Jane"
                }
                done.append("\(ref?.realm === realm) \(ref?.name ?? "nil")")
            }
            #expect(done.wait(count: 1, timeout: eventTimeout) == ["true Jane"])
            realm.refresh()
            #expect(person.name == "Jane")
            // On this thread it is this thread's object.
            #expect(personRef?.realm === realm)
            #expect(personRef?.name == "Jane")
        }
    }

    /// A `Sendable` class keeps live values in `@ThreadSafe` properties; a task on another
    /// thread reads them as its own realm sees them, including commits made after they were set.
    @Test func aSendableHolderCarriesObjectsAndResults() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let holder = try onOtherThread {
                let realm = try Realm(configuration: config)
                try realm.write {
                    for i in 0..<10 {
                        let person = Person()
                        person.id = i
                        person.age = i * 10
                        realm.add(person)
                    }
                }
                return PersonHolder(
                    person: realm.object(ofType: Person.self, forPrimaryKey: 3),
                    adults: realm.objects(Person.self).where { $0.age >= 18 })
            }
            let seen = try onOtherThread { () -> String in
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Person(value: ["id": 20, "age": 40])) }
                return "\(holder.person?.age ?? -1) \(holder.adults?.count ?? -1)"
            }
            #expect(seen == "30 9")
        }
    }

    /// A deleted object reads as `nil`; `nil` can be set and read.
    @Test func aDeletedObjectReadsAsNil() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Person(value: ["id": 1])) }
            let holder = PersonHolder(
                person: realm.object(ofType: Person.self, forPrimaryKey: 1), adults: nil)
            #expect(holder.adults == nil)
            try onOtherThread {
                let realm = try Realm(configuration: config)
                try realm.write { realm.delete(realm.objects(Person.self)) }
            }
            // This thread's realm sees the delete once it moves to the newer version.
            #expect(holder.person != nil)
            realm.refresh()
            #expect(holder.person == nil)
            holder.person = nil
            #expect(holder.person == nil)
        }
    }

    /// A list is found again through its object.
    @Test func aListIsReadOnAnotherThread() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Invoice(value: ["id": 1, "lines": [Decimal128("1.5"), Decimal128("2.25")]] as [String: Any])) }
            @ThreadSafe var lines = realm.object(ofType: Invoice.self, forPrimaryKey: 1)?.lines
            let seen = try onOtherThread { [_lines] in
                let realm = try Realm(configuration: config)
                let lines = try #require(_lines.wrappedValue)
                return "\(lines.realm === realm) \(lines.map(\.stringValue))"
            }
            #expect(seen == "true [\"1.5\", \"2.25\"]")
        }
    }

    /// An unmanaged object cannot be kept: it can be passed as it is.
    @Test func anUnmanagedObjectStopsTheProcessWithAReason() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PersonHolder(person: Person(), adults: nil)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("@ThreadSafe holds managed values"), "\(stderr)")
    }
}
