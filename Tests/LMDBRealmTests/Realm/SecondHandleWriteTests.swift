import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct SecondHandleWriteTests {
    /// Two handles of one file on one thread: a write through the second while the first is
    /// writing would wait forever for LMDB's write lock this thread holds. It stops the process
    /// with a message saying so, instead of hanging.
    @Test func aSecondHandlesWriteOnTheWritingThreadStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = makeConfiguration(try makeTemporaryDirectory(), types: [Article.self])
            let first = try Realm(configuration: config)
            let second = try Realm(configuration: config)
            try first.write {
                try first.add(Article(id: "a"))
                try second.write { try second.add(Article(id: "b")) }
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("This thread already has a write transaction open on"), "\(stderr)")
        #expect(stderr.contains("a second one would wait for it forever"))
    }

    /// After the first handle's write ends, the second writes as usual.
    @Test func aSecondHandleWritesOnceTheFirstIsDone() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            let first = try Realm(configuration: config)
            let second = try Realm(configuration: config)
            try first.write { try first.add(Article(id: "a")) }
            try second.write { try second.add(Article(id: "b")) }
            first.refresh()
            #expect(first.objects(Article.self).count == 2)
            #expect(second.objects(Article.self).count == 2)
        }
    }
}
