import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct ReaderLimitTests {
    /// A queue's realm that cannot take a reader slot for the newest version (every slot is
    /// taken, and its observers share its snapshot) tells its observers `.error` with
    /// `tooManyReaders` instead of stopping the process, keeps its version, and moves on at the
    /// next commit once a slot is free.
    @Test func aRefreshWithEveryReaderSlotTakenTellsObserversAndRetries() throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir, types: [Article.self])
            config.maximumNumberOfReaders = 3
            let realm = try Realm(configuration: config)  // one slot
            let queue = DispatchQueue(label: "observer")
            let events = Collector<String>()
            let token = realm.objects(Article.self).observe(on: queue) { change in  // a second
                switch change {
                case .initial(let results): events.append("initial \(results.count)")
                case .update(let results, _, _, _): events.append("update \(results.count)")
                case .error(let error): events.append("error \((error as? Realm.Error)?.code.rawValue ?? "\(error)")")
                }
            }
            #expect(events.wait(count: 1) == ["initial 0"])
            var holder: (realm: Realm, queue: DispatchQueue)? = try openOnQueue(config)  // the third, the last
            try realm.write { realm.add(Article(id: "a")) }
            #expect(events.wait(count: 2)?.last == "error tooManyReaders")

            holder = nil  // a slot is free again
            try realm.write { realm.add(Article(id: "b")) }
            // (The realm may move to the first commit before the second arrives.)
            let after = events.wait { $0.last == "update 2" }
            #expect(after != nil, "\(events.all)")
            #expect(after.map { $0.dropFirst(2).allSatisfy { $0.hasPrefix("update") } } == true, "\(events.all)")
            token.invalidate()
            queue.sync {}
            withExtendedLifetime(holder) {}
        }
    }

    /// A `changes` stream hears the same `.error` and goes on: once a slot is free again, the
    /// next commit reaches it. (The waits are long: with the whole suite running, thousands of
    /// other streams' tasks may keep this one's waiting for the cooperative pool.)
    @Test func aStreamGoesOnAfterAReaderLimitError() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var limited = makeConfiguration(dir, types: [Article.self])
        limited.maximumNumberOfReaders = 3
        let config = limited
        let stream = try onOtherThread { try Realm(configuration: config).objects(Article.self).changes }
        let events = Collector<String>()
        // The stream is read on a thread of its own: with the whole suite running (under a
        // sanitizer, for minutes), other tests' tasks may keep the concurrency pool busy.
        let executor = ThreadExecutor()
        let task = Task(executorPreference: executor) {
            for await change in stream {
                switch change {
                case .initial(let results): events.append("initial \(results.count)")
                case .update(let results, _, _, _): events.append("update \(results.count)")
                case .error(let error): events.append("error \((error as? Realm.Error)?.code.rawValue ?? "\(error)")")
                }
            }
            events.append("ended")
        }
        #expect(try await onNewThread { events.wait(count: 1, timeout: eventTimeout) } == ["initial 0"])
        // The stream's realm holds one slot; a writer and a holder take the rest.
        let writer = try openOnQueue(config)
        var holder: (realm: Realm, queue: DispatchQueue)? = try openOnQueue(config)
        try writer.queue.sync { try writer.realm.write { writer.realm.add(Article(id: "a")) } }
        #expect(try await onNewThread { events.wait(count: 2, timeout: eventTimeout) }?.last == "error tooManyReaders", "\(events.all)")
        holder = nil  // a slot is free again
        try writer.queue.sync { try writer.realm.write { writer.realm.add(Article(id: "b")) } }
        let after = try await onNewThread { events.wait(timeout: eventTimeout) { $0.last == "update 2" } }
        #expect(after != nil, "\(events.all)")
        #expect(!events.all.contains("ended"))
        task.cancel()
        await task.value
        #expect(events.all.last == "ended")
        withExtendedLifetime((writer, holder, executor)) {}
    }

    /// A thread's realm whose version a frozen realm shares, with every other reader slot taken:
    /// its write throws `tooManyReaders` and changes nothing (it could not read what it wrote),
    /// `refresh` keeps the version and returns `false`, `invalidate` keeps reading it, and none
    /// of them stops the process; once a slot is free, writing and refreshing go on.
    @Test func aSharedVersionWithEveryReaderSlotTakenIsAnErrorNotAStop() throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir, types: [Article.self])
            config.maximumNumberOfReaders = 2
            let realm = try Realm(configuration: config)  // one slot
            try realm.write { realm.add(Article(id: "a")) }
            let frozen = realm.freeze()  // shares the realm's version
            var holder: (realm: Realm, queue: DispatchQueue)? = try openOnQueue(config)  // the other slot
            let before = realm.objects(Article.self).count

            var thrown: Realm.Error?
            do {
                try realm.write { realm.add(Article(id: "b")) }
            } catch let error as Realm.Error {
                thrown = error
            }
            #expect(thrown?.code == .tooManyReaders, "\(String(describing: thrown))")
            #expect(realm.objects(Article.self).count == before, "the failed write changed nothing, and the realm reads on")

            // Another handle commits; this one cannot move to it.
            try holder!.queue.sync { try holder!.realm.write { holder!.realm.add(Article(id: "c")) } }
            #expect(realm.refresh() == false)
            #expect(realm.objects(Article.self).count == 1)
            realm.invalidate()
            #expect(realm.objects(Article.self).count == 1, "an invalidate that cannot let go keeps reading its version")

            // A slot is free again once the queue's realm is gone: after the queue's last work
            // (which may hold it) has run.
            let holderQueue = holder!.queue
            holder = nil
            let deadline = Date(timeIntervalSinceNow: eventTimeout)
            var moved = false
            while !moved && Date() < deadline {
                holderQueue.sync {}
                moved = realm.refresh()
            }
            #expect(moved)
            #expect(realm.objects(Article.self).count == 2)
            try realm.write { realm.add(Article(id: "b")) }
            #expect(realm.objects(Article.self).count == 3)
            #expect(frozen.objects(Article.self).count == 1, "the frozen realm still reads its version")
        }
    }
}
