import Foundation
import LMDBKit
import TestSupport
import Testing

/// Scoped reads and writes, commit and rollback, and the operations of a transaction.
@Suite struct TransactionTests {
    @Test func aWriteCommitsAndAReadSeesIt() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            let returned = try env.write { txn in
                try txn.put(bytes("Ada"), forKey: bytes("1"), in: db)
                try txn.put(bytes("Grace"), forKey: bytes("2"), in: db)
                return 42
            }
            #expect(returned == 42)
            let names = try env.read { txn in
                [try txn.get(bytes("1"), in: db, string), try txn.get(bytes("2"), in: db, string)]
            }
            #expect(names == ["Ada", "Grace"])
            #expect(try value(bytes("3"), in: db, of: env) == nil)
            #expect(env.activeTransactionCount == 0)
        }
    }

    @Test func aWriteSeesItsOwnChangesBeforeCommitButOthersDoNot() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try store(bytes("old"), bytes("k"), in: db, of: env)
            try env.write { txn in
                try txn.put(bytes("new"), forKey: bytes("k"), in: db)
                #expect(try txn.get(bytes("k"), in: db, string) == "new")
                // A read transaction begun now still sees the last commit.
                #expect(try value(bytes("k"), in: db, of: env) == bytes("old"))
            }
            #expect(try value(bytes("k"), in: db, of: env) == bytes("new"))
        }
    }

    @Test func aThrowingWriteLeavesNothingAndRethrows() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try store(bytes("old"), bytes("k"), in: db, of: env)
            var runs = 0
            #expect(throws: TestError(id: 7)) {
                try env.write { txn in
                    runs += 1
                    try txn.put(bytes("new"), forKey: bytes("k"), in: db)
                    try txn.put(bytes("more"), forKey: bytes("other"), in: db)
                    _ = try txn.delete(bytes("k"), in: db)
                    throw TestError(id: 7)
                }
            }
            #expect(runs == 1)
            #expect(try value(bytes("k"), in: db, of: env) == bytes("old"))
            #expect(try value(bytes("other"), in: db, of: env) == nil)
            #expect(try entryCount(of: db, in: env) == 1)
            #expect(env.activeTransactionCount == 0)
            // The writer lock was released: the next write goes through.
            try store(bytes("next"), bytes("k"), in: db, of: env)
            #expect(try value(bytes("k"), in: db, of: env) == bytes("next"))
        }
    }

    @Test func anErrorThrownFromAReadIsRethrown() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            #expect(throws: TestError(id: 3)) {
                try env.read { _ in throw TestError(id: 3) }
            }
            #expect(env.activeTransactionCount == 0)
            #expect(env.readerSlotsInUse() == 0)
        }
    }

    /// `append` with a key that does not sort last is refused, and the transaction goes on.
    @Test func putWithAppendRefusesAKeyOutOfOrderAndTheTransactionGoesOn() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try env.write { txn in
                try txn.put(bytes("1"), forKey: bytes("b"), in: db, flags: .append)
                try txn.put(bytes("2"), forKey: bytes("c"), in: db, flags: .append)
                #expect(throws: LMDBError.keyExists) { try txn.put(bytes("x"), forKey: bytes("a"), in: db, flags: .append) }
                #expect(throws: LMDBError.keyExists) { try txn.put(bytes("x"), forKey: bytes("c"), in: db, flags: .append) }
                try txn.put(bytes("0"), forKey: bytes("a"), in: db)
                try txn.put(bytes("3"), forKey: bytes("d"), in: db, flags: .append)
            }
            #expect(try value(bytes("a"), in: db, of: env) == bytes("0"))
            #expect(try value(bytes("c"), in: db, of: env) == bytes("2"))
            #expect(try value(bytes("d"), in: db, of: env) == bytes("3"))
        }
    }

    @Test func putWithNoOverwriteRefusesAnExistingKey() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try env.write { txn in
                try txn.put(bytes("first"), forKey: bytes("k"), in: db, flags: .noOverwrite)
                #expect(throws: LMDBError.keyExists) {
                    try txn.put(bytes("second"), forKey: bytes("k"), in: db, flags: .noOverwrite)
                }
                // Not fatal to the transaction: it goes on and commits.
                try txn.put(bytes("x"), forKey: bytes("other"), in: db, flags: .noOverwrite)
            }
            #expect(try value(bytes("k"), in: db, of: env) == bytes("first"))
            #expect(try value(bytes("other"), in: db, of: env) == bytes("x"))
            do {
                try env.write { txn in
                    try txn.put(bytes("third"), forKey: bytes("k"), in: db, flags: .noOverwrite)
                }
                Issue.record("put with .noOverwrite replaced an existing value")
            } catch LMDBError.keyExists {
                // expected
            }
            // Without the flag the value is replaced.
            try store(bytes("fourth"), bytes("k"), in: db, of: env)
            #expect(try value(bytes("k"), in: db, of: env) == bytes("fourth"))
        }
    }

    @Test func deleteReportsWhetherTheKeyExisted() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try store(bytes("v"), bytes("k"), in: db, of: env)
            let results = try env.write { txn in
                [try txn.delete(bytes("k"), in: db), try txn.delete(bytes("k"), in: db),
                 try txn.delete(bytes("never"), in: db)]
            }
            #expect(results == [true, false, false])
            #expect(try value(bytes("k"), in: db, of: env) == nil)
        }
    }

    @Test func statisticsCountEntriesAndEmptyRemovesThem() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            let other = try env.createDatabase(named: "other")
            #expect(try entryCount(of: db, in: env) == 0)
            try env.write { txn in
                for i in 0..<500 { try txn.put(pattern(i, count: 40), forKey: key(i), in: db) }
                try txn.put(bytes("v"), forKey: bytes("k"), in: other)
                #expect(try txn.statistics(of: db).entries == 500)
            }
            let stats = try env.read { txn in try txn.statistics(of: db) }
            #expect(stats.entries == 500)
            #expect(stats.depth >= 2)
            #expect(stats.leafPages > 1)
            #expect(stats.branchPages >= 1)
            #expect(stats.overflowPages == 0)

            try env.write { txn in try txn.empty(db) }
            #expect(try entryCount(of: db, in: env) == 0)
            #expect(try value(key(1), in: db, of: env) == nil)
            // The database itself is kept, and other databases are untouched.
            #expect(try env.database(named: "t") == db)
            #expect(try entryCount(of: other, in: env) == 1)
            try store(bytes("again"), key(1), in: db, of: env)
            #expect(try entryCount(of: db, in: env) == 1)
        }
    }

    @Test func emptyInAnAbortedWriteKeepsTheEntries() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try env.write { txn in
                for i in 0..<10 { try txn.put(bytes("v"), forKey: key(i), in: db) }
            }
            #expect(throws: TestError.self) {
                try env.write { txn in
                    try txn.empty(db)
                    #expect(try txn.statistics(of: db).entries == 0)
                    throw TestError(id: 0)
                }
            }
            #expect(try entryCount(of: db, in: env) == 10)
        }
    }

    @Test func largeValuesUseOverflowPagesAndReadBackIntact() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            let big = pattern(99, count: 300_000)
            try store(big, bytes("big"), in: db, of: env)
            #expect(try value(bytes("big"), in: db, of: env) == big)
            let stats = try env.read { txn in try txn.statistics(of: db) }
            #expect(stats.overflowPages >= 300_000 / 4096)
            // An empty value is a value.
            try store([], bytes("empty"), in: db, of: env)
            #expect(try value(bytes("empty"), in: db, of: env) == [])
        }
    }

    @Test func aDatabaseCreatedInAnAbortedWriteDoesNotExist() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            #expect(throws: TestError.self) {
                try env.write { txn in
                    let db = try txn.createDatabase(named: "ghost")
                    try txn.put(bytes("v"), forKey: bytes("k"), in: db)
                    #expect(try txn.get(bytes("k"), in: db, string) == "v")
                    throw TestError(id: 1)
                }
            }
            #expect(try env.database(named: "ghost") == nil)
            // The name is free for a database that does get committed.
            let db = try env.write { txn in
                let db = try txn.createDatabase(named: "ghost")
                #expect(try txn.createDatabase(named: "ghost") == db)
                try txn.put(bytes("real"), forKey: bytes("k"), in: db)
                return db
            }
            #expect(try env.database(named: "ghost") == db)
            #expect(try value(bytes("k"), in: db, of: env) == bytes("real"))
        }
    }

    @Test func aDatabaseCreatedInACommittedWritePersists() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            do {
                let env = try Environment.open(path: path)
                let db = try env.write { txn in
                    let db = try txn.createDatabase(named: "kept")
                    try txn.put(bytes("v"), forKey: bytes("k"), in: db)
                    return db
                }
                #expect(try env.database(named: "kept") == db)
                #expect(try env.createDatabase(named: "kept") == db)
            }
            let env = try Environment.open(path: path)
            let db = try #require(try env.database(named: "kept"))
            #expect(try value(bytes("k"), in: db, of: env) == bytes("v"))
        }
    }

    @Test func anUncommittedDatabaseIsInvisibleToOtherTransactions() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let main = Database.main
            try env.write { txn in
                _ = try txn.createDatabase(named: "pending")
                // lmdb.h: the handle is private to this transaction until it commits.
                let listed = try env.read { read in try read.get(bytes("pending"), in: main) { _ in true } }
                #expect(listed == nil)
            }
            let listed = try env.read { txn in try txn.get(bytes("pending"), in: main) { _ in true } }
            #expect(listed == true)
        }
    }

    @Test func aDatabaseIsPublishedToTheEnvironmentOnlyWhenItsWriteCommits() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let created = try env.write { txn in
                let db = try txn.createDatabase(named: "pending")
                #expect(try txn.createDatabase(named: "pending") == db)
                // Existing databases are opened through the write while it creates others.
                #expect(try txn.openDatabase(named: "pending") == db)
                #expect(try txn.openDatabase(named: "absent") == nil)
                try txn.put(bytes("v"), forKey: bytes("k"), in: db)
                return db
            }
            #expect(try env.database(named: "pending") == created)
            #expect(try env.createDatabase(named: "pending") == created)
            #expect(try value(bytes("k"), in: created, of: env) == bytes("v"))
        }
    }

    @Test func theMainDatabaseListsNamedDatabases() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            _ = try env.createDatabase(named: "alpha")
            _ = try env.createDatabase(named: "beta")
            var names: [String] = []
            try env.read { txn in
                try txn.forEach(in: .main) { key, _ in
                    names.append(string(key))
                    return true
                }
            }
            #expect(names == ["alpha", "beta"])
            #expect(try entryCount(of: .main, in: env) == 2)
        }
    }

    @Test func getLendsTheValueToTheClosure() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try store([1, 2, 3, 4], bytes("k"), in: db, of: env)
            let sum = try env.read { txn in
                try txn.get(bytes("k"), in: db) { $0.reduce(0) { $0 + Int($1) } }
            }
            #expect(sum == 10)
            #expect(throws: TestError(id: 5)) {
                try env.read { txn in
                    _ = try txn.get(bytes("k"), in: db) { _ -> Int in throw TestError(id: 5) }
                }
            }
            // Keys can be any contiguous bytes.
            let fromData = try env.read { txn in try txn.get(Data("k".utf8), in: db) { Array($0) } }
            #expect(fromData == [1, 2, 3, 4])
        }
    }

    @Test func transactionIDsIncreaseWithEachCommit() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            let first = try env.read { txn in txn.id }
            try store(bytes("1"), bytes("k"), in: db, of: env)
            let second = try env.read { txn in txn.id }
            #expect(second == first + 1)
            // A write transaction works on the next ID, which its commit publishes.
            let inWrite = try env.write { txn in
                try txn.put(bytes("2"), forKey: bytes("k"), in: db)
                return txn.id
            }
            #expect(inWrite == second + 1)
            #expect(try env.read { txn in txn.id } == inWrite)
            // A write that changes nothing commits no new snapshot.
            try env.write { _ in }
            #expect(try env.read { txn in txn.id } == inWrite)
            // An aborted write leaves the ID as it was.
            _ = try? env.write { _ in throw TestError(id: 0) }
            #expect(try env.read { txn in txn.id } == inWrite)
        }
    }

    @Test func aReadTransactionBegunBeforeAWriteDoesNotSeeIt() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try store(bytes("old"), bytes("k"), in: db, of: env)

            let snapshot = try Transaction(environment: env, readOnly: true)
            let isReadOnly = snapshot.isReadOnly
            #expect(isReadOnly)
            let snapshotID = snapshot.id
            #expect(env.activeTransactionCount == 1)
            #expect(env.readerSlotsInUse() == 1)

            try env.write { txn in
                try txn.put(bytes("new"), forKey: bytes("k"), in: db)
                try txn.put(bytes("added"), forKey: bytes("k2"), in: db)
            }
            #expect(try snapshot.get(bytes("k"), in: db, string) == "old")
            #expect(try snapshot.get(bytes("k2"), in: db, string) == nil)
            #expect(try snapshot.statistics(of: db).entries == 1)
            #expect(snapshot.id == snapshotID)

            snapshot.reset()
            let isReset = snapshot.isReset
            #expect(isReset)
            #expect(env.activeTransactionCount == 0)
            // A reset transaction keeps its reader slot for the renew.
            #expect(env.readerSlotsInUse() == 1)
            try snapshot.renew()
            let isRenewedReset = snapshot.isReset
            #expect(!isRenewedReset)
            #expect(env.activeTransactionCount == 1)
            #expect(snapshot.id == snapshotID + 1)
            #expect(try snapshot.get(bytes("k"), in: db, string) == "new")
            #expect(try snapshot.get(bytes("k2"), in: db, string) == "added")

            // Renewing a live snapshot or resetting a reset one changes nothing.
            try snapshot.renew()
            #expect(snapshot.id == snapshotID + 1)
            snapshot.abort()
            #expect(env.activeTransactionCount == 0)
            #expect(env.readerSlotsInUse() == 0)
        }
    }

    @Test func aResetTransactionCanBeCommittedOrDropped() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            do {
                let txn = try Transaction(environment: env, readOnly: true)
                txn.reset()
                txn.reset()
                #expect(env.activeTransactionCount == 0)
                try txn.commit()
            }
            #expect(env.readerSlotsInUse() == 0)
            do {
                let txn = try Transaction(environment: env, readOnly: true)
                txn.reset()
                _ = txn  // dropped without commit or abort
            }
            #expect(env.activeTransactionCount == 0)
            #expect(env.readerSlotsInUse() == 0)
        }
    }

    @Test func droppingAnUnfinishedWriteTransactionAbortsIt() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            do {
                let txn = try Transaction(environment: env, readOnly: false)
                try txn.put(bytes("v"), forKey: bytes("k"), in: db)
                #expect(env.activeTransactionCount == 1)
            }
            #expect(env.activeTransactionCount == 0)
            #expect(try value(bytes("k"), in: db, of: env) == nil)
            // The writer lock was released.
            try store(bytes("w"), bytes("k"), in: db, of: env)
            #expect(try value(bytes("k"), in: db, of: env) == bytes("w"))
        }
    }

    @Test func anExplicitTransactionCommits() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let txn = try Transaction(environment: env, readOnly: false)
            let db = try txn.createDatabase(named: "explicit")
            try txn.put(bytes("v"), forKey: bytes("k"), in: db)
            try txn.commit()
            #expect(try env.database(named: "explicit") == db)
            #expect(try value(bytes("k"), in: db, of: env) == bytes("v"))
            #expect(env.activeTransactionCount == 0)
        }
    }

    @Test func aReadTransactionMayEndOnAnotherThread() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try store(bytes("v"), bytes("k"), in: db, of: env)
            let txn = try Transaction(environment: env, readOnly: true)
            let box = TransactionBox(txn)
            let group = DispatchGroup()
            let result = Locked<String?>(nil)
            group.enter()
            Thread {
                let txn = box.take()
                result.value = try? txn.get(bytes("k"), in: db, string) ?? nil
                txn.abort()  // the last reference to the environment this thread held
                group.leave()
            }.start()
            #expect(group.wait(timeout: .now() + eventTimeout) == .success)
            #expect(result.value == "v")
            #expect(env.readerSlotsInUse() == 0)
            #expect(env.activeTransactionCount == 0)
        }
    }
}

/// Hands a transaction to another thread once.
final class TransactionBox: @unchecked Sendable {
    // @unchecked Sendable: the transaction is taken exactly once, by the thread it is handed to.
    private var transaction: Transaction?
    init(_ transaction: consuming Transaction) { self.transaction = consume transaction }
    func take() -> Transaction { transaction.take()! }
}

/// A value shared between threads under a lock.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
    func update<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&stored) } }
}
