import Foundation
import Synchronization
import Testing

@testable import LMDBRealm

/// The canonical form of `format` parsed against `schema`.
private func parsed(_ format: String, _ arguments: Any?..., in schema: ObjectSchema = Article.sharedSchema()) throws
    -> String
{
    try PredicateParser.parse(format, arguments: arguments, schema: schema).description
}

/// The message of the error parsing `format` throws, or `nil` if it parses.
private func failure(_ format: String, _ arguments: Any?..., in schema: ObjectSchema = Article.sharedSchema())
    -> String?
{
    do {
        _ = try PredicateParser.parse(format, arguments: arguments, schema: schema)
        return nil
    } catch {
        #expect(error.code == .invalidQuery)
        return error.message
    }
}

private let uuidText = "5B2E1B55-3F5C-4A2B-9C3D-6E7F8A9B0C1D"
private let oidText = "0123456789abcdef01234567"

@Suite struct PredicateParserTests {
    // MARK: Operators, modifiers, keywords

    @Test(arguments: [
        ("wordCount == 5", "wordCount == 5"),
        ("wordCount = 5", "wordCount == 5"),
        ("wordCount != 5", "wordCount != 5"),
        ("wordCount <> 5", "wordCount != 5"),
        ("wordCount < 5", "wordCount < 5"),
        ("wordCount <= 5", "wordCount <= 5"),
        ("wordCount =< 5", "wordCount <= 5"),
        ("wordCount > 5", "wordCount > 5"),
        ("wordCount >= 5", "wordCount >= 5"),
        ("wordCount => 5", "wordCount >= 5"),
        ("wordCount==5", "wordCount == 5"),
        ("\twordCount\n>\r\n5 ", "wordCount > 5"),
        ("#wordCount == 5", "wordCount == 5"),
        ("section ==[c] 'a'", "section ==[c] 'a'"),
        ("section ==[d] 'a'", "section ==[d] 'a'"),
        ("section ==[cd] 'a'", "section ==[cd] 'a'"),
        ("section ==[dc] 'a'", "section ==[cd] 'a'"),
        ("section ==[C] 'a'", "section ==[c] 'a'"),
        ("section != [cd] 'a'", "section !=[cd] 'a'"),
        ("section <>[c] 'a'", "section !=[c] 'a'"),
        ("section < 'm'", "section < 'm'"),
        ("section BEGINSWITH 'Sp'", "section BEGINSWITH 'Sp'"),
        ("section beginswith[c] 'sp'", "section BEGINSWITH[c] 'sp'"),
        ("section ENDSWITH[d] 'ts'", "section ENDSWITH[d] 'ts'"),
        ("section EndsWith 'ts'", "section ENDSWITH 'ts'"),
        ("section CONTAINS[cd] 'por'", "section CONTAINS[cd] 'por'"),
        ("section contains 'por'", "section CONTAINS 'por'"),
        ("url LIKE 'https://*.com/?'", "url LIKE 'https://*.com/?'"),
        ("url like[c] '*X*'", "url LIKE[c] '*X*'"),
        ("abstract CONTAINS 'x'", "abstract CONTAINS 'x'"),
        ("section IN {'a', 'b'}", "section IN {'a', 'b'}"),
        ("wordCount in {1,2,3}", "wordCount IN {1, 2, 3}"),
        ("wordCount IN {}", "wordCount IN {}"),
        ("abstract IN {nil, 'x'}", "abstract IN {nil, 'x'}"),
        ("wordCount BETWEEN {1, 5}", "wordCount BETWEEN {1, 5}"),
        ("wordCount between {1.5, 2}", "wordCount BETWEEN {1.5, 2}"),
        ("section BETWEEN {'a', 'c'}", "section BETWEEN {'a', 'c'}"),
        ("abstract == nil", "abstract == nil"),
        ("abstract == NULL", "abstract == nil"),
        ("abstract != Nil", "abstract != nil"),
        ("section == nil", "section == nil"),
        ("wordCount != nil", "wordCount != nil"),
        ("TRUEPREDICATE", "TRUEPREDICATE"),
        ("falsepredicate", "FALSEPREDICATE"),
        ("TruePredicate OR wordCount > 1", "(TRUEPREDICATE OR wordCount > 1)"),
    ])
    func operatorsModifiersAndKeywords(format: String, expected: String) throws {
        #expect(try parsed(format) == expected)
    }

    // MARK: Logic, precedence, parentheses

    @Test(arguments: [
        ("wordCount > 1 AND wordCount < 5", "(wordCount > 1 AND wordCount < 5)"),
        ("wordCount > 1 and wordCount < 5", "(wordCount > 1 AND wordCount < 5)"),
        ("wordCount > 1 && wordCount < 5", "(wordCount > 1 AND wordCount < 5)"),
        ("wordCount > 1 OR wordCount < 5", "(wordCount > 1 OR wordCount < 5)"),
        ("wordCount > 1 Or wordCount < 5", "(wordCount > 1 OR wordCount < 5)"),
        ("wordCount > 1 || wordCount < 5", "(wordCount > 1 OR wordCount < 5)"),
        ("NOT wordCount == 1", "NOT wordCount == 1"),
        ("not wordCount == 1", "NOT wordCount == 1"),
        ("!(wordCount == 1)", "NOT wordCount == 1"),
        ("! wordCount == 1", "NOT wordCount == 1"),
        ("NOT NOT wordCount == 1", "NOT NOT wordCount == 1"),
        ("!!wordCount == 1", "NOT NOT wordCount == 1"),
        ("wordCount == 1 OR wordCount == 2 AND wordCount == 3", "(wordCount == 1 OR (wordCount == 2 AND wordCount == 3))"),
        ("wordCount == 1 AND wordCount == 2 OR wordCount == 3", "((wordCount == 1 AND wordCount == 2) OR wordCount == 3)"),
        ("(wordCount == 1 OR wordCount == 2) AND wordCount == 3", "((wordCount == 1 OR wordCount == 2) AND wordCount == 3)"),
        ("NOT wordCount == 1 AND wordCount == 2", "(NOT wordCount == 1 AND wordCount == 2)"),
        ("NOT (wordCount == 1 AND wordCount == 2)", "NOT (wordCount == 1 AND wordCount == 2)"),
        ("NOT wordCount == 1 OR wordCount == 2", "(NOT wordCount == 1 OR wordCount == 2)"),
        ("wordCount == 1 AND wordCount == 2 AND wordCount == 3", "(wordCount == 1 AND wordCount == 2 AND wordCount == 3)"),
        ("(wordCount == 1 AND wordCount == 2) AND (wordCount == 3 AND wordCount == 4)",
         "(wordCount == 1 AND wordCount == 2 AND wordCount == 3 AND wordCount == 4)"),
        ("wordCount == 1 OR (wordCount == 2 OR wordCount == 3)", "(wordCount == 1 OR wordCount == 2 OR wordCount == 3)"),
        ("(wordCount == 1 OR wordCount == 2) OR (wordCount == 3)", "(wordCount == 1 OR wordCount == 2 OR wordCount == 3)"),
        ("((wordCount == 1))", "wordCount == 1"),
        ("(wordCount == 1) && ((wordCount == 2) || NOT (wordCount == 3))",
         "(wordCount == 1 AND (wordCount == 2 OR NOT wordCount == 3))"),
    ])
    func logicAndPrecedence(format: String, expected: String) throws {
        #expect(try parsed(format) == expected)
    }

    @Test func flatteningMatchesTheQueryNodeHelpers() throws {
        func c(_ n: Int64) -> QueryNode { .comparison(property: "wordCount", op: .equal, value: .int(n), options: []) }
        let and = try PredicateParser.parse(
            "(wordCount == 1 AND wordCount == 2) AND wordCount == 3 AND (wordCount == 4 OR wordCount == 5)",
            arguments: [], schema: Article.sharedSchema())
        #expect(and.description == ((c(1) && c(2)) && c(3) && (c(4) || c(5))).description)
        let or = try PredicateParser.parse(
            "wordCount == 1 OR (wordCount == 2 OR wordCount == 3) OR wordCount == 4 AND wordCount == 5",
            arguments: [], schema: Article.sharedSchema())
        #expect(or.description == (c(1) || (c(2) || c(3)) || (c(4) && c(5))).description)
    }

    // MARK: Operands on either side

    @Test(arguments: [
        ("500 < wordCount", "wordCount > 500"),
        ("500 <= wordCount", "wordCount >= 500"),
        ("500 > wordCount", "wordCount < 500"),
        ("500 >= wordCount", "wordCount <= 500"),
        ("500 == wordCount", "wordCount == 500"),
        ("500 != wordCount", "wordCount != 500"),
        ("'a' ==[c] section", "section ==[c] 'a'"),
        ("nil == abstract", "abstract == nil"),
    ])
    func constantFirstFlipsTheOperator(format: String, expected: String) throws {
        #expect(try parsed(format) == expected)
    }

    // MARK: Literals

    @Test(arguments: [
        ("section == \"double\"", "section == 'double'"),
        ("section == \"it's\"", "section == 'it\\'s'"),
        ("section == 'it\\'s'", "section == 'it\\'s'"),
        ("section == \"say \\\"hi\\\"\"", "section == 'say \"hi\"'"),
        ("section == 'back\\\\slash'", "section == 'back\\\\slash'"),
        ("section == 'a\\nb\\tc\\rd'", "section == 'a\nb\tc\rd'"),
        ("section == '\\u{1F600} \\u00e9 \\uD83D\\uDE00'", "section == '😀 é 😀'"),
        ("section == 'héllo 世界'", "section == 'héllo 世界'"),
        ("section == ''", "section == ''"),
        ("section == '%@ %K'", "section == '%@ %K'"),
        ("section == 'AND OR )'", "section == 'AND OR )'"),
        ("wordCount == -5", "wordCount == -5"),
        ("wordCount == 0", "wordCount == 0"),
        ("wordCount == 0x1F", "wordCount == 31"),
        ("wordCount == 0Xff", "wordCount == 255"),
        ("wordCount == -0x10", "wordCount == -16"),
        ("wordCount == 0x7FFFFFFFFFFFFFFF", "wordCount == 9223372036854775807"),
        ("wordCount == -0x8000000000000000", "wordCount == -9223372036854775808"),
        ("wordCount == 9223372036854775807", "wordCount == 9223372036854775807"),
        ("wordCount == -9223372036854775808", "wordCount == -9223372036854775808"),
        ("wordCount > 1.5", "wordCount > 1.5"),
        ("wordCount > -2e3", "wordCount > -2000.0"),
        ("wordCount > 1E+2", "wordCount > 100.0"),
        ("wordCount > 2.5e-1", "wordCount > 0.25"),
        ("pubDate == 2015-07-01@00:00:00", "pubDate == T1435708800.0"),
        ("pubDate == 2015-07-01T00:00:00", "pubDate == T1435708800.0"),
        ("pubDate > 1970-01-01@00:00:00.5", "pubDate > T0.5"),
        ("pubDate > 1970-01-01@00:00:01.250", "pubDate > T1.25"),
        ("pubDate < 1969-12-31@23:59:59", "pubDate < T-1.0"),
        ("pubDate == 2000-02-29@12:00:00", "pubDate == T951825600.0"),
        ("pubDate == 2015-07-01@00:00:00:500000000", "pubDate == T1435708800.5"),
        ("pubDate == 1970-01-01T00:00:01:250000000", "pubDate == T1.25"),
        ("pubDate == T1435708800:0", "pubDate == T1435708800.0"),
        ("pubDate == T1:500000000", "pubDate == T1.5"),
        ("pubDate == T-1:-500000000", "pubDate == T-1.5"),
        ("pubDate==T0:0", "pubDate == T0.0"),
    ])
    func literals(format: String, expected: String) throws {
        #expect(try parsed(format) == expected)
    }

    @Test(arguments: [
        ("bool == true", "bool == true"),
        ("bool == TRUE", "bool == true"),
        ("bool == YES", "bool == true"),
        ("bool == false", "bool == false"),
        ("bool == no", "bool == false"),
        ("optBool == nil", "optBool == nil"),
        ("uuid == uuid(\(uuidText))", "uuid == uuid(\(uuidText))"),
        ("optUUID != uuid(\(uuidText.lowercased()))", "optUUID != uuid(\(uuidText))"),
        ("uuid == '\(uuidText.lowercased())'", "uuid == uuid(\(uuidText))"),
        ("uuid IN {'\(uuidText)', nil}", "uuid IN {uuid(\(uuidText)), nil}"),
        ("objectId == oid(\(oidText))", "objectId == oid(\(oidText))"),
        ("optObjectId == oid(\(oidText.uppercased()))", "optObjectId == oid(\(oidText))"),
        ("objectId == '\(oidText)'", "objectId == oid(\(oidText))"),
        ("double > 1", "double > 1"),
        ("int < 2.5", "int < 2.5"),
        ("float == 1", "float == 1"),
        ("int8 >= -0x80", "int8 >= -128"),
        ("decimal > 1.5", "decimal > 1.5"),
        ("optDecimal BETWEEN {1, 2.5}", "optDecimal BETWEEN {1, 2.5}"),
        ("date > 5", "date > 5"),
        ("optDate == 2015-07-01@00:00:00", "optDate == T1435708800.0"),
        ("optString LIKE 'a?'", "optString LIKE 'a?'"),
        ("optInt == nil OR optInt IN {1, nil}", "(optInt == nil OR optInt IN {1, nil})"),
    ])
    func literalsOfEveryPropertyKind(format: String, expected: String) throws {
        #expect(try parsed(format, in: AllTypes.sharedSchema()) == expected)
    }

    // MARK: Arguments

    @Test func valueArguments() throws {
        let allTypes = AllTypes.sharedSchema()
        #expect(try parsed("section == %@", "Sports") == "section == 'Sports'")
        #expect(try parsed("section == %@", "Sports Page".dropLast(5)) == "section == 'Sports'")
        #expect(try parsed("section == %@", nil) == "section == nil")
        #expect(try parsed("abstract == %@", String?.none) == "abstract == nil")
        #expect(try parsed("abstract == %@", NSNull()) == "abstract == nil")
        #expect(try parsed("abstract == %@", String?.some("x")) == "abstract == 'x'")
        #expect(try parsed("%@ < wordCount", 5) == "wordCount > 5")
        #expect(try parsed("wordCount == %@ OR wordCount == %@", Int8(-1), Int16(2)) == "(wordCount == -1 OR wordCount == 2)")
        #expect(try parsed("wordCount IN {%@, %@, %@}", Int32(3), Int64(4), UInt8(5)) == "wordCount IN {3, 4, 5}")
        #expect(try parsed("wordCount IN {%@, %@, %@}", UInt16(6), UInt32(7), UInt(8)) == "wordCount IN {6, 7, 8}")
        #expect(try parsed("wordCount == %@", UInt64(9)) == "wordCount == 9")
        #expect(try parsed("wordCount > %@", 1.5) == "wordCount > 1.5")
        #expect(try parsed("wordCount > %@", Float(0.5)) == "wordCount > 0.5")
        #expect(try parsed("wordCount > %@", NSNumber(value: 3)) == "wordCount > 3")
        #expect(try parsed("pubDate > %@", Date(timeIntervalSince1970: 10)) == "pubDate > T10.0")
        #expect(try parsed("bool == %@", true, in: allTypes) == "bool == true")
        #expect(try parsed("uuid == %@", UUID(uuidString: uuidText)!, in: allTypes) == "uuid == uuid(\(uuidText))")
        #expect(try parsed("uuid == %@", uuidText, in: allTypes) == "uuid == uuid(\(uuidText))")
        #expect(try parsed("objectId == %@", try ObjectId(string: oidText), in: allTypes) == "objectId == oid(\(oidText))")
        #expect(try parsed("decimal == %@", Decimal(string: "1.25")!, in: allTypes) == "decimal == decimal(1.25)")
        #expect(try parsed("data == %@", Data([1, 2, 3]), in: allTypes) == "data == data(3 bytes)")
        #expect(try parsed("section == '%@' AND wordCount == %@", 1) == "(section == '%@' AND wordCount == 1)")
    }

    /// NSPredicate's printf-style number specifiers, as RealmSwift code writes them
    /// (`filter("age > %d", 30)`): an integer for `%d`, `%i`, `%u`; a number for `%f`, `%e`, `%g`;
    /// each with a length modifier or without.
    @Test func numberSpecifiers() throws {
        #expect(try parsed("wordCount == %d", 5) == "wordCount == 5")
        #expect(try parsed("wordCount > %i AND wordCount < %u", Int8(-1), UInt(9)) == "(wordCount > -1 AND wordCount < 9)")
        #expect(try parsed("wordCount > %ld AND wordCount < %lld", 1, Int64(9)) == "(wordCount > 1 AND wordCount < 9)")
        #expect(try parsed("wordCount IN {%hd, %lu, %qd, %zd}", Int16(1), UInt(2), 3, 4) == "wordCount IN {1, 2, 3, 4}")
        #expect(try parsed("%K == %d", "wordCount", 5) == "wordCount == 5")
        #expect(try parsed("wordCount > %f", 1.5) == "wordCount > 1.5")
        #expect(try parsed("wordCount > %lf OR wordCount < %g", Float(0.5), 2.5) == "(wordCount > 0.5 OR wordCount < 2.5)")
        #expect(try parsed("wordCount > %e", 2) == parsed("wordCount > %@", 2.0), "an integer for %e is taken as a Double")
        #expect(try parsed("section == '%d' AND wordCount == %d", 1) == "(section == '%d' AND wordCount == 1)")
        #expect(failure("wordCount == %d", 1.5) == "%d at offset 13 needs an integer, argument 1 is Double")
        #expect(failure("section == %@ OR wordCount == %ld", "a", "b") == "%ld at offset 30 needs an integer, argument 2 is String")
        #expect(failure("wordCount == %f", "1") == "%f at offset 13 needs a number, argument 1 is String")
        #expect(failure("wordCount == %d", nil) == "%d at offset 13 needs an integer, argument 1 is nil")
        #expect(failure("wordCount == %d OR wordCount == %d", 1) == "expected 2 arguments for the format, got 1")
    }

    @Test func keyArguments() throws {
        #expect(try parsed("%K == %@", "wordCount", 5) == "wordCount == 5")
        #expect(try parsed("%K BEGINSWITH[c] %@", "section", "sp") == "section BEGINSWITH[c] 'sp'")
        #expect(try parsed("%@ > %K", 5, "wordCount".dropLast(0)) == "wordCount < 5")
        #expect(try parsed("%K IN %@", "wordCount", [1, 2]) == "wordCount IN {1, 2}")
    }

    @Test func listArguments() throws {
        #expect(try parsed("wordCount IN %@", [1, 2, 3]) == "wordCount IN {1, 2, 3}")
        #expect(try parsed("wordCount IN %@", [Int]()) == "wordCount IN {}")
        #expect(try parsed("wordCount IN %@", Set([7])) == "wordCount IN {7}")
        #expect(try parsed("abstract IN %@", ["a", nil]) == "abstract IN {'a', nil}")
        #expect(try parsed("wordCount IN %@", [1, 2.5] as [Any]) == "wordCount IN {1, 2.5}")
        #expect(try parsed("wordCount IN %@", [Int]?.some([4])) == "wordCount IN {4}")
        #expect(try parsed("uuid IN %@", [uuidText], in: AllTypes.sharedSchema()) == "uuid IN {uuid(\(uuidText))}")
        #expect(try parsed("wordCount BETWEEN %@", [1, 5]) == "wordCount BETWEEN {1, 5}")
        #expect(try parsed("wordCount BETWEEN {%@, %@}", 1, 5.5) == "wordCount BETWEEN {1, 5.5}")

        let set = try PredicateParser.parse("wordCount IN %@", arguments: [Set([1, 2, 3])], schema: Article.sharedSchema())
        guard case .membership("wordCount", let values) = set else {
            Issue.record("not a membership: \(set)")
            return
        }
        #expect(Set(values) == [.int(1), .int(2), .int(3)])
    }

    @Test func argumentCountMustMatch() {
        #expect(failure("wordCount == %@") == "expected 1 argument for the format, got 0")
        #expect(failure("wordCount == %@ OR %K == %@", 1) == "expected 3 arguments for the format, got 1")
        #expect(failure("%K == %@", "wordCount") == "expected 2 arguments for the format, got 1")
        #expect(failure("wordCount == 5", 1) == "expected 0 arguments for the format, got 1")
        #expect(failure("wordCount == %@", 1, 2) == "expected 1 argument for the format, got 2")
    }

    @Test func unsupportedArguments() {
        #expect(failure("wordCount == %@", [1, 2]) == "argument 1 for %@ has unsupported type Array<Int> at offset 13")
        #expect(failure("section == %@ OR wordCount == %@", "a", NSObject()) == "argument 2 for %@ has unsupported type NSObject at offset 30")
        #expect(failure("wordCount == %@", ["a": 1]) == "argument 1 for %@ has unsupported type Dictionary<String, Int> at offset 13")
        #expect(failure("wordCount == %@", [Int]?.some([1])) == "argument 1 for %@ has unsupported type Array<Int> at offset 13")
        #expect(failure("wordCount == %@", UInt64.max) == "argument 1 for %@ is out of the range of Int64 at offset 13")
        #expect(failure("wordCount IN {1, %@}", Set([1])) == "argument 1 for %@ has unsupported type Set<Int> at offset 17")
        #expect(failure("%K == 1", 5) == "%K needs a property name String, argument 1 is Int at offset 0")
        #expect(failure("%K == 1", nil) == "%K needs a property name String, argument 1 is nil at offset 0")
        #expect(failure("%K == 1", "nope") == "unknown property 'nope' on Article at offset 0")
        #expect(failure("wordCount IN %@", 5) == "argument 1 for %@ after IN or BETWEEN must be an Array or a Set, not Int at offset 13")
        #expect(failure("section IN %@", "abc") == "argument 1 for %@ after IN or BETWEEN must be an Array or a Set, not String at offset 11")
        #expect(failure("wordCount IN %@", nil) == "argument 1 for %@ after IN or BETWEEN must be an Array or a Set, not nil at offset 13")
        #expect(failure("wordCount IN %@", [NSObject()]) == "element 0 of argument 1 has unsupported type NSObject at offset 13")
        #expect(failure("wordCount IN %@", [1, "x"] as [Any]) == "cannot compare Int 'wordCount' with String at offset 13")
        #expect(failure("wordCount BETWEEN %@", [1]) == "BETWEEN needs two values {lower, upper}, got 1 at offset 18")
        #expect(failure("wordCount BETWEEN %@", [1, nil]) == "BETWEEN bounds cannot be nil (the upper bound) at offset 18")
    }

    // MARK: Errors

    @Test(arguments: [
        // Schema: properties and types.
        ("wordCont > 5", "unknown property 'wordCont' on Article at offset 0"),
        ("5 < wordCont", "unknown property 'wordCont' on Article at offset 4"),
        ("section == 'é' AND x == 1", "unknown property 'x' on Article at offset 20"),
        ("wordCount == 1 AND éa == 2", "unknown property 'éa' on Article at offset 19"),
        ("sectión == 'x'", "unknown property 'sectión' on Article at offset 0"),
        ("author.name == 'x'", "unknown property 'author' in key path 'author.name' on Article at offset 0"),
        ("#in == 1", "unknown property 'in' on Article at offset 0"),
        ("section == 5", "cannot compare String 'section' with Int at offset 11"),
        ("wordCount == 'abc'", "cannot compare Int 'wordCount' with String at offset 13"),
        ("wordCount == true", "cannot compare Int 'wordCount' with Bool at offset 13"),
        ("pubDate == 'x'", "cannot compare Date 'pubDate' with String at offset 11"),
        ("'x' != pubDate", "cannot compare Date 'pubDate' with String at offset 0"),
        ("section IN {'a', 1}", "cannot compare String 'section' with Int at offset 17"),
        ("wordCount BETWEEN {1, 'z'}", "cannot compare Int 'wordCount' with String at offset 22"),
        ("wordCount < nil", "cannot compare 'wordCount' < nil at offset 12: nil can only be compared with == or !="),
        ("abstract >= NULL", "cannot compare 'abstract' >= nil at offset 12: nil can only be compared with == or !="),
        ("nil > abstract", "cannot compare 'abstract' < nil at offset 0: nil can only be compared with == or !="),
        ("wordCount BETWEEN {nil, 5}", "BETWEEN bounds cannot be nil (the lower bound) at offset 18"),
        // Operators.
        ("wordCount BEGINSWITH 'a'", "BEGINSWITH needs a String property, not Int 'wordCount' at offset 10"),
        ("pubDate LIKE 'a'", "LIKE needs a String property, not Date 'pubDate' at offset 8"),
        ("section CONTAINS 5", "cannot compare String 'section' with Int at offset 17"),
        ("section ENDSWITH nil", "ENDSWITH needs a String, not nil at offset 17"),
        ("section CONTAINS url", "cannot compare two properties ('section' and 'url') at offset 17: compare a property with a value"),
        ("'a' BEGINSWITH section", "BEGINSWITH needs a property on its left, found a value at offset 0"),
        ("5 in {1}", "IN needs a property on its left, found a value at offset 0"),
        ("5 BETWEEN {1, 2}", "BETWEEN needs a property on its left, found a value at offset 0"),
        ("wordCount == section", "cannot compare two properties ('wordCount' and 'section') at offset 13: compare a property with a value"),
        ("1 == 2", "cannot compare two values at offset 0: one side must be a property"),
        ("wordCount <[c] 5", "modifier '[c]' is not allowed with '<' at offset 11: only ==, != and the string operators take one"),
        ("section >=[cd] 'a'", "modifier '[cd]' is not allowed with '>=' at offset 10: only ==, != and the string operators take one"),
        ("section IN[c] {'a'}", "modifier '[c]' is not allowed with 'IN' at offset 10: only ==, != and the string operators take one"),
        ("wordCount ==[c] 5", "modifier '[c]' needs a String property, not Int 'wordCount' at offset 12"),
        ("section ==[x] 'a'", "unknown modifier '[x]' at offset 10: expected [c], [d] or [cd]"),
        ("section ==[cc] 'a'", "unknown modifier '[cc]' at offset 10: expected [c], [d] or [cd]"),
        ("section ==[] 'a'", "unknown modifier '[]' at offset 10: expected [c], [d] or [cd]"),
        ("section ==[c 'a'", "unterminated modifier at offset 10: expected [c], [d] or [cd]"),
        ("section [c] 'a'", "unexpected token '[c]' at offset 8: expected an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, IN, BETWEEN, GEOWITHIN)"),
        // BETWEEN and lists.
        ("wordCount BETWEEN {1}", "BETWEEN needs two values {lower, upper}, got 1 at offset 18"),
        ("wordCount BETWEEN {1, 2, 3}", "BETWEEN needs two values {lower, upper}, got 3 at offset 18"),
        ("wordCount BETWEEN {}", "BETWEEN needs two values {lower, upper}, got 0 at offset 18"),
        ("wordCount BETWEEN 5", "unexpected token '5' at offset 18: expected a list {…} or %@"),
        ("wordCount IN {1, 2", "unexpected end of query at offset 18: expected ',' or '}'"),
        ("wordCount IN {1,}", "unexpected token '}' at offset 16: expected a value in the list"),
        ("wordCount IN {1 2}", "unexpected token '2' at offset 16: expected ',' or '}'"),
        ("wordCount IN {section}", "unexpected token 'section' at offset 14: expected a value in the list"),
        ("wordCount IN {{1}}", "unexpected token '{' at offset 14: expected a value in the list"),
        // Structure.
        ("", "unexpected end of query at offset 0: expected a property name or a value"),
        ("   ", "unexpected end of query at offset 3: expected a property name or a value"),
        ("wordCount ==", "unexpected end of query at offset 12: expected a property name or a value"),
        ("wordCount", "unexpected end of query at offset 9: expected an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, IN, BETWEEN, GEOWITHIN)"),
        ("wordCount MATCHES 'x'", "unexpected token 'MATCHES' at offset 10: expected an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, IN, BETWEEN, GEOWITHIN)"),
        ("wordCount == 1 AND", "unexpected end of query at offset 18: expected a property name or a value"),
        ("AND wordCount == 1", "unexpected token 'AND' at offset 0: expected a property name or a value"),
        ("NOT", "unexpected end of query at offset 3: expected a property name or a value"),
        ("wordCount == == 1", "unexpected token '==' at offset 13: expected a property name or a value"),
        ("wordCount == 1 wordCount", "unexpected token 'wordCount' at offset 15: expected AND, OR or the end of the query"),
        ("TRUEPREDICATE == 1", "unexpected token '==' at offset 14: expected AND, OR or the end of the query"),
        ("(wordCount == 1", "missing ')' at offset 15 to close '(' at offset 0, found the end of the query"),
        ("((wordCount == 1) section", "missing ')' at offset 18 to close '(' at offset 0, found 'section'"),
        ("wordCount == 1)", "unexpected token ')' at offset 14: there is no '(' to close"),
        ("()", "unexpected token ')' at offset 1: expected a property name or a value"),
        ("wordCount == 1 ^ 2", "unexpected character '^' at offset 15"),
        ("wordCount == 1 & 2", "unexpected character '&' at offset 15"),
        ("wordCount ≠ 1", "unexpected character '≠' at offset 10"),
        ("wordCount % 2", "unexpected character '%' at offset 10: arguments are %@ (a value), %K (a property name) and %d, %i, %u, %f, %e, %g (a number)"),
        ("wordCount == %x", "unexpected character '%' at offset 13: arguments are %@ (a value), %K (a property name) and %d, %i, %u, %f, %e, %g (a number)"),
        ("wordCount == - 5", "unexpected character '-' at offset 13"),
        ("# == 1", "expected a property name after '#' at offset 0"),
        // Strings.
        ("section == 'abc", "unterminated string at offset 11"),
        ("section == \"abc", "unterminated string at offset 11"),
        ("section == 'a' OR url == \"b", "unterminated string at offset 25"),
        ("section == 'abc\\'", "unterminated string at offset 11"),
        ("section == 'abc\\", "unterminated string at offset 11"),
        ("section == 'a\\qb'", "unknown escape '\\q' in string at offset 13"),
        ("section == 'a\\u12'", "malformed escape at offset 13: expected \\u and 4 hex digits"),
        ("section == '\\u{}'", "malformed escape at offset 12: expected \\u{1 to 8 hex digits}"),
        ("section == '\\u{110000}'", "malformed escape at offset 12: U+110000 is not a Unicode scalar"),
        ("section == '\\uD800x'", "malformed escape at offset 12: a high surrogate must be followed by \\u and a low surrogate"),
        ("section == '\\uD800\\u0041'", "malformed escape at offset 12: a high surrogate must be followed by \\u and a low surrogate"),
        ("section == '\\uDC00'", "malformed escape at offset 12: U+DC00 is not a Unicode scalar"),
        // Numbers.
        ("wordCount == 12abc", "malformed number literal '12abc' at offset 13"),
        ("wordCount == 1.2.3", "malformed number literal '1.2.3' at offset 13"),
        ("wordCount == 1.", "malformed number literal '1.' at offset 13"),
        ("wordCount == 1e", "malformed number literal '1e' at offset 13"),
        ("wordCount == 0x", "malformed number literal '0x' at offset 13"),
        ("wordCount == 0xG1", "malformed number literal '0xG1' at offset 13"),
        ("wordCount == 12345678901234567890123456789012345", "malformed number literal '12345678901234567890123456789012345' at offset 13: out of the range of Int64 and of Decimal128"),
        ("wordCount == 0x8000000000000000", "malformed number literal '0x8000000000000000' at offset 13: out of the range of Int64"),
        ("wordCount == 0x10000000000000000", "malformed number literal '0x10000000000000000' at offset 13: out of the range of Int64"),
        ("wordCount == 1e99999", "malformed number literal '1e99999' at offset 13: out of the range of Double and of Decimal128"),
        // Dates.
        ("pubDate == 2015-07-01", "malformed date literal '2015-07-01' at offset 11: expected YYYY-MM-DD@HH:MM:SS, then optionally .fraction or :nanoseconds"),
        ("pubDate == 2015-7-01@00:00:00", "malformed date literal '2015-7-01@00:00:00' at offset 11: expected YYYY-MM-DD@HH:MM:SS, then optionally .fraction or :nanoseconds"),
        ("pubDate == 2015-07-01@00:00:00.", "malformed date literal '2015-07-01@00:00:00.' at offset 11: expected YYYY-MM-DD@HH:MM:SS, then optionally .fraction or :nanoseconds"),
        ("pubDate == 2015-07-01@00:00:00.1234567890", "malformed date literal '2015-07-01@00:00:00.1234567890' at offset 11: expected YYYY-MM-DD@HH:MM:SS, then optionally .fraction or :nanoseconds"),
        ("pubDate == 2015-07-01@00:00:00:1234567890", "malformed date literal '2015-07-01@00:00:00:1234567890' at offset 11: expected YYYY-MM-DD@HH:MM:SS, then optionally .fraction or :nanoseconds"),
        ("pubDate == 2015-07-01@00:00:00x", "malformed date literal '2015-07-01@00:00:00x' at offset 11: expected YYYY-MM-DD@HH:MM:SS, then optionally .fraction or :nanoseconds"),
        ("pubDate == 2015-13-01@00:00:00", "malformed date literal '2015-13-01@00:00:00' at offset 11: month 13 is out of range"),
        ("pubDate == 2015-02-29@00:00:00", "malformed date literal '2015-02-29@00:00:00' at offset 11: day 29 is out of range"),
        ("pubDate == 2015-07-01@24:00:00", "malformed date literal '2015-07-01@24:00:00' at offset 11: time 24:00:00 is out of range"),
        ("pubDate == T1:", "malformed date literal 'T1:' at offset 11: expected T<seconds>:<nanoseconds>"),
        ("pubDate == T1:2x", "malformed date literal 'T1:2x' at offset 11: expected T<seconds>:<nanoseconds>"),
        ("pubDate == T1:1000000000", "malformed date literal 'T1:1000000000' at offset 11: nanoseconds must be below 1000000000"),
        ("pubDate == T1:-5", "malformed date literal 'T1:-5' at offset 11: seconds and nanoseconds must have the same sign"),
        ("pubDate == T99999999999999999999:0", "malformed date literal 'T99999999999999999999:0' at offset 11: expected T<seconds>:<nanoseconds>"),
        ("pubDate == T1", "unknown property 'T1' on Article at offset 11"),
    ])
    func errors(format: String, message: String) {
        #expect(failure(format) == message)
    }

    @Test(arguments: [
        ("uuid == uuid(1234)", "malformed uuid literal 'uuid(1234)' at offset 8: expected uuid(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"),
        ("uuid == uuid(\(uuidText)", "malformed uuid literal 'uuid(' at offset 8: expected uuid(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"),
        // Quoted text is cut after 40 bytes.
        ("uuid == uuid({\(uuidText)})", "malformed uuid literal 'uuid({\(uuidText.prefix(34))…' at offset 8: expected uuid(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"),
        ("objectId == oid(xyz)", "malformed oid literal 'oid(xyz)' at offset 12: expected oid(24 hex digits)"),
        ("objectId == oid(\(oidText)0)", "malformed oid literal 'oid(\(oidText)0)' at offset 12: expected oid(24 hex digits)"),
        ("uuid == 'nope'", "malformed UUID 'nope' for UUID 'uuid' at offset 8"),
        ("objectId == 'nope'", "malformed ObjectId 'nope' for ObjectId 'objectId' at offset 12: expected 24 hex digits"),
        ("uuid == oid(\(oidText))", "cannot compare UUID 'uuid' with ObjectId at offset 8"),
        ("objectId IN {uuid(\(uuidText))}", "cannot compare ObjectId 'objectId' with UUID at offset 13"),
        ("bool == 1", "cannot compare Bool 'bool' with Int at offset 8"),
        ("data == 'abc'", "cannot compare Data 'data' with String at offset 8"),
        ("float == 'abc'", "cannot compare Float 'float' with String at offset 9"),
        ("optString ==[c] 5", "cannot compare String 'optString' with Int at offset 16"),
        ("uuid ==[c] '\(uuidText)'", "modifier '[c]' needs a String property, not UUID 'uuid' at offset 7"),
        ("uuid CONTAINS 'a'", "CONTAINS needs a String property, not UUID 'uuid' at offset 5"),
        ("optInt > nil", "cannot compare 'optInt' > nil at offset 9: nil can only be compared with == or !="),
    ])
    func errorsOfEveryPropertyKind(format: String, message: String) {
        #expect(failure(format, in: AllTypes.sharedSchema()) == message)
    }

    // MARK: Limits

    @Test func nestingLimit() throws {
        let condition = "wordCount == 1"
        let deepest = String(repeating: "(", count: 200) + condition + String(repeating: ")", count: 200)
        #expect(try parsed(deepest) == condition)
        let tooDeep = String(repeating: "(", count: 201) + condition + String(repeating: ")", count: 201)
        #expect(failure(tooDeep) == "nesting too deep at offset 200: at most 200 levels of parentheses and NOT")
        // Deep enough to overflow a recursive parser's stack, short enough to pass the length limit.
        let veryDeep = String(repeating: "(", count: 30_000) + condition + String(repeating: ")", count: 30_000)
        #expect(failure(veryDeep) == "nesting too deep at offset 200: at most 200 levels of parentheses and NOT")

        #expect(try parsed(String(repeating: "NOT ", count: 200) + condition).hasPrefix("NOT NOT"))
        #expect(failure(String(repeating: "NOT ", count: 201) + condition) == "nesting too deep at offset 800: at most 200 levels of parentheses and NOT")
        #expect(failure(String(repeating: "!", count: 16_000) + condition) == "nesting too deep at offset 200: at most 200 levels of parentheses and NOT")
        #expect(failure(String(repeating: "NOT (", count: 101) + condition + String(repeating: ")", count: 101)) == "nesting too deep at offset 500: at most 200 levels of parentheses and NOT")
        // Siblings do not add up.
        let wide = Array(repeating: "(" + String(repeating: "(", count: 150) + condition + String(repeating: ")", count: 150) + ")", count: 3)
        #expect(try parsed(wide.joined(separator: " OR ")) == "(wordCount == 1 OR wordCount == 1 OR wordCount == 1)")
    }

    @Test func hundredThousandNestedParenthesesAreRejected() {
        let format = String(repeating: "(", count: 100_000) + "wordCount == 1" + String(repeating: ")", count: 100_000)
        #expect(failure(format) == "query too long: 200014 UTF-8 bytes, at most 65536 are allowed (at offset 65536)")
    }

    @Test func lengthLimit() throws {
        let head = "section == '"
        let longest = head + String(repeating: "a", count: 65_536 - head.utf8.count - 1) + "'"
        #expect(longest.utf8.count == 65_536)
        #expect(try parsed(longest).count == 65_536)
        #expect(failure(head + String(repeating: "a", count: 65_536 - head.utf8.count) + "'") == "query too long: 65537 UTF-8 bytes, at most 65536 are allowed (at offset 65536)")
        let megabyte = String(repeating: "é", count: 524_288)
        #expect(failure(head + megabyte + "'") == "query too long: 1048589 UTF-8 bytes, at most 65536 are allowed (at offset 65536)")
        // A value passed as an argument is not part of the query's text.
        #expect(try parsed("section == %@", megabyte).count == megabyte.count + 13)
    }

    @Test func longFlatQueriesParseQuickly() throws {
        let terms = Array(repeating: "wordCount == 1", count: 3_000)
        let node = try PredicateParser.parse(terms.joined(separator: " OR "), arguments: [], schema: Article.sharedSchema())
        guard case .or(let children) = node else {
            Issue.record("not a disjunction")
            return
        }
        #expect(children.count == 3_000)
    }

    /// Groups are parsed with a stack of their own: a recursive descent took about 5 KB of a
    /// debug build's stack per level and overflowed 256 KB at 50 levels.
    @Test func deepestNestingFitsInASmallStack() throws {
        let condition = "wordCount == 1"
        // 50 parentheses, then 75 times NOT and a parenthesis: 200 levels.
        let deepest = String(repeating: "(", count: 50) + String(repeating: "NOT (", count: 75) + condition + String(repeating: ")", count: 125)
        let result = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let description = try? PredicateParser.parse(deepest, arguments: [], schema: Article.sharedSchema()).description
            result.withLock { $0 = description }
            done.signal()
        }
        // A sanitizer's frames are larger than the build's own (AddressSanitizer's several times,
        // for its redzones): the claim is about the build's, so a sanitized run gets room.
        let environment = ProcessInfo.processInfo.environment
        let sanitized = environment["ASAN_OPTIONS"] != nil || environment["TSAN_OPTIONS"] != nil
        thread.stackSize = (sanitized ? 4 : 1) * 256 * 1024
        thread.start()
        done.wait()
        #expect(result.withLock { $0 } == String(repeating: "NOT ", count: 75) + condition)
    }
}
