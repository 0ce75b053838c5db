import Foundation
import LMDBRealm

// A file before and after a migration: the logbook at schema version 0, and at version 3
// (a renamed property and list, a property whose type changes, values computed from old ones).

final class LogbookV0: Object {
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

enum Logbook {
    static func configurationV0(_ path: String) -> Realm.Configuration {
        Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [LogbookV0.self, Sailor.self])
    }

    static func configurationV3(_ path: String) -> Realm.Configuration {
        var config = Realm.Configuration(fileURL: URL(fileURLWithPath: path), schemaVersion: 3, objectTypes: [LogbookV3.self, Sailor.self])
        config.migrationBlock = { migration, _ in
            migration.renameProperty(onType: "Logbook", from: "words", to: "wordCount")
            migration.renameProperty(onType: "Logbook", from: "tags", to: "labels")
            migration.enumerateObjects(ofType: "Logbook") { old, new in
                new!["headline"] = (old!["title"] as! String).uppercased()
                new!["place"] = Int(old!["place"] as! String)! * 10
            }
        }
        return config
    }

    /// Writes `count` entries at schema version 0.
    static func write(_ path: String, count: Int) throws {
        let realm = try Realm(configuration: configurationV0(path))
        let ada = Sailor()
        ada.name = "Ada"
        try realm.write {
            for id in 0..<count {
                let entry = LogbookV0()
                entry.id = id
                entry.title = "entry \(id)"
                entry.words = id % 500
                entry.place = String(id % 90)
                entry.crew = id % 2 == 0 ? ada : nil
                entry.tags.append(objectsIn: ["t\(id % 7)", "all"])
                realm.add(entry)
            }
        }
    }

    /// What is wrong with the logbook at `path` of `count` entries: it must be wholly at
    /// version 0 or wholly at version 3.
    static func problems(_ path: String, count: Int) throws -> [String] {
        let version = try schemaVersionAtURL(URL(fileURLWithPath: path))
        var problems: [String] = []
        switch version {
        case 0:
            let realm = try Realm(configuration: configurationV0(path))
            let entries = realm.objects(LogbookV0.self)
            if entries.count != count { problems.append("version 0 holds \(entries.count) entries, not \(count)") }
            for entry in entries
            where entry.words != entry.id % 500 || entry.place != String(entry.id % 90) || Array(entry.tags) != ["t\(entry.id % 7)", "all"] {
                problems.append("version 0 entry \(entry.id) is not as written")
                break
            }
            problems += try realm.verify().findings.prefix(5).map { "verify: \($0)" }
        case 3:
            // Opening at version 3 runs no migration: the file is already there.
            let realm = try Realm(configuration: configurationV3(path))
            let entries = realm.objects(LogbookV3.self)
            if entries.count != count { problems.append("version 3 holds \(entries.count) entries, not \(count)") }
            for entry in entries
            where entry.wordCount != entry.id % 500 || entry.place != (entry.id % 90) * 10 || entry.headline != "ENTRY \(entry.id)"
                || Array(entry.labels) != ["t\(entry.id % 7)", "all"] || (entry.crew?.name == "Ada") != (entry.id % 2 == 0)
            {
                problems.append("version 3 entry \(entry.id) is half migrated")
                break
            }
            let byPlace = realm.objects(LogbookV3.self).where { $0.place == 450 }.count
            if byPlace != entries.filter({ $0.place == 450 }).count { problems.append("the migrated place index disagrees with a scan") }
            problems += try realm.verify().findings.prefix(5).map { "verify: \($0)" }
        default:
            problems.append("schema version \(version), neither 0 nor 3")
        }
        return problems
    }
}
