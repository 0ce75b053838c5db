import Foundation
@testable import LMDBRealm
import Testing

/// A computed property that reads a persisted one of another type: not a persisted property.
extension Article {
    var isLong: Bool { wordCount > 1000 }
}

/// `#Predicate` translated into `QueryNode`s: the canonical text of each translation, and, for
/// every predicate, that the translation selects the same objects as `Predicate.evaluate`.
@Suite struct PredicateTranslationTests {
    private func text(_ predicate: Predicate<Article>) -> String {
        QueryNode(predicate).description
    }

    private func text(_ predicate: Predicate<AllTypes>) -> String {
        QueryNode(predicate).description
    }

    // MARK: - Comparisons

    @Test func comparisonsWithAConstant() {
        #expect(text(#Predicate<Article> { $0.wordCount > 500 && $0.section == "Sports" }) == "(wordCount > 500 AND section == 'Sports')")
        #expect(text(#Predicate<Article> { $0.wordCount < 500 }) == "wordCount < 500")
        #expect(text(#Predicate<Article> { $0.wordCount <= 500 }) == "wordCount <= 500")
        #expect(text(#Predicate<Article> { $0.wordCount >= 500 }) == "wordCount >= 500")
        #expect(text(#Predicate<Article> { $0.section != "Arts" }) == "section != 'Arts'")
        let cutoff = Date(timeIntervalSince1970: 1_000)
        #expect(text(#Predicate<Article> { $0.pubDate < cutoff }) == "pubDate < T1000.0")
        let quote = "it's"
        #expect(text(#Predicate<Article> { $0.id == quote }) == "id == 'it\\'s'")
    }

    @Test func constantOnTheLeftFlipsTheOperator() {
        #expect(text(#Predicate<Article> { 500 < $0.wordCount }) == "wordCount > 500")
        #expect(text(#Predicate<Article> { 500 <= $0.wordCount }) == "wordCount >= 500")
        #expect(text(#Predicate<Article> { 500 > $0.wordCount }) == "wordCount < 500")
        #expect(text(#Predicate<Article> { 500 >= $0.wordCount }) == "wordCount <= 500")
        #expect(text(#Predicate<Article> { "Sports" == $0.section }) == "section == 'Sports'")
        #expect(text(#Predicate<Article> { "Sports" != $0.section }) == "section != 'Sports'")
    }

    @Test func everyPropertyKind() {
        let uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        let date = Date(timeIntervalSince1970: 86_400)
        let bytes = Data([1, 2, 3])
        let amount = Decimal(string: "2.5")!
        #expect(text(#Predicate<AllTypes> { $0.int8 == 5 }) == "int8 == 5")
        #expect(text(#Predicate<AllTypes> { $0.int16 > -3 }) == "int16 > -3")
        #expect(text(#Predicate<AllTypes> { $0.int64 != 7 }) == "int64 != 7")
        #expect(text(#Predicate<AllTypes> { $0.float > 1.5 }) == "float > 1.5")
        #expect(text(#Predicate<AllTypes> { $0.double <= 2.25 }) == "double <= 2.25")
        #expect(text(#Predicate<AllTypes> { $0.decimal > amount }) == "decimal > decimal(2.5)")
        #expect(text(#Predicate<AllTypes> { $0.date >= date }) == "date >= T86400.0")
        #expect(text(#Predicate<AllTypes> { $0.data == bytes }) == "data == data(3 bytes)")
        #expect(text(#Predicate<AllTypes> { $0.uuid == uuid }) == "uuid == uuid(00000000-0000-0000-0000-000000000001)")
        #expect(text(#Predicate<AllTypes> { $0.optString == "a" }) == "optString == 'a'")
        #expect(text(#Predicate<AllTypes> { $0.optDouble != 1.5 }) == "optDouble != 1.5")
    }

    @Test func subclassesSeeInheritedProperties() {
        #expect(QueryNode(#Predicate<Cat> { $0.name == "Tom" && $0.lives < 9 }).description == "(name == 'Tom' AND lives < 9)")
    }

    @Test func boolProperties() {
        #expect(text(#Predicate<AllTypes> { $0.bool }) == "bool == true")
        #expect(text(#Predicate<AllTypes> { !$0.bool }) == "bool == false")
        #expect(text(#Predicate<AllTypes> { $0.bool == false }) == "bool == false")
        #expect(text(#Predicate<AllTypes> { $0.bool && $0.int > 1 }) == "(bool == true AND int > 1)")
        #expect(text(#Predicate<AllTypes> { $0.optBool == true }) == "optBool == true")
        #expect(text(#Predicate<AllTypes> { $0.optBool ?? false }) == "optBool == true")
        #expect(text(#Predicate<AllTypes> { $0.optBool ?? true }) == "(optBool == true OR optBool == nil)")
        #expect(text(#Predicate<AllTypes> { $0.optBool! }) == "optBool == true")
        #expect(text(#Predicate<AllTypes> { !$0.optBool! }) == "optBool == false")
        #expect(text(#Predicate<AllTypes> { ($0.int > 3) == false }) == "NOT int > 3")
    }

    // MARK: - Optionals

    @Test func nilComparisons() {
        #expect(text(#Predicate<Article> { $0.abstract == nil }) == "abstract == nil")
        #expect(text(#Predicate<Article> { $0.abstract != nil }) == "abstract != nil")
        #expect(text(#Predicate<Article> { nil == $0.abstract }) == "abstract == nil")
        #expect(text(#Predicate<AllTypes> { $0.optInt == nil || $0.optInt == 3 }) == "(optInt == nil OR optInt == 3)")
        #expect(text(#Predicate<AllTypes> { $0.optInt != 3 }) == "optInt != 3")
    }

    @Test func forcedUnwrapsExcludeNilBothWays() {
        // `$0.optInt! > 3` throws for nil, so nil is neither selected nor selected by the negation.
        #expect(text(#Predicate<AllTypes> { $0.optInt! > 3 }) == "optInt > 3")
        #expect(text(#Predicate<AllTypes> { !($0.optInt! > 3) }) == "(optInt != nil AND NOT optInt > 3)")
        #expect(text(#Predicate<AllTypes> { $0.optInt! != 3 }) == "(optInt != nil AND optInt != 3)")
        #expect(text(#Predicate<Article> { $0.abstract!.starts(with: "A") }) == "abstract BEGINSWITH 'A'")
        #expect(text(#Predicate<Article> { !$0.abstract!.starts(with: "A") }) == "(abstract != nil AND NOT abstract BEGINSWITH 'A')")
        // A throwing left operand of || keeps its false case apart.
        #expect(text(#Predicate<AllTypes> { $0.optInt! > 3 || $0.int == 1 }) == "(optInt > 3 OR (optInt != nil AND NOT optInt > 3 AND int == 1))")
        // A throwing right operand of &&: false where the left is false, or where it is true and the right false.
        #expect(text(#Predicate<AllTypes> { !($0.int == 1 && $0.optInt! > 3) }) == "(NOT int == 1 OR (optInt != nil AND NOT optInt > 3))")
    }

    @Test func optionalChainingAndIfLet() {
        #expect(text(#Predicate<Article> { $0.abstract?.contains("x") == true }) == "abstract CONTAINS 'x'")
        #expect(text(#Predicate<Article> { $0.abstract?.contains("x") == false }) == "(abstract != nil AND NOT abstract CONTAINS 'x')")
        #expect(text(#Predicate<Article> { $0.abstract?.contains("x") == nil }) == "abstract == nil")
        #expect(text(#Predicate<Article> { $0.abstract?.contains("x") != true }) == "NOT abstract CONTAINS 'x'")
        #expect(text(#Predicate<Article> { $0.abstract?.contains("x") ?? false }) == "abstract CONTAINS 'x'")
        #expect(text(#Predicate<AllTypes> { $0.optInt.flatMap { $0 > 3 } == false }) == "(optInt != nil AND NOT optInt > 3)")
        #expect(text(#Predicate<AllTypes> { $0.optInt.flatMap { $0 != 3 } == true }) == "(optInt != nil AND optInt != 3)")
        #expect(text(#Predicate<Article> {
            if let abstract = $0.abstract { abstract.contains("x") } else { true }
        }) == "(abstract CONTAINS 'x' OR abstract == nil)")
        #expect(text(#Predicate<AllTypes> { $0.optString?.starts(with: "a") ?? false }) == "optString BEGINSWITH 'a'")
    }

    @Test func nilCoalescingWithAConstant() {
        #expect(text(#Predicate<Article> { ($0.abstract ?? "none") == "none" }) == "(abstract == nil OR abstract == 'none')")
        #expect(text(#Predicate<Article> { ($0.abstract ?? "") == "x" }) == "abstract == 'x'")
        #expect(text(#Predicate<Article> { ($0.abstract ?? "") != "x" }) == "(abstract == nil OR abstract != 'x')")
        #expect(text(#Predicate<AllTypes> { ($0.optInt ?? 0) < 5 }) == "(optInt == nil OR optInt < 5)")
        #expect(text(#Predicate<AllTypes> { ($0.optInt ?? 10) < 5 }) == "optInt < 5")
        #expect(text(#Predicate<AllTypes> { ($0.optString ?? "").contains("b") }) == "optString CONTAINS 'b'")
    }

    // MARK: - Ranges, lists and strings

    @Test func rangesBecomeBetweenOrBounds() {
        #expect(text(#Predicate<Article> { (1...5).contains($0.wordCount) }) == "wordCount BETWEEN {1, 5}")
        #expect(text(#Predicate<Article> { (1..<5).contains($0.wordCount) }) == "(wordCount >= 1 AND wordCount < 5)")
        let closed = 10...20, open = 10..<20, from = 100..., through = ...100, upTo = ..<100
        #expect(text(#Predicate<Article> { closed.contains($0.wordCount) }) == "wordCount BETWEEN {10, 20}")
        #expect(text(#Predicate<Article> { open.contains($0.wordCount) }) == "(wordCount >= 10 AND wordCount < 20)")
        #expect(text(#Predicate<Article> { from.contains($0.wordCount) }) == "wordCount >= 100")
        #expect(text(#Predicate<Article> { through.contains($0.wordCount) }) == "wordCount <= 100")
        #expect(text(#Predicate<Article> { upTo.contains($0.wordCount) }) == "wordCount < 100")
        #expect(text(#Predicate<Article> { ("a"..."m").contains($0.section) }) == "(section >= 'a' AND section <= 'm')")
        let start = Date(timeIntervalSince1970: 0), end = Date(timeIntervalSince1970: 10)
        #expect(text(#Predicate<Article> { (start...end).contains($0.pubDate) }) == "pubDate BETWEEN {T0.0, T10.0}")
        #expect(text(#Predicate<AllTypes> { (1...5).contains($0.optInt!) }) == "optInt BETWEEN {1, 5}")
        // `lower..<upper` with lower > upper throws for every object.
        let low = 5, high = 1
        #expect(text(#Predicate<Article> { (low..<high).contains($0.wordCount) }) == "FALSEPREDICATE")
        #expect(text(#Predicate<Article> { !(low..<high).contains($0.wordCount) }) == "FALSEPREDICATE")
    }

    @Test func constantListsBecomeMembership() {
        #expect(text(#Predicate<Article> { ["Sports", "Arts"].contains($0.section) }) == "section IN {'Sports', 'Arts'}")
        let sections: Set = ["World"]
        #expect(text(#Predicate<Article> { sections.contains($0.section) }) == "section IN {'World'}")
        let none: [String] = []
        #expect(text(#Predicate<Article> { none.contains($0.section) }) == "FALSEPREDICATE")
        let withNil: [String?] = ["a", nil]
        #expect(text(#Predicate<Article> { withNil.contains($0.abstract) }) == "abstract IN {'a', nil}")
        #expect(text(#Predicate<AllTypes> { [1, 2].contains($0.optInt ?? 1) }) == "(optInt == nil OR optInt IN {1, 2})")
    }

    @Test func stringMethods() {
        #expect(text(#Predicate<Article> { $0.url.starts(with: "http") }) == "url BEGINSWITH 'http'")
        #expect(text(#Predicate<Article> { $0.leadParagraph.contains("Lead") }) == "leadParagraph CONTAINS 'Lead'")
        #expect(text(#Predicate<Article> { !$0.url.starts(with: "https") }) == "NOT url BEGINSWITH 'https'")
        // Every string starts with and contains "".
        #expect(text(#Predicate<Article> { $0.url.starts(with: "") }) == "TRUEPREDICATE")
        #expect(text(#Predicate<Article> { $0.abstract!.contains("") }) == "abstract != nil")
        // The constant holding the property is not a query.
        #expect(text(#Predicate<Article> { "https://example.com/a".starts(with: $0.url) }) == "BLOCK")
        #expect(text(#Predicate<Article> { "Sports and Arts".contains($0.section) }) == "BLOCK")
    }

    // MARK: - Logic and constants

    @Test func logic() {
        #expect(text(#Predicate<Article> { !($0.section == "Sports") }) == "NOT section == 'Sports'")
        #expect(text(#Predicate<Article> { !(!($0.section == "Sports")) }) == "section == 'Sports'")
        #expect(text(#Predicate<Article> { $0.wordCount > 500 || !$0.url.starts(with: "https") }) == "(wordCount > 500 OR NOT url BEGINSWITH 'https')")
        #expect(text(#Predicate<Article> { $0.wordCount > 1 && $0.wordCount < 9 && $0.section == "A" }) == "(wordCount > 1 AND wordCount < 9 AND section == 'A')")
        let nested = #Predicate<Article> { ($0.wordCount > 1 || $0.wordCount < -1) && !($0.section == "A" || $0.section == "B") }
        #expect(text(nested) == "((wordCount > 1 OR wordCount < -1) AND NOT (section == 'A' OR section == 'B'))")
    }

    @Test func constants() {
        #expect(text(#Predicate<Article> { _ in true }) == "TRUEPREDICATE")
        #expect(text(#Predicate<Article> { _ in false }) == "FALSEPREDICATE")
        let on = true, off = false
        #expect(text(#Predicate<Article> { on && $0.wordCount > 1 }) == "wordCount > 1")
        #expect(text(#Predicate<Article> { off && $0.wordCount > 1 }) == "FALSEPREDICATE")
        #expect(text(#Predicate<Article> { off || $0.wordCount > 1 }) == "wordCount > 1")
        #expect(text(#Predicate<Article> { _ in 1 < 2 }) == "TRUEPREDICATE")
    }

    // MARK: - Fallback to blocks

    @Test func untranslatablePartsBecomeBlocks() {
        // Arithmetic, properties of properties, two properties, computed properties.
        #expect(text(#Predicate<Article> { $0.wordCount * 2 > 100 }) == "BLOCK")
        #expect(text(#Predicate<Article> { $0.wordCount > 500 && $0.section.count > 3 }) == "(wordCount > 500 AND BLOCK)")
        #expect(text(#Predicate<Article> { $0.id == $0.section }) == "BLOCK")
        #expect(text(#Predicate<Article> { $0.isLong }) == "BLOCK")
        #expect(text(#Predicate<Article> { $0.isLong || $0.section == "Sports" }) == "(BLOCK OR section == 'Sports')")
        // A block that cannot throw is negated as a whole.
        #expect(text(#Predicate<Article> { !($0.wordCount > 500 && $0.section.count > 3) }) == "NOT (wordCount > 500 AND BLOCK)")
        // One that can throw keeps its false case apart: `BLOCK` twice, one per case.
        #expect(text(#Predicate<Article> { $0.abstract!.count > 3 || $0.wordCount > 5 }) == "(BLOCK OR (BLOCK AND wordCount > 5))")
        // A `flatMap` body that does not translate falls back whole: a block cannot bind its variable.
        #expect(text(#Predicate<Article> { $0.abstract.flatMap { $0.count > 3 } == true && $0.wordCount > 5 }) == "(BLOCK AND wordCount > 5)")
        // A captured NaN compares unequal to everything in Swift; left to Swift.
        let notANumber = Double(bitPattern: 0x7FF8_0000_0000_0000)
        #expect(text(#Predicate<AllTypes> { $0.double == notANumber }) == "BLOCK")
        // `lower...upper` with lower > upper traps in Foundation; left to it.
        let low = 5, high = 1
        #expect(text(#Predicate<Article> { (low...high).contains($0.wordCount) }) == "BLOCK")
    }

    @Test func aWhollyUntranslatablePredicateIsOneBlock() throws {
        let predicate = #Predicate<Article> { $0.wordCount % 2 == 0 || $0.section.count == 6 }
        let node = QueryNode(predicate)
        guard case .block(let test) = node else {
            Issue.record("expected one block, got \(node)")
            return
        }
        for article in Self.articles() {
            #expect(test(article) == (try predicate.evaluate(article)), "\(article.id)")
        }
    }

    @Test func blocksOnlyTestTheirOwnSubexpression() {
        // The block of `(wordCount > 500 AND BLOCK)` tests `section.count > 3` alone.
        let node = QueryNode(#Predicate<Article> { $0.wordCount > 500 && $0.section.count > 3 })
        guard case .and(let children) = node, children.count == 2, case .block(let test) = children[1] else {
            Issue.record("unexpected translation \(node)")
            return
        }
        #expect(test(Article(id: "a", section: "Sports", wordCount: 1)))
        #expect(!test(Article(id: "b", section: "Art", wordCount: 1_000)))
    }

    @Test func computedPropertyOfTheSameTypeIsNotTakenForTheProperty() {
        #expect(text(#Predicate<Article> { $0.headline == "T-a" }) == "BLOCK")
        #expect(ClassInfo.of(Article.self).propertyName(for: \Article.headline) == nil)
        #expect(ClassInfo.of(Article.self).propertyName(for: \Article.id) == "id")
        #expect(ClassInfo.of(Article.self).propertyName(for: \Article.abstract) == "abstract")
    }

    // MARK: - Same objects as Predicate.evaluate

    static func articles() -> [Article] {
        var articles: [Article] = []
        let sections = ["Sports", "Arts", "World", "a", "m", "z"]
        let counts = [-2, 0, 1, 3, 5, 10, 15, 20, 100, 500, 501, 1_000, 1_001]
        let abstracts: [String?] = [nil, "", "x marks", "none", "A start", "Axe"]
        let urls = ["https://example.com", "http://example.com", "ftp://x", ""]
        var i = 0
        for count in counts {
            for (s, section) in sections.enumerated() {
                let article = Article(id: "\(i)", section: section, wordCount: count)
                article.abstract = abstracts[(i + s) % abstracts.count]
                article.url = urls[i % urls.count]
                article.pubDate = Date(timeIntervalSince1970: Double(i % 12))
                articles.append(article)
                i += 1
            }
        }
        return articles
    }

    static func allTypes() -> [AllTypes] {
        var objects: [AllTypes] = []
        let optInts: [Int?] = [nil, 0, 1, 3, 4, 5, 10]
        let optBools: [Bool?] = [nil, true, false]
        let optStrings: [String?] = [nil, "", "abc", "b", "a"]
        for (i, optInt) in optInts.enumerated() {
            for (j, optBool) in optBools.enumerated() {
                for (k, optString) in optStrings.enumerated() {
                    let o = AllTypes()
                    o.id = objects.count
                    o.int = (i + j + k) % 4
                    o.bool = (i + k) % 2 == 0
                    o.double = [0, 2.25, 3][k % 3]
                    o.optInt = optInt
                    o.optBool = optBool
                    o.optString = optString
                    objects.append(o)
                }
            }
        }
        return objects
    }

    /// Predicates over `Article`, with and without blocks, including every throwing form.
    static let articlePredicates: [(String, Predicate<Article>)] = {
        let low = 5, high = 1, closed = 10...20, from = 100...
        let withNil: [String?] = ["none", nil]
        let six = Date(timeIntervalSince1970: 6)
        return [
            ("and", #Predicate<Article> { $0.wordCount > 500 && $0.section == "Sports" }),
            ("flipped", #Predicate<Article> { 500 >= $0.wordCount }),
            ("nil", #Predicate<Article> { $0.abstract == nil }),
            ("not nil", #Predicate<Article> { $0.abstract != nil || $0.wordCount == 0 }),
            ("optional !=", #Predicate<Article> { $0.abstract != "none" }),
            ("closed range", #Predicate<Article> { (1...5).contains($0.wordCount) }),
            ("half-open range", #Predicate<Article> { !(1..<5).contains($0.wordCount) }),
            ("captured ranges", #Predicate<Article> { closed.contains($0.wordCount) || from.contains($0.wordCount) }),
            ("string range", #Predicate<Article> { ("a"..."m").contains($0.section) }),
            ("inverted range", #Predicate<Article> { !(low..<high).contains($0.wordCount) || $0.wordCount == 0 }),
            ("membership", #Predicate<Article> { ["Sports", "Arts"].contains($0.section) }),
            ("membership with nil", #Predicate<Article> { !withNil.contains($0.abstract) }),
            ("starts", #Predicate<Article> { $0.url.starts(with: "http") }),
            ("contains", #Predicate<Article> { !$0.url.contains("example") }),
            ("empty prefix", #Predicate<Article> { $0.url.starts(with: "") }),
            ("unwrap", #Predicate<Article> { $0.abstract!.starts(with: "A") }),
            ("negated unwrap", #Predicate<Article> { !$0.abstract!.starts(with: "A") }),
            ("negated unwrap contains empty", #Predicate<Article> { !$0.abstract!.contains("") }),
            ("unwrap or", #Predicate<Article> { $0.abstract!.contains("x") || $0.wordCount > 100 }),
            ("or unwrap", #Predicate<Article> { !($0.wordCount > 100 || $0.abstract!.contains("x")) }),
            ("and unwrap", #Predicate<Article> { !($0.wordCount > 100 && $0.abstract!.contains("x")) }),
            ("unwrap and", #Predicate<Article> { !($0.abstract!.contains("x") && $0.wordCount > 100) }),
            ("optional chaining", #Predicate<Article> { $0.abstract?.contains("x") == true }),
            ("optional chaining false", #Predicate<Article> { $0.abstract?.contains("x") == false }),
            ("optional chaining not true", #Predicate<Article> { $0.abstract?.contains("x") != true }),
            ("optional chaining nil", #Predicate<Article> { $0.abstract?.starts(with: "A") != nil }),
            ("if let", #Predicate<Article> { if let a = $0.abstract { a.contains("x") } else { true } }),
            ("if let negated", #Predicate<Article> { if let a = $0.abstract { !a.starts(with: "A") } else { false } }),
            ("coalesce", #Predicate<Article> { ($0.abstract ?? "none") == "none" }),
            ("coalesce contains", #Predicate<Article> { !($0.abstract ?? "x").contains("x") }),
            ("coalesce membership", #Predicate<Article> { ["", "Axe"].contains($0.abstract ?? "") }),
            ("block", #Predicate<Article> { $0.wordCount * 2 > 100 }),
            ("mixed block", #Predicate<Article> { $0.wordCount > 500 && $0.section.count > 3 }),
            ("negated mixed block", #Predicate<Article> { !($0.wordCount > 500 && $0.section.count > 3) }),
            ("block or", #Predicate<Article> { $0.section.count == 4 || $0.wordCount > 500 }),
            ("throwing block or", #Predicate<Article> { $0.abstract!.count > 3 || $0.wordCount > 5 }),
            ("negated throwing block or", #Predicate<Article> { !($0.abstract!.count > 3 || $0.wordCount > 5) }),
            ("negated throwing block and", #Predicate<Article> { !($0.abstract!.count > 3 && $0.wordCount > 5) }),
            ("computed", #Predicate<Article> { $0.isLong || $0.section == "a" }),
            ("two properties", #Predicate<Article> { $0.id == $0.section || $0.wordCount == 3 }),
            ("flatMap with block", #Predicate<Article> { !($0.abstract.flatMap { $0.count > 3 } == true && $0.wordCount > 5) }),
            ("date", #Predicate<Article> { $0.pubDate >= six }),
        ]
    }()

    static let allTypesPredicates: [(String, Predicate<AllTypes>)] = {
        [
            ("bool", #Predicate<AllTypes> { $0.bool }),
            ("not bool", #Predicate<AllTypes> { !$0.bool || $0.int == 2 }),
            ("optBool", #Predicate<AllTypes> { $0.optBool == true }),
            ("optBool != false", #Predicate<AllTypes> { $0.optBool != false }),
            ("optBool ?? true", #Predicate<AllTypes> { $0.optBool ?? true }),
            ("not optBool ?? false", #Predicate<AllTypes> { !($0.optBool ?? false) }),
            ("optBool!", #Predicate<AllTypes> { !$0.optBool! }),
            ("optInt!", #Predicate<AllTypes> { $0.optInt! > 3 }),
            ("not optInt!", #Predicate<AllTypes> { !($0.optInt! > 3) }),
            ("optInt! !=", #Predicate<AllTypes> { !($0.optInt! != 3) }),
            ("optInt! or", #Predicate<AllTypes> { $0.optInt! > 3 || $0.int == 1 }),
            ("and optInt!", #Predicate<AllTypes> { !($0.int == 1 && $0.optInt! > 3) }),
            ("optInt !=", #Predicate<AllTypes> { $0.optInt != 3 }),
            ("optInt nil", #Predicate<AllTypes> { $0.optInt == nil || $0.optInt == 3 }),
            ("flatMap false", #Predicate<AllTypes> { $0.optInt.flatMap { $0 > 3 } == false }),
            ("flatMap !=", #Predicate<AllTypes> { $0.optInt.flatMap { $0 != 3 } == true }),
            ("flatMap != nil", #Predicate<AllTypes> { $0.optInt.flatMap { $0 != 3 } != nil }),
            ("coalesce <", #Predicate<AllTypes> { ($0.optInt ?? 0) < 5 }),
            ("coalesce < default out", #Predicate<AllTypes> { !(($0.optInt ?? 10) < 5) }),
            ("coalesce range", #Predicate<AllTypes> { (1...5).contains($0.optInt ?? 3) }),
            ("coalesce membership", #Predicate<AllTypes> { [1, 2].contains($0.optInt ?? 1) }),
            ("unwrap range", #Predicate<AllTypes> { !(1...5).contains($0.optInt!) }),
            ("optString chaining", #Predicate<AllTypes> { $0.optString?.starts(with: "a") ?? false }),
            ("optString contains", #Predicate<AllTypes> { !($0.optString ?? "").contains("b") }),
            ("optString empty", #Predicate<AllTypes> { !$0.optString!.contains("") }),
            ("double", #Predicate<AllTypes> { $0.double <= 2.25 }),
            ("bool equality", #Predicate<AllTypes> { ($0.int > 1) == false }),
        ]
    }()

    @Test func articleTranslationsSelectWhatTheirPredicatesSelect() {
        let articles = Self.articles()
        for (name, predicate) in Self.articlePredicates {
            let node = QueryNode(predicate)
            for article in articles {
                let expected = (try? predicate.evaluate(article)) ?? false
                #expect(
                    ReferenceEvaluator(article: article).matches(node) == expected,
                    "\(name): \(node) on id \(article.id), wordCount \(article.wordCount), abstract \(String(describing: article.abstract))")
            }
        }
    }

    @Test func allTypesTranslationsSelectWhatTheirPredicatesSelect() {
        let objects = Self.allTypes()
        for (name, predicate) in Self.allTypesPredicates {
            let node = QueryNode(predicate)
            for object in objects {
                let expected = (try? predicate.evaluate(object)) ?? false
                #expect(
                    ReferenceEvaluator(allTypes: object).matches(node) == expected,
                    "\(name): \(node) on optInt \(String(describing: object.optInt)), optBool \(String(describing: object.optBool))")
            }
        }
    }

    /// The reference evaluator itself must be able to disagree.
    @Test func referenceEvaluatorCanFail() {
        let article = Article(id: "a", section: "Sports", wordCount: 10)
        let evaluator = ReferenceEvaluator(article: article)
        #expect(evaluator.matches(.comparison(property: "wordCount", op: .greater, value: .int(5), options: [])))
        #expect(!evaluator.matches(.comparison(property: "wordCount", op: .greater, value: .int(50), options: [])))
        #expect(!evaluator.matches(.comparison(property: "abstract", op: .notEqual, value: .null, options: [])))
        #expect(evaluator.matches(.comparison(property: "abstract", op: .notEqual, value: .string("x"), options: [])))
        #expect(!evaluator.matches(.comparison(property: "abstract", op: .less, value: .string("x"), options: [])))
    }
}

extension Article {
    /// Reads the persisted `id`: the key-path recorder cannot tell it from `id`.
    var headline: String { "T-" + id }
}

/// Evaluates a `QueryNode` on an unmanaged object with the semantics the translator assumes
/// of the query engine: `nil` equals only `nil`, `!= value` matches `nil`, ordering and string
/// operators never match `nil`, strings compare by UTF-8 bytes.
struct ReferenceEvaluator {
    let object: Object
    let value: (String) -> QueryValue

    init(article: Article) {
        object = article
        value = { name in
            switch name {
            case "id": .string(article.id)
            case "url": .string(article.url)
            case "leadParagraph": .string(article.leadParagraph)
            case "abstract": article.abstract.map(QueryValue.string) ?? .null
            case "section": .string(article.section)
            case "pubDate": .date(article.pubDate)
            case "wordCount": .int(Int64(article.wordCount))
            default: fatalError("no property \(name)")
            }
        }
    }

    init(allTypes o: AllTypes) {
        object = o
        value = { name in
            switch name {
            case "int": .int(Int64(o.int))
            case "bool": .bool(o.bool)
            case "double": .double(o.double)
            case "optInt": o.optInt.map { .int(Int64($0)) } ?? .null
            case "optBool": o.optBool.map(QueryValue.bool) ?? .null
            case "optString": o.optString.map(QueryValue.string) ?? .null
            default: fatalError("no property \(name)")
            }
        }
    }

    func matches(_ node: QueryNode) -> Bool {
        switch node {
        case .constant(let result):
            return result
        case .comparison(let property, let op, let constant, let options):
            precondition(options.isEmpty)
            let stored = value(property)
            switch op {
            case .equal: return Self.equal(stored, constant)
            case .notEqual: return !Self.equal(stored, constant)
            case .less: return Self.order(stored, constant).map { $0 < 0 } ?? false
            case .lessOrEqual: return Self.order(stored, constant).map { $0 <= 0 } ?? false
            case .greater: return Self.order(stored, constant).map { $0 > 0 } ?? false
            case .greaterOrEqual: return Self.order(stored, constant).map { $0 >= 0 } ?? false
            }
        case .between(let property, let lower, let upper):
            let stored = value(property)
            guard let low = Self.order(stored, lower), let high = Self.order(stored, upper) else { return false }
            return low >= 0 && high <= 0
        case .membership(let property, let values):
            let stored = value(property)
            return values.contains { Self.equal(stored, $0) }
        case .stringMatch(let property, let op, let pattern, let options):
            precondition(options.isEmpty)
            guard case .string(let text) = value(property) else { return false }
            let bytes = Array(text.utf8), needle = Array(pattern.utf8)
            switch op {
            case .beginsWith: return bytes.starts(with: needle)
            case .endsWith: return bytes.reversed().starts(with: needle.reversed())
            case .contains:
                if needle.isEmpty { return true }
                guard bytes.count >= needle.count else { return false }
                return (0...(bytes.count - needle.count)).contains { Array(bytes[$0..<($0 + needle.count)]) == needle }
            case .like: fatalError("LIKE is not produced by the translation")
            }
        case .and(let children):
            return children.allSatisfy(matches)
        case .or(let children):
            return children.contains(where: matches)
        case .not(let child):
            return !matches(child)
        case .block(let test):
            return test(object)
        case .collection, .aggregate, .elementOf:
            fatalError("the translation produces no collection tests")
        }
    }

    private static func equal(_ a: QueryValue, _ b: QueryValue) -> Bool {
        if a == .null || b == .null { return a == .null && b == .null }
        if let order = order(a, b) { return order == 0 }
        return a == b
    }

    /// -1, 0, 1; `nil` if either is `nil` or they do not order.
    private static func order(_ a: QueryValue, _ b: QueryValue) -> Int? {
        func sign<C: Comparable>(_ x: C, _ y: C) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        switch (a, b) {
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.int(let x), .double(let y)): return sign(Double(x), y)
        case (.double(let x), .int(let y)): return sign(x, Double(y))
        case (.double(let x), .double(let y)): return sign(x, y)
        case (.date(let x), .date(let y)): return sign(x, y)
        case (.string(let x), .string(let y)):
            let (p, q) = (Array(x.utf8), Array(y.utf8))
            return p == q ? 0 : (p.lexicographicallyPrecedes(q) ? -1 : 1)
        default: return nil
        }
    }
}
