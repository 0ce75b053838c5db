import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct AsyncWriteTests {
    /// `asyncWrite` on a realm opened in a plain `async` function (no actor: it could resume
    /// on another thread) writes in place instead of stopping the process on its next use.
    @Test func asyncWriteWorksOnARealmOfAPlainAsyncFunction() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let count = try await writeFromAPlainAsyncFunction(makeConfiguration(dir, types: [Article.self]))
        #expect(count == 50)
    }

    /// A thread's realm called from another actor writes in place too.
    @Test func asyncWriteFromAnotherActorWritesInPlace() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try await ThreadRealmWriter().write(makeConfiguration(dir, types: [Article.self])) == 10)
    }
}

private func writeFromAPlainAsyncFunction(_ config: Realm.Configuration) async throws -> Int {
    let realm = try Realm(configuration: config)
    for i in 0..<50 {
        try await realm.asyncWrite { realm.add(Article(id: "a\(i)")) }
        #expect(realm.objects(Article.self).count == i + 1)
    }
    return realm.objects(Article.self).count
}

private actor ThreadRealmWriter {
    func write(_ config: Realm.Configuration) async throws -> Int {
        let realm = try Realm(configuration: config)
        for i in 0..<10 {
            try await realm.asyncWrite { realm.add(Article(id: "w\(i)")) }
        }
        return realm.objects(Article.self).count
    }
}
