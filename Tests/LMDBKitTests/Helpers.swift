import Foundation
import LMDBKit

/// The UTF-8 bytes of `string`.
func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

/// `bytes` decoded as UTF-8.
func string(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }

/// A key that sorts in numeric order: `prefix` followed by `n` zero-padded to six digits.
func key(_ n: Int, prefix: String = "k") -> [UInt8] {
    let digits = String(n)
    return bytes(prefix + String(repeating: "0", count: max(0, 6 - digits.count)) + digits)
}

/// `count` bytes derived from `seed`, so every value is distinct and checkable.
func pattern(_ seed: Int, count: Int) -> [UInt8] {
    var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
}

extension URL {
    /// The path of the file `name` in this directory.
    func file(_ name: String = "data.mdb") -> String { appendingPathComponent(name).path }
}

/// Opens the environment at `path` with the options `configure` sets.
func openEnvironment(
    at path: String, _ configure: (inout Environment.Options) -> Void = { _ in }
) throws -> Environment {
    var options = Environment.Options()
    configure(&options)
    return try Environment.open(path: path, options: options)
}

/// The value stored under `key` in `db`, as a byte array, read in a fresh read transaction.
func value(_ key: [UInt8], in db: Database, of env: Environment) throws -> [UInt8]? {
    try env.read { txn in try txn.get(key, in: db) { Array($0) } }
}

/// Stores `value` under `key` in `db` in a write transaction of its own.
func store(_ value: [UInt8], _ key: [UInt8], in db: Database, of env: Environment) throws {
    try env.write { txn in try txn.put(value, forKey: key, in: db) }
}

/// The number of entries in `db`.
func entryCount(of db: Database, in env: Environment) throws -> Int {
    try env.read { txn in try txn.statistics(of: db).entries }
}

/// An error tests throw from inside transactions.
struct TestError: Error, Equatable {
    var id: Int
}
