import Dispatch
import Foundation
@_spi(Testing) import LMDBKit
@_spi(Testing) import LMDBRealm
@_spi(Testing) import LMDBRealmStorage
import TestSupport
import Testing

/// A store confined to an actor, as a server would write one.
actor ArticleStore {
    private(set) var realm: Realm!
    var token: NotificationToken?
    /// Every change delivered to `observe()`, as it arrives.
    nonisolated let deltas: AsyncStream<Delta>
    private nonisolated let sink: AsyncStream<Delta>.Continuation

    init(configuration: Realm.Configuration) async throws {
        (deltas, sink) = AsyncStream.makeStream(of: Delta.self)
        realm = try await Realm.open(configuration: configuration, actor: self)
    }

    func add(_ id: String, wordCount: Int = 100, fail: Bool = false) async throws {
        try await realm.asyncWrite {
            realm.add(Article(id: id, wordCount: wordCount))
            if fail { throw Boom() }
        }
    }

    func count() -> Int { realm.objects(Article.self).count }

    /// "Create the object inside the actor, write it, return a copy": the object is made in
    /// the write's block and never leaves the actor; the caller gets it frozen (`Sendable`).
    func create(_ id: String, wordCount: Int) async throws -> FrozenObject<Article> {
        let key = try await realm.asyncWrite {
            let article = Article(id: id, wordCount: wordCount)
            realm.add(article)
            return article.id
        }
        return FrozenObject(realm.object(ofType: Article.self, forPrimaryKey: key)!)
    }

    /// The same, returning a value type made inside the write.
    func createReturningValues(_ id: String, wordCount: Int) async throws -> (id: String, wordCount: Int) {
        try await realm.asyncWrite {
            let article = Article(id: id, wordCount: wordCount)
            realm.add(article)
            return (article.id, article.wordCount)
        }
    }

    func observe() {
        token = realm.objects(Article.self).observe { [weak self] change in
            // Delivered on this actor.
            self?.preconditionIsolated("notifications of an actor's realm run on the actor")
            self?.sink.yield(Delta(change))
        }
    }

    func stop() { token = nil }

    /// Turns off the automatic refresh, so that only `asyncRefresh` moves the realm.
    func stopRefreshing() { realm.autorefresh = false }
    func refresh() async -> Bool { await realm.asyncRefresh() }
    func ping() -> Bool { true }
    /// Lets go of the realm (and, with it, of the file, if nothing else holds it).
    func close() { token = nil; realm = nil }
}

/// An actor that hears another actor's observations (RealmSwift's `observe(on: actor)`).
actor Listener {
    nonisolated let deltas: AsyncStream<Delta>
    nonisolated let objectChanges: AsyncStream<String>
    private nonisolated let sink: AsyncStream<Delta>.Continuation
    private nonisolated let objectSink: AsyncStream<String>.Continuation

    init() {
        (deltas, sink) = AsyncStream.makeStream(of: Delta.self)
        (objectChanges, objectSink) = AsyncStream.makeStream(of: String.self)
    }

    func heard(_ change: RealmCollectionChange<Results<Article>>) { sink.yield(Delta(change)) }

    func heard(_ change: ObjectChange<Article>) {
        switch change {
        case .change(let article, let properties):
            objectSink.yield("\(article.id): " + properties.map { "\($0.name)=\($0.newValue.map { "\($0)" } ?? "?")" }.joined(separator: ","))
        case .deleted: objectSink.yield("deleted")
        case .error(let error): objectSink.yield("error \(error)")
        }
    }
}

extension ArticleStore {
    /// Observes this actor's articles, and article `id`, from `listener`.
    func observe(on listener: Listener, article id: String) async -> [NotificationToken] {
        let articles = await realm.objects(Article.self).observe(on: listener) { listener, change in
            listener.preconditionIsolated("observe(on: actor) runs the block on that actor")
            listener.heard(change)
        }
        let article = await realm.object(ofType: Article.self, forPrimaryKey: id)!.observe(keyPaths: ["wordCount"], on: listener) {
            listener, change in listener.heard(change)
        }
        return [articles, article]
    }
}

@Suite(.timeLimit(.minutes(5))) struct ActorTests {
    /// Results and objects observed on another actor: the block runs isolated to that actor,
    /// with `.initial` first and every commit after, from any thread.
    @Test func observationsRunOnTheActorTheyAreGiven() async throws {
        try await withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let store = try await ArticleStore(configuration: config)
            try await store.add("a")
            let listener = Listener()
            let tokens = await store.observe(on: listener, article: "a")
            var deltas = listener.deltas.makeAsyncIterator()
            var objectChanges = listener.objectChanges.makeAsyncIterator()
            #expect(await deltas.next() == .initial(1))
            try await store.add("b")
            #expect(await deltas.next() == Delta(insertions: [1], count: 2))
            try onOtherThread {
                let realm = try Realm(configuration: config)
                try realm.write { realm.object(ofType: Article.self, forPrimaryKey: "a")!.wordCount = 7 }
            }
            #expect(await objectChanges.next() == "a: wordCount=7")
            #expect(await deltas.next() == Delta(modifications: [0], count: 2))
            tokens.forEach { $0.invalidate() }
        }
    }

    /// A caller resumed by a group commit may drop its last realm while the writer thread still
    /// has work to do with the file: the writer must keep the file alive until it is done.
    @Test func theGroupCommitWriterOutlivesACallerThatDropsItsLastRealm() async {
        await #expect(processExitsWith: .success) {
            let dir = try makeTemporaryDirectory()
            let config = makeConfiguration(dir, types: [Article.self])
            let dropped = DispatchSemaphore(value: 0)
            let writerEnded = DispatchSemaphore(value: 0)
            // The writer waits, after resuming its group, until the caller has let go.
            TestHooks.groupCommit = { point in
                switch point {
                case .membersResumed: _ = dropped.wait(timeout: .now() + eventTimeout)
                case .writerEnding: writerEnded.signal()
                }
            }
            let store = try await ArticleStore(configuration: config)
            try await store.add("a")
            await store.close()
            dropped.signal()
            precondition(writerEnded.wait(timeout: .now() + eventTimeout) == .success, "the writer thread did not end")
            let open = Environment.waitUntilClosed(under: dir.path + "/", timeout: eventTimeout)
            precondition(open.isEmpty, "still open: \(open)")
        }
    }

    @Test func anActorConfinedRealmWritesAsynchronouslyAndIsNotifiedOnTheActor() async throws {
        try await withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let store = try await ArticleStore(configuration: config)
            await store.observe()
            var deltas = store.deltas.makeAsyncIterator()
            // `.initial` comes asynchronously, on the actor.
            #expect(await deltas.next() == .initial(0))
            try await store.add("a")
            #expect(await store.count() == 1)
            #expect(await deltas.next() == Delta(insertions: [0], count: 1))
            // Another thread's commit reaches the actor without a refresh.
            try onOtherThread {
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Article(id: "b")) }
            }
            #expect(await deltas.next() == Delta(insertions: [1], count: 2))
            await store.stop()
        }
    }

    /// The pattern compiles in Swift 6 mode and gives the caller the object as written.
    @Test func createInTheActorWriteAndReturnACopy() async throws {
        try await withTemporaryDirectory { dir in
            let store = try await ArticleStore(configuration: makeConfiguration(dir, types: [Article.self]))
            let frozen = try await store.create("a", wordCount: 7)
            #expect(frozen.object.id == "a" && frozen.object.wordCount == 7 && frozen.object.isFrozen)
            let values = try await store.createReturningValues("b", wordCount: 8)
            #expect(values == ("b", 8))
            #expect(await store.count() == 2)
        }
    }

    @Test func asyncRefreshMovesARealmThatDoesNotRefreshItself() async throws {
        try await withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let store = try await ArticleStore(configuration: config)
            await store.stopRefreshing()
            #expect(await store.count() == 0)
            try onOtherThread {
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Article(id: "b")) }
            }
            #expect(await store.count() == 0)
            #expect(await store.refresh())
            #expect(await store.count() == 1)
            #expect(await store.refresh() == false)
        }
    }

    @Test func queuedAsyncWritesShareCommitsAndAThrowingBlockRollsBackOnlyItself() async throws {
        try await withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let stores = try await withThrowingTaskGroup(of: ArticleStore.self) { group in
                for _ in 0..<8 { group.addTask { try await ArticleStore(configuration: config) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let before = try onOtherThread { try Realm(configuration: config).snapshotVersion }
            let failures = try await withThrowingTaskGroup(of: Int.self) { group in
                for (s, store) in stores.enumerated() {
                    group.addTask {
                        var failed = 0
                        for i in 0..<50 {
                            do {
                                try await store.add("s\(s)-\(i)", fail: i % 10 == 3)
                            } catch is Boom {
                                failed += 1
                            }
                        }
                        return failed
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(failures == 8 * 5)
            let (count, failedStored, after) = try onOtherThread { () -> (Int, Int, Int) in
                let realm = try Realm(configuration: config)
                let failed = realm.objects(Article.self).filter { Int($0.id.split(separator: "-")[1])! % 10 == 3 }.count
                return (realm.objects(Article.self).count, failed, realm.snapshotVersion)
            }
            #expect(count == 8 * 45)
            #expect(failedStored == 0)
            // 400 writes, fewer commits: writers that queued up shared one.
            #expect(after - before < 400, "\(after - before) commits for 400 writes")
        }
    }

    @Test func asyncWriteDoesNotBlockTheActorWhileAnotherWriterHoldsTheLock() async throws {
        try await withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let store = try await ArticleStore(configuration: config)
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let holder = Thread {
                let realm = try! Realm(configuration: config)
                realm.beginWrite()
                realm.add(Article(id: "held"))
                holding.signal()
                release.wait()
                try! realm.commitWrite()
            }
            holder.start()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    holding.wait()
                    continuation.resume()
                }
            }
            let write = Task { try await store.add("waiting") }
            // The actor still runs other work while its write waits for the lock.
            #expect(await store.ping())
            #expect(await store.count() == 0)
            release.signal()
            try await write.value
            #expect(await store.count() == 2)
        }
    }
}
