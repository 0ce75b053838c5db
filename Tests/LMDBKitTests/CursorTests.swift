import Foundation
import LMDBKit
import TestSupport
import Testing

/// Cursor movement, range walks and `duplicateSort` databases.
@Suite struct CursorTests {
    /// The keys every range test stores: "k000010", "k000020", … "k000100".
    static let storedKeys = (1...10).map { key($0 * 10) }

    /// Opens an environment in `dir` holding `storedKeys`, each with its key as value.
    static func populated(in dir: URL) throws -> (Environment, Database) {
        let env = try Environment.open(path: dir.file())
        let db = try env.createDatabase(named: "t")
        try env.write { txn in
            // Stored out of order: the database sorts them.
            for k in storedKeys.reversed() { try txn.put(k, forKey: k, in: db) }
        }
        return (env, db)
    }

    /// The keys `forEach` visits.
    static func walk(
        _ env: Environment, _ db: Database, from lower: [UInt8]?, to upper: [UInt8]?, reverse: Bool,
        limit: Int = .max
    ) throws -> [[UInt8]] {
        try env.read { txn in
            var keys: [[UInt8]] = []
            try txn.forEach(in: db, from: lower, to: upper, reverse: reverse) { key, value in
                #expect(Array(key) == Array(value))
                keys.append(Array(key))
                return keys.count < limit
            }
            return keys
        }
    }

    /// A range bound, named for the test log.
    struct Bound: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]?
        var testDescription: String { name }
    }

    static let bounds: [Bound] = [
        Bound(name: "open", bytes: nil),
        Bound(name: "empty", bytes: []),
        Bound(name: "before all", bytes: LMDBKitTests.bytes("a")),
        Bound(name: "first key", bytes: key(10)),
        Bound(name: "between 10 and 20", bytes: key(15)),
        Bound(name: "prefix of 50", bytes: Array(key(50).dropLast())),
        Bound(name: "50", bytes: key(50)),
        Bound(name: "50 plus a byte", bytes: key(50) + [0]),
        Bound(name: "last key", bytes: key(100)),
        Bound(name: "after all", bytes: LMDBKitTests.bytes("z")),
    ]

    /// Byte-wise order, the default key order of LMDB.
    static func precedes(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.lexicographicallyPrecedes(b) }

    @Test(arguments: bounds, bounds)
    func forEachVisitsExactlyTheKeysInTheRange(lower: Bound, upper: Bound) throws {
        try withTemporaryDirectory { dir in
            let (env, db) = try Self.populated(in: dir)
            let expected = Self.storedKeys.filter { k in
                (lower.bytes.map { !Self.precedes(k, $0) } ?? true)
                    && (upper.bytes.map { Self.precedes(k, $0) } ?? true)
            }
            let forward = try Self.walk(env, db, from: lower.bytes, to: upper.bytes, reverse: false)
            #expect(forward == expected)
            let backward = try Self.walk(env, db, from: lower.bytes, to: upper.bytes, reverse: true)
            #expect(backward == expected.reversed())
        }
    }

    @Test func forEachStopsWhenTheBodyReturnsFalse() throws {
        try withTemporaryDirectory { dir in
            let (env, db) = try Self.populated(in: dir)
            #expect(try Self.walk(env, db, from: nil, to: nil, reverse: false, limit: 3) == [key(10), key(20), key(30)])
            #expect(try Self.walk(env, db, from: nil, to: key(65), reverse: true, limit: 2) == [key(60), key(50)])
        }
    }

    @Test func forEachRethrowsTheBodysError() throws {
        try withTemporaryDirectory { dir in
            let (env, db) = try Self.populated(in: dir)
            var visited = 0
            #expect(throws: TestError(id: 2)) {
                try env.read { txn in
                    try txn.forEach(in: db) { _, _ in
                        visited += 1
                        if visited == 2 { throw TestError(id: 2) }
                        return true
                    }
                }
            }
            #expect(visited == 2)
            #expect(env.readerSlotsInUse() == 0)
        }
    }

    @Test func forEachOverAnEmptyDatabaseVisitsNothing() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "empty")
            for reverse in [false, true] {
                #expect(try Self.walk(env, db, from: nil, to: nil, reverse: reverse).isEmpty)
                #expect(try Self.walk(env, db, from: bytes("a"), to: bytes("z"), reverse: reverse).isEmpty)
            }
        }
    }

    @Test func forEachWithinAWriteSeesItsChanges() throws {
        try withTemporaryDirectory { dir in
            let (env, db) = try Self.populated(in: dir)
            let keys = try env.write { txn in
                try txn.put(key(55), forKey: key(55), in: db)
                _ = try txn.delete(key(60), in: db)
                var keys: [[UInt8]] = []
                try txn.forEach(in: db, from: key(50), to: key(71)) { k, _ in
                    keys.append(Array(k))
                    return true
                }
                return keys
            }
            #expect(keys == [key(50), key(55), key(70)])
        }
    }

    @Test func aCursorMovesInKeyOrder() throws {
        try withTemporaryDirectory { dir in
            let (env, db) = try Self.populated(in: dir)
            try env.read { txn in
                try txn.withCursor(on: db) { cursor in
                    // An unpositioned cursor's next is the first entry.
                    let moved1 = try cursor.next { Array($0.key) }
                    #expect(moved1 == key(10))
                    let moved2 = try cursor.next { Array($0.key) }
                    #expect(moved2 == key(20))
                    let moved3 = try cursor.previous { Array($0.key) }
                    #expect(moved3 == key(10))
                    let moved4 = try cursor.previous()
                    #expect(!moved4)

                    let moved5 = try cursor.first { [Array($0.key), Array($0.value)] }
                    #expect(moved5 == [key(10), key(10)])
                    let moved6 = try cursor.last { Array($0.key) }
                    #expect(moved6 == key(100))
                    let moved7 = try cursor.next()
                    #expect(!moved7)
                    let moved8 = try cursor.previous { Array($0.key) }
                    #expect(moved8 == key(90))
                }
                try txn.withCursor(on: db) { (cursor: borrowing Cursor) throws in
                    // An unpositioned cursor's previous is the last entry.
                    let moved9 = try cursor.previous { Array($0.key) }
                    #expect(moved9 == key(100))
                }
            }
        }
    }

    @Test func aCursorSeeksKeys() throws {
        try withTemporaryDirectory { dir in
            let (env, db) = try Self.populated(in: dir)
            try env.read { txn in
                try txn.withCursor(on: db) { (cursor: borrowing Cursor) throws in
                    func atLeast(_ k: [UInt8]) throws -> [UInt8]? {
                        try k.withUnsafeBytes { try cursor.seek(atLeast: $0) { Array($0.key) } }
                    }
                    func exactly(_ k: [UInt8]) throws -> [UInt8]? {
                        try k.withUnsafeBytes { try cursor.seek(exactly: $0) { Array($0.value) } }
                    }
                    #expect(try atLeast(key(30)) == key(30))
                    #expect(try atLeast(key(31)) == key(40))
                    #expect(try atLeast(bytes("a")) == key(10))
                    #expect(try atLeast(key(101)) == nil)
                    #expect(try exactly(key(70)) == key(70))
                    let moved10 = try cursor.next { Array($0.key) }
                    #expect(moved10 == key(80))
                    #expect(try exactly(key(71)) == nil)
                    #expect(try exactly(Array(key(70).dropLast())) == nil)
                    // After a seek the cursor walks on from there.
                    #expect(try atLeast(key(95)) == key(100))
                    let moved11 = try cursor.previous { Array($0.key) }
                    #expect(moved11 == key(90))
                }
            }
        }
    }

    @Test func withCursorReturnsAndRethrows() throws {
        try withTemporaryDirectory { dir in
            let (env, db) = try Self.populated(in: dir)
            let count = try env.read { txn in
                try txn.withCursor(on: db) { cursor in
                    var count = 0
                    var more = try cursor.first()
                    while more {
                        count += 1
                        more = try cursor.next()
                    }
                    return count
                }
            }
            #expect(count == 10)
            #expect(throws: TestError(id: 4)) {
                try env.read { txn in
                    try txn.withCursor(on: db) { _ in throw TestError(id: 4) }
                }
            }
            #expect(env.readerSlotsInUse() == 0)
        }
    }

    @Test func aCursorPutsAppendsAndDeletes() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try env.write { txn in
                try txn.withCursor(on: db) { cursor in
                    for i in 0..<1000 {
                        let k = key(i)
                        let v = pattern(i, count: 16)
                        try k.withUnsafeBytes { k in
                            try v.withUnsafeBytes { v in try cursor.put(v, forKey: k, flags: .append) }
                        }
                    }
                    // .append refuses a key that does not sort last.
                    #expect(throws: LMDBError.keyExists) {
                        try key(5).withUnsafeBytes { k in try cursor.put(k, forKey: k, flags: .append) }
                    }
                }
            }
            #expect(try entryCount(of: db, in: env) == 1000)
            #expect(try value(key(123), in: db, of: env) == pattern(123, count: 16))

            // Delete every even key through the cursor.
            try env.write { txn in
                try txn.withCursor(on: db) { cursor in
                    var current = try cursor.first { Array($0.key) }
                    var index = 0
                    while let key = current {
                        if index % 2 == 0 {
                            try cursor.deleteCurrent()
                            // After a delete the cursor stands on the entry that followed.
                            current = try key.withUnsafeBytes { try cursor.seek(atLeast: $0) { Array($0.key) } }
                        } else {
                            current = try cursor.next { Array($0.key) }
                        }
                        index += 1
                    }
                }
            }
            #expect(try entryCount(of: db, in: env) == 500)
            #expect(try value(key(122), in: db, of: env) == nil)
            #expect(try value(key(123), in: db, of: env) == pattern(123, count: 16))
        }
    }

    @Test func duplicateSortDatabasesHoldSortedValuesPerKey() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "tags", flags: .duplicateSort)
            try env.write { txn in
                for tag in ["red", "blue", "green"] { try txn.put(bytes(tag), forKey: bytes("apple"), in: db) }
                try txn.put(bytes("yellow"), forKey: bytes("banana"), in: db)
                for tag in ["green", "purple"] { try txn.put(bytes(tag), forKey: bytes("grape"), in: db) }
                // The same pair again is refused with .noDuplicateData, and ignored without it.
                #expect(throws: LMDBError.keyExists) {
                    try txn.put(bytes("red"), forKey: bytes("apple"), in: db, flags: .noDuplicateData)
                }
                try txn.put(bytes("red"), forKey: bytes("apple"), in: db)
            }
            #expect(try entryCount(of: db, in: env) == 6)

            try env.read { txn in
                try txn.withCursor(on: db) { cursor in
                    let apple = try bytes("apple").withUnsafeBytes { try cursor.seek(exactly: $0) { string($0.value) } }
                    #expect(apple == "blue")
                    #expect(try cursor.valueCount() == 3)
                    let moved12 = try cursor.nextValue { string($0.value) }
                    #expect(moved12 == "green")
                    let moved13 = try cursor.nextValue { string($0.value) }
                    #expect(moved13 == "red")
                    let moved14 = try cursor.nextValue { _ in true }
                    #expect(moved14 == nil)

                    let moved15 = try cursor.nextKey { string($0.key) }
                    #expect(moved15 == "banana")
                    #expect(try cursor.valueCount() == 1)
                    let moved16 = try cursor.nextKey { string($0.key) + "=" + string($0.value) }
                    #expect(moved16 == "grape=green")
                    #expect(try cursor.valueCount() == 2)
                    let moved17 = try cursor.nextKey { _ in true }
                    #expect(moved17 == nil)
                }
            }

            // forEach visits every pair, sorted by key then value, in either direction.
            var pairs: [String] = []
            try env.read { txn in
                try txn.forEach(in: db, from: bytes("apple"), to: bytes("grape")) { k, v in
                    pairs.append(string(k) + "=" + string(v))
                    return true
                }
            }
            #expect(pairs == ["apple=blue", "apple=green", "apple=red", "banana=yellow"])
            pairs = []
            try env.read { txn in
                try txn.forEach(in: db, from: bytes("b"), reverse: true) { k, v in
                    pairs.append(string(k) + "=" + string(v))
                    return true
                }
            }
            #expect(pairs == ["grape=purple", "grape=green", "banana=yellow"])

            // Deleting a key deletes all its values.
            #expect(try env.write { txn in try txn.delete(bytes("apple"), in: db) })
            #expect(try entryCount(of: db, in: env) == 3)
        }
    }

    @Test func rangesFollowTheOrderOfAnIntegerKeyDatabase() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "ints", flags: .integerKey)
            func k(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n) { Array($0) } }
            let numbers: [UInt64] = [1, 2, 255, 256, 257, 1000, 65_536, 1 << 40]
            try env.write { txn in
                for n in numbers { try txn.put(k(n), forKey: k(n), in: db) }
            }
            func walk(from lower: UInt64?, to upper: UInt64?, reverse: Bool) throws -> [UInt64] {
                try env.read { txn in
                    var seen: [UInt64] = []
                    try txn.forEach(in: db, from: lower.map(k), to: upper.map(k), reverse: reverse) { key, _ in
                        seen.append(key.loadUnaligned(as: UInt64.self))
                        return true
                    }
                    return seen
                }
            }
            #expect(try walk(from: nil, to: nil, reverse: false) == numbers)
            #expect(try walk(from: 2, to: 1000, reverse: false) == [2, 255, 256, 257])
            #expect(try walk(from: 2, to: 1000, reverse: true) == [257, 256, 255, 2])
            #expect(try walk(from: 256, to: nil, reverse: false) == [256, 257, 1000, 65_536, 1 << 40])
            #expect(try walk(from: nil, to: 65_536, reverse: true) == [1000, 257, 256, 255, 2, 1])
        }
    }

    @Test func rangesFollowTheOrderOfAReverseKeyDatabase() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "reversed", flags: .reverseKey)
            // Compared from the last byte: "ba" < "ca" < "ab" < "bb".
            try env.write { txn in
                for k in ["ab", "ba", "bb", "ca"] { try txn.put(bytes(k), forKey: bytes(k), in: db) }
            }
            func walk(from lower: String?, to upper: String?, reverse: Bool) throws -> [String] {
                try env.read { txn in
                    var seen: [String] = []
                    try txn.forEach(in: db, from: lower.map(bytes), to: upper.map(bytes), reverse: reverse) { k, _ in
                        seen.append(string(k))
                        return true
                    }
                    return seen
                }
            }
            #expect(try walk(from: nil, to: nil, reverse: false) == ["ba", "ca", "ab", "bb"])
            #expect(try walk(from: "ca", to: "bb", reverse: false) == ["ca", "ab"])
            #expect(try walk(from: "ca", to: "bb", reverse: true) == ["ab", "ca"])
            #expect(try walk(from: "aa", to: nil, reverse: false) == ["ba", "ca", "ab", "bb"])
            #expect(try walk(from: nil, to: "cb", reverse: true) == ["bb", "ab", "ca", "ba"])
        }
    }
}
