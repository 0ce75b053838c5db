import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - The expression kinds

/// A kind of predicate expression the translator understands. Every requirement has a default
/// meaning "not this".
protocol QueryTranslatable {
    /// For a `Bool` expression: what it selects.
    func condition(in translation: PredicateTranslation) -> Condition?
    /// For a `Bool?` expression: what it selects.
    func optionalCondition(in translation: PredicateTranslation) -> OptionalCondition?
    /// The persisted property the expression reads, if it is one.
    func operand(in translation: PredicateTranslation) -> PredicateOperand?
    /// For a constant range: its bounds.
    func constantRange() -> ConstantRange?
    /// Whether the expression reads no variable and evaluating it can neither throw nor trap,
    /// so the translator may evaluate it now.
    var isConstant: Bool { get }
    /// Whether evaluating the expression never throws.
    var neverThrows: Bool { get }
}

extension QueryTranslatable {
    func condition(in translation: PredicateTranslation) -> Condition? { nil }
    func optionalCondition(in translation: PredicateTranslation) -> OptionalCondition? { nil }
    func operand(in translation: PredicateTranslation) -> PredicateOperand? { nil }
    func constantRange() -> ConstantRange? { nil }
    var isConstant: Bool { false }
    var neverThrows: Bool { false }
}

func expressionIsConstant(_ expression: some PredicateExpression) -> Bool {
    (expression as? any QueryTranslatable)?.isConstant ?? false
}

func expressionNeverThrows(_ expression: some PredicateExpression) -> Bool {
    (expression as? any QueryTranslatable)?.neverThrows ?? false
}

/// An expression that is a variable; lets a key path's root be compared with `$0`.
protocol VariableExpression {
    var key: PredicateExpressions.VariableID { get }
}

extension PredicateExpressions.Variable: VariableExpression {}

// Leaves.

extension PredicateExpressions.Value: QueryTranslatable {
    var isConstant: Bool { true }
    var neverThrows: Bool { true }
    func constantRange() -> ConstantRange? {
        (value as? any ConstantRangeValue)?.bounds.map { .bounds($0) }
    }
}

extension PredicateExpressions.NilLiteral: QueryTranslatable {
    var isConstant: Bool { true }
    var neverThrows: Bool { true }
}

extension PredicateExpressions.Variable: QueryTranslatable {
    var neverThrows: Bool { true }
    /// A variable `flatMap` or `if let` bound to a property's value.
    func operand(in translation: PredicateTranslation) -> PredicateOperand? {
        guard let property = translation.bound[key],
            let persistable = Output.self as? any _Persistable.Type,
            persistable._rlmType == property.type, !persistable._rlmOptional
        else { return nil }
        return PredicateOperand(property: property, access: .bound)
    }
}

extension PredicateExpressions.KeyPath: QueryTranslatable where Root: StandardPredicateExpression {
    var neverThrows: Bool { expressionNeverThrows(root) }
    /// `$0.property`, where the key path names a persisted property.
    func operand(in translation: PredicateTranslation) -> PredicateOperand? {
        guard let variable = root as? any VariableExpression, variable.key == translation.root,
            let property = translation.property(at: keyPath as AnyKeyPath, valueType: Output.self)
        else { return nil }
        return PredicateOperand(property: property, access: .value)
    }
}

extension PredicateExpressions.ForcedUnwrap: QueryTranslatable where Inner: StandardPredicateExpression {
    /// `$0.property!`.
    func operand(in translation: PredicateTranslation) -> PredicateOperand? {
        guard let inner = translation.operand(of: inner), case .value = inner.access, inner.property.isOptional
        else { return nil }
        return PredicateOperand(property: inner.property, access: .unwrapped)
    }
}

extension PredicateExpressions.NilCoalesce: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(lhs) && expressionIsConstant(rhs) }
    var neverThrows: Bool { expressionNeverThrows(lhs) && expressionNeverThrows(rhs) }

    /// `$0.property ?? constant`.
    func operand(in translation: PredicateTranslation) -> PredicateOperand? {
        guard let inner = translation.operand(of: lhs), case .value = inner.access, inner.property.isOptional,
            let defaultValue = translation.constant(of: rhs)
        else { return nil }
        return PredicateOperand(property: inner.property, access: .coalesced(default: defaultValue.value))
    }

    /// `optionalBool ?? constant`: `$0.abstract?.contains("x") ?? false`, `if let … else …`.
    func condition(in translation: PredicateTranslation) -> Condition? {
        guard let subject = lhs as? any PredicateExpression<Bool?>,
            let value = translation.constant(of: rhs)?.value as? Bool,
            let condition = translation.optionalCondition(of: subject)
        else { return nil }
        return condition.coalesced(with: value)
    }
}

extension PredicateExpressions.OptionalFlatMap: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var neverThrows: Bool { expressionNeverThrows(wrapped) && expressionNeverThrows(transform) }

    /// `$0.property.flatMap { test }` (also `$0.property?.test` and `if let`): `nil` where the
    /// property is `nil`, else the test on its value.
    func optionalCondition(in translation: PredicateTranslation) -> OptionalCondition? {
        guard let operand = translation.operand(of: wrapped), case .value = operand.access,
            operand.property.isOptional,
            let test = transform as? any StandardPredicateExpression<Bool>
        else { return nil }
        var inner = translation
        inner.bound[variable.key] = operand.property
        inner.allowsBlocks = false
        guard let condition = inner.condition(of: test) else { return nil }
        return OptionalCondition(
            whenTrue: condition.whenTrue.nonNil(operand.name),
            whenFalse: condition.whenFalse.nonNil(operand.name),
            whenNil: .isNil(operand.name),
            canFail: condition.canFail)
    }
}

// Comparisons.

extension PredicateExpressions.Equal: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(lhs) && expressionIsConstant(rhs) }
    var neverThrows: Bool { expressionNeverThrows(lhs) && expressionNeverThrows(rhs) }
    func condition(in translation: PredicateTranslation) -> Condition? {
        translation.comparison(lhs, rhs, .equal, holds: ==) ?? translation.booleanEquality(lhs, rhs)
    }
}

extension PredicateExpressions.NotEqual: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(lhs) && expressionIsConstant(rhs) }
    var neverThrows: Bool { expressionNeverThrows(lhs) && expressionNeverThrows(rhs) }
    func condition(in translation: PredicateTranslation) -> Condition? {
        translation.comparison(lhs, rhs, .notEqual, holds: !=) ?? translation.booleanEquality(lhs, rhs).map { !$0 }
    }
}

extension PredicateExpressions.Comparison: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(lhs) && expressionIsConstant(rhs) }
    var neverThrows: Bool { expressionNeverThrows(lhs) && expressionNeverThrows(rhs) }
    func condition(in translation: PredicateTranslation) -> Condition? {
        switch op {
        case .lessThan: translation.comparison(lhs, rhs, .less, holds: <)
        case .lessThanOrEqual: translation.comparison(lhs, rhs, .lessOrEqual, holds: <=)
        case .greaterThan: translation.comparison(lhs, rhs, .greater, holds: >)
        case .greaterThanOrEqual: translation.comparison(lhs, rhs, .greaterOrEqual, holds: >=)
        }
    }
}

// Logic.

extension PredicateExpressions.Conjunction: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(lhs) && expressionIsConstant(rhs) }
    var neverThrows: Bool { expressionNeverThrows(lhs) && expressionNeverThrows(rhs) }
    func condition(in translation: PredicateTranslation) -> Condition? {
        translation.conditions(lhs, rhs).map { pair in pair.0 && pair.1 }
    }
}

extension PredicateExpressions.Disjunction: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(lhs) && expressionIsConstant(rhs) }
    var neverThrows: Bool { expressionNeverThrows(lhs) && expressionNeverThrows(rhs) }
    func condition(in translation: PredicateTranslation) -> Condition? {
        translation.conditions(lhs, rhs).map { pair in pair.0 || pair.1 }
    }
}

extension PredicateExpressions.Negation: QueryTranslatable where Wrapped: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(wrapped) }
    var neverThrows: Bool { expressionNeverThrows(wrapped) }
    func condition(in translation: PredicateTranslation) -> Condition? {
        translation.condition(of: wrapped).map { !$0 }
    }
}

// Ranges and lists.
