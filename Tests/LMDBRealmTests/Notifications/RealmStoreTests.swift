import Foundation
import LMDBRealm
import TestSupport
import Testing

private struct Refused: Error {}

@Suite struct RealmStoreTests {
    /// Many tasks at once write and read through one store: every write is stored, and each
    /// task's read after its write sees it.
    @Test func concurrentHandlersReadTheirOwnWrites() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await RealmStore(configuration: makeConfiguration(dir, types: [Article.self]), readers: 3)
        let seen = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<200 {
                group.addTask {
                    let id = try await store.write { realm in
                        realm.add(Article(id: "t\(i)", wordCount: i))
                        return "t\(i)"
                    }
                    return try await store.read { realm in realm.object(ofType: Article.self, forPrimaryKey: id) != nil }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(seen.count == 200 && seen.allSatisfy { $0 })
        #expect(try await store.read { $0.objects(Article.self).count } == 200)
        // Frozen results leave the block and are read anywhere.
        let top = try await store.read { realm in
            FrozenResults(realm.objects(Article.self).sorted(byKeyPath: "wordCount", ascending: false).limit(3))
        }
        #expect(top.map(\.wordCount) == [199, 198, 197])
    }

    /// A write that throws rolls back only itself; the others made at the same time are stored.
    @Test func aThrowingWriteRollsBackOnlyItself() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await RealmStore(configuration: makeConfiguration(dir, types: [Article.self]))
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<10 {
                group.addTask {
                    do {
                        try await store.write { realm in
                            realm.add(Article(id: "w\(i)"))
                            if i == 4 { throw Refused() }
                        }
                        return true
                    } catch {
                        return !(error is Refused)
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 9)
        let ids = try await store.read { realm in Set(realm.objects(Article.self).map(\.id)) }
        #expect(ids.count == 9 && !ids.contains("w4"))
    }

    /// More reads at once than the store has reading queues: they wait their turn on the
    /// queue, and every read sees the data.
    @Test func readsBeyondTheReadersWaitTheirTurn() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await RealmStore(configuration: makeConfiguration(dir, types: [Article.self]), readers: 1)
        try await store.write { realm in
            for i in 0..<100 { realm.add(Article(id: "a\(i)", wordCount: i)) }
        }
        let sums = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<64 {
                group.addTask { try await store.read { realm in realm.objects(Article.self).sum(ofProperty: "wordCount") } }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(sums == Array(repeating: 4_950, count: 64))
    }

    /// Between reads, the store's realms hold no version (they do not follow commits either):
    /// writes after a read leave nothing pinned that a later write could not reuse.
    @Test func anIdleStorePinsNoVersion() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = makeConfiguration(dir, types: [Article.self])
        let store = try await RealmStore(configuration: config, readers: 2)
        try await store.write { realm in realm.add(Article(id: "first")) }
        #expect(try await store.read { realm in realm.objects(Article.self).count } == 1)
        for i in 0..<5 {
            try await store.write { realm in realm.add(Article(id: "w\(i)")) }
        }
        let statistics = try await store.read { realm in try realm.statistics }
        // The read asking holds the newest version, and so does the writer: nobody an older one.
        #expect(statistics.oldestPinnedVersion == statistics.currentVersion)
    }

    /// A read's block runs off the caller's actor, and sees the writes that returned before it.
    @MainActor @Test func aReadRunsOffTheCallersActor() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await RealmStore(configuration: makeConfiguration(dir, types: [Article.self]))
        try await store.write { realm in realm.add(Article(id: "main")) }
        let (onMainThread, found) = try await store.read { realm in
            (Thread.isMainThread, realm.object(ofType: Article.self, forPrimaryKey: "main") != nil)
        }
        #expect(!onMainThread)
        #expect(found)
    }

    /// A read's realm belongs to the read: used after it (here, smuggled out), it stops the
    /// process with the usual message instead of reading a version nobody holds.
    @Test func aReadsRealmUsedAfterTheReadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Smuggled: @unchecked Sendable { var realm: Realm? }
            let dir = try makeTemporaryDirectory()
            let store = try await RealmStore(configuration: makeConfiguration(dir, types: [Article.self]))
            let smuggled = Smuggled()
            try await store.read { realm in smuggled.realm = realm }
            _ = smuggled.realm!.objects(Article.self).count
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Realm accessed from incorrect thread."), "\(stderr)")
    }

    /// Observing inside a read would register an observer nothing ever calls: it stops, and
    /// says what to use.
    @Test func observingInAReadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = try makeTemporaryDirectory()
            let store = try await RealmStore(configuration: makeConfiguration(dir, types: [Article.self]))
            try await store.read { realm in
                let token = realm.objects(Article.self).observe { _ in }
                token.invalidate()
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot observe the realm of a RealmStore's read"), "\(stderr)")
    }

    /// A read that finds every LMDB reader slot taken throws `tooManyReaders` (the process goes
    /// on), and reads again once a slot is free. Each frozen result kept holds its version's
    /// slot, so the next read needs a new one.
    @Test func aReadWithEveryReaderSlotTakenThrows() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = makeConfiguration(dir, types: [Article.self])
        config.maximumNumberOfReaders = 3
        let store = try await RealmStore(configuration: config, readers: 1)
        var held: [FrozenResults<Article>] = []
        var failure: (any Error)?
        for i in 0..<8 {
            try await store.write { realm in realm.add(Article(id: "a\(i)")) }
            do {
                held.append(try await store.read { realm in FrozenResults(realm.objects(Article.self)) })
            } catch {
                failure = error
                break
            }
        }
        #expect((failure as? Realm.Error)?.code == .tooManyReaders, "\(String(describing: failure))")
        #expect(!held.isEmpty)
        held.removeAll()
        #expect(try await store.read { realm in realm.objects(Article.self).count } >= 1)
    }

    @Test func theDefaultReadersAreOnePerCoreAtMostEight() {
        #expect(RealmStore.defaultReaders == min(ProcessInfo.processInfo.activeProcessorCount, 8))
        #expect((1...8).contains(RealmStore.defaultReaders))
    }
}
