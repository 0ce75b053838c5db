import Dispatch
import Foundation
@_spi(Testing) @testable import LMDBRealm
import TestSupport
import Testing

/// A collection change without its collection, for comparing.
struct Delta: Equatable, Sendable, CustomStringConvertible {
    var initial = false
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []
    var count = 0

    init<C: Collection>(_ change: RealmCollectionChange<C>) {
        switch change {
        case .initial(let c):
            initial = true
            count = c.count
        case .update(let c, let d, let i, let m):
            deletions = d
            insertions = i
            modifications = m
            count = c.count
        case .error(let error):
            Issue.record("unexpected error \(error)")
        }
    }

    init(deletions: [Int] = [], insertions: [Int] = [], modifications: [Int] = [], count: Int) {
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
        self.count = count
    }

    static func initial(_ count: Int) -> Delta {
        var d = Delta(count: count)
        d.initial = true
        return d
    }

    var description: String { initial ? "initial(\(count))" : "-\(deletions) +\(insertions) ~\(modifications) (\(count))" }
}

@Suite struct NotificationTests {
    @Test func aThreadConfinedRealmDeliversOnRefreshAndAfterItsOwnWrites() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write {
                for i in 0..<5 { realm.add(Article(id: "a\(i)", wordCount: i)) }
            }
            let sorted = realm.objects(Article.self).sorted(byKeyPath: "wordCount")
            var deltas: [Delta] = []
            let token = sorted.observe { deltas.append(Delta($0)) }
            #expect(deltas == [.initial(5)])

            // Own write: delivered after the commit.
            try realm.write {
                realm.object(ofType: Article.self, forPrimaryKey: "a1")!.wordCount = 10  // moves to the end
                realm.delete(realm.object(ofType: Article.self, forPrimaryKey: "a3")!)
                realm.add(Article(id: "b", wordCount: 2))
            }
            // Old: a0 a1 a2 a3 a4 (0 1 2 3 4). New: a0 a2 b a4 a1 (0 2 2 4 10).
            #expect(deltas.last == Delta(deletions: [1, 3], insertions: [2, 4], modifications: [], count: 5))

            // Another thread's write: delivered on refresh.
            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write { other.object(ofType: Article.self, forPrimaryKey: "a2")!.url = "changed" }
            }
            #expect(deltas.count == 2)
            realm.refresh()
            #expect(deltas.last == Delta(modifications: [1], count: 5))
            token.invalidate()
            try realm.write { realm.add(Article(id: "c")) }
            #expect(deltas.count == 3)
        }
    }

    /// Observers of one query that start at one version (a server's subscribers, registered
    /// one by one) start from one evaluation of it; another query, or a later version, is
    /// evaluated anew; and each observer hears the same, right changes afterwards.
    @Test func observersOfOneQueryStartFromOneEvaluation() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try realm.write { for i in 0..<6 { realm.add(Article(id: "a\(i)", section: i % 2 == 0 ? "Sports" : "Arts", wordCount: i)) } }
            func sports() -> Results<Article> { realm.objects(Article.self).where { $0.section == "Sports" }.sorted(byKeyPath: "wordCount") }
            var deltas: [[Delta]] = Array(repeating: [], count: 5)
            var tokens: [NotificationToken] = []
            let before = realm.initialResultsEvaluated
            for i in 0..<3 {
                tokens.append(sports().observe { deltas[i].append(Delta($0)) })
                realm.refresh()  // delivers this observer's initial notification
            }
            #expect(realm.initialResultsEvaluated - before == 1)
            tokens.append(realm.objects(Article.self).where { $0.section == "Arts" }.observe { deltas[3].append(Delta($0)) })
            realm.refresh()
            #expect(realm.initialResultsEvaluated - before == 2)
            for i in 0..<4 { #expect(deltas[i] == [.initial(3)], "observer \(i)") }
            try realm.write { realm.add(Article(id: "b", section: "Sports", wordCount: 1)) }
            for i in 0..<3 { #expect(deltas[i].last == Delta(insertions: [1], count: 4), "observer \(i)") }
            // At the new version, the same query is evaluated again, and right.
            tokens.append(sports().observe { deltas[4].append(Delta($0)) })
            realm.refresh()
            #expect(realm.initialResultsEvaluated - before == 3)
            #expect(deltas[4] == [.initial(4)])
            try realm.write { realm.delete(realm.object(ofType: Article.self, forPrimaryKey: "a0")!) }
            for i in [0, 1, 2, 4] { #expect(deltas[i].last == Delta(deletions: [0], count: 3), "observer \(i)") }
            withExtendedLifetime(tokens) {}
        }
    }

    /// Observers of one query on one realm share the work of each commit: it is worked out
    /// once per distinct query (and key paths), and each observer gets the same, right change.
    @Test func observersOfOneQueryShareTheWorkOfEachCommit() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try realm.write { for i in 0..<4 { realm.add(Article(id: "a\(i)", section: i % 2 == 0 ? "Sports" : "Arts", wordCount: i)) } }
            func sports() -> Results<Article> { realm.objects(Article.self).where { $0.section == "Sports" }.sorted(byKeyPath: "wordCount") }
            var deltas: [[Delta]] = Array(repeating: [], count: 5)
            var tokens = (0..<3).map { i in sports().observe { deltas[i].append(Delta($0)) } }
            // Another query, and the same query watching one key path: each is worked out apart.
            tokens.append(realm.objects(Article.self).where { $0.section == "Arts" }.observe { deltas[3].append(Delta($0)) })
            tokens.append(sports().observe(keyPaths: ["url"]) { deltas[4].append(Delta($0)) })
            let before = realm.resultsChangesComputed
            try realm.write {
                realm.add(Article(id: "b", section: "Sports", wordCount: 1))
                realm.object(ofType: Article.self, forPrimaryKey: "a2")!.wordCount = 20
                realm.object(ofType: Article.self, forPrimaryKey: "a1")!.url = "changed"
            }
            #expect(realm.resultsChangesComputed - before == 3)
            // Sports: a0 a2 (0 2) → a0 b a2 (0 1 20).
            for i in 0..<3 { #expect(deltas[i].last == Delta(insertions: [1], modifications: [1], count: 3), "observer \(i)") }
            #expect(deltas[3].last == Delta(modifications: [0], count: 2))
            #expect(deltas[4].last == Delta(insertions: [1], count: 3))
            // An observer that goes away leaves the others as they were.
            tokens[0].invalidate()
            try realm.write { realm.delete(realm.object(ofType: Article.self, forPrimaryKey: "a0")!) }
            #expect(deltas[0].count == 2)
            for i in 1..<3 { #expect(deltas[i].last == Delta(deletions: [0], count: 2), "observer \(i)") }
            withExtendedLifetime(tokens) {}
        }
    }

    @Test func keyPathsLimitWhatCountsAsAModification() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try realm.write { for i in 0..<3 { realm.add(Article(id: "a\(i)")) } }
            var byWordCount: [Delta] = []
            var all: [Delta] = []
            let t1 = realm.objects(Article.self).observe(keyPaths: ["wordCount"]) { byWordCount.append(Delta($0)) }
            let t2 = realm.objects(Article.self).observe(keyPaths: [\Article.url, \.wordCount]) { all.append(Delta($0)) }
            let a1 = realm.object(ofType: Article.self, forPrimaryKey: "a1")!
            try realm.write { a1.leadParagraph = "new lead" }
            #expect(byWordCount.count == 1 && all.count == 1)
            try realm.write { a1.url = "u" }
            #expect(byWordCount.count == 1)
            #expect(all.last == Delta(modifications: [1], count: 3))
            try realm.write { a1.wordCount = 7 }
            #expect(byWordCount.last == Delta(modifications: [1], count: 3))
            // Inserts are always reported.
            try realm.write { realm.add(Article(id: "a3")) }
            #expect(byWordCount.last == Delta(insertions: [3], count: 4))
            withExtendedLifetime((t1, t2)) {}
        }
    }

    @Test func writeWithoutNotifyingSkipsOnlyThatToken() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            var skipped: [Delta] = []
            var other: [Delta] = []
            let results = realm.objects(Article.self)
            let t1 = results.observe { skipped.append(Delta($0)) }
            let t2 = results.observe { other.append(Delta($0)) }
            try realm.write(withoutNotifying: [t1]) { realm.add(Article(id: "x")) }
            #expect(skipped == [.initial(0)])
            #expect(other == [.initial(0), Delta(insertions: [0], count: 1)])
            try realm.write { realm.add(Article(id: "y")) }
            #expect(skipped.last == Delta(insertions: [1], count: 2))
            withExtendedLifetime((t1, t2)) {}
        }
    }

    @Test func releasingTheTokenStopsDelivery() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            var count = 0
            var token: NotificationToken? = realm.objects(Article.self).observe { _ in count += 1 }
            try realm.write { realm.add(Article(id: "x")) }
            #expect(count == 2)
            _ = token
            token = nil
            try realm.write { realm.add(Article(id: "y")) }
            #expect(count == 2)
        }
    }

    @Test func aWriteInsideACallbackWorks() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            var deltas: [Delta] = []
            let token = realm.objects(Article.self).observe { change in
                deltas.append(Delta(change))
                if case .update(let results, _, let insertions, _) = change, insertions == [0], results.count == 1 {
                    try! realm.write { realm.add(Article(id: "from-callback")) }
                }
            }
            try realm.write { realm.add(Article(id: "a")) }
            #expect(deltas == [.initial(0), Delta(insertions: [0], count: 1), Delta(insertions: [1], count: 2)])
            #expect(realm.objects(Article.self).count == 2)
            withExtendedLifetime(token) {}
        }
    }

    @Test func notificationsArriveOnTheRequestedQueue() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            let queue = DispatchQueue(label: "observer")
            let key = DispatchSpecificKey<Int>()
            queue.setSpecific(key: key, value: 42)
            let deltas = Collector<Delta>()
            let onQueue = Collector<Bool>()
            let token = realm.objects(Article.self).where { $0.wordCount > 10 }.observe(on: queue) { change in
                onQueue.append(DispatchQueue.getSpecific(key: key) == 42)
                deltas.append(Delta(change))
            }
            #expect(deltas.wait(count: 1) == [.initial(0)])
            // A commit from another thread reaches the queue without anyone refreshing.
            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write {
                    other.add(Article(id: "small", wordCount: 5))
                    other.add(Article(id: "big", wordCount: 50))
                }
            }
            #expect(deltas.wait(count: 2)?.last == Delta(insertions: [0], count: 1))
            #expect(onQueue.all.allSatisfy { $0 })
            token.invalidate()
            queue.sync {}  // the queue's realm is released there
        }
    }

    @Test func aQueueConfinedRealmRefreshesItselfAndNotifiesOnItsQueue() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let queue = DispatchQueue(label: "realm")
            let deltas = Collector<Delta>()
            let holder = TokenHolder()
            queue.sync {
                let realm = try! Realm(configuration: config, queue: queue)
                holder.token = realm.objects(Article.self).observe { deltas.append(Delta($0)) }
                holder.didChange = realm.observe { notification, _ in holder.notifications.append(notification) }
            }
            #expect(deltas.wait(count: 1) == [.initial(0)])
            let writer = try Realm(configuration: config)
            try writer.write { writer.add(Article(id: "a")) }
            #expect(deltas.wait(count: 2)?.last == Delta(insertions: [0], count: 1))
            #expect(holder.notifications.wait(count: 1) == [.didChange])
            queue.sync { holder.token = nil; holder.didChange = nil }
        }
    }

    @Test func aQueueConfinedRealmThatDoesNotRefreshHearsRefreshRequired() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let queue = DispatchQueue(label: "realm")
            let holder = TokenHolder()
            queue.sync {
                let realm = try! Realm(configuration: config, queue: queue)
                realm.autorefresh = false
                holder.didChange = realm.observe { notification, _ in holder.notifications.append(notification) }
                holder.realm = realm
            }
            let writer = try Realm(configuration: config)
            try writer.write { writer.add(Article(id: "a")) }
            #expect(holder.notifications.wait(count: 1) == [.refreshRequired])
            // The realm stayed where it was until asked to move.
            let counts: (Int, Int) = queue.sync {
                let realm = holder.realm!
                let before = realm.objects(Article.self).count
                realm.refresh()
                return (before, realm.objects(Article.self).count)
            }
            #expect(counts.0 == 0 && counts.1 == 1)
            queue.sync { holder.didChange = nil; holder.realm = nil }
        }
    }

    @Test func durationsBecomeDispatchIntervalsWithTheirWholeSeconds() {
        #expect(Duration.milliseconds(1).dispatchInterval == .nanoseconds(1_000_000))
        #expect(Duration.seconds(2).dispatchInterval == .nanoseconds(2_000_000_000))
        #expect(Duration.milliseconds(1500).dispatchInterval == .nanoseconds(1_500_000_000))
    }

    @Test func objectNotificationsReportOldAndNewValuesThenDeletion() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Article(id: "a", wordCount: 1)) }
            let article = realm.object(ofType: Article.self, forPrimaryKey: "a")!
            var changes: [String] = []
            let token = article.observe(keyPaths: ["wordCount", "url"]) { change in
                switch change {
                case .change(let object, let properties):
                    changes.append(
                        object.id + ": "
                            + properties.map { "\($0.name) \($0.oldValue.map { "\($0)" } ?? "nil")→\($0.newValue.map { "\($0)" } ?? "nil")" }
                            .joined(separator: ", "))
                case .deleted: changes.append("deleted")
                case .error(let error): changes.append("error \(error)")
                }
            }
            try realm.write { article.wordCount = 2 }
            try realm.write { article.leadParagraph = "not observed" }
            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write {
                    let a = other.object(ofType: Article.self, forPrimaryKey: "a")!
                    a.url = "u2"
                    a.wordCount = 3
                }
            }
            realm.refresh()
            try realm.write { realm.delete(article) }
            try realm.write { realm.add(Article(id: "a")) }
            #expect(changes == ["a: wordCount 1→2", "a: url https://example.com/a→u2, wordCount 2→3", "deleted"])
            withExtendedLifetime(token) {}
        }
    }
}

/// Keeps tokens and collected notifications across queue blocks.
final class TokenHolder: @unchecked Sendable {
    // @unchecked Sendable: the tokens and the realm are set and released on the realm's queue only.
    var token: NotificationToken?
    var didChange: NotificationToken?
    var realm: Realm?
    let notifications = Collector<Realm.Notification>()
}
