import Foundation
import LMDBKit
import TestSupport
import Testing

/// Misuse that only a bug in the calling code can cause stops the process with a message,
/// rather than going on with a handle LMDB has refused.
@Suite struct CrashTests {
    /// The first line the child wrote to its standard error: the stop message.
    static func stopMessage(_ result: ExitTest.Result?) -> String {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        return stderr.split(separator: "\n").first.map(String.init) ?? ""
    }

    @Test func aDatabaseHandleFromAnotherEnvironmentStopsTheProcess() async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = dir.path as String] in
                try useHandleFromAnotherEnvironment(in: path)
            }
            // LMDB refuses the handle with EINVAL (TXN_DBI_EXIST fails for an unopened slot).
            let message = Self.stopMessage(result)
            #expect(message.hasSuffix("LMDB misuse in mdb_get: Invalid argument (22)"), "\(message)")
        }
    }

    @Test func aDatabaseHandleFromAnAbortedWriteStopsTheProcess() async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = dir.path as String] in
                try useHandleFromAbortedWrite(in: path)
            }
            let message = Self.stopMessage(result)
            #expect(message.hasSuffix("LMDB misuse in mdb_put: Invalid argument (22)"), "\(message)")
        }
    }

    @Test func openingThroughTheEnvironmentWhileThisThreadsWriteCreatesDatabasesStops() async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = dir.path as String] in
                try openThroughTheEnvironmentInsideACreatingWrite(in: path)
            }
            #expect(Self.stopMessage(result).contains("use Transaction.openDatabase(named:) inside the write"))
        }
    }

    @Test func theSameSequenceWithValidHandlesRunsToCompletion() async throws {
        // The control for the two tests above: the child does the same work with valid handles
        // and exits normally, so it is the misuse that stops it.
        _ = try await withTemporaryDirectory { dir in
            await #expect(processExitsWith: .success) { [path = dir.path as String] in
                try useValidHandles(in: path)
            }
        }
    }

    @Test func writingInAReadTransactionStopsTheProcess() async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = dir.path as String] in
                try putInReadTransaction(in: path)
            }
            let message = Self.stopMessage(result)
            #expect(message.contains("put needs a write transaction"), "\(message)")
        }
    }
}

// The bodies of the exit tests, which run in a child process. They are synchronous functions
// because scoped transactions block their thread and may not be used from async code.

/// Environment `a` has three named databases, `b` none: the handle of `a`'s third database
/// names a slot `b` never opened.
private func useHandleFromAnotherEnvironment(in dir: String) throws {
    let a = try Environment.open(path: dir + "/a.mdb")
    _ = try a.createDatabase(named: "one")
    _ = try a.createDatabase(named: "two")
    let three = try a.createDatabase(named: "three")
    let b = try Environment.open(path: dir + "/b.mdb")
    _ = try b.read { txn in try txn.get(Array("k".utf8), in: three) { _ in true } }
}

/// A database created in a write that was then aborted no longer exists; its handle is stale.
private func useHandleFromAbortedWrite(in dir: String) throws {
    let env = try Environment.open(path: dir + "/data.mdb")
    struct Abort: Error {}
    let box = HandleBox()
    do {
        try env.write { txn in
            box.database = try txn.createDatabase(named: "gone")
            throw Abort()
        }
    } catch is Abort {}
    guard let stale = box.database else { return }
    try env.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: stale) }
}

/// The same steps as the two functions above with handles that are valid.
private func useValidHandles(in dir: String) throws {
    let a = try Environment.open(path: dir + "/a.mdb")
    _ = try a.createDatabase(named: "one")
    _ = try a.createDatabase(named: "two")
    let three = try a.createDatabase(named: "three")
    _ = try a.read { txn in try txn.get(Array("k".utf8), in: three) { _ in true } }
    let env = try Environment.open(path: dir + "/data.mdb")
    let kept = try env.write { txn in try txn.createDatabase(named: "kept") }
    try env.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: kept) }
}

private func putInReadTransaction(in dir: String) throws {
    let env = try Environment.open(path: dir + "/data.mdb")
    let db = try env.createDatabase(named: "t")
    try env.read { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: db) }
}

private final class HandleBox {
    var database: Database?
}

/// Opens a database through the environment while this thread's write creates another.
private func openThroughTheEnvironmentInsideACreatingWrite(in path: String) throws {
    let env = try Environment.open(path: path + "/clash.mdb")
    _ = try env.createDatabase(named: "existing")
    try env.write { txn in
        _ = try txn.createDatabase(named: "new")
        // A second transaction of this thread would be handed the new handle's slot.
        _ = try env.database(named: "never-opened")
    }
}

/// An `UnsafeTransaction` (or a write view of one) kept past the end of its transaction stops
/// the process at its next use, naming the operation, instead of handing LMDB a freed handle.
@Suite struct UnsafeTransactionAfterTheEndTests {
    enum Use: String, Codable, CaseIterable {
        case getAfterCommit, getAfterAbort, getAfterReset, cursorAfterCommit, putAfterCommit, statisticsAfterAbort
    }

    @Test(arguments: Use.allCases)
    func usingItAfterItsTransactionEndedStops(_ use: Use) async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [path = dir.path as String, use] in
                try useAfterTheEnd(use, in: path)
            }
            let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            let operation = switch use {
            case .getAfterCommit, .getAfterAbort, .getAfterReset: "mdb_get"
            case .cursorAfterCommit: "mdb_cursor_open"
            case .putAfterCommit: "mdb_put"
            case .statisticsAfterAbort: "mdb_stat"
            }
            let when = use == .getAfterReset ? "after its read transaction was reset" : "after its transaction ended"
            #expect(stderr.contains("LMDBKit: \(operation) on a transaction \(when)"), "\(stderr)")
            #expect(!stderr.contains("used it"), "\(stderr)")
        }
    }

    @Test func theSameUsesInsideTheTransactionRun() async throws {
        // The control: the same steps before the end succeed.
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.path + "/data.mdb")
            let db = try env.createDatabase(named: "t")
            try env.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: db) }
            let txn = try Transaction(environment: env, readOnly: false)
            let unsafe = txn.unsafe
            let found = try Array("k".utf8).withUnsafeBytes { try unsafe.get(db.dbi, key: $0).map(Array.init) }
            #expect(found == Array("v".utf8))
            #expect(try unsafe.statistics(db.dbi).entries == 1)
            _ = try UnsafeCursor(transaction: unsafe, dbi: db.dbi)
            try Array("k2".utf8).withUnsafeBytes { k in try Array("w".utf8).withUnsafeBytes { _ = try txn.unsafeWrite.put(db.dbi, key: k, value: $0) } }
            try txn.commit()
        }
    }
}

private func useAfterTheEnd(_ use: UnsafeTransactionAfterTheEndTests.Use, in dir: String) throws {
    let env = try Environment.open(path: dir + "/data.mdb")
    let db = try env.createDatabase(named: "t")
    try env.write { txn in try txn.put(Array("v".utf8), forKey: Array("k".utf8), in: db) }
    let key = Array("k".utf8)
    switch use {
    case .getAfterCommit, .cursorAfterCommit, .putAfterCommit:
        let txn = try Transaction(environment: env, readOnly: false)
        let unsafe = txn.unsafe
        let write = txn.unsafeWrite
        try txn.commit()
        switch use {
        case .getAfterCommit: _ = try key.withUnsafeBytes { try unsafe.get(db.dbi, key: $0) }
        case .cursorAfterCommit: _ = try UnsafeCursor(transaction: unsafe, dbi: db.dbi)
        default: _ = try key.withUnsafeBytes { k in try key.withUnsafeBytes { try write.put(db.dbi, key: k, value: $0) } }
        }
    case .getAfterAbort, .statisticsAfterAbort:
        let txn = try Transaction(environment: env, readOnly: true)
        let unsafe = txn.unsafe
        txn.abort()
        if use == .getAfterAbort {
            _ = try key.withUnsafeBytes { try unsafe.get(db.dbi, key: $0) }
        } else {
            _ = try unsafe.statistics(db.dbi)
        }
    case .getAfterReset:
        let txn = try Transaction(environment: env, readOnly: true)
        let unsafe = txn.unsafe
        txn.reset()
        _ = try key.withUnsafeBytes { try unsafe.get(db.dbi, key: $0) }
    }
    FileHandle.standardError.write(Data("used it\n".utf8))
}
