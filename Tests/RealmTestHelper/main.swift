// A second process for tests that must cross a process boundary.
//
//     RealmTestHelper write PATH FIRST COUNT   adds Person FIRST..<FIRST+COUNT in one write
//     RealmTestHelper read PATH                prints "count=N sum=S" over all Person ids
//     RealmTestHelper graph PATH               commits graph writes until killed, printing
//                                              "ack N" after commit N returns
//     RealmTestHelper rename-team PATH ID NAME sets the name of the graph workload's team ID
//     RealmTestHelper hold PATH                opens PATH (any classes), prints "holding", and
//                                              keeps it open until standard input closes
//     RealmTestHelper logbook PATH COUNT       writes COUNT logbook entries at schema version 0
//                                              (the release before a migration)
//     RealmTestHelper migrate-logbook PATH     prints "migrating", migrates the logbook to schema
//                                              version 3, prints "migrated N"
//     RealmTestHelper open-as-nobody PATH [read-only]
//                                              becomes user `nobody` (the process must run as
//                                              root), opens PATH with Person, and prints
//                                              "opened count=N" or "error CODE: MESSAGE"
import Foundation
import LMDBRealm

final class Person: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
    @Persisted var age = 0
}

/// The graph workload's classes: teams, members linking to a team and a mentor, and one mark
/// per commit.
final class Team: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
    @Persisted var members: List<Member>
    @Persisted(deleteRule: .cascade) var notes: List<TeamNote>
    @Persisted var tags: MutableSet<String>
    @Persisted(originProperty: "team") var people: LinkingObjects<Member>

    /// Kept through every kill too: each team's entry holds a copy of it.
    override class func coveringIndexes() -> [[String]] { [["name", "id"]] }
}

final class Member: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var team: Team?
    @Persisted var mentor: Member?
    @Persisted var scores: Map<String, Int>
}

/// Notes a team owns: deleted with it.
final class TeamNote: Object {
    @Persisted(primaryKey: true) var id: Int
}

final class CommitMark: Object {
    @Persisted(primaryKey: true) var id: Int
}

/// Commit after commit: a team with five members linking to it and to each other and listing
/// them, with two notes it owns (deleted with it), a set of tags and a map of scores per member;
/// links and list elements moved to older objects, and deletions that nullify links, empty list
/// places and cascade; each commit leaves a mark.
func runGraphWorkload(path: String) throws -> Never {
    let config = Realm.Configuration(
        fileURL: URL(fileURLWithPath: path), objectTypes: [Team.self, Member.self, CommitMark.self, TeamNote.self])
    let realm = try Realm(configuration: config)
    var n = (realm.objects(CommitMark.self).max(ofProperty: "id") as Int?).map { $0 + 1 } ?? 0
    while true {
        try realm.write {
            let team = Team()
            team.id = n
            team.name = "team \(n)"
            team.tags.insert(objectsIn: ["all", "t\(n % 3)"])
            for k in 0..<2 {
                let note = TeamNote()
                note.id = n * 10 + k
                team.notes.append(note)
            }
            var previous: Member?
            for i in 0..<5 {
                let member = Member()
                member.id = n * 10 + i
                member.scores["i"] = i
                member.scores["n"] = n
                member.team = team
                member.mentor = previous ?? realm.object(ofType: Member.self, forPrimaryKey: (n - 1) * 10)
                team.members.append(member)
                previous = member
            }
            realm.add(previous!)
            if n >= 3 {
                if let old = realm.object(ofType: Member.self, forPrimaryKey: (n - 3) * 10 + 2) {
                    old.team = team
                    team.members.insert(old, at: 1)
                    if let older = realm.object(ofType: Team.self, forPrimaryKey: n - 3), !older.members.isEmpty { older.members.remove(at: 0) }
                }
            }
            if n % 3 == 0, let doomed = realm.object(ofType: Team.self, forPrimaryKey: n - 2) { realm.delete(doomed) }
            if n % 4 == 1, let doomed = realm.object(ofType: Member.self, forPrimaryKey: (n - 1) * 10 + 1) { realm.delete(doomed) }
            let mark = CommitMark()
            mark.id = n
            realm.add(mark)
        }
        FileHandle.standardOutput.write(Data("ack \(n)\n".utf8))
        n += 1
    }
}

/// The logbook of the release before a migration, and of the one after (see MigrationTests).
final class LogbookV1: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var title = ""
    @Persisted var words = 0
    @Persisted(indexed: true) var place = ""
    @Persisted var obsolete = ""
    @Persisted var crew: Sailor?
    @Persisted var tags: List<String>
    override class func className() -> String { "Logbook" }
}

final class LogbookV3: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var title: String?
    @Persisted var wordCount = 0
    @Persisted(indexed: true) var place = 0
    @Persisted var headline = ""
    @Persisted var rating = 5
    @Persisted var crew: Sailor?
    @Persisted var labels: List<String>
    override class func className() -> String { "Logbook" }
}

final class Sailor: Object {
    @Persisted(primaryKey: true) var name = ""
}

/// Runs a logbook command, if `arguments` name one.
func runLogbook(_ arguments: [String]) throws {
    let url = URL(fileURLWithPath: arguments[2])
    switch arguments[1] {
    case "logbook":
        let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [LogbookV1.self, Sailor.self]))
        let ada = Sailor()
        ada.name = "Ada"
        try realm.write {
            for id in 0..<Int(arguments[3])! {
                let entry = LogbookV1()
                entry.id = id
                entry.title = "entry \(id)"
                entry.words = id % 500
                entry.place = String(id % 90)
                entry.crew = id % 2 == 0 ? ada : nil
                entry.tags.append(objectsIn: ["t\(id % 7)", "all"])
                realm.add(entry)
            }
        }
        print("wrote \(arguments[3])")
    case "migrate-logbook":
        FileHandle.standardOutput.write(Data("migrating\n".utf8))
        var config = Realm.Configuration(fileURL: url, schemaVersion: 3, objectTypes: [LogbookV3.self, Sailor.self])
        config.migrationBlock = { migration, _ in
            migration.renameProperty(onType: "Logbook", from: "words", to: "wordCount")
            migration.renameProperty(onType: "Logbook", from: "tags", to: "labels")
            migration.enumerateObjects(ofType: "Logbook") { old, new in
                new!["headline"] = (old!["title"] as! String).uppercased()
                new!["place"] = Int(old!["place"] as! String)! * 10
            }
        }
        let realm = try Realm(configuration: config)
        print("migrated \(realm.objects(LogbookV3.self).count)")
    default:
        return
    }
    exit(0)
}

let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "hold" {
    do {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[2])))
        FileHandle.standardOutput.write(Data("holding \(realm.isEmpty ? "empty" : "data")\n".utf8))
        _ = FileHandle.standardInput.readDataToEndOfFile()
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}
if arguments.count >= 3, arguments[1] == "open-as-nobody" {
    // Groups first, then the group, then the user: once the user is not root, the rest is
    // no longer allowed.
    guard let nobody = getpwnam("nobody") else {
        FileHandle.standardError.write(Data("no user nobody\n".utf8))
        exit(2)
    }
    guard setgroups(0, nil) == 0, setgid(nobody.pointee.pw_gid) == 0, setuid(nobody.pointee.pw_uid) == 0 else {
        FileHandle.standardError.write(Data("cannot become nobody: \(String(cString: strerror(errno)))\n".utf8))
        exit(2)
    }
    var config = Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[2]), objectTypes: [Person.self])
    config.readOnly = arguments.count > 3 && arguments[3] == "read-only"
    do {
        let realm = try Realm(configuration: config)
        print("opened count=\(realm.objects(Person.self).count)")
        exit(0)
    } catch let error as Realm.Error {
        print("error \(error.code.rawValue): \(error.message)")
        exit(0)
    } catch {
        print("error \(error)")
        exit(0)
    }
}
if arguments.count >= 3, arguments[1] == "logbook" || arguments[1] == "migrate-logbook" {
    do {
        try runLogbook(arguments)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}
if arguments.count == 5, arguments[1] == "rename-team" {
    do {
        let config = Realm.Configuration(
            fileURL: URL(fileURLWithPath: arguments[2]), objectTypes: [Team.self, Member.self, CommitMark.self, TeamNote.self])
        let realm = try Realm(configuration: config)
        guard let team = realm.object(ofType: Team.self, forPrimaryKey: Int(arguments[3])!) else {
            FileHandle.standardError.write(Data("no team \(arguments[3])\n".utf8))
            exit(1)
        }
        try realm.write { team.name = arguments[4] }
        print("renamed")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}
if arguments.count == 4, arguments[1] == "dump-dynamic" {
    // Prints every object of a class this program does not declare, read through the dynamic
    // API from the schema stored in the file: one line per object, properties in stored order.
    do {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[2])))
        func show(_ value: Any?) -> String {
            switch value {
            case nil: return "nil"
            case let object as DynamicObject: return "<\(object.objectSchema.primaryKeyProperty.map { show(object[$0.name]) } ?? "?")>"
            case let array as [Any?]: return "[" + array.map(show).joined(separator: ",") + "]"
            case let map as [String: Any?]: return "{" + map.sorted { $0.key < $1.key }.map { "\($0.key):\(show($0.value))" }.joined(separator: ",") + "}"
            default: return "\(value!)"
            }
        }
        for object in realm.dynamicObjects(arguments[3]) {
            print(object.objectSchema.properties.map { "\($0.name)=\(show(object[$0.name]))" }.joined(separator: " "))
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}
if arguments.count == 3, arguments[1] == "graph" {
    do {
        try runGraphWorkload(path: arguments[2])
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: RealmTestHelper write PATH FIRST COUNT | write-when-told PATH | read PATH\n".utf8))
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
                realm.add(p)
            }
        }
        print("wrote \(count)")
    case "write-when-told":
        // Has the file open (and read) before another process changes it, then writes once its
        // standard input closes.
        FileHandle.standardOutput.write(Data("open \(realm.objects(Person.self).count)\n".utf8))
        _ = FileHandle.standardInput.readDataToEndOfFile()
        try realm.write { realm.add(Person(value: ["id": 1000, "name": "told"])) }
        print("wrote")
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
