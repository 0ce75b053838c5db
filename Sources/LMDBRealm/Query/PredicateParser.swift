import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// Parses predicate strings in the `NSPredicate` format Realm users know into ``QueryNode``s,
/// checked against a class's schema.
///
/// ```
/// predicate  := or
/// or         := and (("OR" | "||") and)*
/// and        := unary (("AND" | "&&") unary)*
/// unary      := ("NOT" | "!")* primary
/// primary    := "(" or ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison := operand comparisonOp modifier? operand
///             | operand stringOp modifier? operand
///             | operand "IN" list
///             | operand "BETWEEN" list
///             | operand "GEOWITHIN" "%@"
/// operand    := property | "%K" | value
/// value      := literal | "%@"
/// list       := "{" (value ("," value)*)? "}" | "%@"
/// literal    := 'text' | "text" | 42 | -0x2A | 1.5 | -2e3 | true | false | YES | NO | nil | NULL
///             | 2015-07-01@12:00:00.250 | T1435752000:250000000 | uuid(…) | oid(…)
/// ```
///
/// Keywords ignore case; `#name` names a property that is spelled like a keyword. A constant
/// may come first (`500 < wordCount` is `wordCount > 500`).
///
/// Every error is a ``RealmError`` with code ``RealmError/Code/invalidQuery`` whose message
/// says what is wrong and gives the UTF-8 byte offset (from 0) into the format of the place it
/// is about; only a wrong argument count, which concerns the whole format, has no offset.
enum PredicateParser {
    /// The longest format accepted, in UTF-8 bytes.
    static let maximumLength = 65_536
    /// The deepest nesting of parentheses and `NOT` accepted.
    static let maximumDepth = 200

    /// Parses an NSPredicate-format string against `schema` into a QueryNode.
    ///
    /// - Parameters:
    ///   - format: The predicate, such as `"section == %@ AND wordCount > 500"`.
    ///   - arguments: One value for each `%@` (any value ``QueryValue/init(any:)`` takes, an
    ///     `Array` or `Set` of them after `IN` or `BETWEEN`) and one property name `String`
    ///     for each `%K`, in the order they appear.
    ///   - schema: The class the predicate filters.
    /// - Throws: ``RealmError`` with code ``RealmError/Code/invalidQuery``.
    ///   - schemaNamed: The class a link or list of objects points to, by name (for a class read
    ///     through the dynamic API: the file's stored class).
    static func parse(
        _ format: String, arguments: [Any?], schema: ObjectSchema, schemaNamed: @escaping (String) -> ObjectSchema? = { ClassInfo.named($0)?.schema }
    ) throws(RealmError) -> QueryNode {
        let length = format.utf8.count
        guard length <= maximumLength else {
            throw RealmError(
                .invalidQuery,
                "query too long: \(length) UTF-8 bytes, at most \(maximumLength) are allowed (at offset \(maximumLength))")
        }
        let bytes = Array(format.utf8)
        let (tokens, argumentCount, numeric) = try PredicateLexer.tokenize(bytes)
        guard argumentCount == arguments.count else {
            throw RealmError(
                .invalidQuery,
                "expected \(argumentCount) argument\(argumentCount == 1 ? "" : "s") for the format, got \(arguments.count)")
        }
        var arguments = arguments
        for specifier in numeric {
            arguments[specifier.index] = try numericArgument(arguments[specifier.index], for: specifier)
        }
        var parser = Parser(bytes: bytes, tokens: tokens, arguments: arguments, schema: schema, schemaNamed: schemaNamed)
        return try parser.parsePredicate()
    }
}

/// The argument of a `%d`-style specifier: an integer for `%d`, `%i` and `%u`; a number for
/// `%f`, `%e` and `%g` (an integer taken as a `Double`).
private func numericArgument(_ argument: Any?, for specifier: PredicateLexer.NumericArgument) throws(RealmError) -> Any? {
    if let integer = argument as? any BinaryInteger { return specifier.isInteger ? integer : Double(integer) }
    if let floating = argument as? any BinaryFloatingPoint, !specifier.isInteger { return floating }
    let found = argument.map { "\(type(of: $0))" } ?? "nil"
    throw RealmError(
        .invalidQuery,
        "\(specifier.text) at offset \(specifier.offset) needs \(specifier.isInteger ? "an integer" : "a number"), argument \(specifier.index + 1) is \(found)")
}

/// A parsed operand of a comparison.
private enum Operand {
    case property(Property, offset: Int)
    case value(QueryValue, offset: Int)
    /// A key path through a list or `LinkingObjects` property.
    case collection(CollectionPath, offset: Int)
}

/// A key path through a collection: `keywords`, `keywords.value`, `scores.@avg`,
/// `byline.articles.@count`, `items.@sum.price`.
private struct CollectionPath {
    /// The collection property, with the to-one links before it: `byline.articles`.
    let path: String
    /// The collection property itself.
    let collection: Property
    /// What the key path reads of each element: a property of the element's class
    /// (`value`, `byline.name`), or the element itself (named `self`).
    let element: Property
    /// `@count`, `@sum` … if the key path ends in one.
    let aggregate: AggregateFunction?
}

private struct Parser {
    let bytes: [UInt8]
    let tokens: [PredicateToken]
    let arguments: [Any?]
    let schema: ObjectSchema
    var index = 0
    var depth = 0
    /// Inside `SUBQUERY(collection, $x, …)`: the variable, and what `$x` itself stands for.
    var variable: (name: String, element: Property)?

    /// The class a link or list of objects points to, by name.
    let schemaNamed: (String) -> ObjectSchema?

    init(bytes: [UInt8], tokens: [PredicateToken], arguments: [Any?], schema: ObjectSchema, schemaNamed: @escaping (String) -> ObjectSchema?) {
        self.bytes = bytes
        self.tokens = tokens
        self.arguments = arguments
        self.schema = schema
        self.schemaNamed = schemaNamed
    }

    var current: PredicateToken { tokens[index] }

    mutating func advance() -> PredicateToken {
        let token = tokens[index]
        if token.kind != .end { index += 1 }
        return token
    }

    // MARK: Errors

    func error(_ message: String) -> RealmError {
        RealmError(.invalidQuery, message)
    }

    func text(_ token: PredicateToken) -> String {
        PredicateLexer.text(of: bytes, offset: token.offset, length: token.length)
    }

    /// "unexpected token 'x' at offset n: expected …", or "unexpected end of query …".
    func unexpected(_ token: PredicateToken, expecting what: String) -> RealmError {
        if token.kind == .end {
            return error("unexpected end of query at offset \(token.offset): expected \(what)")
        }
        return error("unexpected token '\(text(token))' at offset \(token.offset): expected \(what)")
    }

    func typeName(of value: Any) -> String {
        String(describing: type(of: value))
    }

    /// `Int 'wordCount'`: a property's Swift type and name.
    func describe(_ property: Property) -> String {
        "\(property.objectClassName ?? property.type.swiftName) '\(property.name)'"
    }

    /// `'text'`, cut after 40 characters.
    func quoted(_ text: String) -> String {
        text.count > 40 ? "'\(text.prefix(40))…'" : "'\(text)'"
    }

    func twoProperties(_ a: Property, _ b: Property, at offset: Int) -> RealmError {
        error("cannot compare two properties ('\(a.name)' and '\(b.name)') at offset \(offset): compare a property with a value")
    }

    // MARK: Logic

    /// A parenthesized group being read (or the whole predicate, which has no `(`).
    struct Group {
        /// The `OR` terms read so far.
        var disjuncts: [QueryNode] = []
        /// The `AND` terms of the `OR` term being read.
        var conjuncts: [QueryNode] = []
        /// How many `NOT`s stand before the `(`.
        let nots: Int
        /// The offset of the `(`.
        let open: Int

        /// Ends the `OR` term being read.
        mutating func endDisjunct() {
            // The same as folding with `&&` and `||`, which flatten, without their quadratic copying.
            disjuncts.append(conjuncts.count == 1 ? conjuncts[0] : .and(conjuncts.flatMap(\.conjuncts)))
            conjuncts = []
        }

        /// The group as one node, `NOT`s applied.
        mutating func finish() -> QueryNode {
            endDisjunct()
            let node = disjuncts.count == 1 ? disjuncts[0] : .or(disjuncts.flatMap(\.disjuncts))
            return negated(node, nots)
        }
    }

    /// The whole predicate.
    ///
    /// Groups are kept on a stack of their own rather than by recursion, so no nesting can
    /// exhaust the thread's stack; `maximumDepth` still bounds the tree for the recursive
    /// code that walks it later.
    mutating func parsePredicate() throws(RealmError) -> QueryNode {
        var groups = [Group(nots: 0, open: 0)]
        operand: while true {
            // `NOT`s and `(`s, then a comparison or a constant.
            var nots = 0
            while true {
                if current.kind == .not {
                    try enter(at: advance().offset)
                    nots += 1
                } else if current.kind == .openParen {
                    let open = advance().offset
                    try enter(at: open)
                    groups.append(Group(nots: nots, open: open))
                    nots = 0
                } else {
                    break
                }
            }
            let node: QueryNode
            switch current.kind {
            case .truePredicate:
                _ = advance()
                node = .constant(true)
            case .falsePredicate:
                _ = advance()
                node = .constant(false)
            default:
                node = try parseComparison()
            }
            groups[groups.count - 1].conjuncts.append(negated(node, nots))
            depth -= nots

            // `AND` or `OR` and another operand, or `)`s, or the end.
            while true {
                switch current.kind {
                case .and:
                    _ = advance()
                    continue operand
                case .or:
                    _ = advance()
                    groups[groups.count - 1].endDisjunct()
                    continue operand
                case .closeParen where groups.count > 1:
                    _ = advance()
                    var group = groups.removeLast()
                    depth -= 1 + group.nots
                    groups[groups.count - 1].conjuncts.append(group.finish())
                case .end where groups.count == 1 && variable == nil, .closeParen where groups.count == 1 && variable != nil:
                    return groups[0].finish()
                case .closeParen:
                    throw error("unexpected token ')' at offset \(current.offset): there is no '(' to close")
                default:
                    guard groups.count == 1 else {
                        let found = current.kind == .end ? "the end of the query" : "'\(text(current))'"
                        let open = groups[groups.count - 1].open
                        throw error("missing ')' at offset \(current.offset) to close '(' at offset \(open), found \(found)")
                    }
                    throw unexpected(current, expecting: "AND, OR or the end of the query")
                }
            }
        }
    }

    mutating func enter(at offset: Int) throws(RealmError) {
        depth += 1
        guard depth <= PredicateParser.maximumDepth else {
            throw error(
                "nesting too deep at offset \(offset): at most \(PredicateParser.maximumDepth) levels of parentheses and NOT")
        }
    }

    // MARK: Comparisons

    mutating func parseComparison() throws(RealmError) -> QueryNode {
        var quantifier: (Quantifier, offset: Int)?
        if case .quantifier(let q) = current.kind { quantifier = (q, advance().offset) }
        if quantifier == nil, current.kind == .subquery { return try parseSubquery() }
        let lhs = try parseOperand()
        if let (q, offset) = quantifier {
            guard case .collection(let c, _) = lhs, c.aggregate == nil else {
                throw error("\(q.rawValue) at offset \(offset) needs a key path through a list or LinkingObjects after it")
            }
        }
        // A test of a collection's elements, or of an aggregate.
        if case .collection(let c, let offset) = lhs {
            return try collectionTest(c, at: offset, quantifier: quantifier?.0)
        }
        let opToken = advance()
        switch opToken.kind {
        case .comparison(let op):
            let modifierOffset = current.offset
            let options = try parseModifier(after: opToken, allowed: op == .equal || op == .notEqual)
            let rhs = try parseOperand()
            if case .collection(let c, let offset) = rhs, case .value(let v, let valueOffset) = lhs {
                return try elementComparison(c, at: offset, Quantifier.any, op.flipped, v, valueOffset: valueOffset, options: options)
            }
            return try comparison(lhs, op, rhs, options: options, modifierOffset: modifierOffset)
        case .stringOperator(let op):
            let options = try parseModifier(after: opToken, allowed: true)
            let rhs = try parseOperand()
            return try stringMatch(lhs, op, opToken, rhs, options: options)
        case .in:
            _ = try parseModifier(after: opToken, allowed: false)
            if case .value(let v, let valueOffset) = lhs, case .identifier = current.kind {
                // `'x' IN tags`: the collection holds the value.
                let rhs = try parseOperand()
                guard case .collection(let c, let offset) = rhs, c.aggregate == nil else {
                    throw error("IN at offset \(opToken.offset) needs a list {…}, %@ or a collection key path after it")
                }
                return try elementComparison(c, at: offset, Quantifier.any, .equal, v, valueOffset: valueOffset, options: [])
            }
            let property = try leftProperty(lhs, of: opToken)
            if case .valueArgument(let i) = current.kind, let shape = arguments[i] as? any Geospatial {
                // `location IN %@` with a GeoCircle, GeoBox or GeoPolygon.
                let token = advance()
                guard property.type == .object else {
                    throw error("\(describe(property)) is not a location (an embedded object of GeoJSON's shape) for IN %@ with a \(type(of: shape)) at offset \(token.offset)")
                }
                return .geoWithin(property.name, shape)
            }
            let (values, _) = try parseList(for: property)
            return .membership(property: property.name, values: values)
        case .geoWithin:
            // `location GEOWITHIN %@`, RealmSwift's spelling of `location IN %@` with a shape.
            let property = try leftProperty(lhs, of: opToken)
            guard case .valueArgument(let i) = current.kind, let shape = arguments[i] as? any Geospatial else {
                throw error("GEOWITHIN at offset \(opToken.offset) needs a shape argument %@ (a GeoBox, GeoCircle or GeoPolygon) after it")
            }
            let token = advance()
            guard property.type == .object else {
                throw error("\(describe(property)) is not a location (an embedded object of GeoJSON's shape) for GEOWITHIN %@ with a \(type(of: shape)) at offset \(token.offset)")
            }
            return .geoWithin(property.name, shape)
        case .between:
            _ = try parseModifier(after: opToken, allowed: false)
            let property = try leftProperty(lhs, of: opToken)
            let (values, offset) = try parseList(for: property)
            guard values.count == 2 else {
                throw error("BETWEEN needs two values {lower, upper}, got \(values.count) at offset \(offset)")
            }
            if let nilIndex = values.firstIndex(of: .null) {
                throw error("BETWEEN bounds cannot be nil (the \(nilIndex == 0 ? "lower" : "upper") bound) at offset \(offset)")
            }
            return .between(property: property.name, lower: values[0], upper: values[1])
        default:
            throw unexpected(
                opToken, expecting: "an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, IN, BETWEEN, GEOWITHIN)")
        }
    }

    /// `[c]`, `[d]`, `[cd]` after an operator, if there is one.
    mutating func parseModifier(after op: PredicateToken, allowed: Bool) throws(RealmError) -> StringOptions {
        guard case .modifier(let letters) = current.kind else { return [] }
        let token = advance()
        var options: StringOptions = []
        for letter in letters.lowercased() {
            let option: StringOptions
            switch letter {
            case "c": option = .caseInsensitive
            case "d": option = .diacriticInsensitive
            default: throw error("unknown modifier '\(text(token))' at offset \(token.offset): expected [c], [d] or [cd]")
            }
            guard !options.contains(option) else {
                throw error("unknown modifier '\(text(token))' at offset \(token.offset): expected [c], [d] or [cd]")
            }
            options.insert(option)
        }
        guard !options.isEmpty else {
            throw error("unknown modifier '\(text(token))' at offset \(token.offset): expected [c], [d] or [cd]")
        }
        guard allowed else {
            throw error(
                "modifier '\(text(token))' is not allowed with '\(text(op))' at offset \(token.offset): "
                    + "only ==, != and the string operators take one")
        }
        return options
    }

    /// A property (a name, or `%K`) or a single value (a literal or `%@`).
    mutating func parseOperand() throws(RealmError) -> Operand {
        let token = advance()
        switch token.kind {
        case .identifier(let name):
            let operand = try operand(named: name, at: token.offset)
            if current.kind == .openBracket { return try mapSubscript(operand, at: token.offset) }
            return operand
        case .keyArgument(let i):
            guard let name = propertyName(arguments[i]) else {
                let found = unwrappedTypeName(arguments[i]) ?? "nil"
                throw error("%K needs a property name String, argument \(i + 1) is \(found) at offset \(token.offset)")
            }
            return try operand(named: name, at: token.offset)
        case .literal(let value):
            return .value(value, offset: token.offset)
        case .valueArgument(let i):
            return .value(try scalarArgument(i, at: token.offset), offset: token.offset)
        default:
            throw unexpected(token, expecting: "a property name or a value")
        }
    }

    func propertyName(_ argument: Any?) -> String? {
        switch argument {
        case let s as String: s
        case let s as Substring: String(s)
        default: nil
        }
    }

    /// What the key path `name` names: a property (one of the class's, or one reached through
    /// to-one links) or a key path through a collection. Inside a `SUBQUERY`, key paths start
    /// with its variable.
    func operand(named name: String, at offset: Int) throws(RealmError) -> Operand {
        var name = name
        if let variable {
            if name == variable.name { return .property(variable.element, offset: offset) }
            guard name.hasPrefix(variable.name + ".") else {
                throw error(
                    "'\(name)' at offset \(offset) is not reached through \(variable.name): "
                        + "inside SUBQUERY, key paths start with its variable")
            }
            name.removeFirst(variable.name.count + 1)
        }
        let names = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var schema = schema
        for (i, component) in names.enumerated() {
            guard let property = schema[component] else { break }
            if property.isArray || property.type == .linkingObjects {
                return .collection(
                    try collectionPath(property, path: names[...i].joined(separator: "."), rest: names[(i + 1)...], in: name, at: offset),
                    offset: offset)
            }
            guard property.type == .object, i < names.count - 1,
                let target = property.objectClassName.flatMap(schemaNamed)
            else { break }
            schema = target
        }
        return .property(try property(named: name, at: offset), offset: offset)
    }

    /// The key path through the collection `collection` (at `path`), with `rest` after it.
    func collectionPath(
        _ collection: Property, path: String, rest: ArraySlice<String>, in name: String, at offset: Int
    ) throws(RealmError) -> CollectionPath {
        let elementSchema = collection.objectClassName.flatMap(schemaNamed)
        let itself = Property(
            name: "self", type: collection.type == .linkingObjects ? .object : collection.type,
            isOptional: collection.isOptional, isIndexed: false, isPrimary: false, objectClassName: collection.objectClassName)
        var rest = rest
        // A map's keys or values: `ratings.@keys`, `ratings.@values` (the values are the default).
        if collection.isMap, let first = rest.first, first == "@keys" || first == "@values" {
            rest.removeFirst()
            let keys = first == "@keys"
            let element = keys ? Property(name: "self", type: .string, isOptional: false, isIndexed: false, isPrimary: false) : itself
            let mapPath = keys ? path + "@keys" : path
            guard let next = rest.first else {
                return CollectionPath(path: mapPath, collection: collection, element: element, aggregate: nil)
            }
            guard next == "@count" || (!keys && AggregateFunction(rawValue: next) != nil), rest.count == 1 else {
                throw error("'\(first)' must end the key path '\(name)' or be followed by an aggregate, at offset \(offset)")
            }
            return try collectionPath(collection, path: mapPath, rest: rest, in: name, at: offset)
        }
        guard let first = rest.first else {
            return CollectionPath(path: path, collection: collection, element: itself, aggregate: nil)
        }
        guard first.hasPrefix("@") else {
            guard let elementSchema else {
                throw error("'\(path)' in key path '\(name)' is \(collection.typeName), whose values have no property '\(first)', at offset \(offset)")
            }
            let inner = Parser(bytes: bytes, tokens: tokens, arguments: arguments, schema: elementSchema, schemaNamed: schemaNamed)
            guard case .property(let element, _) = try inner.operand(named: rest.joined(separator: "."), at: offset) else {
                throw error("key path '\(name)' at offset \(offset) goes through two collections: query one at a time (SUBQUERY)")
            }
            return CollectionPath(path: path, collection: collection, element: element, aggregate: nil)
        }
        let word = rest.removeFirst()
        guard let function = AggregateFunction(rawValue: word == "@size" ? "@count" : word) else {
            throw error("unknown aggregate '\(word)' in key path '\(name)' at offset \(offset): expected @count, @sum, @avg, @min or @max")
        }
        if function == .count {
            guard rest.isEmpty else { throw error("'@count' must end the key path '\(name)' at offset \(offset)") }
            return CollectionPath(path: path, collection: collection, element: itself, aggregate: .count)
        }
        var element = itself
        if let elementSchema {
            guard rest.count == 1, let property = elementSchema[rest.first!] else {
                throw error(
                    "'\(word)' over '\(path)' in key path '\(name)' needs a property of \(elementSchema.className) after it "
                        + "('\(path).\(word).property') at offset \(offset)")
            }
            element = property
        } else if !rest.isEmpty {
            throw error("'\(word)' must end the key path '\(name)' at offset \(offset)")
        }
        let numeric: Set<PropertyType> = function == .min || function == .max ? [.int, .float, .double, .decimal, .date] : [.int, .float, .double, .decimal]
        guard numeric.contains(element.type), !element.isArray else {
            throw error("'\(word)' in key path '\(name)' needs numbers\(function == .min || function == .max ? " or dates" : ""), not \(describe(element)) at offset \(offset)")
        }
        return CollectionPath(path: path, collection: collection, element: element, aggregate: function)
    }

    /// The property `name` names: one of the class's, or a key path through to-one links
    /// (`byline.name`), whose property may be null wherever a link on the way is.
    func property(named name: String, at offset: Int) throws(RealmError) -> Property {
        var names = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var schema = schema
        let last = names.removeLast()
        for link in names {
            guard let property = schema[link] else {
                throw error("unknown property '\(link)' in key path '\(name)' on \(schema.className) at offset \(offset)")
            }
            guard property.type == .object, let className = property.objectClassName,
                let target = schemaNamed(className)
            else {
                throw error(
                    "'\(link)' in key path '\(name)' is \(describe(property)), not a link to follow, at offset \(offset)")
            }
            schema = target
        }
        guard let property = schema[last] else {
            let path = names.isEmpty ? "" : " in key path '\(name)'"
            throw error("unknown property '\(last)'\(path) on \(schema.className) at offset \(offset)")
        }
        guard !names.isEmpty else { return property }
        return Property(
            name: name, type: property.type, isOptional: true, isIndexed: false, isPrimary: false,
            objectClassName: property.objectClassName)
    }

    /// A `%@` argument that must be a single value.
    func scalarArgument(_ i: Int, at offset: Int) throws(RealmError) -> QueryValue {
        guard let value = QueryValue(any: arguments[i]) else {
            throw error("argument \(i + 1) for %@ \(unsupported(arguments[i])) at offset \(offset)")
        }
        return value
    }

    /// Why ``QueryValue/init(any:)`` refused `value`.
    func unsupported(_ value: Any?) -> String {
        let type = unwrappedTypeName(value) ?? "nil"
        if type == "UInt" || type == "UInt64" {
            return "is out of the range of Int64"
        }
        return "has unsupported type \(type)"
    }

    /// The dynamic type of a value, looking through optionals.
    func unwrappedTypeName(_ value: Any?) -> String? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.flatMap { unwrappedTypeName($0.value) } ?? "nil"
        }
        return typeName(of: value)
    }

    /// The property on the left of an operator that takes no value on its left.
    func leftProperty(_ lhs: Operand, of op: PredicateToken) throws(RealmError) -> Property {
        switch lhs {
        case .property(let property, _): return property
        case .value(_, let offset), .collection(_, let offset):
            throw error("\(text(op).uppercased()) needs a property on its left, found a value at offset \(offset)")
        }
    }

    /// `lhs op rhs`, with the property on the left (the operator turned if it was not).
    func comparison(
        _ lhs: Operand, _ op: ComparisonOperator, _ rhs: Operand, options: StringOptions, modifierOffset: Int
    ) throws(RealmError) -> QueryNode {
        let property: Property
        let value: QueryValue
        let valueOffset: Int
        var op = op
        switch (lhs, rhs) {
        case (.property(let p, _), .value(let v, let offset)):
            (property, value, valueOffset) = (p, v, offset)
        case (.value(let v, let offset), .property(let p, _)):
            (property, value, valueOffset) = (p, v, offset)
            op = op.flipped
        case (.property(let a, _), .property(let b, let offset)):
            throw twoProperties(a, b, at: offset)
        case (.value(_, let offset), .value):
            throw error("cannot compare two values at offset \(offset): one side must be a property")
        case (.collection(let c, _), _), (_, .collection(let c, _)):
            throw error("'\(c.path)' cannot be compared here: compare a property of its elements or an aggregate with a value")
        }
        if !options.isEmpty, property.type != .string && property.type != .mixed {
            throw error(
                "modifier '\(options.modifier)' needs a String property, not \(describe(property)) at offset \(modifierOffset)")
        }
        if value == .null, op != .equal, op != .notEqual {
            throw error(
                "cannot compare '\(property.name)' \(op.rawValue) nil at offset \(valueOffset): "
                    + "nil can only be compared with == or !=")
        }
        let converted = try convert(value, for: property, at: valueOffset)
        return .comparison(property: property.name, op: op, value: converted, options: options)
    }

    func stringMatch(
        _ lhs: Operand, _ op: StringOperator, _ opToken: PredicateToken, _ rhs: Operand, options: StringOptions
    ) throws(RealmError) -> QueryNode {
        let property = try leftProperty(lhs, of: opToken)
        guard property.type == .string || property.type == .mixed else {
            throw error("\(op.rawValue) needs a String property, not \(describe(property)) at offset \(opToken.offset)")
        }
        switch rhs {
        case .property(let other, let offset):
            throw twoProperties(property, other, at: offset)
        case .collection(let c, let offset):
            throw error("\(op.rawValue) at offset \(offset) cannot take the collection '\(c.path)' on its right")
        case .value(.string(let pattern), _):
            return .stringMatch(property: property.name, op: op, pattern: pattern, options: options)
        case .value(.null, let offset):
            throw error("\(op.rawValue) needs a String, not nil at offset \(offset)")
        case .value(let value, let offset):
            throw error("cannot compare \(describe(property)) with \(value.typeName) at offset \(offset)")
        }
    }

    /// `value` checked against `property`: texts turned into UUIDs and ObjectIds.
    func convert(_ value: QueryValue, for property: Property, at offset: Int) throws(RealmError) -> QueryValue {
        switch (value, property.type) {
        case (.string(let text), .uuid):
            guard text.utf8.count == 36, let uuid = UUID(uuidString: text) else {
                throw error("malformed UUID \(quoted(text)) for \(describe(property)) at offset \(offset)")
            }
            return .uuid(uuid)
        case (.string(let text), .objectId):
            do {
                return .objectId(try ObjectId(string: text))
            } catch {
                throw self.error(
                    "malformed ObjectId \(quoted(text)) for \(describe(property)) at offset \(offset): expected 24 hex digits")
            }
        default:
            guard value.isComparable(with: property.type) else {
                throw error("cannot compare \(describe(property)) with \(value.typeName) at offset \(offset)")
            }
            return value
        }
    }

    // MARK: Lists

    /// `{v1, v2, …}` or a `%@` holding an `Array` or `Set`, each value checked against
    /// `property`; and the offset of the list.
    mutating func parseList(for property: Property) throws(RealmError) -> ([QueryValue], Int) {
        let open = advance()
        switch open.kind {
        case .valueArgument(let i):
            guard let elements = collectionElements(arguments[i]) else {
                let found = unwrappedTypeName(arguments[i]) ?? "nil"
                throw error(
                    "argument \(i + 1) for %@ after IN or BETWEEN must be an Array or a Set, not \(found) at offset \(open.offset)")
            }
            var values: [QueryValue] = []
            values.reserveCapacity(elements.count)
            for (n, element) in elements.enumerated() {
                guard let value = QueryValue(any: element) else {
                    throw error("element \(n) of argument \(i + 1) \(unsupported(element)) at offset \(open.offset)")
                }
                values.append(try convert(value, for: property, at: open.offset))
            }
            return (values, open.offset)
        case .openBrace:
            var values: [QueryValue] = []
            if current.kind == .closeBrace {
                _ = advance()
                return (values, open.offset)
            }
            while true {
                let token = advance()
                let value: QueryValue
                switch token.kind {
                case .literal(let v): value = v
                case .valueArgument(let i): value = try scalarArgument(i, at: token.offset)
                default: throw unexpected(token, expecting: "a value in the list")
                }
                values.append(try convert(value, for: property, at: token.offset))
                let separator = advance()
                switch separator.kind {
                case .comma: continue
                case .closeBrace: return (values, open.offset)
                default: throw unexpected(separator, expecting: "',' or '}'")
                }
            }
        default:
            throw unexpected(open, expecting: "a list {…} or %@")
        }
    }

    /// The elements of an `Array` or a `Set` (looking through optionals), or `nil`.
    func collectionElements(_ value: Any?) -> [Any?]? {
        guard let value else { return nil }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional: return mirror.children.first.flatMap { collectionElements($0.value) }
        case .collection, .set: return mirror.children.map { $0.value }
        default: return nil
        }
    }
}

// MARK: - Collections

extension Parser {
    /// The test after a key path through a collection: of its elements under `quantifier`
    /// (`ANY keywords.value == 'x'`, `ALL scores > 2`, `tags CONTAINS 'x'`), or of an aggregate
    /// (`keywords.@count > 2`).
    mutating func collectionTest(_ c: CollectionPath, at offset: Int, quantifier: Quantifier?) throws(RealmError) -> QueryNode {
        let opToken = advance()
        let element: QueryNode
        switch opToken.kind {
        case .comparison(let op):
            let options = try parseModifier(after: opToken, allowed: op == .equal || op == .notEqual)
            guard case .value(let v, let valueOffset) = try parseOperand() else {
                throw error("'\(c.path)' at offset \(offset) can only be compared with a value")
            }
            return try elementComparison(c, at: offset, quantifier ?? .any, op, v, valueOffset: valueOffset, options: options)
        case .stringOperator(let op) where c.aggregate == nil:
            let options = try parseModifier(after: opToken, allowed: true)
            let rhs = try parseOperand()
            if op == .contains, quantifier == nil, c.element.name == "self", case .value(let v, let valueOffset) = rhs {
                // `tags CONTAINS 'x'`: the collection holds the value, as `'x' IN tags`.
                return try elementComparison(c, at: offset, .any, .equal, v, valueOffset: valueOffset, options: options)
            }
            element = try stringMatch(.property(c.element, offset: offset), op, opToken, rhs, options: options)
        case .in where c.aggregate == nil:
            _ = try parseModifier(after: opToken, allowed: false)
            let (values, _) = try parseList(for: c.element)
            element = .membership(property: c.element.name, values: values)
        case .between:
            _ = try parseModifier(after: opToken, allowed: false)
            let (values, listOffset) = try parseList(for: c.aggregate == nil ? c.element : aggregateResult(c))
            guard values.count == 2, !values.contains(.null) else {
                throw error("BETWEEN needs two values {lower, upper}, neither nil, at offset \(listOffset)")
            }
            if c.aggregate != nil {
                return .and([
                    try elementComparison(c, at: offset, .any, .greaterOrEqual, values[0], valueOffset: listOffset, options: []),
                    try elementComparison(c, at: offset, .any, .lessOrEqual, values[1], valueOffset: listOffset, options: []),
                ])
            }
            element = .between(property: c.element.name, lower: values[0], upper: values[1])
        default:
            throw unexpected(opToken, expecting: c.aggregate == nil ? "an operator" : "a comparison operator")
        }
        return .collection(path: c.path, quantifier: quantifier ?? .any, element: element)
    }

    /// `c op value`: each element's value compared (under `quantifier`), or the aggregate.
    func elementComparison(
        _ c: CollectionPath, at offset: Int, _ quantifier: Quantifier, _ op: ComparisonOperator, _ value: QueryValue,
        valueOffset: Int, options: StringOptions
    ) throws(RealmError) -> QueryNode {
        guard let function = c.aggregate else {
            let element = try comparison(
                .property(c.element, offset: offset), op, .value(value, offset: valueOffset), options: options, modifierOffset: offset)
            return .collection(path: c.path, quantifier: quantifier, element: element)
        }
        let result = aggregateResult(c)
        guard value != .null || (function != .count && function != .sum && (op == .equal || op == .notEqual)) else {
            throw error("'\(c.path).\(function.rawValue)' cannot be compared \(op.rawValue) nil at offset \(valueOffset)")
        }
        let converted = try convert(value, for: result, at: valueOffset)
        let property = c.element.name == "self" ? nil : c.element.name
        return .aggregate(path: c.path, function: function, property: property, filter: nil, op: op, value: converted)
    }

    /// What an aggregate yields, as a property for checking the values it is compared with.
    func aggregateResult(_ c: CollectionPath) -> Property {
        let type: PropertyType =
            switch c.aggregate {
            case .count: .int
            case .min, .max: c.element.type
            default: .double
            }
        return Property(name: "\(c.path).\(c.aggregate?.rawValue ?? "")", type: type, isOptional: true, isIndexed: false, isPrimary: false)
    }

    /// `ratings['home']`: the value under one key of a map, tested as a collection of at most
    /// one element.
    mutating func mapSubscript(_ operand: Operand, at offset: Int) throws(RealmError) -> Operand {
        let open = advance()
        guard case .collection(let c, _) = operand, c.collection.isMap, c.aggregate == nil, !c.path.hasSuffix("@keys") else {
            throw error("'[' at offset \(open.offset) follows no Map: only a map's values are read by key")
        }
        let keyToken = advance()
        let key: QueryValue
        switch keyToken.kind {
        case .literal(let v): key = v
        case .valueArgument(let i): key = try scalarArgument(i, at: keyToken.offset)
        default: throw unexpected(keyToken, expecting: "a key in quotes")
        }
        guard case .string(let text) = key else {
            throw error("a map's key is a String, not \(key.typeName), at offset \(keyToken.offset)")
        }
        let close = advance()
        guard close.kind == .closeBracket else { throw unexpected(close, expecting: "']'") }
        return .collection(
            CollectionPath(path: MapKeyPath.path(c.path, key: text), collection: c.collection, element: c.element, aggregate: nil),
            offset: offset)
    }

    /// `SUBQUERY(collection, $x, predicate).@count op value`.
    mutating func parseSubquery() throws(RealmError) -> QueryNode {
        let keyword = advance()
        guard current.kind == .openParen else { throw unexpected(current, expecting: "'(' after SUBQUERY") }
        try enter(at: advance().offset)
        let pathToken = advance()
        guard case .identifier(let name) = pathToken.kind, case .collection(let c, _) = try operand(named: name, at: pathToken.offset),
            c.aggregate == nil, c.element.name == "self"
        else {
            throw error("SUBQUERY at offset \(keyword.offset) needs a list or LinkingObjects key path first")
        }
        guard advance().kind == .comma else { throw unexpected(tokens[index - 1], expecting: "',' after the collection of SUBQUERY") }
        let variableToken = advance()
        guard case .identifier(let variableName) = variableToken.kind, variableName.hasPrefix("$"), !variableName.contains(".") else {
            throw unexpected(variableToken, expecting: "a variable such as $x")
        }
        guard advance().kind == .comma else { throw unexpected(tokens[index - 1], expecting: "',' after the variable of SUBQUERY") }
        var inner = Parser(
            bytes: bytes, tokens: tokens, arguments: arguments,
            schema: c.collection.objectClassName.flatMap(schemaNamed) ?? schema, schemaNamed: schemaNamed)
        inner.index = index
        inner.depth = depth
        inner.variable = (variableName, c.element)
        let filter = try inner.parsePredicate()
        index = inner.index
        guard advance().kind == .closeParen else { throw unexpected(tokens[index - 1], expecting: "')' to close SUBQUERY") }
        depth -= 1
        let suffix = advance()
        guard case .aggregateSuffix(let word) = suffix.kind, word == "@count" || word == "@size" else {
            throw unexpected(suffix, expecting: ".@count after SUBQUERY(…)")
        }
        let counted = CollectionPath(path: c.path, collection: c.collection, element: c.element, aggregate: .count)
        guard case .aggregate(let path, let function, let property, _, let op, let value) =
            try collectionTest(counted, at: keyword.offset, quantifier: nil)
        else {
            throw error("SUBQUERY(…).@count at offset \(keyword.offset) must be compared with a number")
        }
        return .aggregate(path: path, function: function, property: property, filter: filter, op: op, value: value)
    }
}

extension QueryNode {
    /// The children of an `AND`, or the node itself.
    fileprivate var conjuncts: [QueryNode] { if case .and(let children) = self { children } else { [self] } }
    /// The children of an `OR`, or the node itself.
    fileprivate var disjuncts: [QueryNode] { if case .or(let children) = self { children } else { [self] } }
}

/// `node` under `count` `NOT`s.
private func negated(_ node: QueryNode, _ count: Int) -> QueryNode {
    var node = node
    for _ in 0..<count { node = .not(node) }
    return node
}

extension ComparisonOperator {
    /// The operator with its sides swapped: `a < b` is `b > a`.
    var flipped: ComparisonOperator {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }
}
