import Foundation
@_spi(Testing) import LMDBKit
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

// Three releases of one model, stored under one class name.
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

/// Additive changes only: `rating` added, `obsolete` removed, `title` made optional.
final class LogbookV2: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var title: String?
    @Persisted var words = 0
    @Persisted(indexed: true) var place = ""
    @Persisted var rating = 5
    @Persisted var crew: Sailor?
    @Persisted var tags: List<String>
    override class func className() -> String { "Logbook" }
}

/// `words` renamed `wordCount`, `place` changed from a string to a number, `headline` added
/// (filled by the block), the list renamed `labels`.
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

private func logbookV1(_ id: Int, _ title: String, words: Int, place: String, crew: Sailor? = nil) -> LogbookV1 {
    let entry = LogbookV1()
    entry.id = id
    entry.title = title
    entry.words = words
    entry.place = place
    entry.obsolete = "x\(id)"
    entry.crew = crew
    entry.tags.append(objectsIn: ["t\(id)", "all"])
    return entry
}

private func configuration(_ dir: URL, _ type: Object.Type, version: UInt64, block: MigrationBlock? = nil) -> Realm.Configuration {
    var config = makeConfiguration(dir, types: [type, Sailor.self])
    config.schemaVersion = version
    config.migrationBlock = block
    return config
}

/// A file of version 0 with three logbook entries, two of them crewed by one sailor.
private func writeVersion1(_ dir: URL) throws {
    let realm = try Realm(configuration: configuration(dir, LogbookV1.self, version: 0))
    let ada = Sailor()
    ada.name = "Ada"
    try realm.write {
        realm.add(logbookV1(1, "Calm", words: 10, place: "12", crew: ada))
        realm.add(logbookV1(2, "Storm", words: 250, place: "40", crew: ada))
        realm.add(logbookV1(3, "Fog", words: 7, place: "7"))
    }
}

@Suite struct MigrationTests {
    @Test func additiveChangesApplyOnceTheVersionIsRaised() throws {
        try withTemporaryDirectory { dir in
            try writeVersion1(dir)
            let url = dir.appendingPathComponent("test.realm")
            #expect(try schemaVersionAtURL(url) == 0)
            let realm = try Realm(configuration: configuration(dir, LogbookV2.self, version: 1))
            let entries = realm.objects(LogbookV2.self).sorted(byKeyPath: "id")
            #expect(entries.map(\.title) == ["Calm", "Storm", "Fog"])
            #expect(entries.map(\.words) == [10, 250, 7])
            #expect(entries.map(\.rating) == [5, 5, 5], "a new property takes the model's default")
            #expect(entries[0].crew?.name == "Ada" && entries[2].crew == nil)
            #expect(Array(entries[1].tags) == ["t2", "all"])
            #expect(realm.objects(LogbookV2.self).where { $0.place == "40" }.map(\.id) == [2])
            #expect(realm.indexProblems() == [])
            #expect(try schemaVersionAtURL(url) == 1)
            try realm.write {
                let entry = LogbookV2()
                entry.id = 4
                entry.title = nil
                realm.add(entry)
            }
            #expect(realm.objects(LogbookV2.self).count == 4)
        }
    }

    /// Every read or write transaction that opening and migrating begins, failing in turn
    /// (no reader slot): each failure is thrown, naming the file, and leaves it at the old
    /// version. The migration's own write once stopped the process when it could not begin.
    @Test func aMigrationWhoseTransactionCannotBeginThrowsAndLeavesTheOldVersion() async {
        await #expect(processExitsWith: .success) {
            var succeeded = false
            for skipped in 0..<200 where !succeeded {
                let dir = try makeTemporaryDirectory()
                defer { try? FileManager.default.removeItem(at: dir) }
                try writeVersion1(dir)
                let url = dir.appendingPathComponent("test.realm")
                FaultInjection.fail("mdb_txn_begin", with: .readersFull, after: skipped)
                do {
                    let realm = try Realm(configuration: configuration(dir, LogbookV3.self, version: 3) { _, _ in })
                    FaultInjection.reset()
                    precondition(realm.objects(LogbookV3.self).count == 3)
                    succeeded = true
                } catch let error as Realm.Error {
                    FaultInjection.reset()
                    precondition(error.description.contains(url.path), "\(error)")
                    let version = try schemaVersionAtURL(url)
                    precondition(version == 0, "a failed migration changed the version to \(version)")
                }
            }
            precondition(succeeded, "the open never got past its transactions")
        }
    }

    @Test func theBlockReadsOldObjectsAndWritesNewOnes() throws {
        try withTemporaryDirectory { dir in
            try writeVersion1(dir)
            let seen = LockedStrings()
            let realm = try Realm(
                configuration: configuration(dir, LogbookV3.self, version: 3) { migration, oldVersion in
                    seen.append("from \(oldVersion)")
                    #expect(migration.oldSchema["Logbook"]?["words"] != nil)
                    #expect(migration.newSchema["Logbook"]?["wordCount"] != nil)
                    migration.renameProperty(onType: "Logbook", from: "words", to: "wordCount")
                    migration.renameProperty(onType: "Logbook", from: "tags", to: "labels")
                    migration.enumerateObjects(ofType: "Logbook") { old, new in
                        guard let old, let new else { return }
                        new["headline"] = (old["title"] as? String ?? "").uppercased()
                        new["place"] = Int(old["place"] as! String)! * 10
                        if let crew = old["crew"] as? MigrationObject { seen.append("crew \(crew["name"] as! String)") }
                    }
                })
            #expect(seen.values == ["from 0", "crew Ada", "crew Ada"])
            let entries = realm.objects(LogbookV3.self).sorted(byKeyPath: "id")
            #expect(entries.map(\.headline) == ["CALM", "STORM", "FOG"])
            #expect(entries.map(\.wordCount) == [10, 250, 7], "renamed: the values moved")
            #expect(entries.map(\.place) == [120, 400, 70])
            #expect(Array(entries[0].labels) == ["t1", "all"])
            // The index of the changed property was rebuilt from the new values.
            #expect(realm.objects(LogbookV3.self).where { $0.place == 400 }.map(\.id) == [2])
            #expect(realm.objects(LogbookV3.self).where { $0.place > 100 }.count == 2)
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func aThrowingBlockLeavesTheFileAtTheOldVersionAndData() throws {
        struct Refused: Error {}
        try withTemporaryDirectory { dir in
            try writeVersion1(dir)
            let url = dir.appendingPathComponent("test.realm")
            do {
                _ = try Realm(
                    configuration: configuration(dir, LogbookV3.self, version: 3) { migration, _ in
                        migration.enumerateObjects(ofType: "Logbook") { _, new in new?["headline"] = "changed" }
                        throw Refused()
                    })
                Issue.record("the migration should have failed")
            } catch let error as Realm.Error {
                #expect(error.message.contains("The migration block from schema version 0 to 3 failed"), "\(error.message)")
                #expect(error.message.contains("nothing changed"))
            }
            #expect(try schemaVersionAtURL(url) == 0)
            let realm = try Realm(configuration: configuration(dir, LogbookV1.self, version: 0))
            #expect(realm.objects(LogbookV1.self).sorted(byKeyPath: "id").map(\.words) == [10, 250, 7])
            #expect(realm.objects(LogbookV1.self).map(\.obsolete).sorted() == ["x1", "x2", "x3"])
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func theSameVersionWithAnotherSchemaThrowsAndSaysToRaiseIt() throws {
        try withTemporaryDirectory { dir in
            try writeVersion1(dir)
            do {
                _ = try Realm(configuration: configuration(dir, LogbookV2.self, version: 0))
                Issue.record("expected a schema mismatch")
            } catch let error as Realm.Error {
                #expect(error.code == .schemaMismatch)
                #expect(error.message.contains("Property 'Logbook.rating' has been added."))
                #expect(error.message.contains("Property 'Logbook.obsolete' has been removed."))
                #expect(error.message.contains("Property 'Logbook.title' has been made optional."))
                #expect(error.message.contains("Increase the configuration's schemaVersion (the file is at 0)"))
            }
            _ = try Realm(configuration: configuration(dir, LogbookV2.self, version: 2))
            do {
                _ = try Realm(configuration: configuration(dir, LogbookV2.self, version: 1))
                Issue.record("expected a version error")
            } catch let error as Realm.Error {
                #expect(error.code == .schemaMismatch)
                #expect(error.message == "Provided schema version 1 is less than last set version 2.")
            }
        }
    }

    @Test func aRaisedVersionRunsTheBlockEvenWithoutSchemaChanges() throws {
        try withTemporaryDirectory { dir in
            try writeVersion1(dir)
            let realm = try Realm(
                configuration: configuration(dir, LogbookV1.self, version: 1) { migration, _ in
                    migration.enumerateObjects(ofType: "Logbook") { old, new in
                        new!["words"] = (old!["words"] as! Int) + 1
                    }
                    let sailor = migration.create("Sailor", value: ["name": "Bob"])
                    migration.enumerateObjects(ofType: "Logbook") { old, new in
                        if old!["crew"] == nil { new!["crew"] = sailor }
                    }
                })
            let entries = realm.objects(LogbookV1.self).sorted(byKeyPath: "id")
            #expect(entries.map(\.words) == [11, 251, 8])
            #expect(entries.map { $0.crew?.name } == ["Ada", "Ada", "Bob"])
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func deleteAndDeleteDataRemoveObjectsAndUnlinkThem() throws {
        try withTemporaryDirectory { dir in
            try writeVersion1(dir)
            let realm = try Realm(
                configuration: configuration(dir, LogbookV1.self, version: 1) { migration, _ in
                    migration.enumerateObjects(ofType: "Logbook") { old, new in
                        if old!["id"] as! Int == 3 { migration.delete(new!) }
                    }
                    #expect(migration.deleteData(forType: "Sailor"))
                    #expect(!migration.deleteData(forType: "Nothing"))
                })
            #expect(realm.objects(LogbookV1.self).map(\.id).sorted() == [1, 2])
            #expect(realm.objects(Sailor.self).isEmpty)
            #expect(realm.objects(LogbookV1.self).allSatisfy { $0.crew == nil })
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func deleteRealmIfMigrationNeededStartsAfresh() throws {
        try withTemporaryDirectory { dir in
            try writeVersion1(dir)
            var config = configuration(dir, LogbookV2.self, version: 0)
            config.deleteRealmIfMigrationNeeded = true
            let realm = try Realm(configuration: config)
            #expect(realm.objects(LogbookV2.self).isEmpty)
            #expect(realm.objects(Sailor.self).isEmpty)
        }
    }

    @Test func aNewFileRecordsTheVersionWithoutRunningTheBlock() throws {
        try withTemporaryDirectory { dir in
            let ran = LockedStrings()
            _ = try Realm(configuration: configuration(dir, LogbookV3.self, version: 7) { _, _ in ran.append("ran") })
            #expect(ran.values.isEmpty)
            #expect(try schemaVersionAtURL(dir.appendingPathComponent("test.realm")) == 7)
            #expect(throws: Realm.Error.self) { try schemaVersionAtURL(dir.appendingPathComponent("none.realm")) }
        }
    }
}

/// Migrations across releases: a file written by the release before (another process), and a
/// migration killed at random instants.
@Suite struct MigrationProcessTests {
    let helper = builtExecutable(named: "RealmTestHelper")

    private static func v3(_ url: URL) -> Realm.Configuration {
        var config = Realm.Configuration(fileURL: url, schemaVersion: 3, objectTypes: [LogbookV3.self, Sailor.self])
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

    /// The new version's data, checked whole.
    private static func expectMigrated(_ realm: Realm, count: Int) {
        let entries = realm.objects(LogbookV3.self)
        #expect(entries.count == count)
        #expect(entries.allSatisfy { $0.headline == "ENTRY \($0.id)" && $0.place == ($0.id % 90) * 10 && $0.wordCount == $0.id % 500 })
        #expect(entries.allSatisfy { Array($0.labels) == ["t\($0.id % 7)", "all"] })
        #expect(entries.where { $0.place == 100 }.count == (0..<count).filter { $0 % 90 == 10 }.count)
        #expect(realm.indexProblems() == [])
    }

    @Test func aFileTheOldReleaseWroteIsMigrated() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("logbook.realm")
            let wrote = try run(helper, ["logbook", url.path, "500"])
            #expect(wrote.status == 0, "\(wrote.output)")
            #expect(try schemaVersionAtURL(url) == 0)
            let realm = try Realm(configuration: Self.v3(url))
            Self.expectMigrated(realm, count: 500)
            #expect(realm.objects(LogbookV3.self).filter { $0.crew?.name == "Ada" }.count == 250)
            #expect(try schemaVersionAtURL(url) == 3)
        }
    }

    @Test func aMigrationKilledAtAnyInstantLeavesTheOldVersionOrTheNewOne() throws {
        try withTemporaryDirectory { dir in
            let template = dir.appendingPathComponent("template.realm")
            let count = 20_000
            #expect(try run(helper, ["logbook", template.path, String(count)]).status == 0)
            var outcomes: [UInt64] = []
            // The instants of the kills; the same seed gives the same delays, not the same
            // instants of the migration.
            let seed = SeededGenerator.testSeed()
            var generator = SeededGenerator(state: seed)
            for trial in 0..<5 {
                let url = dir.appendingPathComponent("trial-\(trial).realm")
                try FileManager.default.copyItem(at: template, to: url)
                // Once the migration starts, killed at a random instant of it (or after it).
                let (process, _, _) = try start(helper, ["migrate-logbook", url.path], waitingFor: "migrating")
                usleep(UInt32.random(in: 0...(trial == 0 ? 1 : 400_000), using: &generator))
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()

                let version = try schemaVersionAtURL(url)
                outcomes.append(version)
                if version == 3 {
                    Self.expectMigrated(try Realm(configuration: Self.v3(url)), count: count)
                } else {
                    #expect(version == 0, "trial \(trial)")
                    let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [LogbookV1.self, Sailor.self]))
                    let entries = realm.objects(LogbookV1.self)
                    #expect(entries.count == count)
                    #expect(entries.allSatisfy { $0.words == $0.id % 500 && $0.place == String($0.id % 90) })
                    #expect(realm.indexProblems() == [])
                    // And the interrupted migration can run again.
                    Self.expectMigrated(try Realm(configuration: Self.v3(url)), count: count)
                }
            }
            #expect(outcomes.contains(0), "at least the trial killed at once stops before the migration commits: \(outcomes) (seed \(seed))")
        }
    }
}

@Suite struct MigrationLoggingTests {
    /// A migration reports its start, its progress through each class and its end through the
    /// configuration's logger; a failed one says that nothing changed.
    @Test func aMigrationReportsProgressThroughTheLogger() throws {
        try withTemporaryDirectory { dir in
            try writeVersion1(dir)
            let messages = LockedStrings()
            var config = configuration(dir, LogbookV3.self, version: 3) { migration, _ in
                migration.renameProperty(onType: "Logbook", from: "words", to: "wordCount")
                migration.enumerateObjects(ofType: "Logbook") { old, new in new!["headline"] = old!["title"] }
            }
            config.logger = Realm.Logger(level: .info) { level, message in messages.append("\(level): \(message)") }
            config.progressInterval = 2
            _ = try Realm(configuration: config)
            let log = messages.values
            #expect(log.first?.hasPrefix("info: Migrating the realm at '") == true)
            #expect(log.first?.hasSuffix("from schema version 0 to 3; changed classes: Logbook") == true)
            #expect(log.contains("info: Migrating 'Logbook': 2 of 3 objects rewritten"))
            #expect(log.contains("info: Migrating 'Logbook': 2 of 3 objects enumerated"))
            #expect(log.last?.contains("to schema version 3 in") == true)
            #expect(!log.contains { $0.hasPrefix("debug") }, "below the logger's level")
        }
    }
}
