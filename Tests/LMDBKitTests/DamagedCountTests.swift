import Foundation
import LMDBKit
import TestSupport
import Testing

/// Counts LMDB reads from a database's record in the file, as they are: `size_t`, which Swift
/// reads as `Int`. A damaged record with a count past `Int.max` is an error, not a negative count.
@Suite struct DamagedCountTests {
    /// Where a database's entry count sits in its record (`MDB_db`: pad, flags, depth, then
    /// branch, leaf and overflow page counts, each 4, 2, 2 and 8 bytes).
    static let entriesOffset = 32

    /// Writes `count | 1 << 63` over the entry count of every record stored under `name` in the
    /// file at `path` (a record follows its key in its node; older copies of the page are
    /// patched too). Returns how many were patched.
    static func damageCount(after name: String, in path: String) throws -> Int {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let needle = Data(name.utf8)
        var patched = 0
        var from = bytes.startIndex
        while let found = bytes.range(of: needle, in: from..<bytes.endIndex) {
            let at = found.upperBound + entriesOffset
            let entries = bytes[at..<at + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            withUnsafeBytes(of: (UInt64(1) << 63 | entries).littleEndian) { bytes.replaceSubrange(at..<at + 8, with: $0) }
            patched += 1
            from = found.upperBound
        }
        try bytes.write(to: URL(fileURLWithPath: path))
        return patched
    }

    @Test func aDatabaseRecordCountingPastIntMaxIsAnError() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            do {
                let env = try openEnvironment(at: path)
                let db = try env.createDatabase(named: "database-whose-count-is-damaged")
                for i in 0..<3 { try store(pattern(i, count: 8), key(i), in: db, of: env) }
                #expect(try entryCount(of: db, in: env) == 3)
            }
            #expect(try Self.damageCount(after: "database-whose-count-is-damaged", in: path) >= 1)
            let env = try openEnvironment(at: path)
            let db = try #require(try env.database(named: "database-whose-count-is-damaged"))
            let error = try #require(throws: LMDBError.self) { try entryCount(of: db, in: env) }
            #expect(error == .corrupted && error.description.contains("more than a file can hold"), "\(error)")
            // What the record does not claim is still read.
            #expect(try value(key(1), in: db, of: env) == pattern(1, count: 8))
        }
    }

    @Test func aKeyCountingValuesPastIntMaxIsAnError() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            // Enough values that they move from the key's node to a sub-database of their own,
            // whose record holds their count.
            let values = 2_000
            do {
                let env = try openEnvironment(at: path)
                let db = try env.createDatabase(named: "d", flags: .duplicateSort)
                try env.write { txn in
                    for i in 0..<values { try txn.put(key(i), forKey: bytes("key-with-a-damaged-count"), in: db) }
                }
            }
            #expect(try Self.damageCount(after: "key-with-a-damaged-count", in: path) >= 1)
            let env = try openEnvironment(at: path)
            let db = try #require(try env.database(named: "d"))
            let error = try #require(throws: LMDBError.self) {
                try env.read { txn in
                    try txn.withCursor(on: db) { cursor in
                        let found = try bytes("key-with-a-damaged-count").withUnsafeBytes { try cursor.seek(exactly: $0) { _ in true } }
                        #expect(found == true)
                        return try cursor.valueCount()
                    }
                }
            }
            #expect(error == .corrupted && error.description.contains("more than a file can hold"), "\(error)")
        }
    }
}
