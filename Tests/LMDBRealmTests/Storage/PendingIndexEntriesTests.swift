import CHotPaths
import Foundation
@testable import LMDBRealm
@testable import LMDBRealmStorage
import TestSupport
import Testing

/// The index entries a write buffers: whatever order they are added in, they drain sorted by
/// database, then key, then value, each in `memcmp` order (LMDB's key and duplicate order), so
/// that the puts walk every index B-tree once from left to right.
@Suite struct PendingIndexEntriesTests {
    /// One entry, as handed to `drain`'s `put`.
    struct Entry: Hashable, CustomStringConvertible {
        var dbi: UInt32
        var key: [UInt8]
        var value: [UInt8]

        var description: String { "(\(dbi), \(key), \(value))" }

        /// (dbi, key, value) order, keys and values compared as LMDB compares them: byte by
        /// byte, then the shorter first. Written out here rather than taken from the module.
        static func precedes(_ a: Entry, _ b: Entry) -> Bool {
            if a.dbi != b.dbi { return a.dbi < b.dbi }
            if a.key != b.key { return a.key.lexicographicallyPrecedes(b.key) }
            return a.value.lexicographicallyPrecedes(b.value)
        }
    }

    /// Appends `entries` in their order, a third through each of the three `append` methods
    /// (the one taking the key's bytes keeps an entry whose key and value fit in 16 bytes
    /// out of the byte buffer, so such entries meet longer ones in the sort).
    static func fill(_ pending: inout PendingIndexEntries, with entries: [Entry]) {
        for (i, e) in entries.enumerated() {
            e.value.withUnsafeBytes { value in
                switch i % 3 {
                case 0: pending.append(dbi: e.dbi, key: e.key, value: value)
                case 1: pending.append(dbi: e.dbi, value: value) { $0.append(contentsOf: e.key) }
                default: e.key.withUnsafeBytes { pending.append(dbi: e.dbi, key: $0, value: value) }
                }
            }
        }
    }

    /// Everything `drain` hands out, in its order.
    static func drained(_ pending: inout PendingIndexEntries) throws -> [Entry] {
        var out: [Entry] = []
        try pending.drain { dbi, key, value in out.append(Entry(dbi: dbi, key: Array(key), value: Array(value))) }
        return out
    }

    /// Checks that `entries`, appended in every order `seeds` shuffle them into, drain sorted;
    /// `entriesSeed` is the seed `entries` were drawn with, if they were, for the message.
    static func expectDrainSorts(
        _ entries: [Entry], seeds: ClosedRange<UInt64>, entriesSeed: UInt64? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let drawn = entriesSeed.map { "entries of seed \($0), " } ?? ""
        let expected = entries.sorted(by: Entry.precedes)
        for seed in seeds {
            var random = SeededGenerator(state: seed)
            var pending = PendingIndexEntries()
            fill(&pending, with: entries.shuffled(using: &random))
            #expect(pending.count == entries.count, "\(drawn)order of seed \(seed)", sourceLocation: sourceLocation)
            let out = try drained(&pending)
            #expect(out == expected, "\(drawn)order of seed \(seed)", sourceLocation: sourceLocation)
            #expect(pending.isEmpty && pending.count == 0, "drain empties it", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Order

    @Test func entriesDrainSortedByDatabaseKeyAndValue() throws {
        let entries = [
            Entry(dbi: 3, key: [1, 5], value: [9]),
            Entry(dbi: 2, key: [1, 7], value: [1]),
            Entry(dbi: 2, key: [1, 5], value: [2]),
            Entry(dbi: 2, key: [1, 5], value: [1]),
            Entry(dbi: 1, key: [1, 9], value: [0]),
            Entry(dbi: UInt32.max, key: [0], value: [0]),
            Entry(dbi: 0, key: [0xFF], value: [0xFF]),
        ]
        try Self.expectDrainSorts(entries, seeds: 1...20)
    }

    @Test func keysSharingTheirFirst16BytesSortByTheRest() throws {
        let common: [UInt8] = [1] + Array(repeating: 0x41, count: 15)  // 16 bytes
        let entries = [
            Entry(dbi: 1, key: common, value: [1]),
            Entry(dbi: 1, key: common + [0], value: [1]),
            Entry(dbi: 1, key: common + [0, 0], value: [1]),
            Entry(dbi: 1, key: common + [1], value: [1]),
            Entry(dbi: 1, key: common + [0xFF], value: [1]),
            Entry(dbi: 1, key: common + [0x80, 0x00], value: [1]),
            Entry(dbi: 1, key: common + [0x7F, 0xFF, 0xFF], value: [1]),
            Entry(dbi: 1, key: common + Array(repeating: 0x42, count: 40), value: [1]),
            Entry(dbi: 1, key: common + Array(repeating: 0x42, count: 40) + [0], value: [1]),
            Entry(dbi: 1, key: common + Array(repeating: 0x42, count: 39) + [0x43], value: [1]),
            // The same long key with values that differ only past their first 16 bytes.
            Entry(dbi: 1, key: common + [7], value: Array(repeating: 9, count: 16) + [2]),
            Entry(dbi: 1, key: common + [7], value: Array(repeating: 9, count: 16) + [1]),
            Entry(dbi: 1, key: common + [7], value: Array(repeating: 9, count: 16)),
            Entry(dbi: 1, key: common + [7], value: Array(repeating: 9, count: 16) + [1, 0]),
        ]
        try Self.expectDrainSorts(entries, seeds: 1...20)
    }

    @Test func keysShorterThan16BytesSortBeforeTheirZeroPaddedExtensions() throws {
        // Each key's first 16 bytes are read zero-padded, so [1] and [1, 0] look alike there:
        // the shorter must still come first, as in LMDB.
        let entries = [
            Entry(dbi: 1, key: [1], value: [5]),
            Entry(dbi: 1, key: [1, 0], value: [5]),
            Entry(dbi: 1, key: [1, 0, 0], value: [5]),
            Entry(dbi: 1, key: [1] + Array(repeating: 0, count: 14), value: [5]),  // 15 bytes
            Entry(dbi: 1, key: [1] + Array(repeating: 0, count: 15), value: [5]),  // 16 bytes
            Entry(dbi: 1, key: [1] + Array(repeating: 0, count: 16), value: [5]),  // 17 bytes
            Entry(dbi: 1, key: [0], value: [5]),
            Entry(dbi: 1, key: [1, 0, 1], value: [5]),
            Entry(dbi: 1, key: [2], value: [5]),
            // Values shorter than 16 bytes against their zero-padded extensions.
            Entry(dbi: 1, key: [3], value: [0]),
            Entry(dbi: 1, key: [3], value: [0, 0]),
            Entry(dbi: 1, key: [3], value: []),
            Entry(dbi: 1, key: [3], value: [0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Entry(dbi: 1, key: [3], value: [0, 0, 0, 0, 0, 0, 0, 0, 1]),
        ]
        try Self.expectDrainSorts(entries, seeds: 1...20)
    }

    @Test func randomEntriesDrainInMemcmpOrder() throws {
        // Bytes drawn mostly from a few values, so keys and values often share long prefixes,
        // with lengths on both sides of 8 and 16.
        let seed: UInt64 = 42
        var random = SeededGenerator(state: seed)
        func bytes() -> [UInt8] {
            let alphabet: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF]
            let count = Int.random(in: 0...24, using: &random)
            return (0..<count).map { _ in
                Int.random(in: 0..<8, using: &random) == 0 ? UInt8.random(in: 0...255, using: &random) : alphabet.randomElement(using: &random)!
            }
        }
        var entries: [Entry] = []
        for _ in 0..<2000 {
            let key = [1] + bytes()  // as an index key: a tag byte, then the value
            entries.append(Entry(dbi: UInt32.random(in: 1...3, using: &random), key: key, value: bytes()))
        }
        entries += entries.prefix(50)  // duplicates drain too, side by side
        try Self.expectDrainSorts(entries, seeds: 1...3, entriesSeed: seed)
    }

    /// Entries in the shapes a sort finds hard: sorted, reversed, all equal, few keys with
    /// many values each (a backlink index), organ pipe, and long keys among short ones.
    static func shapedEntries(_ count: Int, seed: UInt64) -> [String: [Entry]] {
        var random = SeededGenerator(state: seed)
        func word(_ i: Int) -> [UInt8] { withUnsafeBytes(of: UInt64(i).bigEndian) { Array($0) } }
        let ascending = (0..<count).map { Entry(dbi: 1, key: [1] + word($0), value: [2] + word(count - $0)) }
        var fewKeys: [Entry] = []
        for i in 0..<count {
            let key = [1] + Array("keyword-\(Int.random(in: 0..<(count / 50 + 1), using: &random))".utf8)
            fewKeys.append(Entry(dbi: UInt32(i % 2), key: key, value: [2] + word(i)))
        }
        let long = (0..<count).map { i in
            let shared = Array(repeating: UInt8(0x41), count: 15 + i % 4)
            return Entry(dbi: 1, key: [1] + shared + word(Int.random(in: 0..<64, using: &random)), value: shared + word(i % 7))
        }
        return [
            "ascending": ascending,
            "descending": ascending.reversed(),
            "all equal": Array(repeating: Entry(dbi: 3, key: [1, 2, 3], value: [4]), count: count),
            "few keys": fewKeys,
            "organ pipe": Array(ascending.prefix(count / 2)) + ascending.prefix(count / 2).reversed(),
            "long keys": long,
        ]
    }

    @Test func largeInputsOfEveryShapeDrainSorted() throws {
        let seed: UInt64 = 7
        for (shape, entries) in Self.shapedEntries(20_000, seed: seed).sorted(by: { $0.key < $1.key }) {
            var pending = PendingIndexEntries()
            Self.fill(&pending, with: entries)
            #expect(try Self.drained(&pending) == entries.sorted(by: Entry.precedes), "\(shape), seed \(seed)")
        }
    }

    /// `drainInOrder` tells how each entry stands to the one drained before it (the flush
    /// appends by it), keys and values longer than 16 bytes included.
    @Test func drainingInOrderTellsHowEachEntryFollowsTheOneBefore() throws {
        let long = [UInt8](repeating: 7, count: 20)
        let entries = [
            Entry(dbi: 1, key: [1], value: [1]), Entry(dbi: 1, key: [1], value: [1]), Entry(dbi: 1, key: [1], value: [2]),
            Entry(dbi: 1, key: [1, 0], value: [2]), Entry(dbi: 1, key: [2], value: [2]), Entry(dbi: 2, key: [2], value: [2]),
            Entry(dbi: 2, key: long, value: [1]), Entry(dbi: 2, key: long, value: [1]), Entry(dbi: 2, key: long + [0], value: [1]),
            Entry(dbi: 2, key: long + [0], value: long), Entry(dbi: 2, key: long + [0], value: long),
            Entry(dbi: 2, key: long + [0], value: long + [1]), Entry(dbi: 2, key: long + [1], value: long + [1]),
            Entry(dbi: 3, key: long + [1], value: long + [1]),
        ]
        let sorted = entries.sorted(by: Entry.precedes)
        let expected: [PendingIndexEntries.Sequel] = sorted.indices.map { i in
            guard i > 0, sorted[i - 1].dbi == sorted[i].dbi else { return .firstOfDatabase }
            guard sorted[i - 1].key == sorted[i].key else { return .nextKey }
            return sorted[i - 1].value == sorted[i].value ? .repeated : .nextValue
        }
        #expect(expected.filter { $0 == .repeated }.count == 3)
        for seed in UInt64(1)...10 {
            var random = SeededGenerator(state: seed)
            var pending = PendingIndexEntries()
            Self.fill(&pending, with: entries.shuffled(using: &random))
            var out: [(Entry, PendingIndexEntries.Sequel)] = []
            try pending.drainInOrder { dbi, key, value, sequel in out.append((Entry(dbi: dbi, key: Array(key), value: Array(value)), sequel)) }
            #expect(out.map(\.0) == sorted, "seed \(seed)")
            #expect(out.map(\.1) == expected, "seed \(seed)")
        }
    }

    /// Entries are a value, as an array is: a copy changes apart from the original, also once
    /// its table is a mapping of its own (past 1 MiB).
    @Test func aCopyChangesApartFromTheOriginal() throws {
        for count in [3, 30_000] {
            let entries = (0..<count).map { Entry(dbi: 1, key: [1] + withUnsafeBytes(of: UInt32($0).bigEndian) { Array($0) }, value: [2]) }
            var original = PendingIndexEntries()
            Self.fill(&original, with: entries)
            var copy = original
            Self.fill(&copy, with: [Entry(dbi: 0, key: [9], value: [9])])
            #expect(original.count == count && copy.count == count + 1)
            #expect(try Self.drained(&copy) == [Entry(dbi: 0, key: [9], value: [9])] + entries)
            #expect(copy.isEmpty && original.count == count)
            #expect(try Self.drained(&original) == entries)
        }
    }

    /// A write's worth of entries (past the size at which the two sides of the first partition
    /// are sorted on two threads) drains sorted too.
    @Test func entriesEnoughForTwoThreadsDrainSorted() throws {
        let seed: UInt64 = 13
        let shapes = Self.shapedEntries(70_000, seed: seed)
        for shape in ["few keys", "long keys", "all equal", "organ pipe"] {
            let entries = try #require(shapes[shape])
            var pending = PendingIndexEntries()
            Self.fill(&pending, with: entries)
            #expect(try Self.drained(&pending) == entries.sorted(by: Entry.precedes), "\(shape), seed \(seed)")
        }
    }

    /// The sort's heapsort fallback, which quicksort reaches only on inputs built against its
    /// pivots, gives the same order.
    @Test func theHeapsortFallbackSortsAlike() {
        func words(_ b: ArraySlice<UInt8>) -> (UInt64, UInt64) {
            let padded = Array(b.prefix(16)) + Array(repeating: 0, count: 16 - min(16, b.count))
            return padded.withUnsafeBytes { (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))) }
        }
        let seed: UInt64 = 11
        for (shape, entries) in Self.shapedEntries(3_000, seed: seed).sorted(by: { $0.key < $1.key }) {
            var bytes: [UInt8] = []
            var table: [lmdbrealm_pending_entry] = []
            for e in entries {
                let start = bytes.count
                bytes += e.key + e.value
                let k = words(e.key[...]), v = words(e.value[...])
                table.append(lmdbrealm_pending_entry(
                    k0: k.0, k1: k.1, v0: v.0, v1: v.1, dbi: e.dbi, start: UInt32(start),
                    key_count: UInt32(e.key.count), value_count: UInt32(e.value.count)))
            }
            table.withUnsafeMutableBufferPointer { t in
                bytes.withUnsafeBufferPointer { lmdbrealm_heap_sort_pending_entries(t.baseAddress, t.count, $0.baseAddress) }
            }
            let out = table.map { t in
                let start = Int(t.start), keyEnd = Int(t.start) + Int(t.key_count)
                return Entry(dbi: t.dbi, key: Array(bytes[start..<keyEnd]), value: Array(bytes[keyEnd..<(keyEnd + Int(t.value_count))]))
            }
            #expect(out == entries.sorted(by: Entry.precedes), "\(shape), seed \(seed)")
        }
    }

    @Test func drainHandsOutEveryEntryWithItsOwnBytes() throws {
        var pending = PendingIndexEntries()
        let entries = (0..<300).map { i in
            Entry(dbi: UInt32(i % 3), key: Array("key \(999 - i)".utf8), value: Array("object \(i)".utf8))
        }
        Self.fill(&pending, with: entries)
        let out = try Self.drained(&pending)
        #expect(Set(out) == Set(entries))
        #expect(out.count == entries.count)
    }

    // MARK: - Emptying

    @Test func countAndIsEmptyFollowAppends() {
        var pending = PendingIndexEntries()
        #expect(pending.isEmpty && pending.count == 0)
        Self.fill(&pending, with: [Entry(dbi: 1, key: [1], value: [])])
        #expect(!pending.isEmpty && pending.count == 1)
        Self.fill(&pending, with: (0..<9).map { Entry(dbi: 1, key: [1, UInt8($0)], value: [UInt8($0)]) })
        #expect(!pending.isEmpty && pending.count == 10)
    }

    @Test func removeAllEmptiesIt() throws {
        var pending = PendingIndexEntries()
        Self.fill(&pending, with: (0..<100).map { Entry(dbi: 1, key: [1, UInt8($0)], value: [2]) })
        pending.removeAll()
        #expect(pending.isEmpty && pending.count == 0)
        #expect(try Self.drained(&pending) == [], "nothing removed comes back")
        // It takes new entries after, and drains only those.
        Self.fill(&pending, with: [Entry(dbi: 2, key: [9], value: [9]), Entry(dbi: 1, key: [8], value: [8])])
        #expect(try Self.drained(&pending) == [Entry(dbi: 1, key: [8], value: [8]), Entry(dbi: 2, key: [9], value: [9])])
    }

    @Test func aFailedDrainEmptiesItToo() throws {
        struct PutFailed: Error {}
        var pending = PendingIndexEntries()
        Self.fill(&pending, with: (0..<10).map { Entry(dbi: 1, key: [1, UInt8(9 - $0)], value: [2]) })
        var handedOut: [[UInt8]] = []
        #expect(throws: PutFailed.self) {
            try pending.drain { _, key, _ in
                handedOut.append(Array(key))
                if handedOut.count == 3 { throw PutFailed() }
            }
        }
        #expect(handedOut == [[1, 0], [1, 1], [1, 2]], "in order, up to the failure")
        #expect(pending.isEmpty, "a failed write does not leave entries for the next")
    }

    /// A big write's entries give their memory back when it ends (committed or cancelled); a
    /// small write's keep theirs for the next one. The data is whole either way.
    @Test func aBigWritesEntriesGiveTheirMemoryBack() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            // An entry an article (its section's): more than a realm keeps room for between
            // writes.
            let big = PendingIndexEntries.retainedEntries + 1_000
            try realm.write {
                for i in 0..<big { realm.add(Article(id: "a\(i)", section: "s\(i % 7)")) }
            }
            #expect(realm.writing.buffers.indexEntries.reservedBytes == 0)
            #expect(realm.objects(Article.self).count == big)
            #expect(realm.objects(Article.self).where { $0.section == "s3" }.count == (0..<big).filter { $0 % 7 == 3 }.count)

            try realm.write { realm.add(Article(id: "small", section: "s1")) }
            let kept = realm.writing.buffers.indexEntries.reservedBytes
            #expect(kept > 0, "a small write keeps its entries' room")
            try realm.write { realm.add(Article(id: "small2", section: "s1")) }
            #expect(realm.writing.buffers.indexEntries.reservedBytes >= kept, "nor the next (its keys may need a little more)")

            // Cancelled, too.
            realm.beginWrite()
            for i in 0..<big { realm.add(Article(id: "b\(i)", section: "t")) }
            _ = realm.objects(Article.self).where { $0.section == "t" }.count  // flushes the entries
            for i in big..<(2 * big) { realm.add(Article(id: "b\(i)", section: "t")) }
            realm.cancelWrite()
            #expect(realm.writing.buffers.indexEntries.reservedBytes == 0)
            #expect(realm.objects(Article.self).where { $0.section == "t" }.isEmpty)
            #expect(try realm.verify().findings.isEmpty)
        }
    }
}
