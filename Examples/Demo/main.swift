// A small tour of LMDBRealm: define a model, write a few objects, read them back.
import Foundation
import LMDBRealm

final class Dog: Object {
    @Persisted(primaryKey: true) var name: String
    @Persisted var age = 0
    @Persisted var breed: String?
    @Persisted var adopted: Date = Date(timeIntervalSince1970: 0)
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-demo-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

var config = Realm.Configuration(fileURL: directory.appendingPathComponent("dogs.realm"))
config.objectTypes = [Dog.self]
let realm = try Realm(configuration: config)

try realm.write {
    realm.deleteAll()
    for (name, age, breed) in [("Rex", 3, "Collie"), ("Bella", 5, nil), ("Max", 1, "Beagle")] {
        let dog = Dog()
        dog.name = name
        dog.age = age
        dog.breed = breed
        dog.adopted = Date(timeIntervalSince1970: 1_700_000_000 + Double(age) * 86_400)
        realm.add(dog)
    }
}

let dogs = realm.objects(Dog.self)
print("\(dogs.count) dogs in \(config.fileURL!.lastPathComponent):")
for dog in dogs {
    print("  \(dog.name.padding(toLength: 6, withPad: " ", startingAt: 0)) age \(dog.age)  breed \(dog.breed ?? "unknown")")
}

// Managed objects are live: a change in a write is visible through every accessor.
let rex = realm.object(ofType: Dog.self, forPrimaryKey: "Rex")!
try realm.write { rex.age += 1 }
print("Rex is now \(realm.object(ofType: Dog.self, forPrimaryKey: "Rex")!.age)")

// Another thread opens its own handle on the same file and sees the committed data.
let shared = config
let done = DispatchSemaphore(value: 0)
Thread {
    let other = try! Realm(configuration: shared)
    let oldest = other.objects(Dog.self).max { $0.age < $1.age }!
    print("Another thread sees \(other.objects(Dog.self).count) dogs; the oldest is \(oldest.name)")
    done.signal()
}.start()
done.wait()
