import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// What every live collection of objects has — ``Results``, a `List` of objects and
/// ``LinkingObjects`` — so that generic code and data sources work over any of them, as in
/// RealmSwift; ``AnyRealmCollection`` erases which one it is.
///
/// ```swift
/// func titles<C: RealmCollection>(_ articles: C) -> [String] where C.Element == Article {
///     articles.sorted(byKeyPath: "pubDate", ascending: false).map(\.headline)
/// }
/// titles(realm.objects(Article.self))
/// titles(author.articles)            // LinkingObjects
/// titles(reading.list)               // List<Article>
/// ```
///
/// Each collection reads its realm's current version, is confined like its realm, and counts
/// without creating objects. Queries, sorts and aggregates return ``Results``.
public protocol RealmCollection<Element>: RandomAccessCollection, CustomStringConvertible
where Element: Object, Index == Int, ElementType == Element {
    associatedtype Element
    /// RealmSwift's name for the element type (`where C.ElementType == Dog`).
    associatedtype ElementType = Element
    /// The realm of the collection; `nil` for an unmanaged list.
    var realm: Realm? { get }
    /// The collection as ``Results``, in its own order.
    var asResults: Results<Element>? { get }
    /// The position of `object`, or `nil`.
    func index(of object: Element) -> Int?
    /// The objects for which `isIncluded` holds.
    func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element>
    /// The objects sorted by the property `keyPath`.
    func sorted(byKeyPath keyPath: String, ascending: Bool) -> Results<Element>
    /// The objects sorted by several keys.
    func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor
    /// The first object of each combination of values of `keyPaths`.
    func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String
    func min<T: _Persistable & Comparable>(ofProperty property: String) -> T?
    func max<T: _Persistable & Comparable>(ofProperty property: String) -> T?
    func sum<T: _Persistable & AdditiveArithmetic>(ofProperty property: String) -> T
    func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T?
}

extension RealmCollection {
    /// The objects matching a predicate string, `%@` arguments in order.
    public func filter(_ predicateFormat: String, argumentArray args: [Any]) -> Results<Element> {
        guard let results = asResults else { fatalError("Only a managed collection can be queried") }
        return results.filter(predicateFormat, argumentArray: args)
    }

    /// The objects matching a predicate string, `%@` arguments in order:
    /// `filter("name BEGINSWITH %@", "B")`.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        filter(predicateFormat, argumentArray: args)
    }

    /// The objects sorted by the property `keyPath` reads.
    public func sorted<T>(by keyPath: KeyPath<Element, T>, ascending: Bool = true) -> Results<Element> {
        guard let results = asResults else { fatalError("Only a managed collection can be sorted") }
        return results.sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The first object of each combination of the values `keyPaths` read.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == PartialKeyPath<Element> {
        distinct(by: ClassInfo.of(Element.self).propertyNames(for: Array(keyPaths)))
    }

    /// The position of the first object matching the predicate string, or `nil`.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        firstIndex(in: filter(predicateFormat, argumentArray: args))
    }

    /// The position of the first object for which `isIncluded` holds, or `nil`.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        firstIndex(in: self.where(isIncluded))
    }

    private func firstIndex(in matching: Results<Element>) -> Int? {
        guard !matching.isEmpty else { return nil }
        let matched = Set(matching)
        return firstIndex { matched.contains($0) }
    }

    /// The smallest value `keyPath` reads, ignoring `nil`s; `nil` if there is none. Code written
    /// over any collection (`func lightest(_ dogs: some RealmCollection<Dog>)`) reads it as
    /// ``Results`` does.
    public func min<T: _Persistable & Comparable>(of keyPath: KeyPath<Element, T>) -> T? { min(ofProperty: aggregated(keyPath)) }
    /// The smallest value an optional `keyPath` reads, ignoring `nil`s.
    public func min<T: _Persistable & Comparable>(of keyPath: KeyPath<Element, T?>) -> T? { min(ofProperty: aggregated(keyPath)) }
    /// The largest value `keyPath` reads, ignoring `nil`s; `nil` if there is none.
    public func max<T: _Persistable & Comparable>(of keyPath: KeyPath<Element, T>) -> T? { max(ofProperty: aggregated(keyPath)) }
    /// The largest value an optional `keyPath` reads, ignoring `nil`s.
    public func max<T: _Persistable & Comparable>(of keyPath: KeyPath<Element, T?>) -> T? { max(ofProperty: aggregated(keyPath)) }
    /// The sum of the values `keyPath` reads; zero for no objects.
    public func sum<T: _Persistable & AdditiveArithmetic>(of keyPath: KeyPath<Element, T>) -> T { sum(ofProperty: aggregated(keyPath)) }
    /// The sum of the values an optional `keyPath` reads, `nil`s counting as nothing.
    public func sum<T: _Persistable & AdditiveArithmetic>(of keyPath: KeyPath<Element, T?>) -> T { sum(ofProperty: aggregated(keyPath)) }
    /// The mean of the numeric values `keyPath` reads, ignoring `nil`s; `nil` if there is none.
    public func average<T: BinaryFloatingPoint, V: _Persistable>(of keyPath: KeyPath<Element, V>) -> T? {
        average(ofProperty: aggregated(keyPath))
    }

    /// The name of the persisted property `keyPath` reads.
    /// - Precondition: `keyPath` reads one persisted property of `Element`.
    private func aggregated<V>(_ keyPath: KeyPath<Element, V>) -> String {
        guard let name = ClassInfo.of(Element.self).propertyName(for: keyPath) else {
            fatalError("\(keyPath) is not a persisted property of \(Element.className())")
        }
        return name
    }

    /// The value of property `key` of each object, in order (RealmSwift's key-value coding);
    /// `"self"` gives the objects.
    /// - Precondition: The objects have the property.
    public func value(forKey key: String) -> [Any?] {
        map { $0.value(forKey: key) }
    }

    /// RealmSwift's key-value coding over the collection, with Swift values for its
    /// NSNumbers: a key path (`"name"`, `"byline.name"`) gives each object's value in order, as
    /// an `[Any?]`; `"@count"` the count (`Int`); `"@min.p"`, `"@max.p"` and `"@sum.p"` the
    /// aggregate of property `p`, of its type (`Int` for every integer width); `"@avg.p"` its
    /// mean as a `Double`; `"@unionOfObjects.p"` the values of `p`, and
    /// `"@distinctUnionOfObjects.p"` them without repeats.
    /// - Precondition: The key path names persisted properties; an aggregate's, a numeric or
    ///   date property of the objects.
    public func value(forKeyPath keyPath: String) -> Any? {
        guard keyPath.hasPrefix("@") else { return map { $0.value(forKeyPath: keyPath) } }
        if keyPath == "@count" { return count }
        guard let dot = keyPath.firstIndex(of: ".") else {
            fatalError("'\(keyPath)' needs a property after the operator, as in '\(keyPath).name'")
        }
        let property = String(keyPath[keyPath.index(after: dot)...])
        switch keyPath[..<dot] {
        case "@unionOfObjects": return value(forKeyPath: property)
        case "@distinctUnionOfObjects":
            var seen = Set<AnyHashable>()
            return map { $0.value(forKeyPath: property) }.filter { value in
                guard let hashable = value as? AnyHashable else { return true }
                return seen.insert(hashable).inserted
            }
        case "@min", "@max", "@sum", "@avg": return aggregate(String(keyPath[..<dot]), of: property)
        default:
            fatalError(
                "Unsupported collection operator '\(keyPath[..<dot])' in '\(keyPath)': the operators are @count, @min, @max, @sum, @avg, @unionOfObjects and @distinctUnionOfObjects")
        }
    }

    /// `@min`, `@max`, `@sum` or `@avg` (`function`) of `property`, of its stored kind.
    private func aggregate(_ function: String, of property: String) -> Any? {
        guard let type = ClassInfo.of(Element.self).schema.properties.first(where: { $0.name == property })?.type else {
            fatalError("'\(property)' is not a persisted property of \(Element.className())")
        }
        func extreme<T: _Persistable & Comparable>(_: T.Type) -> T? {
            function == "@min" ? min(ofProperty: property) : max(ofProperty: property)
        }
        func total<T: _Persistable & AdditiveArithmetic>(_: T.Type) -> T { sum(ofProperty: property) }
        switch (function, type) {
        case ("@avg", _): return average(ofProperty: property) as Double?
        case ("@sum", .int): return total(Int.self)
        case ("@sum", .double): return total(Double.self)
        case ("@sum", .float): return total(Float.self)
        case ("@sum", .decimal): return total(Decimal128.self)
        case (_, .int) where function != "@sum": return extreme(Int.self)
        case (_, .double) where function != "@sum": return extreme(Double.self)
        case (_, .float) where function != "@sum": return extreme(Float.self)
        case (_, .date) where function != "@sum": return extreme(Date.self)
        case (_, .decimal) where function != "@sum": return extreme(Decimal128.self)
        default: fatalError("\(function) of '\(Element.className()).\(property)' needs a numeric\(function == "@sum" ? "" : " or date") property, not \(type.rawValue)")
        }
    }

    /// Sets property `key` of every object to `value`, inside a write:
    /// `unread.setValue(true, forKey: "isRead")`.
    /// - Precondition: The objects have the property, and `value` is of its kind.
    public func setValue(_ value: Any?, forKey key: String) {
        // Copied first: setting may move objects out of a live query's results.
        for object in Array(self) { object[key] = value }
    }

    /// As ``filter(_:argumentArray:)``, throwing for a query string that cannot be parsed
    /// (see ``Results/filter(checking:_:)``).
    public func filter(checking predicateFormat: String, argumentArray args: [Any]) throws -> Results<Element> {
        guard let results = asResults else { fatalError("Only a managed collection can be queried") }
        return try results.filter(checking: predicateFormat, argumentArray: args)
    }

    /// Observes the collection as ``Results`` over its objects: `.initial`, then the positions
    /// deleted, inserted and modified at each change (``Results/observe(keyPaths:_:)-(_,_)``).
    public func observeAsResults(
        keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void
    ) -> NotificationToken {
        guard let results = asResults else { fatalError("Only a managed collection can be observed") }
        return results.observe(keyPaths: keyPaths, block)
    }
}

extension Results: RealmCollection {
    public var asResults: Results<Element>? { self }
}

/// Encodes the objects as an array (`JSONEncoder().encode(results)`): each as an unmanaged
/// copy, whose synthesised coding reads the values (a managed object's wrappers do not hold
/// them).
extension Results: Encodable where Element: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(Element(value: element)) }
    }
}

/// Encodes the objects as an array, as `Results` does.
extension AnyRealmCollection: Encodable where Element: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(Element(value: element)) }
    }
}

extension LinkingObjects: RealmCollection {}

extension List: RealmCollection where Element: Object {}

/// Any ``RealmCollection`` of `Element`: a `Results`, a `List` or `LinkingObjects`, erased,
/// for code that must store one without knowing which (a data source, a view model).
///
/// ```swift
/// var shown = AnyRealmCollection(realm.objects(Article.self))
/// shown = AnyRealmCollection(author.articles)
/// ```
public struct AnyRealmCollection<Element: Object>: RealmCollection {
    private let base: any RealmCollection<Element>

    /// Wraps `base`.
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        self.base = base
    }

    // Each member forwards to the wrapped collection; see ``RealmCollection``.
    public var realm: Realm? { base.realm }
    public var asResults: Results<Element>? { base.asResults }
    public var startIndex: Int { 0 }
    public var endIndex: Int { base.count }
    public var count: Int { base.count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }
    public subscript(position: Int) -> Element { base[position] }
    public func makeIterator() -> AnyIterator<Element> {
        var iterator = base.makeIterator() as any IteratorProtocol<Element>
        return AnyIterator { iterator.next() }
    }
    public var description: String { "AnyRealmCollection(\(base.description))" }

    public func index(of object: Element) -> Int? { base.index(of: object) }
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { base.where(isIncluded) }
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        base.sorted(byKeyPath: keyPath, ascending: ascending)
    }
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        base.sorted(by: Array(descriptors))
    }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        base.distinct(by: Array(keyPaths))
    }
    public func min<T: _Persistable & Comparable>(ofProperty property: String) -> T? { base.min(ofProperty: property) }
    public func max<T: _Persistable & Comparable>(ofProperty property: String) -> T? { base.max(ofProperty: property) }
    public func sum<T: _Persistable & AdditiveArithmetic>(ofProperty property: String) -> T { base.sum(ofProperty: property) }
    public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? { base.average(ofProperty: property) }
}

@available(*, unavailable, message: "a live collection belongs to its realm's thread; freeze it or pass a ThreadSafeReference")
extension AnyRealmCollection: Sendable {}
