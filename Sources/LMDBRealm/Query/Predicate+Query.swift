import Foundation

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
private func input<T: Object>(_ object: Object, as _: T.Type) -> T {
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

private func expressionIsConstant(_ expression: some PredicateExpression) -> Bool {
    (expression as? any QueryTranslatable)?.isConstant ?? false
}

private func expressionNeverThrows(_ expression: some PredicateExpression) -> Bool {
    (expression as? any QueryTranslatable)?.neverThrows ?? false
}

/// An expression that is a variable; lets a key path's root be compared with `$0`.
private protocol VariableExpression {
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
private protocol ConstantRangeValue {
    var bounds: RangeBounds? { get }
}

extension ClosedRange: ConstantRangeValue {
    fileprivate var bounds: RangeBounds? {
        guard let lower = QueryValue(constant: lowerBound), let upper = QueryValue(constant: upperBound) else {
            return nil
        }
        return RangeBounds(lower: lower, upper: upper, includesUpper: true)
    }
}

extension Range: ConstantRangeValue {
    fileprivate var bounds: RangeBounds? {
        guard let lower = QueryValue(constant: lowerBound), let upper = QueryValue(constant: upperBound) else {
            return nil
        }
        return RangeBounds(lower: lower, upper: upper, includesUpper: false)
    }
}

extension PartialRangeFrom: ConstantRangeValue {
    fileprivate var bounds: RangeBounds? {
        QueryValue(constant: lowerBound).map { RangeBounds(lower: $0, upper: nil, includesUpper: false) }
    }
}

extension PartialRangeThrough: ConstantRangeValue {
    fileprivate var bounds: RangeBounds? {
        QueryValue(constant: upperBound).map { RangeBounds(lower: nil, upper: $0, includesUpper: true) }
    }
}

extension PartialRangeUpTo: ConstantRangeValue {
    fileprivate var bounds: RangeBounds? {
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

private func isMinimum<I: FixedWidthInteger>(_ value: I) -> Bool {
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

// MARK: - Helpers

extension QueryValue {
    /// The value of a constant from a predicate; `nil` for values no query can hold, and for
    /// NaN (which Swift compares unequal to everything).
    fileprivate init?(constant: Any?) {
        guard let value = QueryValue(any: constant) else { return nil }
        if case .double(let number) = value, number.isNaN { return nil }
        self = value
    }
}

extension String {
    /// A string or substring constant as a pattern.
    fileprivate init?(pattern: Any) {
        switch pattern {
        case let string as String: self = string
        case let substring as Substring: self = String(substring)
        default: return nil
        }
    }
}

extension PropertyType {
    /// Whether `<` and friends apply.
    fileprivate var isOrdered: Bool {
        switch self {
        case .int, .float, .double, .decimal, .string, .date: true
        case .bool, .data, .uuid, .objectId: false
        }
    }

    /// Whether `BETWEEN` applies.
    fileprivate var allowsBetween: Bool {
        switch self {
        case .int, .float, .double, .decimal, .date: true
        default: false
        }
    }
}


extension QueryNode {
    /// `property == nil`.
    fileprivate static func isNil(_ property: String) -> QueryNode {
        .comparison(property: property, op: .equal, value: .null, options: [])
    }

    /// `self AND other`, simplifying constants.
    fileprivate func and(_ other: QueryNode) -> QueryNode {
        switch (self, other) {
        case (.constant(false), _), (_, .constant(false)): .constant(false)
        case (.constant(true), _): other
        case (_, .constant(true)): self
        default: self && other
        }
    }

    /// `self OR other`, simplifying constants.
    fileprivate func or(_ other: QueryNode) -> QueryNode {
        switch (self, other) {
        case (.constant(true), _), (_, .constant(true)): .constant(true)
        case (.constant(false), _): other
        case (_, .constant(false)): self
        default: self || other
        }
    }

    /// `NOT self`, simplifying constants and double negations.
    fileprivate var negated: QueryNode {
        switch self {
        case .constant(let value): .constant(!value)
        case .not(let child): child
        default: .not(self)
        }
    }

    /// `self`, restricted to objects whose `property` is not `nil`.
    fileprivate func nonNil(_ property: String) -> QueryNode {
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
        case .not, .block:
            return false
        }
    }
}
