import Foundation
import LMDBKit
import TestSupport
import Testing

/// Opening, using and closing environments leaks neither file descriptors nor reader slots.
@Suite struct ResourceTests {
    @Test func tenThousandOpenCloseCyclesLeakNoFileDescriptors() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            let cycles = 10_000
            let before = openFileDescriptorCount()
            #expect(before > 0)
            for i in 0..<cycles {
                let env = try openEnvironment(at: path) { $0.durability = .noSync }
                let db = try env.createDatabase(named: "t")
                try env.write { txn in try txn.put(key(i), forKey: bytes("last"), in: db) }
                let stored = try env.read { txn in try txn.get(bytes("last"), in: db) { Array($0) } }
                if stored != key(i) {
                    Issue.record("cycle \(i) read \(String(describing: stored))")
                    break
                }
            }
            #expect(!Environment.isOpen(path: path))
            // Other tests run alongside and open files of their own, so the process-wide count
            // may drift a little; a leak of one descriptor per cycle could not hide in it.
            let after = openFileDescriptorCount()
            #expect(abs(after - before) < 500, "descriptors: \(before) before, \(after) after")
            #expect(descriptors(under: dir) == 0)

            let env = try Environment.open(path: path)
            let db = try #require(try env.database(named: "t"))
            #expect(try value(bytes("last"), in: db, of: env) == key(cycles - 1))
            #expect(env.info().lastTransactionID >= cycles)
        }
    }

    @Test func anOpenEnvironmentHoldsItsFilesOnlyWhileOpen() throws {
        try withTemporaryDirectory { dir in
            do {
                let env = try Environment.open(path: dir.file())
                _ = try env.createDatabase(named: "t")
                // The data file and the lock file.
                #expect(descriptors(under: dir) >= 2)
            }
            #expect(descriptors(under: dir) == 0)
        }
    }

    @Test func readerSlotsAreReleasedWhenReadsEnd() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) { $0.maxReaders = 8 }
            let db = try env.createDatabase(named: "t")
            try store(bytes("v"), bytes("k"), in: db, of: env)
            #expect(env.readerSlotsInUse() == 0)
            var found = 0
            for _ in 0..<2_000 {
                // Far more reads than slots: each must give its slot back.
                found += try env.read { txn in
                    #expect(env.readerSlotsInUse() == 1)
                    return try txn.get(bytes("k"), in: db) { _ in 1 } ?? 0
                }
            }
            #expect(found == 2_000)
            #expect(env.readerSlotsInUse() == 0)

            // Reads that throw give theirs back too.
            for i in 0..<20 {
                #expect(throws: TestError(id: i)) { try env.read { _ in throw TestError(id: i) } }
            }
            #expect(env.readerSlotsInUse() == 0)

            // Nested reads on one thread each hold a slot until they end.
            try env.read { _ in
                try env.read { _ in
                    #expect(env.readerSlotsInUse() == 2)
                }
                #expect(env.readerSlotsInUse() == 1)
            }
            #expect(env.readerSlotsInUse() == 0)
            #expect(env.activeTransactionCount == 0)
            #expect(try env.clearStaleReaders() == 0)
        }
    }

    @Test func readsOnManyThreadsReleaseTheirSlots() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) { $0.maxReaders = 16 }
            let db = try env.createDatabase(named: "t")
            try store(bytes("v"), bytes("k"), in: db, of: env)
            let failures = Locked(0)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                for _ in 0..<250 {
                    let ok = (try? env.read { txn in try txn.get(bytes("k"), in: db) { $0.count == 1 } }) ?? nil
                    if ok != true { failures.update { $0 += 1 } }
                }
            }
            #expect(failures.value == 0)
            #expect(env.readerSlotsInUse() == 0)
            #expect(env.activeTransactionCount == 0)
        }
    }
}
