import Dispatch
import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// Frozen realms, objects and results; thread-safe references; the active-versions limit;
/// asynchronous sequences; notifications of another process's commits.
@Suite struct HandOverTests {
    @Test func frozenResultsNeverChangeAndReadFromEightThreadsAtOnce() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write { for i in 0..<2000 { realm.add(Article(id: String(format: "a%05d", i), section: i % 3 == 0 ? "Sports" : "Arts", wordCount: i)) } }
            let all = realm.objects(Article.self)
            // RealmSwift's freeze gives frozen Results; FrozenResults makes them Sendable.
            #expect(all.freeze().isFrozen && !all.isFrozen && all.freeze().thaw()?.isFrozen == false)
            let frozen = FrozenResults(all)
            let sports = FrozenResults(all.where { $0.section == "Sports" }.sorted(byKeyPath: "wordCount", ascending: false))
            #expect(frozen.isFrozen && frozen.results.realm!.isFrozen)
            try realm.write { realm.deleteAll() }
            #expect(all.count == 0)
            #expect(frozen.count == 2000)

            // Eight threads read the same frozen results at once.
            let reads = Collector<String>()
            onThreads(8) { t in
                var sum = 0
                for article in frozen { sum += article.wordCount }
                reads.append(
                    "\(sum) \(sports.count) \(sports[t].wordCount == 1998 - 3 * t) \(frozen[t * 10].wordCount == t * 10) "
                        + "\(sports.results.where { $0.wordCount < 300 }.count)")
            }
            #expect(reads.all == Array(repeating: "\((0..<2000).reduce(0, +)) 667 true true 100", count: 8))

            // Thawed, they are live again and see the deletion.
            #expect(frozen.thaw()?.count == 0)
        }
    }

    /// Objects found through an index are made without their records; frozen ones are read
    /// from several threads at once, so a first read must not write to the accessor.
    @Test func frozenObjectsFoundThroughAnIndexReadFromEightThreadsAtOnce() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write { for i in 0..<50 { realm.add(Article(id: "a\(i)", section: "S\(i % 5)", wordCount: i)) } }
            let bySection = FrozenResults(realm.objects(Article.self).sorted(byKeyPath: "section").limit(50))
            final class Shared: @unchecked Sendable {
                // @unchecked Sendable: frozen objects, read (never written) from every thread.
                let objects: [Article]
                init(_ objects: [Article]) { self.objects = objects }
            }
            #expect(bySection.results.explain().hasPrefix("index-ordered scan of"), "\(bySection.results.explain())")
            let expected = (0..<50).reduce(0) { $0 + $1 + "a\($1)".count }
            // Rounds of fresh objects: a race shows in a fraction of them only.
            for _ in 0..<10 {
                // Iterated, they are made from the index's keys, without their records.
                var found: [Article] = []
                for article in bySection { found.append(article) }
                let shared = Shared(found)
                let sums = Collector<Int>()
                let ready = Collector<Int>()
                onThreads(8) { t in
                    // All start together, each at another object, so first reads meet.
                    ready.append(t)
                    _ = ready.wait(count: 8)
                    var sum = 0
                    for i in 0..<50 {
                        let article = shared.objects[(i + t * 7) % 50]
                        sum += article.wordCount + article.id.count
                    }
                    sums.append(sum)
                }
                #expect(sums.all == Array(repeating: expected, count: 8))
            }
        }
    }

    @Test func frozenObjectsKeepTheirValuesAndThawToTheNewest() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try realm.write { realm.add(Article(id: "a", wordCount: 1)) }
            let live = realm.object(ofType: Article.self, forPrimaryKey: "a")!
            let frozen = live.freeze()
            #expect(frozen.isFrozen && !live.isFrozen)
            try realm.write { live.wordCount = 2 }
            #expect(frozen.wordCount == 1 && live.wordCount == 2)
            let wrapped = FrozenObject(live)
            let fromThread = try onOtherThread { wrapped.wordCount }
            #expect(fromThread == 2)
            #expect(frozen.thaw()?.wordCount == 2)
            try realm.write { realm.delete(live) }
            #expect(frozen.wordCount == 1)
            #expect(frozen.thaw() == nil)
            #expect(realm.freeze().isFrozen)
        }
    }

    @Test func aResolvedReferenceOnAnotherThreadSeesTheSameObject() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write {
                realm.add(Article(id: "a", wordCount: 5))
                realm.add(Article(id: "b", section: "Arts", wordCount: 7))
            }
            let objectReference = ThreadSafeReference(to: realm.object(ofType: Article.self, forPrimaryKey: "a")!)
            let resultsReference = ThreadSafeReference(to: realm.objects(Article.self).where { $0.section == "Arts" })
            let seen = try onOtherThread { () -> String in
                let other = try Realm(configuration: config)
                let article = other.resolve(objectReference)
                let arts = other.resolve(resultsReference)
                return "\(article?.id ?? "-") \(article?.wordCount ?? -1) \(arts?.count ?? -1) \(arts?.first?.id ?? "-")"
            }
            #expect(seen == "a 5 1 b")
            #expect(objectReference.isInvalidated)

            // Deleted before it was resolved: nil.
            let doomed = ThreadSafeReference(to: realm.object(ofType: Article.self, forPrimaryKey: "b")!)
            try realm.write { realm.delete(realm.object(ofType: Article.self, forPrimaryKey: "b")!) }
            let resolved = try onOtherThread { try Realm(configuration: config).resolve(doomed) == nil }
            #expect(resolved)
        }
    }

    @Test func theActiveVersionsLimitThrowsInsteadOfGrowingTheFile() throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir, types: [Article.self])
            config.maximumNumberOfActiveVersions = 3
            let realm = try Realm(configuration: config)
            var frozen: [Realm] = []
            var thrown: Realm.Error?
            for i in 0..<5 {
                do {
                    try realm.write { realm.add(Article(id: "a\(i)")) }
                    frozen.append(realm.freeze())
                } catch let error as Realm.Error {
                    thrown = error
                    break
                }
            }
            #expect(thrown?.code == .tooManyActiveVersions)
            #expect(thrown?.message.contains("exceeded the limit of 3") == true)
            // The refused write left nothing behind.
            #expect(realm.objects(Article.self).count == frozen.count)
            frozen.removeAll()
            realm.refresh()
            try realm.write { realm.add(Article(id: "after")) }
            #expect(realm.objects(Article.self).count == 4)
        }
    }

    @Test func aChangeStreamYieldsFrozenResultsAndReleasesItsSnapshotWhenCancelled() async throws {
        try await withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let baseline = try onOtherThread { try Realm(configuration: config).readerSlotsInUse }
            let results = try onOtherThread { () -> ThreadSafeReference<Results<Article>> in
                let realm = try Realm(configuration: config)
                return ThreadSafeReference(to: realm.objects(Article.self).sorted(byKeyPath: "wordCount"))
            }
            let task = Task.detached { () -> [String] in
                let realm = try Realm(configuration: config)
                let stream = realm.resolve(results)!.changes
                var seen: [String] = []
                for await change in stream {
                    switch change {
                    case .initial(let frozen):
                        seen.append("initial \(frozen.count)")
                        // Someone else writes once the stream is running.
                        try onOtherThread {
                            let writer = try Realm(configuration: config)
                            try writer.write { writer.add(Article(id: "x", wordCount: 3)) }
                        }
                    case .update(let frozen, let deletions, let insertions, _):
                        seen.append("update \(frozen.count) -\(deletions) +\(insertions) \(frozen[0].id)")
                        return seen
                    case .error(let error):
                        seen.append("error \(error)")
                    }
                }
                return seen
            }
            #expect(try await task.value == ["initial 0", "update 1 -[] +[0] x"])

            // A stream cancelled while waiting releases its realm and snapshots.
            let (started, signal) = AsyncStream.makeStream(of: Void.self)
            let waiting = Task.detached {
                let realm = try Realm(configuration: config)
                for await _ in realm.objects(Article.self).changes { signal.yield() }
            }
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            let observing = try onOtherThread { try Realm(configuration: config).readerSlotsInUse }
            waiting.cancel()
            // The stream ends without a next commit (there is none): waiting for it would never
            // end, so the wait is bounded (generously: the machine may be slow, under TSan).
            let ended = Collector<Bool>()
            Task.detached { _ = try? await waiting.value; ended.append(true) }
            let waited = await withCheckedContinuation { done in
                Thread { done.resume(returning: ended.wait(count: 1, timeout: eventTimeout)) }.start()
            }
            #expect(waited != nil, "a cancelled stream waits for a commit to end")
            // Cancelling ends the observation and releases its realm at once.
            let after = try onOtherThread { try Realm(configuration: config).readerSlotsInUse }
            #expect(observing > baseline)
            #expect(after == baseline, "reader slots: \(baseline) before, \(observing) while observing, \(after) after")
        }
    }

    @Test func anotherProcessesCommitReachesObserversWithoutARefresh() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("people.realm")
            let config = Realm.Configuration(fileURL: url, objectTypes: [Person.self])
            let realm = try Realm(configuration: config)
            let queue = DispatchQueue(label: "observer")
            let deltas = Collector<Delta>()
            try realm.write {
                let p = Person()
                p.id = 1_000_000
                realm.add(p)
            }
            let token = realm.objects(Person.self).observe(on: queue) { deltas.append(Delta($0)) }
            #expect(deltas.wait(count: 1) == [.initial(1)])
            let helper = builtExecutable(named: "RealmTestHelper")
            let wrote = try run(helper, ["write", url.path, "0", "3"])
            #expect(wrote.status == 0, "\(wrote.output)")
            // Detected through the file, not announced in-process; the key order puts 0, 1, 2
            // before the existing object.
            #expect(deltas.wait(count: 2)?.last == Delta(insertions: [0, 1, 2], count: 4))
            token.invalidate()
            queue.sync {}
        }
    }
}

/// Misuse of frozen data and references stops the process with Realm's message.
@Suite struct HandOverCrashTests {
    func expectCrash(_ message: String, _ result: ExitTest.Result?) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains(message), "stderr was: \(stderr)")
    }

    @Test func writingAFrozenObjectStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            try realm.write { realm.add(Article(id: "a")) }
            let frozen = realm.object(ofType: Article.self, forPrimaryKey: "a")!.freeze()
            frozen.wordCount = 3
        }
        expectCrash("Attempting to modify a frozen object - call thaw on the Object instance first.", result)
    }

    @Test func writingToAFrozenRealmStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            let frozen = realm.freeze()
            try frozen.write { frozen.add(Article(id: "a")) }
        }
        expectCrash("Can't perform transactions on a frozen Realm", result)
    }

    @Test func resolvingAReferenceTwiceStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            try realm.write { realm.add(Article(id: "a")) }
            let reference = ThreadSafeReference(to: realm.object(ofType: Article.self, forPrimaryKey: "a")!)
            _ = realm.resolve(reference)
            _ = realm.resolve(reference)
        }
        expectCrash("Can only resolve a thread safe reference once.", result)
    }

    @Test func observingInsideAWriteStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            try realm.write { _ = realm.objects(Article.self).observe { _ in } }
        }
        expectCrash("Cannot register notification blocks from within write transactions.", result)
    }

    @Test func observingAnUnknownPropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (realm, _) = try CrashTests.freshRealm()
            _ = realm.objects(Article.self).observe(keyPaths: ["wordCont"]) { _ in }
        }
        expectCrash("Property 'wordCont' not found in object of type 'Article'", result)
    }
}

@Suite struct ObjectStreamTests {
    @Test func anObjectsChangesArriveFrozenAndEndWithItsDeletion() async throws {
        try await withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            try onOtherThread {
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Article(id: "a", wordCount: 1)) }
            }
            let reference = try onOtherThread { () -> ThreadSafeReference<Article> in
                ThreadSafeReference(to: try Realm(configuration: config).object(ofType: Article.self, forPrimaryKey: "a")!)
            }
            let stream = try Realm(configuration: config).resolve(reference)!.changes(keyPaths: ["wordCount"])
            // Changes count from the version the object was read at, however late the stream's
            // realm opens.
            try onOtherThread {
                let realm = try Realm(configuration: config)
                let a = realm.object(ofType: Article.self, forPrimaryKey: "a")!
                try realm.write { a.url = "not observed" }
                try realm.write { a.wordCount = 2 }
            }
            var seen: [String] = []
            for await change in stream {
                switch change {
                case .change(let frozen, let properties):
                    seen.append("\(frozen.id) \(properties.map { "\($0.name) \($0.oldValue as? Int ?? -1)→\($0.newValue as? Int ?? -1)" })")
                    // Deleted only once the change was seen: a deletion coalesced with it would
                    // be reported alone.
                    try onOtherThread {
                        let realm = try Realm(configuration: config)
                        try realm.write { realm.delete(realm.object(ofType: Article.self, forPrimaryKey: "a")!) }
                    }
                case .deleted: seen.append("deleted")
                case .error(let error): seen.append("error \(error)")
                }
            }
            #expect(seen == ["a [\"wordCount 1→2\"]", "deleted"])
        }
    }
}
