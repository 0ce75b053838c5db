public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// The type-safe query language of ``Results/where(_:)``: key paths into the model, compared
/// with Swift values.
///
/// ```swift
/// let long = articles.where { $0.section == "Sports" && $0.wordCount > 500 }
/// let some = articles.where { $0.section.in(["Arts", "Style"]) || $0.abstract == nil }
/// let text = articles.where { $0.url.starts(with: "https://") && $0.leadParagraph.contains("é", options: .diacriticInsensitive) }
/// let span = articles.where { $0.wordCount.contains(100...500) }
/// ```
///
/// `Query<Element>` stands for the object; `Query<Value>` for one of its properties;
/// `Query<Bool>` for a condition, combined with `&&`, `||` and `!`.
@dynamicMemberLookup
public struct Query<T> {
    enum Kind {
        case root(ClassInfo)
        case property(name: String)
        case condition(QueryNode)
        /// `(condition).count`: how many elements of a collection satisfy the condition.
        case subquery(QueryNode)
    }

    let kind: Kind

    init(_ kind: Kind) {
        self.kind = kind
    }

    /// The condition a `Query<Bool>` stands for; a Bool property stands for `== true`.
    var node: QueryNode {
        switch kind {
        case .condition(let node): node
        case .property(let name): .comparison(property: name, op: .equal, value: .bool(true), options: [])
        case .root: .constant(true)
        case .subquery: fatalError("a query's .count must be compared with a number")
        }
    }

    var propertyName: String {
        guard case .property(let name) = kind else { fatalError("a query condition is not a property") }
        return name
    }
}

extension Query where T: Object {
    /// The property `keyPath` reads.
    /// - Precondition: `keyPath` names a `@Persisted` property.
    public subscript<V: _Persistable>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
        guard case .root(let info) = kind else { fatalError("links are not supported in queries") }
        guard let name = info.propertyName(for: keyPath) else {
            fatalError("\(keyPath) is not a persisted property of \(info.schema.className)")
        }
        return Query<V>(.property(name: name))
    }
}

extension Query {
    /// The property `keyPath` reads on the object a to-one link points to, as in
    /// `$0.byline.name == "Ada"`. Where the link is `nil` the property counts as `nil`.
    /// - Precondition: `keyPath` names a `@Persisted` property of the linked class.
    public subscript<Target: Object, V: _Persistable>(dynamicMember keyPath: KeyPath<Target, V>) -> Query<V>
    where T == Target? {
        let info = ClassInfo.of(Target.self)
        guard let name = info.propertyName(for: keyPath) else {
            fatalError("\(keyPath) is not a persisted property of \(info.schema.className)")
        }
        return Query<V>(.property(name: propertyName + "." + name))
    }
}

// MARK: - Comparisons

extension Query where T: _Persistable {
    private func compare(_ op: ComparisonOperator, _ value: T, _ options: StringOptions = []) -> Query<Bool> {
        if case .subquery(let filter) = kind {
            return Query<Bool>(.condition(.aggregate(path: "", function: .count, property: nil, filter: filter, op: op, value: QueryValue(value))))
        }
        return Query<Bool>(.condition(.comparison(property: propertyName, op: op, value: QueryValue(value), options: options)))
    }

    public static func == (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compare(.equal, rhs) }
    public static func != (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compare(.notEqual, rhs) }

    /// Whether the property holds one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        Query<Bool>(.condition(.membership(property: propertyName, values: values.map { QueryValue($0) })))
    }
}

/// Property kinds that have an order: numbers, dates, strings, UUIDs and ObjectIds, and their
/// optionals.
public protocol _QueryComparable: _Persistable {}
extension Int: _QueryComparable {}
extension Int8: _QueryComparable {}
extension Int16: _QueryComparable {}
extension Int32: _QueryComparable {}
extension Int64: _QueryComparable {}
extension Float: _QueryComparable {}
extension Double: _QueryComparable {}
extension Decimal: _QueryComparable {}
extension Date: _QueryComparable {}
extension String: _QueryComparable {}
extension UUID: _QueryComparable {}
extension ObjectId: _QueryComparable {}
extension Optional: _QueryComparable where Wrapped: _QueryComparable & _PersistableNonOptional {}

extension Query where T: _QueryComparable {
    private func order(_ op: ComparisonOperator, _ value: T) -> Query<Bool> {
        if case .subquery(let filter) = kind {
            return Query<Bool>(.condition(.aggregate(path: "", function: .count, property: nil, filter: filter, op: op, value: QueryValue(value))))
        }
        return Query<Bool>(.condition(.comparison(property: propertyName, op: op, value: QueryValue(value), options: [])))
    }

    public static func < (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.order(.less, rhs) }
    public static func <= (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.order(.lessOrEqual, rhs) }
    public static func > (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.order(.greater, rhs) }
    public static func >= (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.order(.greaterOrEqual, rhs) }
}

extension Query where T: _QueryComparable & Comparable {
    /// Whether the property lies in `range`, both ends included (`BETWEEN`).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> {
        Query<Bool>(.condition(.between(property: propertyName, lower: QueryValue(range.lowerBound), upper: QueryValue(range.upperBound))))
    }

    /// Whether the property lies in `range`, its upper end excluded.
    public func contains(_ range: Range<T>) -> Query<Bool> {
        self >= range.lowerBound && self < range.upperBound
    }
}

extension Query {
    /// Whether an optional property lies in `range`, both ends included.
    public func contains<W: _QueryComparable & _PersistableNonOptional & Comparable>(_ range: ClosedRange<W>) -> Query<Bool>
    where T == W? {
        Query<Bool>(.condition(.between(property: propertyName, lower: QueryValue(range.lowerBound), upper: QueryValue(range.upperBound))))
    }
}

// MARK: - Strings

/// `String` and `String?` properties.
public protocol _QueryString: _Persistable {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped == String {}

extension Query where T: _QueryString {
    private func match(_ op: StringOperator, _ pattern: String, _ options: StringOptions) -> Query<Bool> {
        Query<Bool>(.condition(.stringMatch(property: propertyName, op: op, pattern: pattern, options: options)))
    }

    /// Whether the string contains `value` (`CONTAINS`).
    public func contains(_ value: String, options: StringOptions = []) -> Query<Bool> { match(.contains, value, options) }
    /// Whether the string starts with `value` (`BEGINSWITH`).
    public func starts(with value: String, options: StringOptions = []) -> Query<Bool> { match(.beginsWith, value, options) }
    /// Whether the string ends with `value` (`ENDSWITH`).
    public func ends(with value: String, options: StringOptions = []) -> Query<Bool> { match(.endsWith, value, options) }
    /// Whether the string matches `pattern`, where `*` matches any run of characters and `?`
    /// one (`LIKE`).
    public func like(_ pattern: String, options: StringOptions = []) -> Query<Bool> { match(.like, pattern, options) }
    /// `LIKE`, with RealmSwift's spelling of case insensitivity.
    public func like(_ pattern: String, caseInsensitive: Bool) -> Query<Bool> {
        match(.like, pattern, caseInsensitive ? .caseInsensitive : [])
    }
    /// Whether the string equals `value` under `options` (`==[cd]`).
    public func equals(_ value: String, options: StringOptions = []) -> Query<Bool> {
        Query<Bool>(.condition(.comparison(property: propertyName, op: .equal, value: .string(value), options: options)))
    }
}

// MARK: - Combining conditions

extension Query where T == Bool {
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> { Query(.condition(lhs.node && rhs.node)) }
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> { Query(.condition(lhs.node || rhs.node)) }
    public static prefix func ! (query: Query<Bool>) -> Query<Bool> { Query(.condition(.not(query.node))) }
}

@available(*, unavailable, message: "a Query is built and used inside one where {} call")
extension Query: Sendable {}
