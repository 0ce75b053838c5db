import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// What must hold across processes: data written by one survives into another, and commits
/// from another process are seen after a refresh.
@Suite struct ProcessTests {
    let helper = builtExecutable(named: "RealmTestHelper")

    @Test func dataSurvivesClosingAndReopeningInANewProcess() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("people.realm").path
            let wrote = try run(helper, ["write", path, "0", "1000"])
            #expect(wrote.status == 0, "\(wrote.output)")
            // Read back in yet another process, and in this one.
            let read = try run(helper, ["read", path])
            let expectedSum = (0..<1000).reduce(0) { $0 + $1 + $1 % 90 + "Person \($1)".utf8.count }
            #expect(read.output.trimmingCharacters(in: .whitespacesAndNewlines) == "count=1000 sum=\(expectedSum)")
            let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Person.self]))
            #expect(realm.objects(Person.self).count == 1000)
            #expect(realm.object(ofType: Person.self, forPrimaryKey: 999)?.name == "Person 999")
        }
    }

    @Test func aWriteThatCreatesATableCanReadAClassAnotherProcessAdded() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("mixed.realm")
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url))
            // Person reaches the file after this process loaded its catalog.
            #expect(try run(helper, ["write", url.path, "0", "3"]).status == 0)
            try realm.write {
                realm.add(Article(id: "new table"))  // creates a table in this write
                #expect(realm.objects(Person.self).count == 3)
            }
            #expect(realm.objects(Person.self).count == 3)
            #expect(realm.objects(Article.self).count == 1)
        }
    }

    @Test func aCommitFromAnotherProcessIsSeenAfterRefresh() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("shared.realm")
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [Person.self]))
            let people = realm.objects(Person.self)
            #expect(people.isEmpty)
            let wrote = try run(helper, ["write", url.path, "10", "5"])
            #expect(wrote.status == 0, "\(wrote.output)")
            #expect(people.isEmpty, "not before refresh")
            realm.refresh()
            #expect(people.map(\.id) == [10, 11, 12, 13, 14])
            // And this process's commit reaches the other process.
            try realm.write {
                let p = Person()
                p.id = 1
                realm.add(p)
            }
            let read = try run(helper, ["read", url.path])
            #expect(read.output.hasPrefix("count=6 "))
        }
    }
}

/// Resource hygiene: opening and closing must not leak descriptors or reader slots.
@Suite struct ResourceTests {
    @Test func tenThousandOpenCloseCyclesLeakNothing() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            do {
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Article(id: "a")) }
            }
            #expect(openFileDescriptorCount(under: dir) == 0)
            for _ in 0..<10_000 {
                let realm = try Realm(configuration: config)
                #expect(realm.objects(Article.self).count == 1)
            }
            #expect(openFileDescriptorCount(under: dir) == 0, "every cycle closed its file")
            let realm = try Realm(configuration: config)
            #expect(realm.readerSlotsInUse == 1, "only this handle's snapshot")
            // Many handles at once on one file, then all closed.
            var handles = try (0..<50).map { _ in try openOnQueue(config) }
            #expect(realm.readerSlotsInUse == 51)
            handles.removeAll()
            #expect(realm.readerSlotsInUse == 1)
        }
    }

    @Test func tooManyReadersThrowsAClearError() throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir, types: [Article.self])
            config.maximumNumberOfReaders = 4
            var handles: [(realm: Realm, queue: DispatchQueue)] = []
            do {
                for _ in 0..<10 { handles.append(try openOnQueue(config)) }
                Issue.record("expected tooManyReaders")
            } catch let error as Realm.Error {
                #expect(error.code == .tooManyReaders)
                #expect(error.message.contains(config.fileURL!.path))
            }
            #expect(!handles.isEmpty)
        }
    }
}
