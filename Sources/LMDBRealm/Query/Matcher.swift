import Foundation
import LMDBRealmFormat
import LMDBRealmStorage


/// What compiled queries need from the realm they run in: the file, and accessors for the
/// `.block` nodes that test objects in Swift. (The realm implements it.)
protocol QueryContext: AnyObject {
    var file: StoreFile { get }
    /// A managed accessor for the object stored under `key`, with its record.
    func makeObject(_ binding: TableBinding, key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) -> Object
    /// The binding of a class links point to, or `nil` if the file has no such class yet.
    func bindingForReading(_ type: Object.Type) -> TableBinding?
    /// The binding of the class called `className`: its Swift class's if this process has
    /// one, else the file's stored class read dynamically; `nil` if neither exists.
    func bindingForReading(className: String) -> TableBinding?
    /// The record of the object of `table` stored under `key` in the version being queried,
    /// checked, or `nil`.
    func linkedRecord(of table: Table, key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?
    /// Calls `body` with each element of `owner`'s list in list column `column` of `table`
    /// (`nil` for a null), in order, until it returns false.
    func forEachListElement(of table: Table, column: Int, owner: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> Bool)
    /// The length of `owner`'s list in list column `column` of `table`.
    func listCount(of table: Table, column: Int, owner: UnsafeRawBufferPointer) -> Int
    /// Calls `body` with the key of each object of `origin` whose link or list column `column`
    /// holds `target`, until it returns false.
    func forEachBacklink(from origin: Table, column: Int, to target: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool)
    /// How many objects of `origin` hold `target` in their link or list column `column`.
    func backlinkCount(from origin: Table, column: Int, to target: UnsafeRawBufferPointer) -> Int
}

/// Compiles ``QueryNode``s against one table's stored schema.
///
/// Semantics, shared by every query form:
/// - a null field equals only `nil`, differs from every other value, and is never less or
///   greater than anything;
/// - numbers compare by value across `Int`, `Double`, `Float` and `Decimal`;
/// - strings compare by Unicode code point (their UTF-8 bytes), the order indexes use;
///   `[c]` folds case and `[d]` strips diacritics, for all of Unicode, before comparing;
/// - `LIKE` matches `*` (any run) and `?` (one Unicode scalar);
/// - `CONTAINS ''` is true.
struct QueryCompiler {
    let table: Table
    let binding: TableBinding
    let realm: any QueryContext
    /// When compiling the test of a collection's values: their kind, read as `self`.
    var elementType: PropertyType? = nil

    /// The stored column of `name`; the query was validated against the schema before.
    func column(_ name: String) -> Int {
        guard let c = table.schema.properties.firstIndex(where: { $0.name == name }) else {
            fatalError("unknown property '\(name)' on \(table.className)")
        }
        return c
    }

    func compile(_ node: QueryNode) -> Matcher {
        if let path = node.property, path.isKeyPath { return throughLink(node, path: path) }
        switch node {
        case .constant(let value):
            return { _, _ in value }
        case .comparison(let property, let op, let value, let options):
            return comparison(property, op, value, options)
        case .between(let property, let lower, let upper):
            let low = comparison(property, .greaterOrEqual, lower, [])
            let high = comparison(property, .lessOrEqual, upper, [])
            return { k, r in low(k, r) && high(k, r) }
        case .membership(let property, let values):
            let tests = values.map { comparison(property, .equal, $0, []) }
            return { k, r in tests.contains { $0(k, r) } }
        case .stringMatch(let property, let op, let pattern, let options):
            return stringMatch(property, op, pattern, options)
        case .collection(let path, let quantifier, let element):
            let source = collection(path)
            let walk = source.walk
            let test = elementTest(source, element)
            switch quantifier {
            case .any:
                return { k, r in
                    var found = false
                    walk(k, r) { e in
                        found = test(e)
                        return !found
                    }
                    return found
                }
            case .all, .none:
                let wanted = quantifier == .all
                return { k, r in
                    var holds = true
                    walk(k, r) { e in
                        holds = test(e) == wanted
                        return holds
                    }
                    return holds
                }
            }
        case .aggregate(let path, let function, let property, let filter, let op, let value):
            return aggregate(path, function, property, filter, op, value)
        case .elementOf(let owner, let property, let key):
            let members = Set(listElementKeys(owner: owner, property: property, key: key))
            return { k, _ in members.contains(Array(k)) }
        case .and(let children):
            let tests = children.map(compile)
            return { k, r in tests.allSatisfy { $0(k, r) } }
        case .or(let children):
            let tests = children.map(compile)
            return { k, r in tests.contains { $0(k, r) } }
        case .not(let child):
            let test = compile(child)
            return { k, r in !test(k, r) }
        case .block(let block):
            let realm = realm
            let binding = binding
            return { k, r in block(realm.makeObject(binding, key: k, record: r)) }
        }
    }

    // MARK: - Through links

    /// A test of a property reached through a to-one link (`byline.name`): each record's link
    /// is followed and the target's record tested; a null link, or a target that is gone,
    /// tests as if the property were null (Realm's rule).
    private func throughLink(_ node: QueryNode, path: String) -> Matcher {
        let dot = path.firstIndex(of: ".")!
        let head = String(path[..<dot])
        let rest = node.withProperty(String(path[path.index(after: dot)...]))
        let whenNull = rest.outcomeForNull
        let column = column(head)
        let declared = binding.classInfo.schema.properties.firstIndex { $0.name == head }
        // A Swift class's link knows its target's type; a class read dynamically names it.
        let targetBinding: TableBinding?
        if let target = binding.classInfo.links.first(where: { $0.column == declared })?.target {
            targetBinding = realm.bindingForReading(target)
        } else if binding.classInfo.isDynamic, let name = binding.table.schema.properties[column].objectClassName {
            targetBinding = realm.bindingForReading(className: name)
        } else {
            targetBinding = nil
        }
        guard let targetBinding else {
            return { _, _ in whenNull }
        }
        let inner = QueryCompiler(table: targetBinding.table, binding: targetBinding, realm: realm).compile(rest)
        let table = table
        let targetTable = targetBinding.table
        let realm = realm
        let file = realm.file
        return { _, r in
            guard let key = table.field(r.baseAddress!, size: r.count, column: column, in: file),
                let record = realm.linkedRecord(of: targetTable, key: key)
            else { return whenNull }
            return inner(key, record)
        }
    }

    // MARK: - Comparisons

    /// What a leaf test on `property` reads: a record's field, or (`self`) the element a
    /// collection test hands over, or the object's own key.
    private enum Reader {
        case record(RecordField, PropertyType)
        case element(PropertyType)
        case key
    }

    private func reader(_ property: String) -> Reader {
        if property == "self" { return elementType.map(Reader.element) ?? .key }
        let c = column(property)
        return .record(RecordField(table: table, column: c, file: realm.file), table.schema.properties[c].type)
    }

    // Each reader kind gets its own specialisation: a record's field is read inline, as
    // before collections existed.
    private func comparison(_ property: String, _ op: ComparisonOperator, _ value: QueryValue, _ options: StringOptions) -> Matcher {
        switch reader(property) {
        case .record(let f, let type): comparison(f, type, op, value, options)
        case .element(let type): comparison(ElementField(), type, op, value, options)
        case .key: comparison(KeyField(), .object, op, value, options)
        }
    }

    private func stringMatch(_ property: String, _ op: StringOperator, _ pattern: String, _ options: StringOptions) -> Matcher {
        switch reader(property) {
        case .record(let f, .mixed): stringMatch(MixedStringField(field: f), op, pattern, options)
        case .record(let f, _): stringMatch(f, op, pattern, options)
        case .element: stringMatch(ElementField(), op, pattern, options)
        case .key: stringMatch(KeyField(), op, pattern, options)
        }
    }

    private func comparison<F: FieldReader>(
        _ field: F, _ type: PropertyType, _ op: ComparisonOperator, _ value: QueryValue, _ options: StringOptions
    ) -> Matcher {
        if case .null = value {
            switch op {
            case .equal: return { k, r in field(k, r) == nil }
            case .notEqual: return { k, r in field(k, r) != nil }
            default: return { _, _ in false }
            }
        }
        /// Wraps an ordering test of a non-null field: nulls match only `!=`.
        func make(_ test: @escaping (UnsafeRawBufferPointer) -> Bool) -> Matcher {
            let nullResult = op == .notEqual
            return { k, r in
                guard let f = field(k, r) else { return nullResult }
                return test(f)
            }
        }
        switch (type, value) {
        case (.mixed, _):
            return make { mixedComparison($0, op, value, options) }
        case (.int, .int(let v)):
            return scalarComparison(field, op, v)
        case (.double, .double(let v)), (.date, .double(let v)):
            return scalarComparison(field, op, v)
        case (.date, .date(let d)):
            return scalarComparison(field, op, d.timeIntervalSinceReferenceDate)
        case (.int, .double(let v)):
            return make { Double(Int64._rlmDecode($0)).compare(op, v) }
        case (.double, _), (.float, _), (.date, .int):
            guard let v = value.doubleValue else { return { _, _ in op == .notEqual } }
            return make { decodeDouble($0, type).compare(op, v) }
        case (.int, .decimal), (.decimal, _):
            // Exactly, by order keys: the constant's made once, each field's in place.
            guard let v = value.decimalValue else { return { _, _ in op == .notEqual } }
            let constant = v.key
            if type == .int {
                return make { f in ExactDecimal(Int64._rlmDecode(f)).key.withUnsafeBytes { decimalMatches($0, op, constant) } }
            }
            return make { f in DecimalOrder.withKey(of: f) { decimalMatches($0, op, constant) } }
        case (.string, .string(let s)):
            if options.isEmpty {
                let bytes = Array(s.utf8)
                return make { ByteOrder.compare($0, bytes).compare(op, 0) }
            }
            let folded = fold(s, options)
            return make { fold(String._rlmDecode($0), options).compare(op, folded) }
        case (.bool, .bool(let b)):
            let v: UInt8 = b ? 1 : 0
            return make { UInt8($0.first ?? 0 != 0 ? 1 : 0).compare(op, v) }
        case (.uuid, .uuid), (.objectId, .objectId), (.data, .data), (.object, .data):
            let bytes = value.rawBytes
            return make { ByteOrder.compare($0, bytes).compare(op, 0) }
        case (.uuid, .string(let s)):
            guard let u = UUID(uuidString: s) else { return { _, _ in op == .notEqual } }
            return comparison(field, type, op, .uuid(u), options)
        case (.objectId, .string(let s)):
            guard let o = ObjectId(parsing: s) else { return { _, _ in op == .notEqual } }
            return comparison(field, type, op, .objectId(o), options)
        default:
            // Kinds that never compare equal (validated queries do not get here).
            return { _, _ in op == .notEqual }
        }
    }

    /// A comparison of an 8-byte number column with a constant: a closure of its own for each
    /// operator, reading the field in place. Unindexed numeric filters (`wordCount > 1800`)
    /// spend their time here, once per record of the table.
    private func scalarComparison<T: StoredScalar, F: FieldReader>(_ field: F, _ op: ComparisonOperator, _ v: T) -> Matcher {
        @inline(__always) func load(_ k: UnsafeRawBufferPointer, _ r: UnsafeRawBufferPointer) -> T? {
            guard let f = field(k, r) else { return nil }
            return T.load(f.baseAddress!)
        }
        switch op {
        case .equal: return { k, r in load(k, r).map { $0 == v } ?? false }
        case .notEqual: return { k, r in load(k, r).map { $0 != v } ?? true }
        case .less: return { k, r in load(k, r).map { $0 < v } ?? false }
        case .lessOrEqual: return { k, r in load(k, r).map { $0 <= v } ?? false }
        case .greater: return { k, r in load(k, r).map { $0 > v } ?? false }
        case .greaterOrEqual: return { k, r in load(k, r).map { $0 >= v } ?? false }
        }
    }

    // MARK: - String operators

    private func stringMatch<F: FieldReader>(_ field: F, _ op: StringOperator, _ pattern: String, _ options: StringOptions) -> Matcher {
        if op == .like {
            let scalars = Array(fold(pattern, options).unicodeScalars)
            return { k, r in
                guard let f = field(k, r) else { return false }
                return likeMatch(Array(fold(String._rlmDecode(f), options).unicodeScalars), scalars)
            }
        }
        if options.isEmpty {
            let needle = Array(pattern.utf8)
            return { k, r in
                guard let f = field(k, r) else { return false }
                return bytesMatch(op, f, needle)
            }
        }
        let needle = Array(fold(pattern, options).utf8)
        return { k, r in
            guard let f = field(k, r) else { return false }
            var folded = fold(String._rlmDecode(f), options)
            return folded.withUTF8 { bytesMatch(op, UnsafeRawBufferPointer($0), needle) }
        }
    }
}

// MARK: - Helpers

/// A stored mixed value compared with a query's value: numbers by value across kinds, other
/// kinds only with their own (a value of another kind is unequal, neither less nor greater).
func mixedComparison(_ field: UnsafeRawBufferPointer, _ op: ComparisonOperator, _ value: QueryValue, _ options: StringOptions) -> Bool {
    let stored = QueryValue(field: field, type: .mixed)
    guard let order = stored.order(comparedWith: value, options) else { return op == .notEqual }
    return order.compare(op, 0)
}

/// The string a mixed field holds: its payload when it holds a string, `nil` otherwise.
struct MixedStringField<F: FieldReader>: FieldReader {
    let field: F
    @inline(__always)
    func callAsFunction(_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard let f = field(key, record), let (kind, payload) = MixedField.split(f), kind == .string else { return nil }
        return payload
    }
}

extension QueryValue {
    /// Negative, zero or positive as this value orders before, with or after `other`; `nil`
    /// when the two are of kinds that do not compare.
    func order(comparedWith other: QueryValue, _ options: StringOptions) -> Int? {
        func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
        switch (self, other) {
        case (.int(let a), .int(let b)): return sign(a, b)
        case (.int, .double), (.double, .int), (.double, .double):
            return sign(doubleValue!, other.doubleValue!)
        case (.decimal, .int), (.decimal, .double), (.decimal, .decimal), (.int, .decimal), (.double, .decimal):
            let (a, b) = (decimalValue!, other.decimalValue!)
            // NaN equals NaN and orders with nothing else.
            if a.isNaN || b.isNaN { return a.isNaN && b.isNaN ? 0 : nil }
            return ByteOrder.compare(a.key, b.key)
        case (.string(let a), .string(let b)):
            if options.isEmpty { return ByteOrder.compare(Array(a.utf8), Array(b.utf8)) }
            return sign(fold(a, options), fold(b, options))
        case (.bool(let a), .bool(let b)): return sign(a ? 1 : 0, b ? 1 : 0)
        case (.date(let a), .date(let b)): return sign(a, b)
        case (.data, .data), (.uuid, .uuid), (.objectId, .objectId):
            return ByteOrder.compare(rawBytes, other.rawBytes)
        default: return nil
        }
    }
}

/// Whether a decimal of order key `field` stands in relation `op` to the constant of key
/// `constant`: exactly; NaN equals NaN and is neither less nor greater than anything.
@inline(__always)
private func decimalMatches(_ field: UnsafeRawBufferPointer, _ op: ComparisonOperator, _ constant: [UInt8]) -> Bool {
    let fieldIsNaN = DecimalOrder.isNaN(key: field)
    let constantIsNaN = constant.first == DecimalOrder.nanClass
    if fieldIsNaN || constantIsNaN {
        switch op {
        case .equal: return fieldIsNaN && constantIsNaN
        case .notEqual: return !(fieldIsNaN && constantIsNaN)
        default: return false
        }
    }
    return ByteOrder.compare(field, constant).compare(op, 0)
}

extension Comparable {
    @inline(__always)
    func compare(_ op: ComparisonOperator, _ other: Self) -> Bool {
        switch op {
        case .equal: self == other
        case .notEqual: self != other
        case .less: self < other
        case .lessOrEqual: self <= other
        case .greater: self > other
        case .greaterOrEqual: self >= other
        }
    }
}

extension QueryValue {
    var doubleValue: Double? {
        switch self {
        case .int(let v): Double(v)
        case .double(let v): v
        case .decimal(let v): v.doubleValue
        case .date(let d): d.timeIntervalSinceReferenceDate
        default: nil
        }
    }

    /// The value as an exact decimal, for comparison with a decimal property.
    var decimalValue: ExactDecimal? {
        switch self {
        case .int(let v): ExactDecimal(v)
        case .double(let v): ExactDecimal(v)
        case .decimal(let v): v
        default: nil
        }
    }

    /// The raw bytes of a UUID, ObjectId or Data value.
    var rawBytes: [UInt8] {
        switch self {
        case .uuid(let u): withUnsafeBytes(of: u.uuid) { Array($0) }
        case .objectId(let o): withUnsafeBytes(of: o.bytes) { Array($0) }
        case .data(let d): Array(d)
        default: []
        }
    }
}

/// BEGINSWITH / ENDSWITH / CONTAINS on UTF-8 bytes.
func bytesMatch(_ op: StringOperator, _ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
    let n = needle.count
    guard n <= haystack.count else { return false }
    if n == 0 { return true }
    return needle.withUnsafeBytes { needle in
        switch op {
        case .beginsWith:
            return memcmp(haystack.baseAddress!, needle.baseAddress!, n) == 0
        case .endsWith:
            return memcmp(haystack.baseAddress! + (haystack.count - n), needle.baseAddress!, n) == 0
        case .contains:
            // memchr for the first byte, memcmp for the rest.
            let first = Int32(needle[0])
            var at = haystack.baseAddress!
            let last = haystack.baseAddress! + (haystack.count - n)
            while at <= last {
                guard let hit = memchr(at, first, last - at + 1) else { return false }
                if memcmp(hit, needle.baseAddress!, n) == 0 { return true }
                at = UnsafeRawPointer(hit) + 1
            }
            return false
        case .like:
            fatalError("LIKE is matched on scalars")
        }
    }
}

/// Folds `s` for `[c]` (Unicode case folding, so "Straße" matches "STRASSE") and `[d]`
/// (canonical decomposition with combining marks removed, so "é" matches "e").
func fold(_ s: String, _ options: StringOptions) -> String {
    var result = s
    if options.contains(.diacriticInsensitive) {
        let scalars = result.decomposedStringWithCanonicalMapping.unicodeScalars.filter {
            $0.properties.generalCategory != .nonspacingMark
        }
        result = String(String.UnicodeScalarView(scalars))
    }
    if options.contains(.caseInsensitive) {
        result = result.uppercased().lowercased()
    }
    return result
}

/// `LIKE`: `*` matches any run of scalars, `?` exactly one.
func likeMatch(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
    var t = 0
    var p = 0
    var starP = -1
    var starT = 0
    while t < text.count {
        if p < pattern.count && (pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t])) {
            t += 1
            p += 1
        } else if p < pattern.count && pattern[p] == "*" {
            starP = p
            starT = t
            p += 1
        } else if starP >= 0 {
            p = starP + 1
            starT += 1
            t = starT
        } else {
            return false
        }
    }
    while p < pattern.count && pattern[p] == "*" { p += 1 }
    return p == pattern.count
}

/// An 8-byte number as records store it (little-endian).
protocol StoredScalar: Comparable {
    static func load(_ field: UnsafeRawPointer) -> Self
}

extension Int64: StoredScalar {
    @inline(__always)
    static func load(_ field: UnsafeRawPointer) -> Int64 { Int64(littleEndian: field.loadUnaligned(as: Int64.self)) }
}

extension Double: StoredScalar {
    @inline(__always)
    static func load(_ field: UnsafeRawPointer) -> Double {
        Double(bitPattern: UInt64(littleEndian: field.loadUnaligned(as: UInt64.self)))
    }
}

extension QueryNode {
    /// The property a leaf test reads; `nil` for other nodes.
    var property: String? {
        switch self {
        case .comparison(let property, _, _, _), .between(let property, _, _), .membership(let property, _),
            .stringMatch(let property, _, _, _), .collection(let property, _, _), .aggregate(let property, _, _, _, _, _):
            property
        default: nil
        }
    }

    /// This leaf test on the property `name` instead.
    func withProperty(_ name: String) -> QueryNode {
        switch self {
        case .comparison(_, let op, let value, let options): .comparison(property: name, op: op, value: value, options: options)
        case .between(_, let lower, let upper): .between(property: name, lower: lower, upper: upper)
        case .membership(_, let values): .membership(property: name, values: values)
        case .stringMatch(_, let op, let pattern, let options): .stringMatch(property: name, op: op, pattern: pattern, options: options)
        case .collection(_, let quantifier, let element): .collection(path: name, quantifier: quantifier, element: element)
        case .aggregate(_, let function, let property, let filter, let op, let value):
            .aggregate(path: name, function: function, property: property, filter: filter, op: op, value: value)
        default: self
        }
    }

    /// What this leaf test gives for a null value.
    var outcomeForNull: Bool {
        switch self {
        case .comparison(_, let op, let value, _): value == .null ? op == .equal : op == .notEqual
        case .membership(_, let values): values.contains(.null)
        // A collection behind a null link is empty.
        case .collection(_, let quantifier, _): quantifier != .any
        case .aggregate(_, let function, _, _, let op, let value):
            function == .count || function == .sum
                ? (value.doubleValue.map { 0.0.compare(op, $0) } ?? (op == .notEqual))
                : (value == .null ? op == .equal : op == .notEqual)
        default: false
        }
    }
}
