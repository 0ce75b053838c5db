import Foundation
import LMDBRealm
import TestSupport
import Testing

final class Invoice: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var total: Decimal128 = 0
    @Persisted var discount: Decimal128?
    @Persisted var lines: List<Decimal128>
}

@Suite struct Decimal128Tests {
    @Test func parsesAndPrintsDecimalText() throws {
        #expect(try Decimal128(string: "1.5").stringValue == "1.5")
        #expect(try Decimal128(string: "-12.50").stringValue == "-12.50")
        #expect(try Decimal128(string: "0.000001").stringValue == "0.000001")
        #expect(try Decimal128(string: "1.5E-10").stringValue == "1.5E-10")
        #expect(try Decimal128(string: "1e40").stringValue == "1E+40")
        #expect(
            try Decimal128(string: "12345678901234567890123456789012340000").stringValue
                == "1.234567890123456789012345678901234E+37")
        #expect(try Decimal128(string: "NaN").isNaN)
        #expect(try Decimal128(string: "-Infinity") < Decimal128.min)
        #expect(throws: Decimal128.ParseError.self) { try Decimal128(string: "12.5 dollars") }
        // 35 significant digits cannot be held exactly.
        #expect(throws: Decimal128.ParseError.self) {
            try Decimal128(string: "1234567890123456789012345678901234.5")
        }
        let literal: Decimal128 = "19.99"
        #expect(literal == Decimal128(value: "19.99"))
        #expect(Decimal128(integerLiteral: -7).stringValue == "-7")
        #expect(Decimal128(floatLiteral: 0.1).stringValue == "0.1")
        #expect(Decimal128.max.stringValue == "9.999999999999999999999999999999999E+6144")
    }

    /// As RealmSwift's own tests print them: a sum or difference keeps its operands' decimal
    /// places (IEEE 754's preferred exponent), and compares by value with a literal.
    @Test func resultsKeepTheirDecimalPlacesAsRealmSwiftPrintsThem() {
        let d3: Decimal128 = "1.234567"
        let d4: Decimal128 = "9.876543"
        #expect((d3 + d4).description == "11.111110")
        #expect(((d3 + d4) as Decimal128) == 11.11111)
        let a: Decimal128 = "2.5"
        let b: Decimal128 = "3.5"
        #expect((a - b).description == "-1.0")
        #expect(a - b == -1)
        let x: Decimal128 = 3.144444
        #expect(x + x == 6.288888)
        #expect((Decimal128(exactly: 2)! + Decimal128(exactly: 1)!) == 3.0)
        let seven: Decimal128 = 7
        #expect(seven / 3.5 == 2 && ("0.21" as Decimal128) / ("0.7" as Decimal128) == 0.3)
        #expect(seven * 3.5 == 24.5 && ("0.21" as Decimal128) * ("0.7" as Decimal128) == 0.147)
    }

    @Test func arithmeticIsDecimalAndRoundsTo34DigitsHalfToEven() throws {
        let tenth: Decimal128 = "0.1"
        #expect(tenth + "0.2" == "0.3")
        #expect(Decimal128("19.99") * 3 == "59.97")
        #expect((Decimal128(1) / 3).stringValue == "0.3333333333333333333333333333333333")
        #expect((Decimal128(2) / 3).stringValue == "0.6666666666666666666666666666666667")
        #expect((Decimal128(10) / 4).stringValue == "2.5")
        #expect((Decimal128(6) / 3).stringValue == "2")
        #expect(Decimal128("9999999999999999999999999999999999") + 1 == "1E+34")
        #expect(
            (Decimal128("9999999999999999999999999999999999") + 1).stringValue
                == "1.000000000000000000000000000000000E+34")
        // Ties go to the even neighbour.
        #expect(
            Decimal128("1234567890123456789012345678901234") + "0.5"
                == "1234567890123456789012345678901234")
        #expect(
            Decimal128("1234567890123456789012345678901235") + "0.5"
                == "1234567890123456789012345678901236")
        #expect(Decimal128("1E+34") - "0.3" == "1E+34")
        #expect(Decimal128("1E+34") - "0.5" == "1E+34")
        #expect((Decimal128("1E+33") - "0.3").stringValue == "999999999999999999999999999999999.7")
        #expect((Decimal128.max * 10).isInfinite)
        #expect((Decimal128(1) / 0).isInfinite)
        #expect((Decimal128(0) / 0).isNaN)
        #expect(-Decimal128("2.5") == "-2.5")
        #expect(Decimal128("-2.5").magnitude == "2.5")
        var running: Decimal128 = 0
        for _ in 0..<10 { running += "0.1" }
        #expect(running == 1)
    }

    /// Where every result is exact (15 digits, exponents -5...5), sums, differences, products
    /// and comparisons agree with Foundation's `Decimal`.
    @Test func exactResultsAgreeWithDecimal() {
        let seed = SeededGenerator.testSeed()
        var rng = SeededGenerator(state: seed)
        func random() -> (Decimal128, Decimal) {
            let digits = Int64.random(in: -999_999_999_999_999...999_999_999_999_999, using: &rng)
            let exponent = Int.random(in: -5...5, using: &rng)
            let text = "\(digits)E\(exponent)"
            return (try! Decimal128(string: text), Decimal(string: text)!)
        }
        for _ in 0..<2_000 {
            let (a, x) = random()
            let (b, y) = random()
            #expect((a + b).decimalValue == x + y, "seed \(seed): \(a) + \(b)")
            #expect((a - b).decimalValue == x - y, "seed \(seed): \(a) - \(b)")
            #expect((a * b).decimalValue == x * y, "seed \(seed): \(a) * \(b)")
            #expect((a < b) == (x < y), "seed \(seed): \(a) < \(b)")
            #expect((a == b) == (x == y), "seed \(seed): \(a) == \(b)")
        }
    }

    @Test func comparesByValue() throws {
        #expect(Decimal128("1.50") == Decimal128("1.5"))
        #expect(Decimal128("1.50").hashValue == Decimal128("1.5").hashValue)
        #expect(Decimal128("-0") == Decimal128(0))
        #expect(Decimal128("-3") < Decimal128("-2.99"))
        #expect(Decimal128("1E+3") > Decimal128("999.9999"))
        #expect(Decimal128.nan != Decimal128.nan)
        let sorted = ["10", "-1", "0.5", "1E+2", "-1E+2"].map { Decimal128(value: $0) }.sorted()
        #expect(sorted.map(\.stringValue) == ["-1E+2", "-1", "0.5", "10", "1E+2"])
    }

    @Test func convertsToAndFromDecimalDoubleAndJSON() throws {
        let decimal = Decimal(string: "12.34")!
        #expect(Decimal128(decimal) == "12.34")
        #expect(Decimal128("12.34").decimalValue == decimal)
        #expect(Decimal128("0.25").doubleValue == 0.25)
        #expect(Decimal128(value: NSNumber(value: 42)) == 42)
        let encoded = try JSONEncoder().encode([Decimal128("12.50")])
        #expect(String(decoding: encoded, as: UTF8.self) == "[\"12.50\"]")
        let decoded = try JSONDecoder().decode(
            [Decimal128].self, from: Data("[\"3.25\", 12, 1.5]".utf8))
        #expect(decoded == ["3.25", 12, "1.5"])
    }

    @Test func storedQueriedSortedAndAggregated() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let precise: Decimal128 = "1234567890.123456789012345678901234"
            try realm.write {
                for (i, total) in ["19.99", "59.97", "100", "0.01"].enumerated() {
                    let invoice = Invoice()
                    invoice.id = i
                    invoice.total = Decimal128(value: total)
                    invoice.discount = i == 0 ? "1.5" : nil
                    invoice.lines.append(objectsIn: ["0.1", "0.2"])
                    realm.add(invoice)
                }
                realm.add(Invoice(value: ["id": 9, "total": precise] as [String: Any]))
                // Strings and numbers convert, as in RealmSwift.
                realm.add(Invoice(value: ["id": 10, "total": "12.5", "discount": 2, "lines": ["0.5", 1, 0.25]] as [String: Any]))
            }
            let invoices = realm.objects(Invoice.self)
            #expect(realm.object(ofType: Invoice.self, forPrimaryKey: 9)?.total == precise)
            let converted = try #require(realm.object(ofType: Invoice.self, forPrimaryKey: 10))
            #expect(converted.total == "12.5" && converted.discount == 2 && Array(converted.lines) == ["0.5", 1, "0.25"])
            #expect(
                realm.object(ofType: Invoice.self, forPrimaryKey: 9)?.total.stringValue
                    == precise.stringValue)
            #expect(invoices.where { $0.total > 50 }.map(\.id).sorted() == [1, 2, 9])
            #expect(invoices.where { $0.id != 10 }.count == 5)
            #expect(invoices.filter("total < %@", Decimal128("20")).map(\.id).sorted() == [0, 3, 10])
            #expect(invoices.where { $0.discount != nil }.map(\.id) == [0, 10])
            #expect(invoices.sorted(byKeyPath: "total").map(\.id) == [3, 10, 0, 1, 2, 9])
            let four = invoices.where { $0.id < 4 }
            let sum: Decimal128 = four.sum(ofProperty: "total")
            #expect(sum == "179.97")
            #expect(four.min(of: \.total) == "0.01")
            #expect(four.max(of: \.total) == "100")
            let mean: Decimal128? = four.average(ofProperty: "total")
            #expect(mean == "44.9925")
            #expect(invoices.first!.lines.sum() == "0.3")
        }
    }
}

final class IndexedAmount: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var amount: Decimal128 = 0
}

@Suite struct IndexedDecimalTests {
    /// An index on a decimal orders by value: ranges and equality through it agree with a scan.
    @Test func rangesAndEqualityThroughAnIndexAgreeWithValues() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let values: [Decimal128] = ["10", "9.5", "100", "-2", "-10.25", "0", "1.50", "1.5", "1E+3", "0.001", "-0.5"]
            try realm.write {
                for (i, v) in values.enumerated() { realm.add(IndexedAmount(value: ["id": i, "amount": v] as [String: Any])) }
            }
            let amounts = realm.objects(IndexedAmount.self)
            func ids(_ keep: (Decimal128) -> Bool) -> [Int] { values.indices.filter { keep(values[$0]) } }
            #expect(amounts.where { $0.amount > 9 }.map(\.id).sorted() == ids { $0 > 9 })
            #expect(amounts.where { $0.amount <= 1.5 }.map(\.id).sorted() == ids { $0 <= "1.5" })
            #expect(amounts.where { $0.amount == Decimal128("1.5") }.map(\.id).sorted() == ids { $0 == "1.5" })
            #expect(amounts.filter("amount BETWEEN {%@, %@}", Decimal128(-3), Decimal128(10)).map(\.id).sorted() == ids { $0 >= -3 && $0 <= 10 })
            #expect(amounts.sorted(byKeyPath: "amount").map(\.amount) == values.sorted())
            #expect(amounts.sorted(byKeyPath: "amount").limit(3).map(\.amount) == Array(values.sorted().prefix(3)))
            #expect(
                amounts.where { $0.amount > 9 }.explain().contains("index range on IndexedAmount.amount"),
                "\(amounts.where { $0.amount > 9 }.explain())")
            #expect(amounts.where { $0.amount == 1.5 }.explain().contains("index equality on IndexedAmount.amount"))
        }
    }
}
