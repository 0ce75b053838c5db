import Foundation
@_spi(Testing) import LMDBKit
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

final class ObservedChecklist: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var items: List<String>
}

/// A read that fails while an observer works out what a commit changed is never "nothing
/// changed": the observer gets `.error` naming the file and class, where the list's elements
/// once read as empty in both versions and the change went unreported.
@Suite struct ObserverReadFailureTests {
    /// Observes a checklist and its list of items, appends an item from another thread, and
    /// refreshes with every list read failing as a disk can make it fail.
    static func observeWithAFailingRead(in dir: String, results: Bool) throws {
        let config = makeConfiguration(URL(fileURLWithPath: dir), types: [ObservedChecklist.self])
        let realm = try Realm(configuration: config)
        try realm.write { realm.add(ObservedChecklist(value: ["id": 1, "items": ["a"]] as [String: Any])) }
        let checklist = try #require(realm.object(ofType: ObservedChecklist.self, forPrimaryKey: 1))
        func say(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        let objectToken = checklist.observe(keyPaths: ["items"]) { change in
            switch change {
            case .change(_, let properties): say("object change \(properties.map(\.name))")
            case .deleted: say("object deleted")
            case .error(let error): say("object error \(error)")
            }
        }
        let resultsToken = results
            ? realm.objects(ObservedChecklist.self).observe(keyPaths: ["items"]) { change in
                switch change {
                case .initial: say("results initial")
                case .update(_, _, _, let modifications): say("results modified \(modifications)")
                case .error(let error): say("results error \(error)")
                }
            } : nil

        let written = DispatchSemaphore(value: 0)
        let writer = Thread {
            defer { written.signal() }
            let other = try! Realm(configuration: config)
            try! other.write { other.object(ofType: ObservedChecklist.self, forPrimaryKey: 1)!.items.append("b") }
        }
        writer.start()
        guard written.wait(timeout: .now() + 30) == .success else { return say("the other thread's write did not end") }
        FaultInjection.fail("mdb_cursor_get", with: .ioError, times: 1_000)
        realm.refresh()
        say("refreshed")
        withExtendedLifetime((objectToken, resultsToken)) {}
    }

    @Test func anObjectObserverGetsTheErrorNotSilence() async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [path = dir.path as String] in
                try ObserverReadFailureTests.observeWithAFailingRead(in: path, results: false)
            }
            let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(stderr.contains("refreshed"), "\(stderr)")
            #expect(stderr.contains("object error RealmError.fileAccess: Cannot read the changes to an object of 'ObservedChecklist' in '"), "\(stderr)")
            #expect(!stderr.contains("object change"), "\(stderr)")
        }
    }

    @Test func aResultsObserverGetsTheErrorNotSilence() async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [path = dir.path as String] in
                try ObserverReadFailureTests.observeWithAFailingRead(in: path, results: true)
            }
            let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(stderr.contains("refreshed"), "\(stderr)")
            #expect(stderr.contains("results error RealmError.fileAccess: Cannot read the changes to 'ObservedChecklist' in '"), "\(stderr)")
            #expect(!stderr.contains("results modified"), "\(stderr)")
        }
    }
}
