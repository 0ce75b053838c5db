import Foundation
@_spi(Testing) import LMDBKit
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// What the world does to a write (a full map, an I/O error, a lock that cannot be taken)
/// reaches the user as a `Realm.Error` from `commitWrite`/`write`, never as a crash, and leaves
/// the file as it was. The non-throwing mutators (setters, `delete`, `deleteAll`) record the
/// first such error in the write; the write changes nothing after it.
///
/// The injected failures (`FaultInjection`) are process-wide, so those tests run in a child
/// process each (exit tests).
@Suite struct WriteFailureTests {
    /// Runs `body` with a realm whose file may grow to 1 MiB, holding one article "a".
    static func withSmallFile(_ body: (Realm, Realm.Configuration, Article) throws -> Void) throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir)
            config.maximumFileSize = 1 << 20
            let realm = try Realm(configuration: config)
            let article = Article(id: "a", wordCount: 1)
            try realm.write { realm.add(article) }
            try body(realm, config, article)
        }
    }

    @Test func aSetterThatFillsTheMapFailsTheCommitAndChangesNothing() throws {
        try Self.withSmallFile { realm, config, article in
            do {
                try realm.write {
                    article.wordCount = 2
                    article.leadParagraph = String(repeating: "x", count: 2 << 20)   // larger than the map
                    article.wordCount = 3                                            // after the failure: ignored
                }
                Issue.record("expected mapFull")
            } catch let error as Realm.Error {
                #expect(error.code == .mapFull)
                #expect(error.message.contains("Article"))
                #expect(error.message.contains(config.fileURL!.path))
            }
            #expect(article.wordCount == 1)
            #expect(article.leadParagraph == "Lead of a")
            #expect(!realm.isInWriteTransaction)
            // The next write works once the cause is gone.
            try realm.write { article.wordCount = 4 }
            #expect(realm.objects(Article.self).first?.wordCount == 4)
        }
    }

    @Test func beginWriteAndCommitWriteReportTheFailureThroughCommit() throws {
        try Self.withSmallFile { realm, _, article in
            realm.beginWrite()
            article.leadParagraph = String(repeating: "y", count: 2 << 20)
            #expect(realm.isInWriteTransaction)
            #expect(throws: Realm.Error.self) { try realm.commitWrite() }
            #expect(!realm.isInWriteTransaction)
            #expect(article.leadParagraph == "Lead of a")
        }
    }

    @Test func deletingWhenTheMapIsFullFailsTheCommit() async {
        await #expect(processExitsWith: .success) {
            try WriteFailureTests.withArticles { realm in
                FaultInjection.fail("mdb_cursor_del", with: .mapFull)
                try WriteFailureTests.expectMapFull {
                    try realm.write { realm.delete(realm.objects(Article.self).first!) }
                }
                precondition(realm.objects(Article.self).count == 3, "the failed delete changed the file")
            }
        }
    }

    @Test func deletingResultsWhenTheMapIsFullFailsTheCommit() async {
        await #expect(processExitsWith: .success) {
            try WriteFailureTests.withArticles { realm in
                FaultInjection.fail("mdb_cursor_del", with: .mapFull, after: 1)
                try WriteFailureTests.expectMapFull {
                    try realm.write { realm.delete(realm.objects(Article.self).where { $0.wordCount > 0 }) }
                }
                precondition(realm.objects(Article.self).count == 3, "the failed delete changed the file")
            }
        }
    }

    @Test func deleteAllWhenTheMapIsFullFailsTheCommit() async {
        await #expect(processExitsWith: .success) {
            try WriteFailureTests.withArticles { realm in
                FaultInjection.fail("mdb_drop", with: .mapFull)
                try WriteFailureTests.expectMapFull {
                    try realm.write {
                        realm.deleteAll()
                        realm.deleteAll()   // after the failure: changes nothing
                    }
                }
                precondition(realm.objects(Article.self).count == 3, "the failed deleteAll changed the file")
            }
        }
    }

    @Test func aWriteThatCannotBeginThrowsFromItsCommit() async {
        await #expect(processExitsWith: .success) {
            try WriteFailureTests.withArticles { realm in
                FaultInjection.fail("mdb_txn_begin", with: .ioError)
                var ran = false
                do {
                    try realm.write {
                        ran = true
                        // The write reads the version before it and changes nothing.
                        precondition(realm.objects(Article.self).count == 3)
                        realm.objects(Article.self).first!.wordCount = 99
                        realm.deleteAll()
                    }
                    preconditionFailure("expected an error")
                } catch let error as Realm.Error {
                    precondition(error.code == .fileAccess, "\(error)")
                    precondition(error.message.contains("Cannot begin a write"), error.message)
                }
                precondition(ran)
                precondition(!realm.isInWriteTransaction)
                precondition(realm.objects(Article.self).count == 3)
                precondition(!realm.objects(Article.self).contains { $0.wordCount == 99 })
                try realm.write { realm.deleteAll() }
                precondition(realm.objects(Article.self).isEmpty)
            }
        }
    }

    @Test func aFailedCommitOfAnAsyncWriteReachesItsCaller() async {
        await #expect(processExitsWith: .success) {
            let dir = try makeTemporaryDirectory()
            let store = try await ArticleStore(configuration: makeConfiguration(dir, types: [Article.self]))
            FaultInjection.fail("mdb_txn_commit", with: .noSpace)
            do {
                try await store.add("a")
                preconditionFailure("expected an error")
            } catch let error as Realm.Error {
                precondition(error.code == .noSpace, "\(error)")
            }
            let before = await store.count()
            precondition(before == 0)
            try await store.add("b")
            let after = await store.count()
            precondition(after == 1)
        }
    }

    /// A realm with observers takes the newest version before it writes; with every reader
    /// slot taken (its snapshot shared with a frozen copy, so it needs a new slot), the write
    /// fails with `tooManyReaders` from its commit, and works again once a slot is free.
    @Test func aWriteThatCannotTakeANewSnapshotThrowsTooManyReaders() throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir, types: [Article.self])
            config.maximumNumberOfReaders = 2
            let realm = try Realm(configuration: config)
            let token = realm.observe { _, _ in }
            var frozen: Realm? = realm.freeze()                 // shares the realm's snapshot
            var other: (realm: Realm, queue: DispatchQueue)? = try openOnQueue(config)  // the second slot
            do {
                try realm.write { realm.add(Article(id: "a")) }
                Issue.record("expected tooManyReaders")
            } catch let error as Realm.Error {
                #expect(error.code == .tooManyReaders)
                #expect(error.message.contains(config.fileURL!.path))
            }
            #expect(!realm.isInWriteTransaction)
            frozen = nil
            other = nil
            try realm.write { realm.add(Article(id: "b")) }
            #expect(realm.objects(Article.self).map(\.id) == ["b"])
            withExtendedLifetime((token, frozen, other)) {}
        }
    }

    /// Runs `body` with a realm of three articles, in a new directory.
    static func withArticles(_ body: (Realm) throws -> Void) throws {
        let dir = try makeTemporaryDirectory()
        let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
        try realm.write {
            for i in 0..<3 { realm.add(Article(id: "a\(i)", section: "S\(i)", wordCount: 10 + i)) }
        }
        try body(realm)
    }

    /// Runs `body`, which must throw `mapFull`.
    static func expectMapFull(_ body: () throws -> Void) throws {
        do {
            try body()
            preconditionFailure("expected mapFull")
        } catch let error as Realm.Error {
            precondition(error.code == .mapFull, "\(error)")
            precondition(error.message.contains("test.realm"), error.message)
        }
    }
}

/// A read that cannot go on (reads do not throw) stops the process with a message naming the
/// file and the class, never answers as if nothing were stored.
@Suite struct ReadFailureTests {
    func expectStop(_ result: ExitTest.Result?, naming what: String) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot read \(what) from the realm at '"), "stderr was: \(stderr)")
        #expect(stderr.contains("test.realm"), "stderr was: \(stderr)")
    }

    @Test func aCountThatCannotBeReadStopsInsteadOfAnsweringZero() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try WriteFailureTests.withArticles { realm in
                FaultInjection.fail("mdb_stat", with: .ioError, times: 100)
                print(realm.objects(Article.self).count)
            }
        }
        expectStop(result, naming: "objects of 'Article'")
    }

    @Test func isEmptyThatCannotBeReadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            try WriteFailureTests.withArticles { realm in
                FaultInjection.fail("mdb_stat", with: .ioError, times: 100)
                print(realm.isEmpty)
            }
        }
        expectStop(result, naming: "objects of 'Article'")
    }

    @Test func aReadInsideAFailedWriteSaysTheWriteHadFailed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = try makeTemporaryDirectory()
            var config = makeConfiguration(dir, types: [Article.self])
            config.maximumFileSize = 1 << 20
            let realm = try Realm(configuration: config)
            let article = Article(id: "a")
            try realm.write { realm.add(article) }
            try realm.write {
                article.leadParagraph = String(repeating: "x", count: 2 << 20)   // fills the map
                print(realm.objects(Article.self).count)                        // reads the failed transaction
            }
        }
        expectStop(result, naming: "objects of 'Article'")
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("the write transaction had already failed"), "stderr was: \(stderr)")
    }
}
