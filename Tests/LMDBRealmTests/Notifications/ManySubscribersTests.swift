import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// What each subscriber has seen: the article count of its latest change.
private final class Seen: @unchecked Sendable {
    // @unchecked Sendable: `latest` and `subscribersAt` are only touched while `condition` is
    // locked.
    private let condition = NSCondition()
    private var latest: [Int]
    /// How many subscribers' latest count is each count (no scan of `latest` per change).
    private var subscribersAt: [Int: Int] = [:]

    init(_ subscribers: Int) {
        latest = Array(repeating: -1, count: subscribers)
        subscribersAt[-1] = subscribers
    }

    func record(_ subscriber: Int, _ count: Int) {
        condition.lock()
        subscribersAt[latest[subscriber], default: 0] -= 1
        subscribersAt[count, default: 0] += 1
        latest[subscriber] = count
        if subscribersAt[count] == latest.count { condition.broadcast() }
        condition.unlock()
    }

    /// How many subscribers last saw each count, for a failure's message.
    var summary: String {
        condition.lock()
        defer { condition.unlock() }
        return subscribersAt.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.value) at \($0.key)" }.joined(separator: ", ")
    }

    /// Waits until every subscriber has seen `count` articles; false after `timeout` seconds.
    func waitForAll(_ count: Int, timeout: TimeInterval = 180) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while subscribersAt[count] != latest.count {
            if !condition.wait(until: deadline) { return subscribersAt[count] == latest.count }
        }
        return true
    }
}

@Suite(.serialized) struct ManySubscribersTests {
    // Each scenario runs in a process of its own, so the threads it counts are its own and not
    // those of the suites running beside it. Issues it records are reported here.

    /// A thousand `changes` streams of one file, in one process, live through a hundred commits
    /// with a bounded number of reader slots and threads: they share one realm, refreshed once
    /// per commit, and one query's change is worked out once. Every subscriber sees every commit.
    @Test func aThousandStreamsShareOneRealmAndSeeEveryCommit() async {
        await #expect(processExitsWith: .success) {
            try await ManySubscribersTests.streams(1_000, commits: 100)
        }
    }

    /// Ten thousand subscribers work with the default reader limit (126) too.
    @Test func tenThousandStreamsWorkWithTheDefaultReaderLimit() async {
        await #expect(processExitsWith: .success) {
            try await ManySubscribersTests.streams(10_000, commits: 5)
        }
    }

    private static func streams(_ subscribers: Int, commits: Int) async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = makeConfiguration(dir, types: [Article.self])
        let threadsBefore = threadCount()
        let streams = try onOtherThread(timeout: eventTimeout) {
            let realm = try Realm(configuration: config)
            return (0..<subscribers).map { _ in realm.objects(Article.self).changes }
        }
        let seen = Seen(subscribers)
        let tasks = streams.enumerated().map { subscriber, stream in
            Task {
                for await change in stream {
                    switch change {
                    case .initial(let results): seen.record(subscriber, results.count)
                    case .update(let results, _, _, _): seen.record(subscriber, results.count)
                    case .error(let error): Issue.record("subscriber \(subscriber): \(error)")
                    }
                }
            }
        }
        #expect(try await onNewThread { seen.waitForAll(0) }, "every subscriber's .initial")
        var slots = 0
        var threads = 0
        for commit in 1...commits {
            slots = max(
                slots,
                try await onNewThread {
                    let realm = try Realm(configuration: config)
                    try realm.write { realm.add(Article(id: "a\(commit)")) }
                    return realm.readerSlotsInUse
                })
            let all = try await onNewThread { seen.waitForAll(commit) }
            #expect(all, "every subscriber saw commit \(commit) (subscribers by the count they saw last: \(seen.summary))")
            guard all else { break }
            threads = max(threads, threadCount())
        }
        #expect(slots <= 8, "reader slots in use: \(slots)")
        // A shared queue costs a few worker threads whatever the number of subscribers; a thread
        // per subscriber would be a thousand. The bound leaves room for a sanitizer's threads.
        #expect(threads - threadsBefore < 64, "threads: \(threadsBefore) before, \(threads) at most")
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}

/// The threads of this process.
private func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
}
