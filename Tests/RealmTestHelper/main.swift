// A second process for tests that must cross a process boundary.
//
//     RealmTestHelper write PATH FIRST COUNT   adds Person FIRST..<FIRST+COUNT in one write
//     RealmTestHelper read PATH                prints "count=N sum=S" over all Person ids
import Foundation
import LMDBRealm

final class Person: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
    @Persisted var age = 0
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: RealmTestHelper write PATH FIRST COUNT | read PATH\n".utf8))
    exit(2)
}
let config = Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[2]), objectTypes: [Person.self])
do {
    let realm = try Realm(configuration: config)
    switch arguments[1] {
    case "write":
        let first = Int(arguments[3])!
        let count = Int(arguments[4])!
        try realm.write {
            for id in first..<(first + count) {
                let p = Person()
                p.id = id
                p.name = "Person \(id)"
                p.age = id % 90
                try realm.add(p)
            }
        }
        print("wrote \(count)")
    case "read":
        let people = realm.objects(Person.self)
        var sum = 0
        for p in people { sum += p.id + p.age + p.name.utf8.count }
        print("count=\(people.count) sum=\(sum)")
    default:
        FileHandle.standardError.write(Data("unknown command \(arguments[1])\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
