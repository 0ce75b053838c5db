import Foundation
import LMDBKit
import TestSupport
import Testing

/// The memory map grows by itself up to `maximumMapSize`, and refuses cleanly past it.
@Suite struct MapGrowthTests {
    static let megabyte = 1 << 20

    /// One megabyte of varied bytes, the base of every large value.
    static let base = pattern(0xB16, count: megabyte)

    /// The `count`-byte value stored under index `i`: `base` rotated by an amount that depends
    /// on `i`, so that any two values differ on every page.
    static func largeValue(_ i: Int, count: Int = megabyte) -> [UInt8] {
        let shift = (i &* 4099) % count
        let source = count == megabyte ? base : Array(base.prefix(count))
        return Array(source[shift...] + source[..<shift])
    }

    /// Whether `stored` holds exactly `expected`, compared without copying the map.
    static func same(_ stored: UnsafeRawBufferPointer, _ expected: [UInt8]) -> Bool {
        stored.count == expected.count
            && expected.withUnsafeBytes { memcmp($0.baseAddress!, stored.baseAddress!, stored.count) == 0 }
    }

    @Test func manyWritesGrowTheMapTo100Megabytes() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) {
                $0.mapSize = 64 * 1024
                $0.maximumMapSize = 1 << 30
                $0.durability = .noSync
            }
            #expect(env.mapSize < Self.megabyte)
            let db = try env.createDatabase(named: "blobs")
            for i in 0..<100 {
                let value = Self.largeValue(i)
                try env.write { txn in try txn.put(value, forKey: key(i), in: db) }
            }
            #expect(env.mapSize >= 100 * Self.megabyte)
            #expect(env.mapSize <= 1 << 30)
            #expect(env.info().mapSize == env.mapSize)
            try env.read { txn in
                #expect(try txn.statistics(of: db).entries == 100)
                for i in 0..<100 {
                    let intact = try txn.get(key(i), in: db) { Self.same($0, Self.largeValue(i)) }
                    #expect(intact == true, "value \(i)")
                }
            }
            #expect(env.activeTransactionCount == 0)
        }
    }

    @Test func oneWriteLargerThanTheInitialMapCommits() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            let count = 24
            do {
                let env = try openEnvironment(at: path) {
                    $0.mapSize = 64 * 1024
                    $0.maximumMapSize = 1 << 30
                }
                let db = try env.createDatabase(named: "blobs")
                let values = (0..<count).map { Self.largeValue($0) }
                var runs = 0
                try env.write { txn in
                    runs += 1
                    for (i, value) in values.enumerated() { try txn.put(value, forKey: key(i), in: db) }
                }
                // The body ran again after each growth, and the last run committed everything.
                #expect(runs > 1)
                #expect(env.mapSize >= count * Self.megabyte)
                #expect(try entryCount(of: db, in: env) == count)
            }
            // The grown file reopens with its size, even with a smaller starting size.
            let env = try openEnvironment(at: path) {
                $0.mapSize = 64 * 1024
                $0.maximumMapSize = 1 << 30
            }
            #expect(env.mapSize >= count * Self.megabyte)
            let db = try #require(try env.database(named: "blobs"))
            try env.read { txn in
                for i in 0..<count {
                    let intact = try txn.get(key(i), in: db) { Self.same($0, Self.largeValue(i)) }
                    #expect(intact == true, "value \(i)")
                }
            }
        }
    }

    @Test func aWritePastTheMaximumThrowsMapFullAndKeepsEarlierData() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) {
                $0.mapSize = 64 * 1024
                $0.maximumMapSize = Self.megabyte
            }
            let db = try env.createDatabase(named: "t")
            for i in 0..<20 { try store(Self.largeValue(i, count: 10_000), key(i), in: db, of: env) }

            var runs = 0
            #expect(throws: LMDBError.mapFull) {
                try env.write { txn in
                    runs += 1
                    try txn.put(bytes("partial"), forKey: bytes("partial"), in: db)
                    try txn.put(Self.largeValue(99, count: 2 * Self.megabyte - 4096), forKey: bytes("huge"), in: db)
                }
            }
            #expect(runs >= 2, "the write was retried after growing the map")
            #expect(env.mapSize == Self.megabyte)
            #expect(env.activeTransactionCount == 0)

            try env.read { txn in
                #expect(try txn.statistics(of: db).entries == 20)
                #expect(try txn.get(bytes("partial"), in: db) { _ in true } == nil)
                for i in 0..<20 {
                    let intact = try txn.get(key(i), in: db) { Self.same($0, Self.largeValue(i, count: 10_000)) }
                    #expect(intact == true)
                }
            }
            // The environment stays usable for writes that fit.
            try store(bytes("small"), bytes("after"), in: db, of: env)
            #expect(try value(bytes("after"), in: db, of: env) == bytes("small"))
        }
    }

    @Test func mapFullIsMatchableInACatchClause() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) {
                $0.mapSize = 64 * 1024
                $0.maximumMapSize = 256 * 1024
            }
            let db = try env.createDatabase(named: "t")
            do {
                try env.write { txn in try txn.put(Self.largeValue(1), forKey: bytes("big"), in: db) }
                Issue.record("a 1 MB value fit in a 256 KB map")
            } catch LMDBError.mapFull {
                // expected
            } catch {
                Issue.record("expected mapFull, got \(error)")
            }
            do {
                try env.write { txn in try txn.put(Self.largeValue(1), forKey: bytes("big"), in: db) }
            } catch let error as LMDBError {
                #expect(error == .mapFull)
                #expect(error.description.contains(dir.path), "\(error)")
            }
        }
    }

    @Test func aPoisonedTransactionKeepsReportingMapFull() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) {
                $0.mapSize = 64 * 1024
                $0.maximumMapSize = Self.megabyte
            }
            let db = try env.createDatabase(named: "t")
            let other = try env.createDatabase(named: "other")
            try store(bytes("kept"), bytes("k"), in: db, of: env)

            var runs = 0
            var later: [String: Bool] = [:]
            #expect(throws: LMDBError.mapFull) {
                try env.write { txn in
                    runs += 1
                    do {
                        try txn.put(Self.largeValue(7, count: 2 * Self.megabyte), forKey: bytes("huge"), in: db)
                        Issue.record("a 2 MB value fit in a 1 MB map")
                    } catch LMDBError.mapFull {
                        // Swallowed: the transaction is unusable all the same.
                    }
                    func refused(_ name: String, _ operation: () throws -> Void) {
                        do {
                            try operation()
                            later[name] = false
                        } catch {
                            later[name] = (error as? LMDBError) == .mapFull
                        }
                    }
                    refused("put") { try txn.put(bytes("v"), forKey: bytes("small"), in: db) }
                    refused("put elsewhere") { try txn.put(bytes("v"), forKey: bytes("small"), in: other) }
                    refused("get") { _ = try txn.get(bytes("k"), in: db) { _ in true } }
                    refused("delete") { _ = try txn.delete(bytes("k"), in: db) }
                    refused("empty") { try txn.empty(other) }
                    refused("statistics") { _ = try txn.statistics(of: db) }
                    refused("cursor") { _ = try txn.withCursor(on: db) { cursor in try cursor.first() } }
                    refused("forEach") { try txn.forEach(in: db) { _, _ in true } }
                    refused("createDatabase") { _ = try txn.createDatabase(named: "new") }
                }
            }
            #expect(runs >= 1)
            for (operation, threwMapFull) in later.sorted(by: { $0.key < $1.key }) {
                #expect(threwMapFull, "\(operation) after mapFull")
            }
            #expect(later.count == 9)
            #expect(env.activeTransactionCount == 0)
            #expect(try value(bytes("k"), in: db, of: env) == bytes("kept"))
            #expect(try value(bytes("small"), in: db, of: env) == nil)
            #expect(try env.database(named: "new") == nil)
        }
    }

    @Test func aCursorPutThatFillsTheMapPoisonsTheTransaction() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) {
                $0.mapSize = 64 * 1024
                $0.maximumMapSize = 256 * 1024
            }
            let db = try env.createDatabase(named: "t")
            try store(bytes("kept"), bytes("k"), in: db, of: env)
            var afterwards: [Bool] = []
            #expect(throws: LMDBError.mapFull) {
                try env.write { txn in
                    try txn.withCursor(on: db) { cursor in
                        let huge = Self.largeValue(5, count: 512 * 1024)
                        let first = Result {
                            try bytes("huge").withUnsafeBytes { k in
                                try huge.withUnsafeBytes { v in try cursor.put(v, forKey: k) }
                            }
                        }
                        afterwards.append(Self.isMapFull(first))
                        afterwards.append(Self.isMapFull(Result { try cursor.first() }))
                        afterwards.append(Self.isMapFull(Result { try cursor.deleteCurrent() }))
                        afterwards.append(Self.isMapFull(Result {
                            try bytes("k").withUnsafeBytes { k in try cursor.put(k, forKey: k) }
                        }))
                    }
                    afterwards.append(Self.isMapFull(Result { try txn.put(bytes("v"), forKey: bytes("k2"), in: db) }))
                }
            }
            #expect(!afterwards.isEmpty)
            #expect(afterwards.allSatisfy { $0 }, "\(afterwards)")
            #expect(try value(bytes("k"), in: db, of: env) == bytes("kept"))
            #expect(try entryCount(of: db, in: env) == 1)
        }
    }

    static func isMapFull<T>(_ result: Result<T, any Error>) -> Bool {
        if case .failure(let error) = result { return error as? LMDBError == .mapFull }
        return false
    }

    @Test func anExplicitCommitOfAPoisonedTransactionThrowsMapFull() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) {
                $0.mapSize = 64 * 1024
                $0.maximumMapSize = 64 * 1024
            }
            let db = try env.createDatabase(named: "t")
            let txn = try Transaction(environment: env, readOnly: false)
            try txn.put(bytes("v"), forKey: bytes("before"), in: db)
            #expect(throws: LMDBError.mapFull) {
                try txn.put(Self.largeValue(3, count: 200_000), forKey: bytes("big"), in: db)
            }
            do {
                try txn.commit()
                Issue.record("a poisoned transaction committed")
            } catch {
                #expect(error as? LMDBError == .mapFull)
            }
            #expect(env.activeTransactionCount == 0)
            #expect(try value(bytes("before"), in: db, of: env) == nil)
            try store(bytes("w"), bytes("after"), in: db, of: env)
            #expect(try value(bytes("after"), in: db, of: env) == bytes("w"))
        }
    }
}
