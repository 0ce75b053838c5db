import Foundation
@testable import LMDBRealm
import TestSupport
import Testing

/// Keys sort as their values do: for each kind that can be a primary key or be indexed, the
/// encoded keys compared byte-wise (`memcmp` order, LMDB's key order) agree with Swift's own
/// ordering of the values. A primary key decodes back to the field it was made from, and
/// `ObjectKey` keeps a key's bytes, inline or not.
@Suite struct KeyEncodingTests {
    // MARK: - Helpers

    /// The key of `value`, as a table or an index stores it: its record field through
    /// `_rlmWithBytes`, then `KeyEncoding.append`.
    static func key<V: _Persistable>(_ value: V) -> [UInt8] {
        value._rlmWithBytes { field in
            var out: [UInt8] = []
            KeyEncoding.append(field, type: V._rlmType, to: &out)
            return out
        }
    }

    /// The record field of `value` (`nil` for a null).
    static func field<V: _Persistable>(_ value: V) -> [UInt8]? {
        value._rlmWithBytes { $0.map { Array($0) } }
    }

    /// -1, 0 or 1 as `a` sorts before, with or after `b` in LMDB's default key order: `memcmp`
    /// over the common length, then the shorter first. Written out here rather than taken from
    /// the module, so the test does not check the code with itself.
    static func memcmpOrder(_ a: [UInt8], _ b: [UInt8]) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Checks that the keys of `values` sort as `less` sorts the values, and that values
    /// neither of which is less than the other have equal keys.
    ///
    /// Neighbours in value order are checked (together they prove the whole order, since
    /// `memcmp` order is a total order), then random pairs directly.
    static func expectKeyOrderIsValueOrder<V: _Persistable>(
        _ values: [V], seed: UInt64, by less: (V, V) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let keyed = values.map { (value: $0, key: key($0)) }
        var failures: [String] = []
        func check(_ a: (value: V, key: [UInt8]), _ b: (value: V, key: [UInt8])) {
            let expected = less(a.value, b.value) ? -1 : (less(b.value, a.value) ? 1 : 0)
            let actual = memcmpOrder(a.key, b.key)
            if actual != expected {
                failures.append("\(a.value) vs \(b.value): values \(expected), keys \(actual) (\(a.key) vs \(b.key))")
            }
        }
        let sorted = keyed.sorted { less($0.value, $1.value) }
        for (a, b) in zip(sorted, sorted.dropFirst()) { check(a, b) }
        var random = SeededGenerator(state: seed)
        for _ in 0..<2000 { check(keyed.randomElement(using: &random)!, keyed.randomElement(using: &random)!) }
        #expect(
            failures.isEmpty, "seed \(seed): \(failures.count) pairs out of order, first: \(failures.prefix(5))",
            sourceLocation: sourceLocation)
    }

    /// `nil` before any value, values in `less` order.
    static func nilFirst<V>(_ less: @escaping (V, V) -> Bool) -> (V?, V?) -> Bool {
        { a, b in
            switch (a, b) {
            case (nil, nil): false
            case (nil, _?): true
            case (_?, nil): false
            case (let a?, let b?): less(a, b)
            }
        }
    }

    /// A byte that is often at a boundary (0, 1, the sign bit, 0xFF), so that generated values
    /// share prefixes and differ where encodings go wrong.
    static func edgyByte(_ random: inout SeededGenerator) -> UInt8 {
        let edges: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]
        return Bool.random(using: &random) ? edges.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
    }

    static func uuid(_ random: inout SeededGenerator) -> UUID {
        let bytes = (0..<16).map { _ in edgyByte(&random) }
        return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    static func objectId(_ random: inout SeededGenerator) -> ObjectId {
        ObjectId(bytes: (0..<12).map { _ in edgyByte(&random) })!
    }

    /// Scalars whose strings are already in NFC and stay so when concatenated (no combining
    /// marks, no Hangul jamo), so Swift's `<` is code-point order on them; one, two, three and
    /// four UTF-8 bytes, with U+FF5E before U+1F600 as code points but after it in UTF-16.
    static let scalars: [Unicode.Scalar] = [
        "\u{0}", "0", "9", "A", "Z", "a", "b", "z", "\u{7F}", "\u{E9}", "\u{DF}", "\u{FF}", "\u{100}",
        "\u{4E2D}", "\u{E000}", "\u{FF5E}", "\u{1F600}", "\u{10FFFF}",
    ]

    static func string(_ random: inout SeededGenerator) -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...6, using: &random) { s.append(scalars.randomElement(using: &random)!) }
        return String(s)
    }

    /// Interesting values of each kind, then `count` generated ones.
    static func ints(count: Int, seed: UInt64) -> [Int] {
        var random = SeededGenerator(state: seed)
        var values = [Int.min, Int.min + 1, -(1 << 32), -256, -255, -2, -1, 0, 1, 2, 255, 256, 1 << 32, Int.max - 1, Int.max]
        values += (0..<count / 2).map { _ in Int.random(in: .min ... .max, using: &random) }
        values += (0..<count / 2).map { _ in Int.random(in: -300...300, using: &random) }  // with repeats
        return values
    }

    static func doubles(count: Int, seed: UInt64) -> [Double] {
        var random = SeededGenerator(state: seed)
        var values: [Double] = [
            -.infinity, -.greatestFiniteMagnitude, -1e300, -1, -0.5, -.leastNormalMagnitude,
            -.leastNonzeroMagnitude, -0.0, 0, .leastNonzeroMagnitude, .leastNormalMagnitude, 0.5, 1, 1e300,
            .greatestFiniteMagnitude, .infinity, .nan, -.nan, .signalingNaN,
        ]
        values += (0..<count / 2).map { _ in Double(bitPattern: UInt64.random(in: .min ... .max, using: &random)) }
        values += (0..<count / 2).map { _ in Double.random(in: -2...2, using: &random).rounded(toPlaces: 2) }  // with repeats
        return values
    }

    // MARK: - Order

    @Test func intKeysSortAsTheIntegers() {
        Self.expectKeyOrderIsValueOrder(Self.ints(count: 2000, seed: 1), seed: 1, by: <)
    }

    @Test func everyIntegerWidthHasTheKeyOfItsInt64() {
        for v in Self.ints(count: 200, seed: 2) {
            #expect(Self.key(Int64(v)) == Self.key(v))
            #expect(Self.key(Int32(truncatingIfNeeded: v)) == Self.key(Int(Int32(truncatingIfNeeded: v))))
            #expect(Self.key(Int16(truncatingIfNeeded: v)) == Self.key(Int(Int16(truncatingIfNeeded: v))))
            #expect(Self.key(Int8(truncatingIfNeeded: v)) == Self.key(Int(Int8(truncatingIfNeeded: v))))
        }
        Self.expectKeyOrderIsValueOrder(
            Self.ints(count: 500, seed: 3).map { Int32(truncatingIfNeeded: $0) } + [.min, .max], seed: 3, by: <)
        Self.expectKeyOrderIsValueOrder(Array(Int8.min...Int8.max), seed: 4, by: <)
    }

    @Test func stringKeysSortAsTheStrings() {
        var random = SeededGenerator(state: 5)
        var values = ["", "a", "ab", "abc", "abcd", "abd", "ac", "b", "a\u{0}", "a\u{0}b", "\u{0}", "\u{FF5E}", "\u{1F600}"]
        values += (0..<1500).map { _ in Self.string(&random) }
        Self.expectKeyOrderIsValueOrder(values, seed: 5, by: <)
    }

    @Test func aStringKeyIsItsUTF8AfterTheTag() {
        #expect(Self.key("") == [KeyEncoding.valueTag], "an empty string still has a non-empty key")
        #expect(Self.key("a\u{E9}\u{1F600}") == [KeyEncoding.valueTag] + Array("a\u{E9}\u{1F600}".utf8))
    }

    @Test func dateKeysSortAsTheDates() {
        var random = SeededGenerator(state: 6)
        var intervals: [Double] = [-1e10, -86_400, -1, -0.5, -1e-9, 0, 1e-9, 0.5, 1, 86_400, 1e10]
        intervals += (0..<1000).map { _ in Double.random(in: -1e10...1e10, using: &random) }
        // With repeats, -0.0 from rounding among them (equal to 0.0, with the same key).
        intervals += (0..<500).map { _ in Double.random(in: -2...2, using: &random).rounded(toPlaces: 1) }
        var dates = intervals.map { Date(timeIntervalSinceReferenceDate: $0) }
        dates += [.distantPast, .distantFuture, Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -1)]
        Self.expectKeyOrderIsValueOrder(dates, seed: 6, by: <)
    }

    @Test func aNegativeZeroDateHasTheKeyOfZero() {
        // `Date(timeIntervalSinceReferenceDate: -0.0) == Date(timeIntervalSinceReferenceDate: 0)`:
        // with the sign bit in the key, an indexed date of -0.0 would be missed by `==` and
        // `>=` through the index while the same query on an unindexed property finds it.
        let negativeZero = Date(timeIntervalSinceReferenceDate: -0.0)
        let zero = Date(timeIntervalSinceReferenceDate: 0)
        #expect(negativeZero == zero)
        #expect(Self.key(negativeZero) == Self.key(zero))
    }

    @Test func doubleKeysSortInIEEETotalOrder() {
        // `isTotallyOrdered` is Swift's total order of floating-point values: it agrees with `<`
        // and also orders -0.0 before 0.0 and places NaNs (negative first, positive last, by
        // payload). The key follows it: -0.0 and 0.0, equal under `==`, have different keys
        // (harmless for doubles, which are never keys; dates map -0.0 to 0.0, see above).
        let values = Self.doubles(count: 2000, seed: 7)
        Self.expectKeyOrderIsValueOrder(values, seed: 7) { a, b in
            a.isTotallyOrdered(belowOrEqualTo: b) && !b.isTotallyOrdered(belowOrEqualTo: a)
        }
        // And `<` itself, for every pair of numbers it orders.
        let numbers = values.filter { !$0.isNaN }
        let seed: UInt64 = 8
        var random = SeededGenerator(state: seed)
        var failures: [String] = []
        for _ in 0..<4000 {
            let a = numbers.randomElement(using: &random)!
            let b = numbers.randomElement(using: &random)!
            if a < b && Self.memcmpOrder(Self.key(a), Self.key(b)) >= 0 { failures.append("\(a) < \(b)") }
        }
        #expect(failures.isEmpty, "seed \(seed): keys out of order: \(failures.prefix(5))")
        #expect(Self.memcmpOrder(Self.key(-Double.infinity), Self.key(-Double.greatestFiniteMagnitude)) < 0)
        #expect(Self.memcmpOrder(Self.key(-0.0), Self.key(0.0)) < 0)
        #expect(Self.memcmpOrder(Self.key(Double.greatestFiniteMagnitude), Self.key(Double.infinity)) < 0)
    }

    @Test func floatKeysSortInIEEETotalOrder() {
        var random = SeededGenerator(state: 9)
        var values: [Float] = [-.infinity, -1, -.leastNonzeroMagnitude, -0.0, 0, .leastNonzeroMagnitude, 1, .infinity, .nan]
        values += (0..<1000).map { _ in Float(bitPattern: UInt32.random(in: .min ... .max, using: &random)) }
        values += (0..<500).map { _ in Float(Int.random(in: -20...20, using: &random)) / 4 }
        Self.expectKeyOrderIsValueOrder(values, seed: 9) { a, b in
            a.isTotallyOrdered(belowOrEqualTo: b) && !b.isTotallyOrdered(belowOrEqualTo: a)
        }
    }

    @Test func uuidKeysSortAsTheUUIDs() {
        var random = SeededGenerator(state: 10)
        var values = (0..<1500).map { _ in Self.uuid(&random) }
        values += [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))]
        values += [UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuid: (0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF))]
        values += values.prefix(20)  // repeats
        Self.expectKeyOrderIsValueOrder(values, seed: 10, by: <)
    }

    @Test func objectIdKeysSortAsTheObjectIds() {
        var random = SeededGenerator(state: 11)
        var values = (0..<1500).map { _ in Self.objectId(&random) }
        values += [ObjectId(), ObjectId(bytes: [UInt8](repeating: 0xFF, count: 12))!, ObjectId.generate(), ObjectId.generate()]
        values += values.prefix(20)  // repeats
        Self.expectKeyOrderIsValueOrder(values, seed: 11, by: <)
    }

    @Test func boolKeysSortFalseBeforeTrue() {
        Self.expectKeyOrderIsValueOrder([true, false, false, true], seed: 12) { !$0 && $1 }
        #expect(Self.key(false) == [KeyEncoding.valueTag, 0])
        #expect(Self.key(true) == [KeyEncoding.valueTag, 1])
    }

    @Test func nilSortsBeforeEveryValue() {
        var random = SeededGenerator(state: 13)
        let nils = [Int?](repeating: nil, count: 5)
        Self.expectKeyOrderIsValueOrder(Self.ints(count: 300, seed: 13).map { Optional($0) } + nils, seed: 13, by: Self.nilFirst(<))
        Self.expectKeyOrderIsValueOrder(
            ["", "a", "\u{0}"] + (0..<300).map { _ in Self.string(&random) } + [nil, nil], seed: 14, by: Self.nilFirst(<))
        Self.expectKeyOrderIsValueOrder(
            [Date(timeIntervalSinceReferenceDate: -1e10), .distantPast, Date(timeIntervalSinceReferenceDate: 0), nil, nil],
            seed: 15, by: Self.nilFirst(<))
        Self.expectKeyOrderIsValueOrder((0..<300).map { _ in Self.uuid(&random) } + [nil], seed: 16, by: Self.nilFirst(<))
        Self.expectKeyOrderIsValueOrder([ObjectId(), nil, Self.objectId(&random), nil], seed: 17, by: Self.nilFirst(<))
        Self.expectKeyOrderIsValueOrder([true, nil, false, nil], seed: 18, by: Self.nilFirst { !$0 && $1 })
        // The null key is the tag alone, below every value's tag, even the empty string's.
        #expect(Self.key(String?.none) == [KeyEncoding.nullTag])
        #expect(Self.memcmpOrder(Self.key(String?.none), Self.key(String?.some(""))) < 0)
        #expect(Self.memcmpOrder(Self.key(Int?.none), Self.key(Int?.some(.min))) < 0)
    }

    @Test func anOptionalValueHasTheKeyOfTheValue() {
        #expect(Self.key(Int?.some(-5)) == Self.key(-5))
        #expect(Self.key(String?.some("abc")) == Self.key("abc"))
        #expect(Self.key(Date?.some(.distantPast)) == Self.key(Date.distantPast))
    }

    @Test func withKeyLendsTheBytesAppendMakes() {
        // `withKey` builds an int's key on the stack, any other in an array: both must be the
        // key `append` makes.
        func lent<V: _Persistable>(_ value: V) -> [UInt8] {
            value._rlmWithBytes { field in KeyEncoding.withKey(field, type: V._rlmType) { Array($0) } }
        }
        for v in Self.ints(count: 200, seed: 19) { #expect(lent(v) == Self.key(v), "\(v)") }
        for v in [Int?.none, 0, -1] { #expect(lent(v) == Self.key(v), "\(String(describing: v))") }
        for v in ["", "x", "a longer string than sixteen bytes"] { #expect(lent(v) == Self.key(v), "\(v)") }
        #expect(lent(Date.distantFuture) == Self.key(Date.distantFuture))
        #expect(lent(ObjectId()) == Self.key(ObjectId()))
    }

    // MARK: - Decoding primary keys

    /// What `KeyEncoding.field(ofKey:type:into:)` makes of `key`.
    static func decode(_ key: [UInt8], as type: PropertyType) -> RecordTests.Read {
        let out = UnsafeMutableRawPointer.allocate(byteCount: max(key.count, 1), alignment: 8)
        defer { out.deallocate() }
        return key.withUnsafeBytes { RecordTests.Read(KeyEncoding.field(ofKey: $0, type: type, into: out)) }
    }

    /// Checks that the key of each of `values` decodes to the value's field, and that field to
    /// the value (as `same` compares them).
    static func expectRoundTrip<V: _Persistable>(
        _ values: [V], same: (V, V) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for value in values {
            let decoded = decode(key(value), as: V._rlmType)
            let expected: RecordTests.Read = field(value).map { .value($0) } ?? .null
            #expect(decoded == expected, "\(value)", sourceLocation: sourceLocation)
            switch decoded {
            case .value(let bytes):
                let back = bytes.withUnsafeBytes { V._rlmDecode($0) }
                #expect(same(back, value), "\(value) came back as \(back)", sourceLocation: sourceLocation)
            case .null:
                #expect(same(V._rlmDecode(nil), value), "\(value)", sourceLocation: sourceLocation)
            case .damaged: break
            }
        }
    }

    @Test func primaryKeysDecodeToTheirFields() {
        var random = SeededGenerator(state: 20)
        Self.expectRoundTrip(Self.ints(count: 300, seed: 20), same: ==)
        Self.expectRoundTrip([Int64.min, -1, 0, Int64.max], same: ==)
        Self.expectRoundTrip(["", "a", "\u{0}", "\u{1F600}\u{E9}"] + (0..<200).map { _ in Self.string(&random) }, same: ==)
        Self.expectRoundTrip((0..<200).map { _ in Self.uuid(&random) }, same: ==)
        Self.expectRoundTrip((0..<200).map { _ in Self.objectId(&random) }, same: ==)
        Self.expectRoundTrip([Int?.none, 7], same: ==)
        Self.expectRoundTrip([String?.none, "", "k"], same: ==)
        Self.expectRoundTrip([UUID?.none], same: ==)
        Self.expectRoundTrip([ObjectId?.none, ObjectId()], same: ==)
    }

    @Test func everyOtherKindDecodesToItsFieldToo() {
        // Only ints, strings, UUIDs and ObjectIds are primary keys, but the inverse covers
        // every kind `append` encodes without cutting.
        Self.expectRoundTrip(Self.doubles(count: 300, seed: 21), same: { $0.bitPattern == $1.bitPattern })
        Self.expectRoundTrip([Float]([-.infinity, -1.5, -0.0, 0, 3.25, .infinity, .nan]), same: { $0.bitPattern == $1.bitPattern })
        Self.expectRoundTrip([Date.distantPast, Date(timeIntervalSinceReferenceDate: -0.25), .distantFuture], same: ==)
        Self.expectRoundTrip([false, true], same: ==)
        Self.expectRoundTrip([Data(), Data([0, 1, 0xFF])], same: ==)
    }

    @Test func aKeyTooShortForItsKindIsDamage() {
        let cases: [(key: [UInt8], type: PropertyType, problem: String)] = [
            ([1, 0, 0, 0, 0], .int, "a key of 4 bytes for a 8-byte int"),
            ([1], .int, "a key of 0 bytes for a 8-byte int"),
            (Array(Self.key(Int.max).dropLast()), .int, "a key of 7 bytes for a 8-byte int"),
            (Array(Self.key(UUID()).dropLast()), .uuid, "a key of 15 bytes for a 16-byte uuid"),
            (Array(Self.key(ObjectId()).dropLast(2)), .objectId, "a key of 10 bytes for a 12-byte objectId"),
            (Array(Self.key(Date.distantPast).dropLast()), .date, "a key of 7 bytes for a 8-byte date"),
            ([1], .bool, "a key of 0 bytes for a 1-byte bool"),
        ]
        for c in cases {
            let decoded = Self.decode(c.key, as: c.type)
            #expect(decoded.problem?.contains(c.problem) == true, "\(c.key) as \(c.type): \(decoded)")
        }
    }

    @Test func otherBadKeysAreDamageToo() {
        #expect(Self.decode([], as: .string).problem?.contains("an empty key") == true)
        #expect(Self.decode([2, 0x61], as: .string).problem?.contains("a key with tag 2") == true)
        #expect(Self.decode([0, 0x61], as: .string).problem?.contains("a key with tag 0") == true, "a null has no body")
        #expect(Self.decode(Self.key(Int.max) + [0], as: .int).problem?.contains("a key of 9 bytes for a 8-byte int") == true)
        #expect(Self.decode(Self.key(UUID()) + [0], as: .uuid).problem?.contains("a key of 17 bytes") == true)
        // A string key has no fixed length: its tag alone is the empty string.
        #expect(Self.decode([KeyEncoding.valueTag], as: .string) == .value([]))
    }

    // MARK: - ObjectKey

    /// Keys of every length from 0 to 40 (inline up to 16 bytes, on the heap past that),
    /// including ones that differ only by trailing zeros.
    static func objectKeyBytes(seed: UInt64) -> [[UInt8]] {
        var random = SeededGenerator(state: seed)
        var keys: [[UInt8]] = (0...40).map { n in (0..<n).map { _ in edgyByte(&random) } }
        for n in [0, 1, 7, 8, 9, 15, 16, 17] {
            keys.append([UInt8](repeating: 0, count: n))
            keys.append([UInt8](repeating: 0xFF, count: n))
        }
        keys += [[1], [1, 0], [1, 0, 0], Array(repeating: 1, count: 16) + [0]]
        return keys
    }

    @Test func anObjectKeyKeepsItsBytesInlineOrNot() {
        for bytes in Self.objectKeyBytes(seed: 22) {
            #expect(ObjectKey(bytes).withBytes { Array($0) } == bytes, "\(bytes.count) bytes")
            // From an unaligned buffer too: keys come straight from the map.
            let shifted = [0xAA] + bytes
            let key = shifted.withUnsafeBytes { ObjectKey(UnsafeRawBufferPointer(rebasing: $0.dropFirst())) }
            #expect(key.withBytes { Array($0) } == bytes, "\(bytes.count) bytes, unaligned")
        }
        #expect(ObjectKey().withBytes { $0.count } == 0)
    }

    @Test func objectKeysAreEqualExactlyWhenTheirBytesAre() {
        let all = Self.objectKeyBytes(seed: 23)
        var failures: [String] = []
        for a in all {
            for b in all where (ObjectKey(a) == ObjectKey(b)) != (a == b) {
                failures.append("\(a) vs \(b)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(Set(all.map { ObjectKey($0) }).count == Set(all).count, "hashing agrees with equality")
        #expect(ObjectKey() == ObjectKey([UInt8]()))
    }

    @Test func anIntPrimaryKeyIsReadFromItsObjectKey() {
        for v in Self.ints(count: 500, seed: 24) {
            #expect(ObjectKey(Self.key(v)).intPrimaryKey == Int64(v), "\(v)")
        }
        #expect(ObjectKey(Self.key(Int?.none)).intPrimaryKey == nil, "a null key")
        #expect(ObjectKey().intPrimaryKey == nil, "no key")
        #expect(ObjectKey(Self.key("string")).intPrimaryKey == nil, "a string's key")
        #expect(ObjectKey(Self.key(UUID())).intPrimaryKey == nil)
        #expect(ObjectKey([0] + Self.key(Int.max).dropFirst()).intPrimaryKey == nil, "9 bytes with the null tag")
    }
}

extension Double {
    /// The value rounded to `places` decimal places, so generated values repeat.
    fileprivate func rounded(toPlaces places: Int) -> Double {
        let scale = (0..<places).reduce(1.0) { r, _ in r * 10 }
        return (self * scale).rounded() / scale
    }
}
