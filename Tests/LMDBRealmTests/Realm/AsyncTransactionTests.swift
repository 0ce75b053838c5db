import Dispatch
import Foundation
import LMDBRealm
import TestSupport
import Testing

/// An actor that keeps its realm, as RealmSwift's documentation opens one.
actor AsyncWriteStore {
    var realm: Realm!

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// Adds `id` with `writeAsync`; the handler, on this actor, reports what it saw.
    func add(_ id: String, wordCount: Int, then report: @escaping @Sendable (String) -> Void) {
        realm.writeAsync {
            self.realm.add(Article(id: id, wordCount: wordCount))
        } onComplete: { error in
            self.assertIsolated()
            report("\(error.map { "\($0)" } ?? "ok") count \(self.realm.objects(Article.self).count)")
        }
    }

    func wordCount(_ id: String) -> Int? {
        realm.object(ofType: Article.self, forPrimaryKey: id)?.wordCount
    }
}

/// `writeAsync`, `beginAsyncWrite`, `commitAsyncWrite`, `cancelAsyncWrite` and
/// `Realm(configuration:actor:)`, written as RealmSwift's documentation uses them.
@Suite struct AsyncTransactionTests {
    /// `writeAsync` on a queue's realm: the block and its completion run on the queue, the
    /// commit is durable and visible to other handles when the completion runs.
    @Test func writeAsyncOnAQueueCompletesOnTheQueue() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let queue = DispatchQueue(label: "async writes")
            let events = Collector<String>()
            queue.async {
                let realm = try! Realm(configuration: config, queue: queue)
                realm.writeAsync {
                    dispatchPrecondition(condition: .onQueue(queue))
                    realm.add(Article(id: "a", wordCount: 1))
                    events.append("block")
                } onComplete: { error in
                    dispatchPrecondition(condition: .onQueue(queue))
                    events.append("complete \(error == nil) \(realm.objects(Article.self).count)")
                    events.append("performing \(realm.isPerformingAsynchronousWriteOperations)")
                }
                events.append("returned \(realm.isPerformingAsynchronousWriteOperations)")
            }
            let seen = events.wait(count: 4, timeout: eventTimeout)
            #expect(seen == ["returned true", "block", "complete true 1", "performing false"])
            let other = try Realm(configuration: config)
            #expect(other.objects(Article.self).count == 1)
        }
    }

    /// Blocks queued with `beginAsyncWrite` run in order; a block cancelled before it starts
    /// never runs; a block that returns without committing is rolled back.
    @Test func queuedBlocksRunInOrderAndCancelledOnesNever() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let queue = DispatchQueue(label: "async writes")
            let events = Collector<String>()
            queue.async {
                let realm = try! Realm(configuration: config, queue: queue)
                let first = realm.beginAsyncWrite {
                    events.append("first block")
                    realm.add(Article(id: "first"))
                    realm.commitAsyncWrite { events.append("first \($0 == nil)") }
                }
                let second = realm.beginAsyncWrite {
                    events.append("second block")
                    realm.add(Article(id: "second"))
                    realm.commitAsyncWrite { events.append("second \($0 == nil)") }
                }
                realm.beginAsyncWrite {
                    realm.add(Article(id: "uncommitted"))
                    events.append("third block returns without a commit")
                }
                realm.beginAsyncWrite {
                    events.append("fourth block")
                    realm.add(Article(id: "fourth"))
                    realm.commitAsyncWrite { error in
                        let ids = realm.objects(Article.self).sorted(byKeyPath: "id").map(\.id)
                        events.append("fourth \(error == nil) \(ids)")
                    }
                }
                #expect(first != second)
                try! realm.cancelAsyncWrite(second)
            }
            // Blocks run in the order queued; each completion once its commit is durable.
            let seen = events.wait(count: 5, timeout: eventTimeout) ?? []
            #expect(
                seen.filter { $0.contains("block") } == [
                    "first block", "third block returns without a commit", "fourth block",
                ])
            #expect(
                seen.filter { !$0.contains("block") } == [
                    "first true", "fourth true [\"first\", \"fourth\"]",
                ])
            let other = try Realm(configuration: config)
            #expect(other.objects(Article.self).count == 2)
        }
    }

    /// A duplicate primary key in an asynchronous write reaches the completion as
    /// `primaryKeyExists`; nothing of that write is in the file.
    @Test func aFailedAsyncCommitReportsItsErrorAndWritesNothing() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Article(id: "taken", wordCount: 1)) }
            let queue = DispatchQueue(label: "async writes")
            let errors = Collector<String>()
            queue.async {
                let realm = try! Realm(configuration: config, queue: queue)
                realm.writeAsync {
                    realm.add(Article(id: "new", wordCount: 2))
                    realm.add(Article(id: "taken", wordCount: 3))
                } onComplete: { error in
                    errors.append((error as? Realm.Error).map { "\($0.code)" } ?? "no error")
                }
            }
            #expect(errors.wait(count: 1, timeout: eventTimeout) == ["primaryKeyExists"])
            realm.refresh()
            #expect(realm.objects(Article.self).map(\.id) == ["taken"])
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "taken")?.wordCount == 1)
        }
    }

    /// `commitWrite()` inside an asynchronous block commits there and then; `cancelWrite()`
    /// rolls back only that block.
    @Test func commitWriteAndCancelWriteInsideAnAsyncBlock() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let queue = DispatchQueue(label: "async writes")
            let events = Collector<String>()
            queue.async {
                let realm = try! Realm(configuration: config, queue: queue)
                realm.beginAsyncWrite {
                    realm.add(Article(id: "kept"))
                    try! realm.commitWrite()
                    events.append(
                        "committed \(realm.isInWriteTransaction) \(realm.objects(Article.self).count)")
                }
                realm.writeAsync {
                    realm.add(Article(id: "dropped"))
                    realm.cancelWrite()
                    events.append("cancelled \(realm.isInWriteTransaction)")
                }
                realm.writeAsync {
                    events.append("last sees \(realm.objects(Article.self).map(\.id))")
                }
            }
            let seen = events.wait(count: 3, timeout: eventTimeout)
            #expect(seen == ["committed false 1", "cancelled false", "last sees [\"kept\"]"])
        }
    }

    /// A synchronous `write` on a realm with asynchronous blocks queued runs them first, in
    /// order, instead of waiting for the lock their group holds.
    @Test func aSynchronousWriteRunsTheQueuedAsyncBlocksFirst() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let queue = DispatchQueue(label: "async writes")
            let order = Collector<String>()
            queue.async {
                let realm = try! Realm(configuration: config, queue: queue)
                realm.writeAsync {
                    realm.add(Article(id: "async"))
                    order.append("async block")
                } onComplete: {
                    order.append("async complete \($0 == nil)")
                }
                try! realm.write {
                    order.append("sync block sees \(realm.objects(Article.self).count)")
                    realm.add(Article(id: "sync"))
                }
            }
            let seen = order.wait(count: 3, timeout: eventTimeout)
            #expect(seen == ["async block", "sync block sees 1", "async complete true"])
            let other = try Realm(configuration: config)
            #expect(other.objects(Article.self).count == 2)
        }
    }

    /// While another thread holds the write lock, `writeAsync` returns at once and the queue
    /// goes on with other work; the block runs once the lock is free.
    @Test func writeAsyncDoesNotBlockTheQueueWhileAnotherWriterHoldsTheLock() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let writer = Thread {
                let realm = try! Realm(configuration: config)
                try! realm.write {
                    realm.add(Article(id: "held"))
                    holding.signal()
                    release.wait()
                }
            }
            writer.start()
            holding.wait()
            let queue = DispatchQueue(label: "async writes")
            let events = Collector<String>()
            queue.async {
                let realm = try! Realm(configuration: config, queue: queue)
                realm.writeAsync {
                    realm.add(Article(id: "queued"))
                } onComplete: { error in
                    events.append("complete \(error == nil) \(realm.objects(Article.self).count)")
                }
                events.append("returned")
            }
            queue.async { events.append("queue free") }
            #expect(events.wait(count: 2, timeout: eventTimeout) == ["returned", "queue free"])
            release.signal()
            #expect(events.wait(count: 3, timeout: eventTimeout)?.last == "complete true 2")
        }
    }

    /// `Realm(configuration:actor:)`: the realm belongs to the actor; `writeAsync`'s handler
    /// runs on it.
    @Test func anActorsRealmWritesAsynchronouslyWithAHandler() async throws {
        try await withTemporaryDirectory { dir in
            let store = AsyncWriteStore()
            try await store.open(makeConfiguration(dir))
            let (reports, report) = AsyncStream.makeStream(of: String.self)
            await store.add("a", wordCount: 7) { report.yield($0) }
            await store.add("a", wordCount: 8) { report.yield($0) }
            // The handlers are awaited, not waited for against a clock on a thread of their own:
            // they run on the actor, whose turn on the concurrency pool may come minutes later
            // while the whole suite runs under a sanitizer. A handler that never runs is caught
            // by the run's time limit, which names the test still running.
            var next = reports.makeAsyncIterator()
            let first = await next.next()
            let second = await next.next()
            #expect(first == "ok count 1")
            #expect(second?.hasPrefix("RealmError.primaryKeyExists") == true, "\(second ?? "no second report")")
            #expect(second?.hasSuffix("count 1") == true, "\(second ?? "no second report")")
            #expect(await store.wordCount("a") == 7)
        }
    }

    /// A realm of a thread other than the main one has nothing to come back to: asking it for
    /// an asynchronous write stops the process with a message that says what to use instead.
    @Test func aThreadsRealmRefusesAsyncWritesWithAReason() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = try makeTemporaryDirectory()
            let done = DispatchSemaphore(value: 0)
            Thread {
                let realm = try! Realm(configuration: makeConfiguration(dir))
                realm.writeAsync { realm.add(Article(id: "x")) }
                done.signal()
            }.start()
            done.wait()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("writeAsync") || stderr.contains("beginAsyncWrite"), "\(stderr)")
        #expect(stderr.contains("Realm(configuration:queue:)"), "\(stderr)")
    }
}
