import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// A filter over one class's objects: what the `where` DSL, predicate strings and
/// `#Predicate` all translate into, and what the planner and executor work on.
///
/// Properties are named as declared in Swift; they are resolved to stored columns when the
/// query is compiled against a table.
indirect enum QueryNode: Sendable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    /// `property <op> value`. `options` apply to string equality (`==[c]`).
    case comparison(property: String, op: ComparisonOperator, value: QueryValue, options: StringOptions)
    /// `property BETWEEN {lower, upper}`: both bounds included.
    case between(property: String, lower: QueryValue, upper: QueryValue)
    /// `property IN {values}`.
    case membership(property: String, values: [QueryValue])
    /// `property BEGINSWITH/ENDSWITH/CONTAINS/LIKE pattern`, with `[c]`, `[d]`, `[cd]`.
    case stringMatch(property: String, op: StringOperator, pattern: String, options: StringOptions)
    /// Every child holds.
    case and([QueryNode])
    /// Some child holds.
    case or([QueryNode])
    /// The child does not hold.
    case not(QueryNode)
    /// A test no query can express, run object by object (the fallback for `#Predicate`).
    case block(@Sendable (Object) -> Bool)
    /// `ANY/ALL/NONE path.<test>`: `element` tests each element of the collection `path` (a
    /// `List` or `LinkingObjects` property, possibly reached through to-one links): a query on
    /// the element's class for objects, on the property `self` for values.
    case collection(path: String, quantifier: Quantifier, element: QueryNode)
    /// `path.@count op value`, `path.@sum op value` (`path.@sum.property` for objects) and so
    /// on; `filter`, for `SUBQUERY(path, $x, filter).@count`, selects the elements counted.
    case aggregate(path: String, function: AggregateFunction, property: String?, filter: QueryNode?, op: ComparisonOperator, value: QueryValue)
    /// The objects held by the list `property` of the object `key` of class `owner` (the base of
    /// a `List`'s queries): found from the list, in its order.
    case elementOf(owner: String, property: String, key: Data)

    /// `lhs AND rhs`, flattening nested conjunctions.
    static func && (lhs: QueryNode, rhs: QueryNode) -> QueryNode {
        switch (lhs, rhs) {
        case (.and(let a), .and(let b)): .and(a + b)
        case (.and(let a), _): .and(a + [rhs])
        case (_, .and(let b)): .and([lhs] + b)
        default: .and([lhs, rhs])
        }
    }

    /// `lhs OR rhs`, flattening nested disjunctions.
    static func || (lhs: QueryNode, rhs: QueryNode) -> QueryNode {
        switch (lhs, rhs) {
        case (.or(let a), .or(let b)): .or(a + b)
        case (.or(let a), _): .or(a + [rhs])
        case (_, .or(let b)): .or([lhs] + b)
        default: .or([lhs, rhs])
        }
    }

    /// Every property name the query mentions.
    var propertyNames: Set<String> {
        switch self {
        case .constant, .block, .elementOf: []
        case .comparison(let p, _, _, _), .between(let p, _, _), .membership(let p, _), .stringMatch(let p, _, _, _): [p]
        // A map's keys (`ratings@keys`) are its property's.
        case .collection(let p, _, _), .aggregate(let p, _, _, _, _, _):
            [MapKeyPath.split(p)?.map ?? (p.hasSuffix("@keys") ? String(p.dropLast(5)) : p)]
        case .and(let children), .or(let children): children.reduce(into: []) { $0.formUnion($1.propertyNames) }
        case .not(let child): child.propertyNames
        }
    }
}

/// How a test over a collection's elements combines: `ANY` (the default), `ALL`, `NONE`.
enum Quantifier: String, Sendable {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// The aggregates of a collection a query can compare.
enum AggregateFunction: String, Sendable {
    case count = "@count"
    case sum = "@sum"
    case avg = "@avg"
    case min = "@min"
    case max = "@max"
}

/// `== != < <= > >=`.
enum ComparisonOperator: String, Sendable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// The string operators of predicate strings.
enum StringOperator: String, Sendable {
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
}

/// How strings compare: `[c]` ignores case, `[d]` ignores diacritics, for all of Unicode.
public struct StringOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Ignore case (`[c]`), by Unicode case folding.
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// Ignore diacritics (`[d]`): "é" matches "e".
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

/// Queries compare by what they test, so that observers of one query can share the work of
/// each commit. A closure (`.block`) cannot be compared: a query holding one equals no query,
/// itself included.
extension QueryNode: Hashable {
    static func == (lhs: QueryNode, rhs: QueryNode) -> Bool {
        switch (lhs, rhs) {
        case (.constant(let a), .constant(let b)): a == b
        case (.comparison(let p, let o, let v, let s), .comparison(let p2, let o2, let v2, let s2)): p == p2 && o == o2 && v == v2 && s == s2
        case (.between(let p, let l, let u), .between(let p2, let l2, let u2)): p == p2 && l == l2 && u == u2
        case (.membership(let p, let v), .membership(let p2, let v2)): p == p2 && v == v2
        case (.stringMatch(let p, let o, let t, let s), .stringMatch(let p2, let o2, let t2, let s2)): p == p2 && o == o2 && t == t2 && s == s2
        case (.and(let a), .and(let b)), (.or(let a), .or(let b)): a == b
        case (.not(let a), .not(let b)): a == b
        case (.collection(let p, let q, let e), .collection(let p2, let q2, let e2)): p == p2 && q == q2 && e == e2
        case (.aggregate(let p, let f, let n, let c, let o, let v), .aggregate(let p2, let f2, let n2, let c2, let o2, let v2)):
            p == p2 && f == f2 && n == n2 && c == c2 && o == o2 && v == v2
        case (.elementOf(let o, let p, let k), .elementOf(let o2, let p2, let k2)): o == o2 && p == p2 && k == k2
        default: false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .constant(let a): hasher.combine(0); hasher.combine(a)
        case .comparison(let p, let o, let v, _): hasher.combine(1); hasher.combine(p); hasher.combine(o); hasher.combine(v)
        case .between(let p, let l, _): hasher.combine(2); hasher.combine(p); hasher.combine(l)
        case .membership(let p, let v): hasher.combine(3); hasher.combine(p); hasher.combine(v)
        case .stringMatch(let p, let o, let t, _): hasher.combine(4); hasher.combine(p); hasher.combine(o); hasher.combine(t)
        case .and(let a): hasher.combine(5); hasher.combine(a)
        case .or(let a): hasher.combine(6); hasher.combine(a)
        case .not(let a): hasher.combine(7); hasher.combine(a)
        case .block: hasher.combine(8)
        case .collection(let p, _, let e): hasher.combine(9); hasher.combine(p); hasher.combine(e)
        case .aggregate(let p, let f, _, _, _, let v): hasher.combine(10); hasher.combine(p); hasher.combine(f); hasher.combine(v)
        case .elementOf(let o, let p, let k): hasher.combine(11); hasher.combine(o); hasher.combine(p); hasher.combine(k)
        }
    }
}
