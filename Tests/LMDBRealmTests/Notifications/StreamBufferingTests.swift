import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct StreamBufferingTests {
    /// A stream that keeps only the newest change hands a consumer that fell behind the latest
    /// state, not every change it missed (an unbounded one, beside it, gets all six).
    @Test func aSlowConsumerOfTheNewestChangeGetsTheLatestState() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = makeConfiguration(dir, types: [Article.self])
        let (newest, every) = try onOtherThread {
            let realm = try Realm(configuration: config)
            let articles = realm.objects(Article.self)
            return (articles.changes(bufferingPolicy: .bufferingNewest(1)), articles.changes)
        }
        func count(_ change: RealmCollectionChange<FrozenResults<Article>>) -> Int {
            switch change {
            case .initial(let results), .update(let results, _, _, _): results.count
            case .error: -1
            }
        }
        var slow = newest.makeAsyncIterator()
        var witness = every.makeAsyncIterator()
        #expect(await slow.next().map(count) == 0)
        #expect(await witness.next().map(count) == 0)
        for n in 1...6 {
            try await onNewThread {
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Article(id: "a\(n)")) }
            }
            #expect(await witness.next().map(count) == n, "the unbounded stream gets every commit")
        }
        var received: [Int] = []
        while let change = await slow.next() {
            received.append(count(change))
            if received.last == 6 { break }
        }
        #expect(received.last == 6 && received.count <= 2, "\(received)")
    }
}
