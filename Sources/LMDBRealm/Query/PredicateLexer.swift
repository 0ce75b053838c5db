import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// One token of a predicate string. `offset` and `length` are in UTF-8 bytes of the format.
struct PredicateToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// A property name (`#name` escapes a keyword).
        case identifier(String)
        /// `==`, `!=`, `<`, `<=`, `>`, `>=` and their aliases.
        case comparison(ComparisonOperator)
        /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`.
        case stringOperator(StringOperator)
        /// `[c]`, `[d]`, `[cd]`: the letters between the brackets.
        case modifier(String)
        case and, or, not, `in`, between
        /// `ANY`/`SOME`, `ALL`, `NONE` before a key path through a collection.
        case quantifier(Quantifier)
        /// `SUBQUERY`.
        case subquery
        /// `GEOWITHIN`, before a shape argument.
        case geoWithin
        /// `.@count` after `SUBQUERY(…)`: the aggregate's name.
        case aggregateSuffix(String)
        case truePredicate, falsePredicate
        /// A constant written in the format: string, number, date, `uuid(…)`, `oid(…)`,
        /// `true`/`false`/`YES`/`NO`, `nil`/`NULL`.
        case literal(QueryValue)
        /// `%@`, the argument at this index.
        case valueArgument(Int)
        /// `%K`, the argument at this index.
        case keyArgument(Int)
        case openParen, closeParen, openBrace, closeBrace, comma
        /// `[` right after a key path, before a quoted key (`ratings['home']`), and its `]`.
        case openBracket, closeBracket
        case end
    }

    let kind: Kind
    let offset: Int
    let length: Int
}

/// Splits a predicate string into tokens.
///
/// Works on the UTF-8 bytes so that every offset in a message is a byte offset. Keywords are
/// matched without regard to case.
struct PredicateLexer {
    private let bytes: [UInt8]
    private var position = 0
    private var argumentCount = 0
    /// The `%d`-style arguments met so far (see ``NumericArgument``).
    private var numericArguments: [NumericArgument] = []

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Every token of the format, ending with `.end`, and the number of `%@`/`%K` it holds.
    /// The `%d`/`%i`/`%u`/`%f`/`%e`/`%g`-style specifiers (with a length modifier such as
    /// `%ld`, `%lld`, `%lf`) are value arguments too, listed in `numeric` so that their
    /// arguments can be checked.
    static func tokenize(_ bytes: [UInt8]) throws(RealmError) -> (tokens: [PredicateToken], argumentCount: Int, numeric: [NumericArgument]) {
        var lexer = PredicateLexer(bytes)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next(after: tokens.last)
            tokens.append(token)
            if token.kind == .end { return (tokens, lexer.argumentCount, lexer.numericArguments) }
        }
    }

    /// A printf-style specifier of a number, as NSPredicate takes them: `%d`, `%ld`, `%f`.
    struct NumericArgument {
        /// The argument's index.
        let index: Int
        /// `d`, `i` and `u` take an integer; `f`, `e` and `g` a number.
        let isInteger: Bool
        /// The specifier as written, and where.
        let text: String
        let offset: Int
    }

    /// The length of a numeric specifier's modifiers and conversion after `%` at `start`
    /// (`ld`: 2), and whether it takes an integer; `nil` if none starts there.
    private func numericSpecifier(at start: Int) -> (length: Int, isInteger: Bool)? {
        var n = 0
        for modifier in ["hh", "ll", "h", "l", "q", "z", "j", "t", "L"] where matches(modifier, at: start) {
            n = modifier.utf8.count
            break
        }
        guard start + n < bytes.count else { return nil }
        switch bytes[start + n] {
        case UInt8(ascii: "d"), UInt8(ascii: "i"), UInt8(ascii: "u"): return (n + 1, true)
        case UInt8(ascii: "f"), UInt8(ascii: "e"), UInt8(ascii: "g"): return (n + 1, false)
        default: return nil
        }
    }

    private func matches(_ text: String, at start: Int) -> Bool {
        let utf8 = Array(text.utf8)
        return start + utf8.count <= bytes.count && Array(bytes[start..<start + utf8.count]) == utf8
    }

    /// The source text of `bytes[offset..<offset + length]`, shortened for messages.
    static func text(of bytes: [UInt8], offset: Int, length: Int) -> String {
        let end = min(bytes.count, offset + length)
        guard end - offset > 40 else { return String(decoding: bytes[offset..<end], as: UTF8.self) }
        // Cut at a character boundary.
        var cut = offset + 40
        while cut > offset, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        return String(decoding: bytes[offset..<cut], as: UTF8.self) + "…"
    }

    private func error(_ message: String) -> RealmError {
        RealmError(.invalidQuery, message)
    }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: b - 0x30
        case 0x41...0x46: b - 0x41 + 10
        case 0x61...0x66: b - 0x61 + 10
        default: nil
        }
    }

    /// The Unicode scalar starting at byte `i` (the input is valid UTF-8) and its length.
    private func scalar(at i: Int) -> (Unicode.Scalar, Int) {
        let b0 = bytes[i]
        let (count, initial): (Int, UInt32) =
            switch b0 {
            case 0..<0x80: (1, UInt32(b0))
            case 0xC0..<0xE0: (2, UInt32(b0 & 0x1F))
            case 0xE0..<0xF0: (3, UInt32(b0 & 0x0F))
            default: (4, UInt32(b0 & 0x07))
            }
        var value = initial
        for k in 1..<max(1, count) where i + k < bytes.count {
            value = value << 6 | UInt32(bytes[i + k] & 0x3F)
        }
        return (Unicode.Scalar(value) ?? "\u{FFFD}", count)
    }

    /// The length of an identifier character at byte `i`, or `nil` if there is none there.
    private func identifierCharacter(at i: Int, first: Bool) -> Int? {
        guard i < bytes.count else { return nil }
        let b = bytes[i]
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
            UInt8(ascii: "$"):
            return 1
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return first ? nil : 1
        case 0x80...:
            let (s, n) = scalar(at: i)
            return (first ? s.properties.isXIDStart : s.properties.isXIDContinue) ? n : nil
        default:
            return nil
        }
    }

    private mutating func next(after previous: PredicateToken?) throws(RealmError) -> PredicateToken {
        // A map subscript: `[` touching the key path before it, then a quoted key or `%@`.
        if let previous, case .identifier = previous.kind, previous.offset + previous.length == position,
            peek() == UInt8(ascii: "["), let after = peek(1),
            after == UInt8(ascii: "'") || after == UInt8(ascii: "\"") || after == UInt8(ascii: "%")
        {
            position += 1
            return PredicateToken(kind: .openBracket, offset: position - 1, length: 1)
        }
        if peek() == UInt8(ascii: "]") {
            position += 1
            return PredicateToken(kind: .closeBracket, offset: position - 1, length: 1)
        }
        return try next()
    }

    private mutating func next() throws(RealmError) -> PredicateToken {
        while let b = peek(), b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D {
            position += 1
        }
        let start = position
        guard let b = peek() else { return PredicateToken(kind: .end, offset: start, length: 0) }

        func token(_ kind: PredicateToken.Kind, _ length: Int) -> PredicateToken {
            position = start + length
            return PredicateToken(kind: kind, offset: start, length: length)
        }

        switch b {
        case UInt8(ascii: "("): return token(.openParen, 1)
        case UInt8(ascii: ")"): return token(.closeParen, 1)
        case UInt8(ascii: "{"): return token(.openBrace, 1)
        case UInt8(ascii: "}"): return token(.closeBrace, 1)
        case UInt8(ascii: ","): return token(.comma, 1)
        case UInt8(ascii: "="):
            switch peek(1) {
            case UInt8(ascii: "="): return token(.comparison(.equal), 2)
            case UInt8(ascii: "<"): return token(.comparison(.lessOrEqual), 2)
            case UInt8(ascii: ">"): return token(.comparison(.greaterOrEqual), 2)
            default: return token(.comparison(.equal), 1)
            }
        case UInt8(ascii: "!"):
            return peek(1) == UInt8(ascii: "=") ? token(.comparison(.notEqual), 2) : token(.not, 1)
        case UInt8(ascii: "<"):
            switch peek(1) {
            case UInt8(ascii: "="): return token(.comparison(.lessOrEqual), 2)
            case UInt8(ascii: ">"): return token(.comparison(.notEqual), 2)
            default: return token(.comparison(.less), 1)
            }
        case UInt8(ascii: ">"):
            return peek(1) == UInt8(ascii: "=") ? token(.comparison(.greaterOrEqual), 2) : token(.comparison(.greater), 1)
        case UInt8(ascii: "&") where peek(1) == UInt8(ascii: "&"): return token(.and, 2)
        case UInt8(ascii: "|") where peek(1) == UInt8(ascii: "|"): return token(.or, 2)
        case UInt8(ascii: "%"):
            switch peek(1) {
            case UInt8(ascii: "@"):
                argumentCount += 1
                return token(.valueArgument(argumentCount - 1), 2)
            case UInt8(ascii: "K"):
                argumentCount += 1
                return token(.keyArgument(argumentCount - 1), 2)
            default:
                guard let (length, isInteger) = numericSpecifier(at: start + 1) else {
                    throw error(
                        "unexpected character '%' at offset \(start): arguments are %@ (a value), %K (a property name) and %d, %i, %u, %f, %e, %g (a number)")
                }
                argumentCount += 1
                numericArguments.append(
                    NumericArgument(
                        index: argumentCount - 1, isInteger: isInteger,
                        text: String(decoding: bytes[start..<start + 1 + length], as: UTF8.self), offset: start))
                return token(.valueArgument(argumentCount - 1), 1 + length)
            }
        case UInt8(ascii: "."):
            guard peek(1) == UInt8(ascii: "@"), let n = identifierCharacter(at: start + 2, first: true) else {
                throw error("unexpected character '.' at offset \(start)")
            }
            position = start + 2 + n
            let name = identifierRest(from: start + 1)
            return PredicateToken(kind: .aggregateSuffix(name), offset: start, length: position - start)
        case UInt8(ascii: "["): return try modifier()
        case UInt8(ascii: "'"), UInt8(ascii: "\""): return try string(quote: b)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if b == UInt8(ascii: "-"), !(peek(1).map(Self.isDigit) ?? false) {
                throw error("unexpected character '-' at offset \(start)")
            }
            return try numberOrDate()
        case UInt8(ascii: "#"):
            guard let first = identifierCharacter(at: start + 1, first: true) else {
                throw error("expected a property name after '#' at offset \(start)")
            }
            position = start + 1 + first
            let name = identifierRest(from: start + 1)
            return PredicateToken(kind: .identifier(name), offset: start, length: position - start)
        default:
            break
        }

        guard let first = identifierCharacter(at: start, first: true) else {
            let (s, _) = scalar(at: start)
            throw error("unexpected character '\(Character(s))' at offset \(start)")
        }
        if b == UInt8(ascii: "T"), let date = try timestamp() { return date }
        position = start + first
        let word = identifierRest(from: start)
        // Keywords are ASCII; uppercasing other text could turn it into one ("ın" → "IN").
        let keyword = word.utf8.allSatisfy { $0 < 0x80 } ? word.uppercased() : ""
        switch keyword {
        case "AND": return token(.and, word.utf8.count)
        case "OR": return token(.or, word.utf8.count)
        case "NOT": return token(.not, word.utf8.count)
        case "IN": return token(.in, word.utf8.count)
        case "BETWEEN": return token(.between, word.utf8.count)
        case "GEOWITHIN": return token(.geoWithin, word.utf8.count)
        case "ANY", "SOME": return token(.quantifier(.any), word.utf8.count)
        case "ALL": return token(.quantifier(.all), word.utf8.count)
        case "NONE": return token(.quantifier(.none), word.utf8.count)
        case "SUBQUERY": return token(.subquery, word.utf8.count)
        case "BEGINSWITH": return token(.stringOperator(.beginsWith), word.utf8.count)
        case "ENDSWITH": return token(.stringOperator(.endsWith), word.utf8.count)
        case "CONTAINS": return token(.stringOperator(.contains), word.utf8.count)
        case "LIKE": return token(.stringOperator(.like), word.utf8.count)
        case "TRUEPREDICATE": return token(.truePredicate, word.utf8.count)
        case "FALSEPREDICATE": return token(.falsePredicate, word.utf8.count)
        case "TRUE", "YES": return token(.literal(.bool(true)), word.utf8.count)
        case "FALSE", "NO": return token(.literal(.bool(false)), word.utf8.count)
        case "NIL", "NULL": return token(.literal(.null), word.utf8.count)
        case "UUID" where peek() == UInt8(ascii: "("): return try uuid(start: start)
        case "OID" where peek() == UInt8(ascii: "("): return try objectId(start: start)
        default: return PredicateToken(kind: .identifier(word), offset: start, length: position - start)
        }
    }

    /// Reads the rest of an identifier whose first character ends at `position`, with
    /// `.`-separated key-path components, and returns it from `start`.
    private mutating func identifierRest(from start: Int) -> String {
        while true {
            if let n = identifierCharacter(at: position, first: false) {
                position += n
            } else if peek() == UInt8(ascii: "."), let n = identifierCharacter(at: position + 1, first: true) {
                position += 1 + n
            } else if peek() == UInt8(ascii: "."), peek(1) == UInt8(ascii: "@"),
                let n = identifierCharacter(at: position + 2, first: true)
            {
                // An aggregate: `keywords.@count`, `items.@sum.price`.
                position += 2 + n
            } else {
                break
            }
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private mutating func modifier() throws(RealmError) -> PredicateToken {
        let start = position
        var end = start + 1
        while end < bytes.count, end - start <= 8, bytes[end] != UInt8(ascii: "]") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: "]") else {
            throw error("unterminated modifier at offset \(start): expected [c], [d] or [cd]")
        }
        let letters = String(decoding: bytes[(start + 1)..<end], as: UTF8.self)
        position = end + 1
        return PredicateToken(kind: .modifier(letters), offset: start, length: position - start)
    }

    // MARK: Strings

    private mutating func string(quote: UInt8) throws(RealmError) -> PredicateToken {
        let start = position
        var i = start + 1
        var out: [UInt8] = []
        var pendingHighSurrogate: (value: UInt32, offset: Int)?
        while true {
            guard i < bytes.count else { throw error("unterminated string at offset \(start)") }
            let b = bytes[i]
            if b == quote && pendingHighSurrogate == nil { break }
            guard b == UInt8(ascii: "\\") else {
                if let pending = pendingHighSurrogate { throw loneSurrogate(at: pending.offset) }
                out.append(b)
                i += 1
                continue
            }
            let escape = i
            guard i + 1 < bytes.count else { throw error("unterminated string at offset \(start)") }
            let e = bytes[i + 1]
            i += 2
            if let pending = pendingHighSurrogate, e != UInt8(ascii: "u") { throw loneSurrogate(at: pending.offset) }
            switch e {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(e)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "0"): out.append(0x00)
            case UInt8(ascii: "u"):
                var value: UInt32 = 0
                if i < bytes.count, bytes[i] == UInt8(ascii: "{") {
                    var j = i + 1
                    while j < bytes.count, j - i <= 9, let h = Self.hexValue(bytes[j]) {
                        value = value << 4 | UInt32(h)
                        j += 1
                    }
                    guard j > i + 1, j - i <= 9, j < bytes.count, bytes[j] == UInt8(ascii: "}") else {
                        throw error("malformed escape at offset \(escape): expected \\u{1 to 8 hex digits}")
                    }
                    i = j + 1
                } else {
                    guard i + 4 <= bytes.count else {
                        throw error("malformed escape at offset \(escape): expected \\u and 4 hex digits")
                    }
                    for j in i..<(i + 4) {
                        guard let h = Self.hexValue(bytes[j]) else {
                            throw error("malformed escape at offset \(escape): expected \\u and 4 hex digits")
                        }
                        value = value << 4 | UInt32(h)
                    }
                    i += 4
                }
                if let high = pendingHighSurrogate {
                    guard (0xDC00...0xDFFF).contains(value) else { throw loneSurrogate(at: high.offset) }
                    value = 0x10000 + ((high.value - 0xD800) << 10) + (value - 0xDC00)
                    pendingHighSurrogate = nil
                } else if (0xD800...0xDBFF).contains(value) {
                    pendingHighSurrogate = (value, escape)
                    continue
                }
                guard let scalar = Unicode.Scalar(value) else {
                    let hex = String(value, radix: 16, uppercase: true)
                    throw error("malformed escape at offset \(escape): U+\(hex) is not a Unicode scalar")
                }
                out.append(contentsOf: String(Character(scalar)).utf8)
            default:
                let (s, _) = scalar(at: escape + 1)
                throw error("unknown escape '\\\(Character(s))' in string at offset \(escape)")
            }
        }
        position = i + 1
        return PredicateToken(
            kind: .literal(.string(String(decoding: out, as: UTF8.self))), offset: start, length: position - start)
    }

    private func loneSurrogate(at offset: Int) -> RealmError {
        error("malformed escape at offset \(offset): a high surrogate must be followed by \\u and a low surrogate")
    }

    // MARK: Numbers and dates

    /// The end of the run of characters from `start` that could belong to one literal, for
    /// quoting a malformed one.
    private func wordEnd(from start: Int) -> Int {
        var end = start
        while end < bytes.count {
            let b = bytes[end]
            let isWord =
                Self.isDigit(b) || (b | 0x20 >= UInt8(ascii: "a") && b | 0x20 <= UInt8(ascii: "z"))
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: ":") || b == UInt8(ascii: "@")
                || b == UInt8(ascii: "+") || (b == UInt8(ascii: "-") && end > start) || b >= 0x80
            guard isWord || end == start else { break }
            end += 1
        }
        return end
    }

    private func malformed(_ what: String, at start: Int, _ detail: String = "", end: Int? = nil) -> RealmError {
        let text = Self.text(of: bytes, offset: start, length: (end ?? wordEnd(from: start)) - start)
        return error("malformed \(what) literal '\(text)' at offset \(start)\(detail)")
    }

    /// Reads digits from `position`; returns how many.
    private mutating func digits() -> Int {
        let start = position
        while let b = peek(), Self.isDigit(b) { position += 1 }
        return position - start
    }

    private mutating func numberOrDate() throws(RealmError) -> PredicateToken {
        let start = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { position += 1 }
        if peek() == UInt8(ascii: "0"), peek(1) == UInt8(ascii: "x") || peek(1) == UInt8(ascii: "X") {
            return try hexNumber(start: start)
        }

        let integerDigits = digits()
        if !negative, integerDigits == 4, peek() == UInt8(ascii: "-") {
            return try date(start: start)
        }
        var isInteger = true
        if peek() == UInt8(ascii: "."), let d = peek(1), Self.isDigit(d) {
            isInteger = false
            position += 1
            _ = digits()
        }
        if let e = peek(), e | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard digits() > 0 else { throw malformed("number", at: start) }
        }
        // A number runs into no letter, digit or dot.
        if identifierCharacter(at: position, first: false) != nil || peek() == UInt8(ascii: ".") {
            throw malformed("number", at: start)
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger {
            if let value = Int64(text) {
                return PredicateToken(kind: .literal(.int(value)), offset: start, length: position - start)
            }
            // Beyond Int64, the exact decimal (for a decimal property), if Decimal128 holds it.
            guard Decimal128.parse(text) != nil, let exact = ExactDecimal(text: text) else {
                throw malformed("number", at: start, ": out of the range of Int64 and of Decimal128")
            }
            return PredicateToken(kind: .literal(.decimal(exact)), offset: start, length: position - start)
        }
        // A number a Double holds (its shortest spelling is the same number) is a Double; one
        // it does not (`1E+6000`, 34 digits) is the exact decimal, if Decimal128 holds it, so
        // that a decimal property is compared with the number written.
        let double = Double(text)
        if let double, double.isFinite, ExactDecimal(double).key == DecimalOrder.key(of: text) {
            return PredicateToken(kind: .literal(.double(double)), offset: start, length: position - start)
        }
        if Decimal128.parse(text) != nil, let exact = ExactDecimal(text: text) {
            return PredicateToken(kind: .literal(.decimal(exact)), offset: start, length: position - start)
        }
        guard let double, double.isFinite else {
            throw malformed("number", at: start, ": out of the range of Double and of Decimal128")
        }
        return PredicateToken(kind: .literal(.double(double)), offset: start, length: position - start)
    }

    private mutating func hexNumber(start: Int) throws(RealmError) -> PredicateToken {
        let negative = bytes[start] == UInt8(ascii: "-")
        position = start + (negative ? 3 : 2)
        var magnitude: UInt64 = 0
        var count = 0
        while let b = peek(), let h = Self.hexValue(b) {
            guard magnitude >> 60 == 0 else { throw malformed("number", at: start, ": out of the range of Int64") }
            magnitude = magnitude << 4 | UInt64(h)
            count += 1
            position += 1
        }
        guard count > 0, identifierCharacter(at: position, first: false) == nil, peek() != UInt8(ascii: ".") else {
            throw malformed("number", at: start)
        }
        let limit = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
        guard magnitude <= limit else { throw malformed("number", at: start, ": out of the range of Int64") }
        let value = negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude)
        return PredicateToken(kind: .literal(.int(value)), offset: start, length: position - start)
    }

    /// Reads `count` digits exactly, as a number.
    private mutating func fixedDigits(_ count: Int) -> Int? {
        var value = 0
        for _ in 0..<count {
            guard let b = peek(), Self.isDigit(b) else { return nil }
            value = value * 10 + Int(b - 0x30)
            position += 1
        }
        return value
    }

    /// `YYYY-MM-DD@HH:MM:SS` with optional `.fraction` of a second or `:nanoseconds`, in UTC
    /// (`T` may stand for `@`).
    private mutating func date(start: Int) throws(RealmError) -> PredicateToken {
        let expected = ": expected YYYY-MM-DD@HH:MM:SS, then optionally .fraction or :nanoseconds"
        position = start
        func expect(_ c: UInt8, _ alternative: UInt8? = nil) -> Bool {
            guard let b = peek(), b == c || b == alternative else { return false }
            position += 1
            return true
        }
        guard let year = fixedDigits(4), expect(UInt8(ascii: "-")), let month = fixedDigits(2),
            expect(UInt8(ascii: "-")), let day = fixedDigits(2), expect(UInt8(ascii: "@"), UInt8(ascii: "T")),
            let hour = fixedDigits(2), expect(UInt8(ascii: ":")), let minute = fixedDigits(2),
            expect(UInt8(ascii: ":")), let second = fixedDigits(2)
        else { throw malformed("date", at: start, expected) }
        var fraction = 0.0
        if let separator = peek(), separator == UInt8(ascii: ".") || separator == UInt8(ascii: ":") {
            position += 1
            let fractionStart = position
            let count = digits()
            guard (1...9).contains(count) else { throw malformed("date", at: start, expected) }
            let value = Double(String(decoding: bytes[fractionStart..<position], as: UTF8.self))!
            // `.5` is half a second; `:5`, as in Realm, five nanoseconds.
            fraction = value / pow(10, separator == UInt8(ascii: ".") ? Double(count) : 9)
        }
        guard identifierCharacter(at: position, first: false) == nil, peek() != UInt8(ascii: "."),
            peek() != UInt8(ascii: ":")
        else { throw malformed("date", at: start, expected) }
        let isLeapYear = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let daysInMonth = [31, isLeapYear ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month) else { throw malformed("date", at: start, ": month \(month) is out of range") }
        guard (1...daysInMonth[month - 1]).contains(day) else {
            throw malformed("date", at: start, ": day \(day) is out of range")
        }
        guard hour < 24, minute < 60, second < 60 else {
            let time = String(decoding: bytes[(start + 11)..<(start + 19)], as: UTF8.self)
            throw malformed("date", at: start, ": time \(time) is out of range")
        }
        let seconds = Double(Self.daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second)
        return PredicateToken(
            kind: .literal(.date(Date(timeIntervalSince1970: seconds + fraction))), offset: start, length: position - start)
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `T<seconds>:<nanoseconds>` (since 1970), or `nil` if the `T` starts a property name.
    private mutating func timestamp() throws(RealmError) -> PredicateToken? {
        let start = position
        var i = start + 1
        func number() -> (Int64, Bool)? {
            let numberStart = i
            let negative = i < bytes.count && bytes[i] == UInt8(ascii: "-")
            if negative { i += 1 }
            let digitsStart = i
            while i < bytes.count, Self.isDigit(bytes[i]) { i += 1 }
            guard i > digitsStart else { return nil }
            guard let value = Int64(String(decoding: bytes[numberStart..<i], as: UTF8.self)) else { return (0, false) }
            return (value, true)
        }
        guard let (seconds, secondsFit) = number(), i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
        i += 1
        let expected = ": expected T<seconds>:<nanoseconds>"
        guard let (nanoseconds, nanosecondsFit) = number() else { throw malformed("date", at: start, expected) }
        position = i
        guard secondsFit, nanosecondsFit, identifierCharacter(at: i, first: false) == nil, peek() != UInt8(ascii: ".") else {
            throw malformed("date", at: start, expected)
        }
        guard abs(nanoseconds) < 1_000_000_000 else {
            throw malformed("date", at: start, ": nanoseconds must be below 1000000000")
        }
        guard seconds == 0 || nanoseconds == 0 || (seconds < 0) == (nanoseconds < 0) else {
            throw malformed("date", at: start, ": seconds and nanoseconds must have the same sign")
        }
        let interval = Double(seconds) + Double(nanoseconds) / 1_000_000_000
        return PredicateToken(kind: .literal(.date(Date(timeIntervalSince1970: interval))), offset: start, length: i - start)
    }

    // MARK: uuid(…) and oid(…)

    /// The text between `(` (at `position`) and the next `)`, and the position after `)`.
    private func parenthesized() -> (text: String, end: Int)? {
        var j = position + 1
        while j < bytes.count, bytes[j] != UInt8(ascii: ")"), j - position <= 64 { j += 1 }
        guard j < bytes.count, bytes[j] == UInt8(ascii: ")") else { return nil }
        return (String(decoding: bytes[(position + 1)..<j], as: UTF8.self), j + 1)
    }

    private mutating func uuid(start: Int) throws(RealmError) -> PredicateToken {
        let found = parenthesized()
        guard let (text, end) = found, text.utf8.count == 36, let value = UUID(uuidString: text) else {
            throw malformed(
                "uuid", at: start, ": expected uuid(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", end: found?.end ?? position + 1)
        }
        position = end
        return PredicateToken(kind: .literal(.uuid(value)), offset: start, length: end - start)
    }

    private mutating func objectId(start: Int) throws(RealmError) -> PredicateToken {
        let found = parenthesized()
        guard let (text, end) = found, let value = ObjectId(parsing: text) else {
            throw malformed("oid", at: start, ": expected oid(24 hex digits)", end: found?.end ?? position + 1)
        }
        position = end
        return PredicateToken(kind: .literal(.objectId(value)), offset: start, length: end - start)
    }
}
