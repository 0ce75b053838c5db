import Foundation
import LMDBRealm
import LMDBRealmFormat
import TestSupport
import Testing

final class Amount: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value: Decimal128 = 0
}

/// Decimal comparisons in queries are exact over Decimal128's whole range: the values beyond
/// `Decimal`'s exponent range (±128) and beyond `Double`'s precision compare as the numbers they
/// are, in every query form and through an index.
@Suite struct DecimalExactnessTests {
    /// The extremes: the largest and smallest finite values, the smallest magnitudes, exponents
    /// no other numeric type holds, 34-digit neighbours, zeros of both signs and spellings.
    static let extremes: [Decimal128] = [
        "9.999999999999999999999999999999999E+6144", "-9.999999999999999999999999999999999E+6144",
        "1E+6000", "1E+6001", "-1E+6000", "1E-6000", "-1E-6000", "1E-6176", "-1E-6176",
        "9.999999999999999999999999999999999E+6143", "1.000000000000000000000000000000001E+6000",
        "1234567890123456789012345678901234", "1234567890123456789012345678901235",
        "0.1000000000000000000000000000000001", "0.1", "0", "-0", "0E+300", "1.50", "1.5", "-2",
        "1E+128", "1E+129", "1E-129", "-1E+200", "+Inf", "-Inf",
    ].map { Decimal128(value: $0) }

    /// `count` random finite values: any number of digits up to 34, any exponent, either sign.
    static func randomValues(_ count: Int, seed: UInt64) -> [Decimal128] {
        var random = SeededGenerator(state: seed)
        return (0..<count).map { _ in
            let digits = Int.random(in: 1...34, using: &random)
            let coefficient = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined()
            let exponent = Int.random(in: -6176...(6145 - digits), using: &random)
            let sign = Bool.random(using: &random) ? "-" : ""
            return Decimal128(value: "\(sign)\(coefficient)E\(exponent)")
        }
    }

    @Test func theOrderKeyOfDecimalTextIsTheNumbersOrder() throws {
        let seed = SeededGenerator.testSeed()
        let values = Self.extremes + Self.randomValues(400, seed: seed)
        let keys = try values.map { try #require(DecimalOrder.key(of: $0.stringValue), "seed \(seed): \($0)") }
        for (i, a) in values.enumerated() {
            for (j, b) in values.enumerated() where j % 7 == i % 7 {
                let order = keys[i].lexicographicallyPrecedes(keys[j]) ? -1 : (keys[i] == keys[j] ? 0 : 1)
                let expected = a < b ? -1 : (a == b ? 0 : 1)
                #expect(order == expected, "seed \(seed): \(a) against \(b)")
            }
        }
        // One number, one key, however it is spelled.
        for spellings in [["1.50", "1.5", "15E-1", "0.15E+1", " +1.5 "], ["0", "-0", "0.000", "0E+6000"], ["1E+6000", "10E+5999", "0.1E6001"]] {
            #expect(Set(spellings.map { DecimalOrder.key(of: $0) }).count == 1, "\(spellings)")
        }
        // A short coefficient with an exponent past the largest stored one is exact (its digits
        // move into the coefficient); a long one is not.
        #expect(try Decimal128(string: "289799E6126") == Decimal128(string: "2.89799E+6131"))
        #expect(throws: Decimal128.ParseError.self) { try Decimal128(string: "1234567890123456789012345678901234E6112") }
        // Decimal's longer numbers (38 digits) are ordered by every digit.
        let a = try #require(DecimalOrder.key(of: "12345678901234567890123456789012345678"))
        let b = try #require(DecimalOrder.key(of: "12345678901234567890123456789012345679"))
        #expect(a.lexicographicallyPrecedes(b))
        #expect(DecimalOrder.key(of: "1.2.3") == nil && DecimalOrder.key(of: "12abc") == nil && DecimalOrder.key(of: "") == nil)
    }

    /// Every query form against a reference (Decimal128's own comparison) on random values and
    /// the extremes, unindexed and through an index.
    @Test func queriesCompareDecimalsExactlyOverTheWholeRange() throws {
        let seed = SeededGenerator.testSeed()
        let values = (Self.extremes + Self.randomValues(60, seed: seed)).filter { !$0.isNaN }
        var random = SeededGenerator(state: seed)
        let constants = Self.extremes + Self.randomValues(6, seed: seed &+ 1) + (0..<6).map { _ in values.randomElement(using: &random)! }
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write {
                for (i, v) in values.enumerated() {
                    realm.add(Amount(value: ["id": i, "value": v] as [String: Any]))
                    realm.add(IndexedAmount(value: ["id": i, "amount": v] as [String: Any]))
                }
            }
            let plain = realm.objects(Amount.self)
            let indexed = realm.objects(IndexedAmount.self)
            func ids(_ keep: (Decimal128) -> Bool) -> [Int] { values.indices.filter { keep(values[$0]) } }
            for c in constants {
                let context = "seed \(seed), constant \(c)"
                let expected: [(String, [Int])] = [
                    (">", ids { $0 > c }), ("<", ids { $0 < c }), (">=", ids { $0 >= c }),
                    ("<=", ids { $0 <= c }), ("==", ids { $0 == c }), ("!=", ids { !($0 == c) }),
                ]
                for (op, want) in expected {
                    #expect(plain.filter("value \(op) %@", c).map(\.id).sorted() == want, "\(context): value \(op) %@")
                    #expect(indexed.filter("amount \(op) %@", c).map(\.id).sorted() == want, "\(context): indexed amount \(op) %@")
                    if !c.stringValue.hasSuffix("Inf") {
                        // The constant written into the format, as a literal.
                        #expect(plain.filter("value \(op) \(c.stringValue)").map(\.id).sorted() == want, "\(context): value \(op) literal")
                        #expect(indexed.filter("amount \(op) \(c.stringValue)").map(\.id).sorted() == want, "\(context): indexed literal")
                    }
                }
                #expect(plain.where { $0.value > c }.map(\.id).sorted() == ids { $0 > c }, "\(context): DSL >")
                #expect(plain.where { $0.value < c }.map(\.id).sorted() == ids { $0 < c }, "\(context): DSL <")
                #expect(indexed.where { $0.amount >= c }.map(\.id).sorted() == ids { $0 >= c }, "\(context): indexed DSL >=")
                #expect(indexed.where { $0.amount == c }.map(\.id).sorted() == ids { $0 == c }, "\(context): indexed DSL ==")
            }
            for (lo, hi) in zip(constants.sorted(), constants.sorted().reversed()) where lo <= hi {
                let want = ids { $0 >= lo && $0 <= hi }
                let context = "seed \(seed), \(lo)...\(hi)"
                #expect(plain.filter("value BETWEEN {%@, %@}", lo, hi).map(\.id).sorted() == want, "\(context): BETWEEN")
                #expect(indexed.filter("amount BETWEEN {%@, %@}", lo, hi).map(\.id).sorted() == want, "\(context): indexed BETWEEN")
                #expect(plain.where { $0.value.contains(lo...hi) }.map(\.id).sorted() == want, "\(context): contains")
                #expect(indexed.where { $0.amount.contains(lo...hi) }.map(\.id).sorted() == want, "\(context): indexed contains")
            }
            // Sorting agrees with the same order.
            #expect(plain.sorted(byKeyPath: "value").map(\.value) == values.sorted(), "seed \(seed): sort")
            #expect(indexed.sorted(byKeyPath: "amount").map(\.amount) == values.sorted(), "seed \(seed): indexed sort")
        }
    }

    /// The numbers the issue reports wrong, by hand: a value past `Decimal`'s range is neither
    /// missed nor included wrongly.
    @Test func valuesBeyondDecimalsRangeAreFoundByHand() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let stored: [Decimal128] = ["1E+6000", "9.999999999999999999999999999999999E+6144", "-1E-6000", "5", "-5"]
            try realm.write {
                for (i, v) in stored.enumerated() { realm.add(Amount(value: ["id": i, "value": v] as [String: Any])) }
            }
            let amounts = realm.objects(Amount.self)
            #expect(amounts.where { $0.value > 1000 }.map(\.id).sorted() == [0, 1])
            #expect(amounts.where { $0.value > Decimal128("1E+6000") }.map(\.id) == [1])
            #expect(amounts.where { $0.value < 0 }.map(\.id).sorted() == [2, 4])
            #expect(amounts.where { $0.value > -1 && $0.value < 0 }.map(\.id) == [2])
            #expect(amounts.filter("value >= 1E+6000").map(\.id).sorted() == [0, 1])
            #expect(amounts.filter("value BETWEEN {-1E-5999, 0}").map(\.id) == [2])
            #expect(amounts.filter("value == 9.999999999999999999999999999999999E+6144").map(\.id) == [1])
        }
    }

    /// NaN equals NaN in a query (so that it can be found) and is neither less nor greater than
    /// anything.
    @Test func nanIsFoundByEqualityOnly() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write {
                realm.add(Amount(value: ["id": 0, "value": Decimal128.nan] as [String: Any]))
                realm.add(Amount(value: ["id": 1, "value": Decimal128(1)] as [String: Any]))
            }
            let amounts = realm.objects(Amount.self)
            #expect(amounts.filter("value == %@", Decimal128.nan).map(\.id) == [0])
            #expect(amounts.filter("value != %@", Decimal128.nan).map(\.id) == [1])
            #expect(amounts.filter("value < %@", Decimal128(2)).map(\.id) == [1])
            #expect(amounts.filter("value > %@", Decimal128(-2)).map(\.id) == [1])
            #expect(amounts.sorted(byKeyPath: "value").map(\.id) == [0, 1])
        }
    }
}
