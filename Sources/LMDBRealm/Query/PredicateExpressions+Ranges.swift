import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - Ranges and sequences

/// The bounds of a constant range, as query values.
struct RangeBounds {
    /// Included; `nil`: unbounded.
    var lower: QueryValue?
    /// `nil`: unbounded.
    var upper: QueryValue?
    var includesUpper: Bool

    /// The query "property lies in the range".
    func node(for property: Property) -> QueryNode? {
        for bound in [lower, upper] {
            if let bound, !bound.isComparable(with: property.type) || bound == .null { return nil }
        }
        if let lower, let upper, includesUpper, property.type.allowsBetween {
            return .between(property: property.name, lower: lower, upper: upper)
        }
        var node = QueryNode.constant(true)
        if let lower {
            node = node.and(.comparison(property: property.name, op: .greaterOrEqual, value: lower, options: []))
        }
        if let upper {
            let op: ComparisonOperator = includesUpper ? .lessOrEqual : .less
            node = node.and(.comparison(property: property.name, op: op, value: upper, options: []))
        }
        return node
    }
}

/// What a constant range expression is.
enum ConstantRange {
    case bounds(RangeBounds)
    /// Evaluating the range throws: `lower..<upper` with `lower > upper`.
    case fails
}

/// A Swift range type a captured range can have.
protocol ConstantRangeValue {
    var bounds: RangeBounds? { get }
}

extension ClosedRange: ConstantRangeValue {
    var bounds: RangeBounds? {
        guard let lower = QueryValue(constant: lowerBound), let upper = QueryValue(constant: upperBound) else {
            return nil
        }
        return RangeBounds(lower: lower, upper: upper, includesUpper: true)
    }
}

extension Range: ConstantRangeValue {
    var bounds: RangeBounds? {
        guard let lower = QueryValue(constant: lowerBound), let upper = QueryValue(constant: upperBound) else {
            return nil
        }
        return RangeBounds(lower: lower, upper: upper, includesUpper: false)
    }
}

extension PartialRangeFrom: ConstantRangeValue {
    var bounds: RangeBounds? {
        QueryValue(constant: lowerBound).map { RangeBounds(lower: $0, upper: nil, includesUpper: false) }
    }
}

extension PartialRangeThrough: ConstantRangeValue {
    var bounds: RangeBounds? {
        QueryValue(constant: upperBound).map { RangeBounds(lower: nil, upper: $0, includesUpper: true) }
    }
}

extension PartialRangeUpTo: ConstantRangeValue {
    var bounds: RangeBounds? {
        QueryValue(constant: upperBound).map { RangeBounds(lower: nil, upper: $0, includesUpper: false) }
    }
}

extension PredicateExpressions.ClosedRange: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    // Not `isConstant`: evaluating `lower...upper` with `lower > upper` traps.
    var neverThrows: Bool { expressionNeverThrows(lower) && expressionNeverThrows(upper) }

    /// `lower...upper` with constant bounds. With `lower > upper` Foundation's evaluation
    /// traps; that case is left to a block, which does the same.
    func constantRange() -> ConstantRange? {
        // Bounds that throw are not constant: the range is left to a block.
        guard expressionIsConstant(lower), expressionIsConstant(upper),
            let lowerValue = try? lower.evaluate(PredicateBindings()),
            let upperValue = try? upper.evaluate(PredicateBindings()),
            lowerValue <= upperValue,
            let lowerBound = QueryValue(constant: lowerValue), let upperBound = QueryValue(constant: upperValue)
        else { return nil }
        return .bounds(RangeBounds(lower: lowerBound, upper: upperBound, includesUpper: true))
    }
}

extension PredicateExpressions.Range: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    /// `lower..<upper` with constant bounds; evaluating it throws if `lower > upper`.
    func constantRange() -> ConstantRange? {
        // Bounds that throw are not constant: the range is left to a block.
        guard expressionIsConstant(lower), expressionIsConstant(upper),
            let lowerValue = try? lower.evaluate(PredicateBindings()),
            let upperValue = try? upper.evaluate(PredicateBindings())
        else { return nil }
        guard lowerValue <= upperValue else { return .fails }
        guard let lowerBound = QueryValue(constant: lowerValue), let upperBound = QueryValue(constant: upperValue)
        else { return nil }
        return .bounds(RangeBounds(lower: lowerBound, upper: upperBound, includesUpper: false))
    }
}

extension PredicateExpressions.RangeExpressionContains: QueryTranslatable
where RangeExpression: StandardPredicateExpression, Element: StandardPredicateExpression {
    var neverThrows: Bool {
        expressionNeverThrows(range) && expressionNeverThrows(element)
    }

    /// `(lower...upper).contains($0.property)`, and the other range kinds.
    func condition(in translation: PredicateTranslation) -> Condition? {
        guard let operand = translation.operand(of: element), operand.property.type.isOrdered,
            let constantRange = (range as? any QueryTranslatable)?.constantRange()
        else { return nil }
        switch constantRange {
        case .fails:
            return .alwaysFails
        case .bounds(let bounds):
            guard let node = bounds.node(for: operand.property) else { return nil }
            return operand.condition(node) { defaultValue in
                // Safe to evaluate: the bounds are constant and ordered (`try?` never fails here).
                guard let defaultValue = defaultValue as? Element.Output,
                    let range = try? range.evaluate(PredicateBindings())
                else { return nil }
                return range.contains(defaultValue)
            }
        }
    }
}

extension PredicateExpressions.SequenceContains: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(sequence) && expressionIsConstant(element) }
    var neverThrows: Bool { expressionNeverThrows(sequence) && expressionNeverThrows(element) }

    /// `[a, b].contains($0.property)`.
    func condition(in translation: PredicateTranslation) -> Condition? {
        guard let operand = translation.operand(of: element), let list = translation.constant(of: sequence)?.value
        else { return nil }
        let node: QueryNode
        if let bounds = (list as? any ConstantRangeValue)?.bounds {
            // A captured range of integers is a sequence too; never list its elements.
            guard operand.property.type.isOrdered, let rangeNode = bounds.node(for: operand.property) else {
                return nil
            }
            node = rangeNode
        } else {
            var values: [QueryValue] = []
            for element in list {
                guard let value = QueryValue(constant: element), value.isComparable(with: operand.property.type)
                else { return nil }
                values.append(value)
            }
            node = values.isEmpty ? .constant(false) : .membership(property: operand.name, values: values)
        }
        return operand.condition(node) { defaultValue in
            (defaultValue as? RHS.Output).map { list.contains($0) }
        }
    }
}

// Strings.

extension PredicateExpressions.SequenceStartsWith: QueryTranslatable
where Base: StandardPredicateExpression, Prefix: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(base) && expressionIsConstant(prefix) }
    var neverThrows: Bool { expressionNeverThrows(base) && expressionNeverThrows(prefix) }

    /// `$0.property.starts(with: "text")`.
    func condition(in translation: PredicateTranslation) -> Condition? {
        guard let operand = translation.operand(of: base), operand.property.type == .string,
            let pattern = translation.constant(of: prefix), let text = String(pattern: pattern.value)
        else { return nil }
        // Every string starts with "".
        let node: QueryNode =
            text.isEmpty
            ? .constant(true)
            : .stringMatch(property: operand.name, op: .beginsWith, pattern: text, options: [])
        return operand.condition(node) { defaultValue in
            guard let defaultValue = defaultValue as? Base.Output else { return nil }
            // `nil` (no answer) if Foundation's evaluation throws, as the predicate would.
            return try? PredicateExpressions.SequenceStartsWith(base: PredicateExpressions.Value(defaultValue), prefix: prefix)
                .evaluate(PredicateBindings())
        }
    }
}

extension PredicateExpressions.CollectionContainsCollection: QueryTranslatable
where Base: StandardPredicateExpression, Other: StandardPredicateExpression {
    var isConstant: Bool { expressionIsConstant(base) && expressionIsConstant(other) }
    var neverThrows: Bool { expressionNeverThrows(base) && expressionNeverThrows(other) }

    /// `$0.property.contains("text")`.
    func condition(in translation: PredicateTranslation) -> Condition? {
        guard let operand = translation.operand(of: base), operand.property.type == .string,
            let pattern = translation.constant(of: other), let text = String(pattern: pattern.value)
        else { return nil }
        // Every string contains "".
        let node: QueryNode =
            text.isEmpty
            ? .constant(true)
            : .stringMatch(property: operand.name, op: .contains, pattern: text, options: [])
        return operand.condition(node) { defaultValue in
            guard let defaultValue = defaultValue as? Base.Output else { return nil }
            // `nil` (no answer) if Foundation's evaluation throws, as the predicate would.
            return try? PredicateExpressions.CollectionContainsCollection(base: PredicateExpressions.Value(defaultValue), other: other)
                .evaluate(PredicateBindings())
        }
    }
}

// Kinds that never translate, but whose evaluation is known not to throw (so a block of one
// needs no separate `false` test).

extension PredicateExpressions.Arithmetic: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var neverThrows: Bool { expressionNeverThrows(lhs) && expressionNeverThrows(rhs) }
}

extension PredicateExpressions.UnaryMinus: QueryTranslatable where Wrapped: StandardPredicateExpression {
    var neverThrows: Bool { expressionNeverThrows(wrapped) }

    /// `-3` (the macro writes a negative literal as a negation): constant unless negating
    /// would overflow, which traps.
    var isConstant: Bool {
        // A negated expression that throws is not a constant.
        guard expressionIsConstant(wrapped), let value = try? wrapped.evaluate(PredicateBindings()) else {
            return false
        }
        if let integer = value as? any FixedWidthInteger { return !isMinimum(integer) }
        return true
    }
}

func isMinimum<I: FixedWidthInteger>(_ value: I) -> Bool {
    value == I.min
}

extension PredicateExpressions.Conditional: QueryTranslatable
where Test: StandardPredicateExpression, If: StandardPredicateExpression, Else: StandardPredicateExpression {
    var neverThrows: Bool {
        expressionNeverThrows(test) && expressionNeverThrows(trueBranch)
            && expressionNeverThrows(falseBranch)
    }
}

extension PredicateExpressions.SequenceContainsWhere: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var neverThrows: Bool { expressionNeverThrows(sequence) && expressionNeverThrows(test) }
}

extension PredicateExpressions.SequenceAllSatisfy: QueryTranslatable
where LHS: StandardPredicateExpression, RHS: StandardPredicateExpression {
    var neverThrows: Bool { expressionNeverThrows(sequence) && expressionNeverThrows(test) }
}
