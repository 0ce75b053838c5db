import ArticleCacheKit
import Foundation
import LMDBRealm
import Synchronization
import Testing
import TestSupport

/// `watch`: another thread replaces the cache; the watcher, notified through its own realm
/// handle, reports what came, went and changed.
@Suite(.timeLimit(.minutes(5))) struct ArticleWatcherTests {
    @Test func reportsInsertionsDeletionsAndModifications() async throws {
        let docs = try ArticleSearchResponse.decode(try await BundledSampleService().execute(ArticleSearch().request)).docs
        try await withTemporaryDirectory { dir in
            let store = ArticleStore(fileURL: dir.appendingPathComponent("articles.realm"))
            // The store writes through a realm confined to the calling thread.
            try onOtherThread { try store.replaceAll(with: Array(docs.prefix(3))) }
            var changed = docs[2]
            changed.headline = "A changed headline"
            let next = [docs[0], changed, docs[3]]  // docs[1] goes, docs[2] changes, docs[3] comes

            let batches = Mutex<[[ArticleWatcher.Change]]>([])
            let (started, signal) = AsyncStream.makeStream(of: Void.self)
            let watcher = Task {
                try await ArticleWatcher(store: store).run(started: { signal.yield() }) { changes in
                    batches.withLock { $0.append(changes) }
                    return false  // one batch is enough
                }
            }
            // Written only once the watcher holds the old cache, so the write is a change to it.
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            try onOtherThread { try store.replaceAll(with: next) }
            try await watcher.value
            let seen = batches.withLock { $0 }.flatMap { $0 }
            let ids = docs.map(\.id)
            #expect(seen.contains(.deleted(id: ids[1])))
            #expect(seen.contains { if case .inserted(let a) = $0 { a.id == ids[3] } else { false } })
            #expect(seen.contains { if case .modified(let a) = $0 { a.id == ids[2] && a.headline == "A changed headline" } else { false } })
            #expect(!seen.contains { if case .modified(let a) = $0 { a.id == ids[0] } else { false } }, "an unchanged article is no change")
        }
    }
}
