import Dispatch
import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// Snapshot isolation between handles, refresh, invalidate, and queue confinement.
@Suite struct SnapshotTests {
    @Test func anotherThreadSeesACommitOnlyAfterRefresh() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Article(id: "one")) }
            let articles = realm.objects(Article.self)
            let one = try #require(realm.object(ofType: Article.self, forPrimaryKey: "one"))
            #expect(articles.count == 1)

            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write {
                    other.add(Article(id: "two"))
                    other.object(ofType: Article.self, forPrimaryKey: "one")!.wordCount = 999
                }
            }
            // Still the old snapshot: neither the new object nor the change.
            #expect(articles.count == 1)
            #expect(one.wordCount == 100)
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "two") == nil)

            #expect(realm.refresh())
            #expect(articles.count == 2)
            #expect(one.wordCount == 999)
            #expect(!realm.refresh(), "nothing new to see")
        }
    }

    @Test func aWriteRefreshesFirst() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            let articles = realm.objects(Article.self)
            #expect(articles.isEmpty)
            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write { other.add(Article(id: "theirs")) }
            }
            #expect(articles.isEmpty)
            try realm.write {
                #expect(articles.count == 1, "a write sees the newest version")
                realm.add(Article(id: "mine"))
            }
            #expect(articles.map(\.id) == ["mine", "theirs"])
        }
    }

    @Test func objectDeletedElsewhereIsInvalidatedAfterRefresh() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Article(id: "doomed")) }
            let doomed = try #require(realm.object(ofType: Article.self, forPrimaryKey: "doomed"))
            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write { other.deleteAll() }
            }
            #expect(!doomed.isInvalidated, "still alive in this snapshot")
            #expect(doomed.id == "doomed")
            realm.refresh()
            #expect(doomed.isInvalidated)
        }
    }

    @Test func invalidateReleasesTheSnapshotAndAccessorsReload() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Article(id: "a", wordCount: 1)) }
            let a = try #require(realm.objects(Article.self).first)
            realm.invalidate()
            try onOtherThread {
                let other = try Realm(configuration: config)
                try other.write { other.object(ofType: Article.self, forPrimaryKey: "a")!.wordCount = 2 }
            }
            #expect(a.wordCount == 2, "the next read takes a new snapshot")
        }
    }

    @Test func snapshotVersionsAdvanceWithCommits() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            let v0 = realm.snapshotVersion
            try realm.write { realm.add(Article(id: "a")) }
            #expect(realm.snapshotVersion > v0)
        }
    }

    @Test func queueConfinedRealmWorksFromEveryBlockOnItsQueue() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let queue = DispatchQueue(label: "realm-queue")
            final class Holder: @unchecked Sendable {
                // @unchecked Sendable: only touched from blocks on `queue`, which is serial.
                var realm: Realm?
                var count = -1
            }
            let holder = Holder()
            queue.sync {
                holder.realm = try! Realm(configuration: config, queue: queue)
                try! holder.realm!.write { holder.realm!.add(Article(id: "q")) }
            }
            let group = DispatchGroup()
            queue.async(group: group) { holder.count = holder.realm!.objects(Article.self).count }
            #expect(group.wait(timeout: .now() + eventTimeout) == .success)
            queue.sync {
                #expect(holder.count == 1)
                holder.realm = nil
            }
        }
    }
}
