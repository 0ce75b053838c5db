import Foundation
import LMDBRealm
import TestSupport
import Testing

/// RealmSwift's handle cache: opening a configuration again where it is open returns the same
/// handle, held weakly.
@Suite struct HandleCacheTests {
    @Test func oneThreadHasOneHandleOfAConfiguration() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            weak var cached: Realm?
            do {
                let realm = try Realm(configuration: config)
                let again = try Realm(configuration: config)
                #expect(realm === again)
                // Objects of one are the other's: added, deleted and read through either.
                try again.write { again.add(Article(id: "a")) }
                let article = try #require(realm.object(ofType: Article.self, forPrimaryKey: "a"))
                try realm.write { again.delete(article) }
                #expect(realm.isEmpty)

                // Another thread gets a handle of its own.
                let otherThread = try onOtherThread { try ObjectIdentifier(Realm(configuration: config)) }
                #expect(otherThread != ObjectIdentifier(again))
                cached = realm
            }
            // Held weakly: once nothing holds it, the next open makes a new handle.
            #expect(cached == nil)
            #expect(try Realm(configuration: config).isEmpty)
        }
    }

    /// `try Realm()` opens `Realm.Configuration.defaultConfiguration`, once per thread.
    @Test func theDefaultConfigurationIsOpenedOnce() async {
        await #expect(processExitsWith: .success) {
            Realm.Configuration.defaultConfiguration = makeConfiguration(try makeTemporaryDirectory())
            let a = try Realm()
            let b = try Realm()
            precondition(a === b)
            try a.write { b.add(Article(id: "x")) }
            precondition(b.objects(Article.self).count == 1)
        }
    }

    /// A queue and an actor each keep one handle of a configuration.
    @Test func aQueueAndAnActorHaveOneHandleEach() async throws {
        let dir = try makeTemporaryDirectory()
        let config = makeConfiguration(dir, types: [Article.self])
        let queue = DispatchQueue(label: "cache-test")
        let same = try queue.sync { try Realm(configuration: config, queue: queue) === Realm(configuration: config, queue: queue) }
        #expect(same)
        let holder = HandleHolder()
        #expect(try await holder.opensOnce(config))
        try? FileManager.default.removeItem(at: dir)
    }

    /// A configuration that opens the file differently (other classes here) gets a handle of
    /// its own; a write through it while the first handle is writing on the same thread would
    /// wait forever for LMDB's write lock this thread holds. It stops the process with a
    /// message saying so, instead of hanging.
    @Test func aSecondHandlesWriteOnTheWritingThreadStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = try makeTemporaryDirectory()
            let first = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            let second = try Realm(configuration: makeConfiguration(dir))
            precondition(first !== second)
            try first.write {
                first.add(Article(id: "a"))
                try second.write { second.add(Article(id: "b")) }
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("This thread already has a write transaction open on"), "\(stderr)")
        #expect(stderr.contains("a second one would wait for it forever"))
    }

    /// A write begun inside a write of the same handle is RealmSwift's programmer error.
    @Test func aNestedWriteStopsWithRealmSwiftsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = makeConfiguration(try makeTemporaryDirectory(), types: [Article.self])
            let first = try Realm(configuration: config)
            try first.write { try Realm(configuration: config).write {} }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("The Realm is already in a write transaction"), "\(stderr)")
    }

    /// After the first handle's write ends, the second writes as usual.
    @Test func aSecondHandleWritesOnceTheFirstIsDone() throws {
        try withTemporaryDirectory { dir in
            let first = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            let second = try Realm(configuration: makeConfiguration(dir))
            try first.write { first.add(Article(id: "a")) }
            try second.write { second.add(Article(id: "b")) }
            first.refresh()
            #expect(first.objects(Article.self).count == 2)
            #expect(second.objects(Article.self).count == 2)
        }
    }
}

private actor HandleHolder {
    func opensOnce(_ config: Realm.Configuration) async throws -> Bool {
        let a = try await Realm.open(configuration: config)
        let b = try await Realm.open(configuration: config)
        return a === b
    }
}
