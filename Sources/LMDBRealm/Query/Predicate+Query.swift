import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// Translating Foundation's `#Predicate` into a `QueryNode`.
//
// The expression tree of a `Predicate` is made of generic `PredicateExpressions` structs. Each
// kind the translator understands conforms to `QueryTranslatable`, below; the translator walks
// the tree by casting each sub-expression to `any QueryTranslatable` and calling it. Anything
// else becomes a `.block` that evaluates that sub-expression on the object with Foundation's
// own `evaluate`, so a translation selects exactly the objects the predicate selects.
//
// Evaluating a predicate can throw (a forced unwrap of `nil`, a `Range` whose lower bound
// exceeds its upper bound). An object for which `Predicate.evaluate` throws is not selected.
// Since `!` turns false into true but leaves a throw a throw, and `&&`/`||` skip their right
// operand (and so its throw) depending on the left one, each Boolean sub-expression is translated
// into two sets: the objects for which it evaluates to `true`, and those for which it
// evaluates to `false` (a `Condition`). For an expression that cannot throw the second is
// just `NOT` the first, and that is what the translation writes.
//
// What the translation assumes of the query engine, as in Realm: `nil` compares equal only to
// `nil`; `!= value` with a non-nil value matches `nil`; ordering comparisons, `BETWEEN`, string
// operators and `== value` with a non-nil value never match `nil`; `IN` matches `nil` only if
// the list holds `nil`. Strings compare as the engine compares them (by their UTF-8 bytes),
// which agrees with Swift's `==`, `starts(with:)` and `contains(_:)` except where Swift's
// canonical equivalence or grapheme clustering differs from bytes (text that is not in NFC, or
// a pattern that ends inside a grapheme cluster such as "e" before U+0301).

extension QueryNode {
    /// Translates `predicate` into a query over T's persisted properties. Sub-expressions that
    /// cannot be translated become `.block` nodes that evaluate exactly that sub-expression on
    /// the object, so the result always selects the same objects as `predicate.evaluate`.
    ///
    /// An object for which `predicate.evaluate` throws is not selected.
    init<T: Object>(_ predicate: Predicate<T>) {
        let variable = predicate.variable
        let translation = PredicateTranslation(
            root: variable.key,
            classInfo: ClassInfo.of(T.self),
            bindings: { object in PredicateBindings((variable, input(object, as: T.self))) })
        if let condition = translation.condition(of: predicate.expression) {
            self = condition.whenTrue
        } else {
            // As `filter` on a sequence that skips what it cannot evaluate: an object for which
            // the predicate throws (a failed forced unwrap or cast) does not match.
            self = .block { object in (try? predicate.evaluate(input(object, as: T.self))) == true }
        }
    }
}

/// `object` as the input of a `Predicate<T>`.
func input<T: Object>(_ object: Object, as _: T.Type) -> T {
    guard let input = object as? T else {
        preconditionFailure("A Predicate<\(T.self)> was evaluated on a \(type(of: object))")
    }
    return input
}

// MARK: - What a sub-expression selects

/// A Boolean sub-expression as two queries: the objects for which it evaluates to `true`, and
/// those for which it evaluates to `false`. Objects for which it throws are in neither.
struct Condition {
    var whenTrue: QueryNode
    var whenFalse: QueryNode
    /// Whether evaluation can throw for some object. When it cannot, `whenFalse` selects
    /// exactly the objects `whenTrue` does not.
    var canFail: Bool

    /// A condition that cannot throw.
    static func total(_ whenTrue: QueryNode, whenFalse: QueryNode? = nil) -> Condition {
        Condition(whenTrue: whenTrue, whenFalse: whenFalse ?? whenTrue.negated, canFail: false)
    }

    /// A condition that throws for every object: `(5..<1).contains(x)`.
    static var alwaysFails: Condition { Condition(whenTrue: .constant(false), whenFalse: .constant(false), canFail: true) }

    /// `lhs && rhs`: Foundation evaluates `rhs` only when `lhs` is true.
    static func && (lhs: Condition, rhs: Condition) -> Condition {
        let whenTrue = lhs.whenTrue.and(rhs.whenTrue)
        let whenFalse: QueryNode
        if !lhs.canFail && !rhs.canFail {
            whenFalse = whenTrue.negated
        } else if !lhs.canFail {
            whenFalse = lhs.whenFalse.or(rhs.whenFalse)
        } else {
            whenFalse = lhs.whenFalse.or(lhs.whenTrue.and(rhs.whenFalse))
        }
        return Condition(whenTrue: whenTrue, whenFalse: whenFalse, canFail: lhs.canFail || rhs.canFail)
    }

    /// `lhs || rhs`: Foundation evaluates `rhs` only when `lhs` is false.
    static func || (lhs: Condition, rhs: Condition) -> Condition {
        let whenTrue =
            lhs.canFail
            ? lhs.whenTrue.or(lhs.whenFalse.and(rhs.whenTrue))
            : lhs.whenTrue.or(rhs.whenTrue)
        let whenFalse = !lhs.canFail && !rhs.canFail ? whenTrue.negated : lhs.whenFalse.and(rhs.whenFalse)
        return Condition(whenTrue: whenTrue, whenFalse: whenFalse, canFail: lhs.canFail || rhs.canFail)
    }

    /// `!condition`.
    static prefix func ! (condition: Condition) -> Condition {
        Condition(whenTrue: condition.whenFalse, whenFalse: condition.whenTrue, canFail: condition.canFail)
    }
}

/// A `Bool?` sub-expression (`$0.abstract?.contains("x")`) as three queries, one per value.
struct OptionalCondition {
    var whenTrue: QueryNode
    var whenFalse: QueryNode
    var whenNil: QueryNode
    var canFail: Bool

    /// The objects for which the expression equals `value`.
    func equals(_ value: Bool?) -> Condition {
        let (yes, no1, no2): (QueryNode, QueryNode, QueryNode) =
            switch value {
            case true?: (whenTrue, whenFalse, whenNil)
            case false?: (whenFalse, whenTrue, whenNil)
            case nil: (whenNil, whenTrue, whenFalse)
            }
        return canFail
            ? Condition(whenTrue: yes, whenFalse: no1.or(no2), canFail: true)
            : .total(yes)
    }

    /// `expression ?? value`.
    func coalesced(with value: Bool) -> Condition {
        value
            ? Condition(whenTrue: whenTrue.or(whenNil), whenFalse: whenFalse, canFail: canFail)
            : Condition(whenTrue: whenTrue, whenFalse: whenFalse.or(whenNil), canFail: canFail)
    }
}

/// A sub-expression that reads one persisted property of the object.
struct PredicateOperand {
    enum Access {
        /// `$0.property`: the stored value, `nil` included.
        case value
        /// `$0.property!`: evaluation throws where the property is `nil`.
        case unwrapped
        /// The variable of `$0.property.flatMap { … }` or `if let`: never `nil` where it is read.
        case bound
        /// `$0.property ?? default`.
        case coalesced(default: Any)
    }

    let property: Property
    let access: Access
    var name: String { property.name }

    /// The condition "the operand's value matches `node`", where `node` tests the stored value
    /// (and `whenFalse`, if given, tests the opposite of a non-nil value). `defaultMatches` says
    /// whether the `??` default matches, evaluated by Swift; it is only called for `.coalesced`.
    func condition(
        _ node: QueryNode, whenFalse falseNode: QueryNode? = nil, defaultMatches: (Any) -> Bool?
    ) -> Condition? {
        switch access {
        case .value, .bound:
            return .total(node, whenFalse: falseNode)
        case .unwrapped:
            return Condition(
                whenTrue: node.nonNil(name), whenFalse: (falseNode ?? node.negated).nonNil(name), canFail: true)
        case .coalesced(let defaultValue):
            guard let matches = defaultMatches(defaultValue) else { return nil }
            return .total(matches ? QueryNode.isNil(name).or(node) : node.nonNil(name))
        }
    }

    /// `operand op constant`.
    func compared<V>(_ op: ComparisonOperator, with constant: V, holds: @escaping (V, V) -> Bool, flipped: Bool)
        -> Condition?
    {
        guard let value = QueryValue(constant: constant), value.isComparable(with: property.type) else { return nil }
        if op != .equal && op != .notEqual {
            guard property.type.isOrdered, value != .null else { return nil }
        }
        let node = QueryNode.comparison(property: name, op: op, value: value, options: [])
        return condition(node) { defaultValue in
            guard let defaultValue = defaultValue as? V else { return nil }
            return flipped ? holds(constant, defaultValue) : holds(defaultValue, constant)
        }
    }
}
