public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// Filtering, sorting and shaping: each returns a new live Results; nothing runs until read.
extension Results {
    /// The objects for which `isIncluded` holds.
    ///
    /// ```swift
    /// let sports = articles.where { $0.section == "Sports" && $0.wordCount > 500 }
    /// ```
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        core.realm.checkThread()
        let query = isIncluded(Query<Element>(.root(core.info)))
        var node = query.node
        // A class with no link, list or backlinks reaches no collection: nothing to rewrite.
        let info = core.info
        if !(info.links.isEmpty && info.lists.isEmpty && info.backlinks.isEmpty), node.mayReachCollections(info) {
            let file = core.realm.file
            node = node.resolvingCollections(in: info.schema) { file.classInfo(named: $0)?.schema }
        }
        return Results(core: core.appending(.filter(node)))
    }

    /// The objects sorted by the property `keyPath`.
    ///
    /// ```swift
    /// let newest = articles.sorted(byKeyPath: "pubDate", ascending: false)
    /// ```
    /// - Precondition: `keyPath` names a persisted property.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The objects sorted by the persisted property `keyPath` reads.
    public func sorted<Value>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The objects sorted by several keys: the first decides, the next break ties, and objects
    /// equal on every key keep their order.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        core.realm.checkThread()
        let descriptors = Array(descriptors)
        for d in descriptors {
            guard let property = core.info.property(atKeyPath: d.keyPath) else {
                fatalError("Cannot sort on key path '\(d.keyPath)': property '\(core.info.schema.className).\(d.keyPath)' not found.")
            }
            require(
                property.type != .object && !property.isArray,
                "Cannot sort on key path '\(d.keyPath)': sorting is only supported on properties of value kinds, not links or lists")
        }
        if let binding = core.resolveBinding() {
            for d in descriptors where !d.keyPath.isKeyPath { _ = core.realm.storedColumn(d.keyPath, of: binding.table, for: "sort") }
        }
        return Results(core: core.appending(.sort(descriptors)))
    }

    /// The first object of each combination of values of `keyPaths`, in the current order.
    ///
    /// ```swift
    /// let oneEach = articles.sorted(byKeyPath: "pubDate").distinct(by: ["section"])
    /// ```
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        core.realm.checkThread()
        let names = Array(keyPaths)
        for name in names where core.info.schema[name] == nil {
            fatalError("Cannot distinct on key path '\(name)': property '\(core.info.schema.className).\(name)' not found.")
        }
        for name in names {
            require(
                core.info.schema[name]!.type != .object && !core.info.schema[name]!.isArray,
                "Cannot distinct on key path '\(name)': it is a link or a list")
        }
        return Results(core: core.appending(.distinct(names)))
    }

    /// At most the first `count` objects. The limit stays live: as objects come and go, it
    /// keeps showing the first `count` of the current results.
    ///
    /// Sorted by an indexed property (or the primary key) and limited, results are read in the
    /// index's order and the walk stops after `count` objects: no full sort.
    public func limit(_ count: Int) -> Results<Element> {
        core.realm.checkThread()
        require(count >= 0, "limit(\(count)): the count cannot be negative")
        return Results(core: core.appending(.limit(count)))
    }

    /// The position of `object` in the results, or `nil` if it is not among them.
    public func index(of object: Element) -> Int? {
        core.realm.checkThread()
        return core.index(of: object)
    }
}

// MARK: - Aggregates

extension Results {
    /// The stored column of `name`, checked to be of a kind the aggregate accepts.
    private func aggregateColumn(_ name: String, _ function: String, accepts: (PropertyType) -> Bool) -> Int? {
        guard let binding = core.resolveBinding() else {
            guard let p = core.info.schema[name] else {
                fatalError("Cannot \(function) on key path '\(name)': property '\(core.info.schema.className).\(name)' not found.")
            }
            require(accepts(p.type), "Cannot \(function) property '\(name)': operation not supported for '\(p.type.rawValue)' properties.")
            return nil
        }
        let column = core.realm.storedColumn(name, of: binding.table, for: function)
        let type = binding.table.schema.properties[column].type
        require(accepts(type), "Cannot \(function) property '\(name)': operation not supported for '\(type.rawValue)' properties.")
        return column
    }

    private func propertyName<V>(_ keyPath: KeyPath<Element, V>) -> String {
        guard let name = ClassInfo.of(Element.self).propertyName(for: keyPath) else {
            fatalError("\(keyPath) is not a persisted property of \(Element.className())")
        }
        return name
    }

    /// The smallest value of the property `property`, ignoring `nil`s; `nil` if there is none.
    ///
    /// ```swift
    /// let fewest: Int? = articles.min(ofProperty: "wordCount")
    /// ```
    public func min<T: _Persistable & Comparable>(ofProperty property: String) -> T? {
        extreme(property, "min") { $0 < $1 }
    }

    /// The largest value of the property `property`, ignoring `nil`s; `nil` if there is none.
    public func max<T: _Persistable & Comparable>(ofProperty property: String) -> T? {
        extreme(property, "max") { $0 > $1 }
    }

    /// The smallest value `keyPath` reads, ignoring `nil`s.
    public func min<T: _Persistable & Comparable>(of keyPath: KeyPath<Element, T>) -> T? { min(ofProperty: propertyName(keyPath)) }
    /// The smallest value an optional `keyPath` reads, ignoring `nil`s.
    public func min<T: _Persistable & Comparable>(of keyPath: KeyPath<Element, T?>) -> T? { min(ofProperty: propertyName(keyPath)) }
    /// The largest value `keyPath` reads, ignoring `nil`s.
    public func max<T: _Persistable & Comparable>(of keyPath: KeyPath<Element, T>) -> T? { max(ofProperty: propertyName(keyPath)) }
    /// The largest value an optional `keyPath` reads, ignoring `nil`s.
    public func max<T: _Persistable & Comparable>(of keyPath: KeyPath<Element, T?>) -> T? { max(ofProperty: propertyName(keyPath)) }

    private func extreme<T: _Persistable & Comparable>(_ property: String, _ function: String, _ better: (T, T) -> Bool) -> T? {
        core.realm.checkThread()
        guard let column = aggregateColumn(property, function, accepts: { $0 == T._rlmType || ($0 == .float && T._rlmType == .double) })
        else { return nil }
        var result: T?
        core.forEachField(column) { field in
            guard let field else { return }
            let value = T._rlmDecode(field)
            if let v = value as? Double, v.isNaN { return }
            if let v = value as? Float, v.isNaN { return }
            if result == nil || better(value, result!) { result = value }
        }
        return result
    }

    /// The sum of the property `property`, `nil`s counting as nothing; zero for no objects.
    ///
    /// ```swift
    /// let words: Int = articles.sum(ofProperty: "wordCount")
    /// ```
    public func sum<T: _Persistable & AdditiveArithmetic>(ofProperty property: String) -> T {
        core.realm.checkThread()
        guard let column = aggregateColumn(property, "sum", accepts: { $0 == T._rlmType }) else { return .zero }
        var total = T.zero
        core.forEachField(column) { field in
            if let field { total += T._rlmDecode(field) }
        }
        return total
    }

    /// The sum of the values `keyPath` reads.
    public func sum<T: _Persistable & AdditiveArithmetic>(of keyPath: KeyPath<Element, T>) -> T { sum(ofProperty: propertyName(keyPath)) }
    /// The sum of the values an optional `keyPath` reads, `nil`s counting as nothing.
    public func sum<T: _Persistable & AdditiveArithmetic>(of keyPath: KeyPath<Element, T?>) -> T { sum(ofProperty: propertyName(keyPath)) }

    /// The mean of the numeric property `property`, ignoring `nil`s; `nil` if there is none.
    ///
    /// ```swift
    /// let mean: Double? = articles.average(ofProperty: "wordCount")
    /// ```
    public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? {
        core.realm.checkThread()
        guard let column = aggregateColumn(property, "average", accepts: { [.int, .float, .double, .decimal].contains($0) }),
            let binding = core.resolveBinding()
        else { return nil }
        let type = binding.table.schema.properties[column].type
        var total = 0.0
        var count = 0
        core.forEachField(column) { field in
            guard let field else { return }
            total += type == .decimal ? NSDecimalNumber(decimal: Decimal._rlmDecode(field)).doubleValue : decodeDouble(field, type)
            count += 1
        }
        return count == 0 ? nil : T(total / Double(count))
    }

    /// The mean of the numeric property `property` as a `Decimal`, exact for integer and
    /// decimal properties.
    public func average(ofProperty property: String) -> Decimal? {
        core.realm.checkThread()
        guard let column = aggregateColumn(property, "average", accepts: { [.int, .float, .double, .decimal].contains($0) }),
            let binding = core.resolveBinding()
        else { return nil }
        let type = binding.table.schema.properties[column].type
        var total = Decimal(0)
        var count = 0
        core.forEachField(column) { field in
            guard let field else { return }
            total += decodeDecimal(field, type)
            count += 1
        }
        return count == 0 ? nil : total / Decimal(count)
    }

    /// The mean of a `Decimal128` property, ignoring `nil`s; `nil` if there is none.
    ///
    /// ```swift
    /// let mean: Decimal128? = invoices.average(ofProperty: "total")
    /// ```
    public func average(ofProperty property: String) -> Decimal128? {
        core.realm.checkThread()
        guard let column = aggregateColumn(property, "average", accepts: { [.int, .decimal].contains($0) }),
            let binding = core.resolveBinding()
        else { return nil }
        let type = binding.table.schema.properties[column].type
        var total = Decimal128()
        var count = 0
        core.forEachField(column) { field in
            guard let field else { return }
            total += type == .int ? Decimal128(Int64._rlmDecode(field)) : Decimal128._rlmDecode(field)
            count += 1
        }
        return count == 0 ? nil : total / Decimal128(count)
    }

    /// The mean of the values `keyPath` reads.
    public func average<T: BinaryFloatingPoint, V: _Persistable>(of keyPath: KeyPath<Element, V>) -> T? {
        average(ofProperty: propertyName(keyPath))
    }
}

// MARK: - Predicate strings and #Predicate

extension Results {
    /// The objects matching a predicate string in NSPredicate's format.
    ///
    /// ```swift
    /// let long = articles.filter("section == %@ AND wordCount > %@", "Sports", 500)
    /// let some = articles.filter("url BEGINSWITH[c] 'https' OR abstract == nil")
    /// ```
    ///
    /// Supported: `== != < <= > >=` (also `= <> =< =>`), `AND OR NOT` and `&& || !`,
    /// parentheses, `BEGINSWITH ENDSWITH CONTAINS LIKE` with `[c] [d] [cd]`, `IN {…}` and
    /// `IN %@`, `BETWEEN {lo, hi}`, `nil`/`NULL`, `TRUEPREDICATE`/`FALSEPREDICATE`, `%@` and
    /// `%K` arguments, string, number, boolean, date (`2015-07-01@12:00:00`, `T<seconds>:<ns>`),
    /// `uuid(…)` and `oid(…)` literals.
    ///
    /// As in RealmSwift, a query written in the program that cannot be parsed is a programmer
    /// error: the process stops with what is wrong and at which byte offset ("unknown property
    /// 'wordCont' on Article at offset 0"). For query strings that come from users, use
    /// ``filter(checking:_:)``, which throws that instead.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        filter(predicateFormat, argumentArray: args)
    }

    /// ``filter(_:_:)`` with the arguments in an array.
    public func filter(_ predicateFormat: String, argumentArray args: [Any]) -> Results<Element> {
        do {
            return try filter(checking: predicateFormat, argumentArray: args)
        } catch {
            fatalError("\(error)")
        }
    }

    /// As ``filter(_:_:)``, for a query string from outside the program (a user, a request):
    /// one that cannot be parsed throws.
    ///
    /// ```swift
    /// let found = try articles.filter(checking: request.query)
    /// ```
    /// - Throws: ``RealmError`` with code ``RealmError/Code/invalidQuery`` whose message says
    ///   what is wrong and at which byte offset.
    public func filter(checking predicateFormat: String, _ args: Any...) throws -> Results<Element> {
        try filter(checking: predicateFormat, argumentArray: args)
    }

    /// ``filter(checking:_:)`` with the arguments in an array.
    public func filter(checking predicateFormat: String, argumentArray args: [Any]) throws -> Results<Element> {
        core.realm.checkThread()
        let node: QueryNode
        if core.info.isDynamic {
            // Classes read through the dynamic API: links lead to the file's stored classes.
            let realm = core.realm
            node = try PredicateParser.parse(
                predicateFormat, arguments: args.map { Optional($0) }, schema: core.info.schema,
                schemaNamed: { realm.dynamicBinding(named: $0)?.table.schema })
        } else {
            // Links lead to the model classes of this realm's file.
            let file = core.realm.file
            node = try PredicateParser.parse(
                predicateFormat, arguments: args.map { Optional($0) }, schema: core.info.schema,
                schemaNamed: { file.classInfo(named: $0)?.schema })
        }
        return Results(core: core.appending(.filter(node)))
    }

    /// The objects for which a Foundation `#Predicate` holds.
    ///
    /// ```swift
    /// let long = articles.filter(#Predicate<Article> { $0.wordCount > 500 && $0.section == "Sports" })
    /// ```
    /// The predicate is translated into the same plan as ``where(_:)``, using indexes; parts
    /// that cannot be translated (arithmetic, computed properties) run object by object, with
    /// the same results as `predicate.evaluate`.
    public func filter(_ predicate: Predicate<Element>) -> Results<Element> {
        core.realm.checkThread()
        return Results(core: core.appending(.filter(QueryNode(predicate))))
    }
}
