import Foundation
import LMDBRealm
import TestSupport
import Testing

/// Programmer errors stop the process with Realm's message. Each runs in a child process.
@Suite struct CrashTests {
    /// Opens a fresh realm in a new temporary directory (inside the child process).
    static func freshRealm() throws -> (Realm, Realm.Configuration) {
        let dir = try makeTemporaryDirectory()
        let config = makeConfiguration(dir, types: [Article.self])
        return (try Realm(configuration: config), config)
    }

    func expectCrash(_ message: String, _ result: ExitTest.Result?) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains(message), "stderr was: \(stderr)")
    }

    @Test func usingARealmFromAnotherThreadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            final class Box: @unchecked Sendable {
                // @unchecked Sendable: deliberately smuggled to another thread; the realm must stop it.
                let realm: Realm
                init(_ realm: Realm) { self.realm = realm }
            }
            let box = Box(realm)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = box.realm.objects(Article.self).count
                done.signal()
            }.start()
            done.wait()
        }
        expectCrash("Realm accessed from incorrect thread.", result)
    }

    @Test func deletingResultsOfAnotherRealmStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (a, _) = try CrashTests.freshRealm()
            let (b, _) = try CrashTests.freshRealm()
            try a.write { a.add(Article(id: "x")) }
            try b.write { b.delete(a.objects(Article.self)) }
        }
        expectCrash("Can only delete objects from the Realm they belong to.", result)
    }

    @Test func readingAnObjectFromAnotherThreadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            let article = Article(id: "a")
            try realm.write { realm.add(article) }
            final class Box: @unchecked Sendable {
                // @unchecked Sendable: deliberately smuggled to another thread.
                let article: Article
                init(_ article: Article) { self.article = article }
            }
            let box = Box(article)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = box.article.wordCount
                done.signal()
            }.start()
            done.wait()
        }
        expectCrash("Realm accessed from incorrect thread.", result)
    }

    @Test func readingADeletedObjectStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            let article = Article(id: "a")
            try realm.write { realm.add(article) }
            try realm.write { realm.delete(article) }
            _ = article.wordCount
        }
        expectCrash("Object has been deleted or invalidated.", result)
    }

    @Test func readingAnObjectAfterDeleteAllStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            let article = Article(id: "a")
            try realm.write { realm.add(article) }
            try realm.write { realm.deleteAll() }
            _ = article.url
        }
        expectCrash("Object has been deleted or invalidated.", result)
    }

    @Test func settingAManagedPropertyOutsideAWriteStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            let article = Article(id: "a")
            try realm.write { realm.add(article) }
            article.wordCount = 5
        }
        expectCrash("outside of a write transaction", result)
    }

    @Test func addingOutsideAWriteStops() async {
        await #expect(processExitsWith: .failure) {
            let (realm, _) = try CrashTests.freshRealm()
            realm.add(Article(id: "a"))
        }
    }

    @Test func nestedWritesStop() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            try realm.write { try realm.write {} }
        }
        expectCrash("already in a write transaction", result)
    }

    @Test func writingToAReadOnlyRealmStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, config) = try CrashTests.freshRealm()
            try realm.write { realm.add(Article(id: "a")) }
            var readOnly = config
            readOnly.readOnly = true
            // A second process-level handle on the same file must share its options, so use
            // another file copy for the read-only open.
            let copy = config.fileURL!.deletingLastPathComponent().appendingPathComponent("copy.realm")
            try FileManager.default.copyItem(at: config.fileURL!, to: copy)
            readOnly.fileURL = copy
            let ro = try Realm(configuration: readOnly)
            try ro.write {}
        }
        expectCrash("read-only", result)
    }

    @Test func changingAPrimaryKeyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            let article = Article(id: "a")
            try realm.write { realm.add(article) }
            try realm.write { article.id = "b" }
        }
        expectCrash("Primary key can't be changed", result)
    }
}
