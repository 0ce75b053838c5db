import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - The walk

/// The state of one translation: the predicate's variable, the model class, and the
/// variables `flatMap`/`if let` bind to a property's unwrapped value.
struct PredicateTranslation {
    /// The predicate's own variable (`$0`).
    let root: PredicateExpressions.VariableID
    let classInfo: ClassInfo
    /// Binds the predicate's variable to an object, for `.block` nodes.
    let bindings: @Sendable (Object) -> PredicateBindings
    /// Variables standing for a property's non-nil value.
    var bound: [PredicateExpressions.VariableID: Property] = [:]
    /// Whether an untranslatable sub-expression may become a `.block`. Not inside a `flatMap`
    /// body: a block cannot bind that body's variable, so the whole `flatMap` falls back.
    var allowsBlocks = true

    /// What a Boolean expression selects, or `nil` if it cannot be expressed as a query.
    func condition<E: PredicateExpression<Bool>>(of expression: E) -> Condition? {
        guard let translatable = expression as? any QueryTranslatable else { return nil }
        if translatable.isConstant {
            do {
                return .total(.constant(try expression.evaluate(PredicateBindings())))
            } catch {
                return .alwaysFails
            }
        }
        if let condition = translatable.condition(in: self) { return condition }
        // A Bool property on its own: `$0.isFlagged`.
        if let operand = translatable.operand(in: self), operand.property.type == .bool {
            return operand.condition(
                .comparison(property: operand.name, op: .equal, value: .bool(true), options: []),
                whenFalse: .comparison(property: operand.name, op: .equal, value: .bool(false), options: []),
                defaultMatches: { ($0 as? Bool).map { $0 == true } })
        }
        return nil
    }

    /// What a `Bool?` expression selects, or `nil` if it cannot be expressed as a query.
    func optionalCondition<E: PredicateExpression>(of expression: E) -> OptionalCondition?
    where E.Output == Bool? {
        guard let translatable = expression as? any QueryTranslatable else { return nil }
        if let condition = translatable.optionalCondition(in: self) { return condition }
        // A `Bool?` property.
        if let operand = translatable.operand(in: self), operand.property.type == .bool, case .value = operand.access {
            let name = operand.name
            return OptionalCondition(
                whenTrue: .comparison(property: name, op: .equal, value: .bool(true), options: []),
                whenFalse: .comparison(property: name, op: .equal, value: .bool(false), options: []),
                whenNil: .isNil(name), canFail: false)
        }
        return nil
    }

    /// The property an expression reads, if it reads exactly one persisted property of the
    /// object (directly, unwrapped, bound by `flatMap`, or with a `??` default).
    func operand(of expression: some PredicateExpression) -> PredicateOperand? {
        (expression as? any QueryTranslatable)?.operand(in: self)
    }

    /// The value of an expression that reads nothing and cannot fail: a captured value or a
    /// literal.
    func constant<E: PredicateExpression>(of expression: E) -> Constant<E.Output>? {
        // An expression that throws is not a constant: `nil` leaves it to a block (below),
        // which reproduces the throw's meaning.
        guard (expression as? any QueryTranslatable)?.isConstant == true,
            let value = try? expression.evaluate(PredicateBindings())
        else { return nil }
        return Constant(value: value)
    }

    /// A block evaluating `expression` on the object with Foundation.
    func block<E: StandardPredicateExpression<Bool>>(_ expression: E) -> Condition {
        let bindings = self.bindings
        let neverThrows = (expression as? any QueryTranslatable)?.neverThrows ?? false
        // Three-valued on purpose: an object for which the expression throws (a failed forced
        // unwrap or cast) matches neither `whenTrue` nor `whenFalse`, so that `!` around it
        // does not turn the failure into a match. `canFail` tells the planner so.
        let whenTrue = QueryNode.block { object in (try? expression.evaluate(bindings(object))) == true }
        if neverThrows { return .total(whenTrue) }
        return Condition(
            whenTrue: whenTrue,
            whenFalse: .block { object in (try? expression.evaluate(bindings(object))) == false },
            canFail: true)
    }

    /// Both operands of `&&` or `||`: `nil` if neither translates (the caller then falls back
    /// as a whole); otherwise the one that does not becomes a block.
    func conditions<L: StandardPredicateExpression<Bool>, R: StandardPredicateExpression<Bool>>(
        _ lhs: L, _ rhs: R
    ) -> (Condition, Condition)? {
        let left = condition(of: lhs)
        let right = condition(of: rhs)
        if left == nil && right == nil { return nil }
        guard allowsBlocks else {
            guard let left, let right else { return nil }
            return (left, right)
        }
        return (left ?? block(lhs), right ?? block(rhs))
    }

    /// The persisted property `keyPath` reads, if the key path's value type is the property's.
    ///
    /// The type check keeps a computed property that reads a persisted property of another
    /// type (`var titleLength: Int { title.count }`) from being taken for that property.
    func property(at keyPath: AnyKeyPath, valueType: Any.Type) -> Property? {
        guard let name = classInfo.propertyName(for: keyPath),
            let property = classInfo.schema[name],
            let persistable = valueType as? any _Persistable.Type,
            persistable._rlmType == property.type,
            persistable._rlmOptional == property.isOptional
        else { return nil }
        return property
    }

    /// `lhs op rhs` where one side reads a property and the other is a constant.
    func comparison<V>(
        _ lhs: some PredicateExpression<V>, _ rhs: some PredicateExpression<V>,
        _ op: ComparisonOperator, holds: @escaping (V, V) -> Bool
    ) -> Condition? {
        if let operand = operand(of: lhs), let constant = constant(of: rhs) {
            return operand.compared(op, with: constant.value, holds: holds, flipped: false)
        }
        if let operand = operand(of: rhs), let constant = constant(of: lhs) {
            return operand.compared(op.flipped, with: constant.value, holds: holds, flipped: true)
        }
        return nil
    }

    /// `lhs == rhs` where one side is a `Bool` or `Bool?` condition and the other a constant:
    /// `($0.wordCount > 5) == false`, `$0.abstract?.contains("x") == true`.
    func booleanEquality<V>(_ lhs: some PredicateExpression<V>, _ rhs: some PredicateExpression<V>) -> Condition? {
        if let condition = booleanEquality(subject: lhs, constant: rhs) { return condition }
        return booleanEquality(subject: rhs, constant: lhs)
    }

    private func booleanEquality<V>(subject: some PredicateExpression<V>, constant: some PredicateExpression<V>)
        -> Condition?
    {
        guard let value = self.constant(of: constant)?.value else { return nil }
        if let subject = subject as? any PredicateExpression<Bool>, let value = value as? Bool {
            guard let condition = condition(of: subject) else { return nil }
            return value ? condition : !condition
        }
        if let subject = subject as? any PredicateExpression<Bool?>, let value = value as? Bool? {
            return optionalCondition(of: subject)?.equals(value)
        }
        return nil
    }
}

/// A constant's value; a wrapper so that a constant `nil` differs from no constant.
struct Constant<Value> {
    let value: Value
}

// MARK: - Helpers

extension QueryValue {
    /// The value of a constant from a predicate; `nil` for values no query can hold, and for
    /// NaN (which Swift compares unequal to everything).
    init?(constant: Any?) {
        guard let value = QueryValue(any: constant) else { return nil }
        if case .double(let number) = value, number.isNaN { return nil }
        self = value
    }
}

extension String {
    /// A string or substring constant as a pattern.
    init?(pattern: Any) {
        switch pattern {
        case let string as String: self = string
        case let substring as Substring: self = String(substring)
        default: return nil
        }
    }
}

extension PropertyType {
    /// Whether `<` and friends apply.
    var isOrdered: Bool {
        switch self {
        case .int, .float, .double, .decimal, .string, .date, .mixed: true
        case .bool, .data, .uuid, .objectId, .object, .linkingObjects: false
        }
    }

    /// Whether `BETWEEN` applies.
    var allowsBetween: Bool {
        switch self {
        case .int, .float, .double, .decimal, .date: true
        default: false
        }
    }
}


extension QueryNode {
    /// `property == nil`.
    static func isNil(_ property: String) -> QueryNode {
        .comparison(property: property, op: .equal, value: .null, options: [])
    }

    /// `self AND other`, simplifying constants.
    func and(_ other: QueryNode) -> QueryNode {
        switch (self, other) {
        case (.constant(false), _), (_, .constant(false)): .constant(false)
        case (.constant(true), _): other
        case (_, .constant(true)): self
        default: self && other
        }
    }

    /// `self OR other`, simplifying constants.
    func or(_ other: QueryNode) -> QueryNode {
        switch (self, other) {
        case (.constant(true), _), (_, .constant(true)): .constant(true)
        case (.constant(false), _): other
        case (_, .constant(false)): self
        default: self || other
        }
    }

    /// `NOT self`, simplifying constants and double negations.
    var negated: QueryNode {
        switch self {
        case .constant(let value): .constant(!value)
        case .not(let child): child
        default: .not(self)
        }
    }

    /// `self`, restricted to objects whose `property` is not `nil`.
    func nonNil(_ property: String) -> QueryNode {
        excludesNil(of: property)
            ? self : QueryNode.comparison(property: property, op: .notEqual, value: .null, options: []).and(self)
    }

    /// Whether the query never matches an object whose `property` is `nil` (see the engine
    /// semantics at the top of this file); `false` where that is not certain.
    private func excludesNil(of property: String) -> Bool {
        switch self {
        case .comparison(let name, let op, let value, _):
            guard name == property else { return false }
            switch op {
            case .equal: return value != .null
            case .notEqual: return value == .null
            case .less, .lessOrEqual, .greater, .greaterOrEqual: return true
            }
        case .between(let name, _, _), .stringMatch(let name, _, _, _):
            return name == property
        case .membership(let name, let values):
            return name == property && !values.contains(.null)
        case .and(let children):
            return children.contains { $0.excludesNil(of: property) }
        case .or(let children):
            return children.allSatisfy { $0.excludesNil(of: property) }
        case .constant(let value):
            return !value
        case .not, .block, .collection, .aggregate, .elementOf:
            return false
        }
    }
}
