import Foundation
import LMDBKit
import TestSupport
import Testing

/// LMDBKit's comparator of keys: the order of LMDB's default one (bytes as unsigned, a prefix
/// first), which every file must keep so that other programs read it the same.
@Suite struct KeyOrderTests {
    /// Bytes where a signed comparison, a word read in the wrong byte order or a length rule
    /// would go wrong: the extremes and both sides of the sign bit.
    static let alphabet: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]

    static func randomKey(_ g: inout SeededGenerator, maxLength: Int = 24) -> [UInt8] {
        (0..<Int.random(in: 0...maxLength, using: &g)).map { _ in alphabet.randomElement(using: &g)! }
    }

    /// The default order: -1, 0 or 1.
    static func reference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a == b ? 0 : a.lexicographicallyPrecedes(b) ? -1 : 1
    }

    @Test func theComparatorOrdersAsLMDBsDefault() {
        let seed: UInt64 = 20_261_128
        var g = SeededGenerator(state: seed)
        for _ in 0..<50_000 {
            let a = Self.randomKey(&g)
            // b: a itself, a prefix of it, a longer key starting with it, or a with one byte changed.
            var b: [UInt8]
            switch Int.random(in: 0..<5, using: &g) {
            case 0: b = a
            case 1: b = Array(a.prefix(Int.random(in: 0...a.count, using: &g)))
            case 2: b = a + Self.randomKey(&g, maxLength: 10)
            case 3:
                b = a
                if !b.isEmpty { b[Int.random(in: 0..<b.count, using: &g)] = Self.alphabet.randomElement(using: &g)! }
            default: b = Self.randomKey(&g)
            }
            let answer = a.withUnsafeBytes { a in b.withUnsafeBytes { b in compareKeys(a, b).signum() } }
            #expect(answer == Self.reference(a, b), "seed \(seed): \(a) vs \(b)")
            if answer != Self.reference(a, b) { return }
        }
    }

    /// Keys and the values of a `duplicateSort` database, stored in random order, come back in
    /// byte order: the comparator LMDBKit gives its databases agrees with LMDB's on whole files.
    @Test func keysAndDuplicateValuesComeBackInByteOrder() throws {
        try withTemporaryDirectory { dir in
            let seed: UInt64 = 7
            var g = SeededGenerator(state: seed)
            var pairs: [([UInt8], [UInt8])] = []
            for _ in 0..<3_000 {
                var key = Self.randomKey(&g, maxLength: 30)
                if key.isEmpty { key = [0] }  // LMDB refuses empty keys
                var value = Self.randomKey(&g, maxLength: 20)
                if value.isEmpty { value = [0xFF] }
                pairs.append((key, value))
            }
            let env = try Environment.open(path: dir.file())
            let plain = try env.createDatabase(named: "plain")
            let sorted = try env.createDatabase(named: "sorted", flags: .duplicateSort)
            try env.write { txn in
                for (key, value) in pairs {
                    try txn.put(value, forKey: key, in: plain)
                    try txn.put(value, forKey: key, in: sorted)
                }
            }
            let keys = Set(pairs.map(\.0)).sorted { $0.lexicographicallyPrecedes($1) }
            // Each key's distinct values, in byte order, after the keys in byte order.
            let expectedPairs: [[[UInt8]]] = Dictionary(grouping: pairs, by: \.0).sorted { $0.key.lexicographicallyPrecedes($1.key) }
                .flatMap { key, group in Set(group.map(\.1)).sorted { $0.lexicographicallyPrecedes($1) }.map { [key, $0] } }
            try env.read { txn in
                var seenKeys: [[UInt8]] = []
                try txn.forEach(in: plain, from: nil, to: nil, reverse: false) { key, _ in
                    seenKeys.append(Array(key))
                    return true
                }
                #expect(seenKeys == keys, "seed \(seed)")
                var seenPairs: [[[UInt8]]] = []
                try txn.forEach(in: sorted, from: nil, to: nil, reverse: false) { key, value in
                    seenPairs.append([Array(key), Array(value)])
                    return true
                }
                #expect(seenPairs == expectedPairs, "seed \(seed)")
            }
        }
    }
}
