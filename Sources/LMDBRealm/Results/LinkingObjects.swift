public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// The objects that link to an object through one property of theirs: its backlinks.
///
/// ```swift
/// final class Keyword: Object {
///     @Persisted(primaryKey: true) var value: String
///     @Persisted(originProperty: "keywords") var articles: LinkingObjects<Article>
/// }
/// keyword.articles.count                              // read from the link index, no record read
/// keyword.articles.where { $0.wordCount > 500 }       // a live Results-like collection
/// realm.objects(Keyword.self).filter("articles.@count == 0")
/// ```
///
/// The origin property is a to-one link (`Article.byline: Author?`) or a list of objects
/// (`Article.keywords: List<Keyword>`) pointing to this object's class. Nothing is stored for
/// the property: it is read from the links' own indexes, so it is always current and costs no
/// write. An object that holds this one twice in a list counts once. On an unmanaged object
/// the collection is empty. Like ``Results``, it is live and confined to its realm's thread.
public struct LinkingObjects<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    /// The class whose property links here, and that property's name.
    public let originType: Element.Type
    public let propertyName: String
    /// The managed object whose backlinks these are; `nil` while unmanaged.
    private let owner: Object?

    /// Backlinks through `propertyName` of `type`, as RealmSwift spells it.
    public init(fromType type: Element.Type, property propertyName: String) {
        originType = type
        self.propertyName = propertyName
        owner = nil
    }

    /// The backlinks of the managed `object` through `propertyName`.
    init(of object: Object, through propertyName: String) {
        originType = Element.self
        self.propertyName = propertyName
        let origin = ClassInfo.of(Element.self)
        // The owner's class name from its cached description (`className()` reflects).
        let ownerClass = (object._binding?.classInfo ?? ClassInfo.of(type(of: object))).schema.className
        guard let property = origin.schema[propertyName], property.type == .object, property.objectClassName == ownerClass
        else {
            fatalError(
                "LinkingObjects<\(Element.className())> of \(type(of: object).className()) names '\(propertyName)', "
                    + "which is not a link or a list of \(type(of: object).className()) declared by \(Element.className())")
        }
        owner = object
    }

    /// The linking objects, as a query on the origin class; `nil` while unmanaged.
    var results: Results<Element>? {
        guard let owner, let realm = owner._realm else { return nil }
        let origin = ClassInfo.of(Element.self)
        let key = QueryValue.data(owner._key.withBytes { Data($0) })
        let node: QueryNode =
            origin.schema[propertyName]!.isArray
            ? .collection(path: propertyName, quantifier: .any, element: .comparison(property: "self", op: .equal, value: key, options: []))
            : .comparison(property: propertyName, op: .equal, value: key, options: [])
        return Results(core: Results(realm: realm, info: origin).core.appending(.filter(node)))
    }

    /// The realm of the object whose backlinks these are; `nil` while it is unmanaged.
    public var realm: Realm? { results?.realm }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    /// The number of linking objects, counted in the link index without reading any record.
    public var count: Int {
        guard let owner, let realm = owner._realm else { return 0 }
        realm.checkThread()
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        guard let origin = realm.bindingForReading(Element.self),
            let column = origin.table.schema.properties.firstIndex(where: { $0.name == propertyName })
        else { return 0 }
        return owner._key.withBytes { realm.backlinkCount(from: origin.table, column: column, to: $0) }
    }

    public var isEmpty: Bool { count == 0 }

    public subscript(position: Int) -> Element {
        guard let results else { fatalError("Index \(position) is out of bounds (must be less than 0).") }
        return results[position]
    }

    public var first: Element? { results?.first }
    public var last: Element? { results?.last }

    public func makeIterator() -> AnyIterator<Element> {
        guard let results else { return AnyIterator { nil } }
        var iterator = results.makeIterator()
        return AnyIterator { iterator.next() }
    }

    /// The linking objects as ``Results``: every query, sort, aggregate and notification
    /// `Results` has.
    public var asResults: Results<Element>? { results }

    private func live(_ function: String = #function) -> Results<Element> {
        guard let results else { fatalError("\(function) is only available on the backlinks of a managed object") }
        return results
    }

    /// The linking objects for which `isIncluded` holds.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { live().where(isIncluded) }

    /// The linking objects matching a predicate string.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        live().filter(predicateFormat, argumentArray: args)
    }

    /// The linking objects matching `predicate`.
    public func filter(_ predicate: Predicate<Element>) -> Results<Element> { live().filter(predicate) }

    /// The linking objects sorted by `keyPath`.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        live().sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The linking objects sorted by the persisted property `keyPath` reads.
    public func sorted<Value>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results<Element> {
        live().sorted(by: keyPath, ascending: ascending)
    }

    /// The linking objects sorted by several keys.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        live().sorted(by: descriptors)
    }

    /// The first linking object of each combination of values of `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        live().distinct(by: keyPaths)
    }

    /// The position of `object` among the linking objects, or `nil`.
    public func index(of object: Element) -> Int? { results?.index(of: object) }

    /// The smallest value of `property` among the linking objects (``Results/min(ofProperty:)``).
    public func min<T: _Persistable & Comparable>(ofProperty property: String) -> T? { results?.min(ofProperty: property) }
    /// The largest value of `property` among the linking objects.
    public func max<T: _Persistable & Comparable>(ofProperty property: String) -> T? { results?.max(ofProperty: property) }
    /// The sum of `property` over the linking objects; 0 when there are none.
    public func sum<T: _Persistable & AdditiveArithmetic>(ofProperty property: String) -> T { results?.sum(ofProperty: property) ?? .zero }
    /// The mean of `property` over the linking objects, or `nil` when there are none.
    public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? { results?.average(ofProperty: property) }

    /// Observes the linking objects: RealmSwift's collection notifications, with index sets
    /// over the linking objects in key order.
    public func observe(
        keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<LinkingObjects<Element>>) -> Void
    ) -> NotificationToken {
        let owner = self
        return live().observe(keyPaths: keyPaths) { change in
            switch change {
            case .initial: block(.initial(owner))
            case .update(_, let deletions, let insertions, let modifications):
                block(.update(owner, deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }

    /// Observes the linking objects from `queue`: they are found again on a realm of the same
    /// file confined to `queue`, and `block` gets backlinks of that realm there.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue,
        _ block: @escaping @Sendable (RealmCollectionChange<LinkingObjects<Element>>) -> Void
    ) -> NotificationToken {
        guard let owner else { fatalError("observe(keyPaths:on:_:) is only available on the backlinks of a managed object") }
        let ownerType = (owner._binding?.classInfo ?? ClassInfo.of(type(of: owner))).type
        let key = owner._key
        let name = propertyName
        /// The backlinks of the owner as the queue's realm reads it.
        @Sendable func backlinks(_ results: Results<Element>) -> LinkingObjects<Element> {
            guard let realm = results.realm, let found = realm.object(withKey: key, of: ownerType) else {
                return LinkingObjects(fromType: Element.self, property: name)
            }
            return LinkingObjects(of: found, through: name)
        }
        return live().observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let results): block(.initial(backlinks(results)))
            case .update(let results, let deletions, let insertions, let modifications):
                block(.update(backlinks(results), deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }

    /// As ``observe(keyPaths:_:)-(_,_)``, naming the observed properties by key path.
    public func observe(
        keyPaths: [PartialKeyPath<Element>], _ block: @escaping (RealmCollectionChange<LinkingObjects<Element>>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: ClassInfo.of(Element.self).propertyNames(for: keyPaths), block)
    }

    /// A frozen copy of the linking objects, readable from any thread.
    public func freeze() -> Results<Element> { live().freeze() }

    /// How the linking objects are found (``Results/explain()``).
    public func explain() -> String { live().explain() }

    public var description: String {
        "LinkingObjects<\(Element.className())>(\(propertyName)) (\(count) objects)"
    }
}

@available(*, unavailable, message: "LinkingObjects are live and belong to their realm's thread; freeze them")
extension LinkingObjects: Sendable {}

// MARK: - As a persisted property

extension Persisted {
    /// Backlinks: the objects of `Target` whose property `originProperty` links to this one.
    ///
    /// ```swift
    /// @Persisted(originProperty: "keywords") var articles: LinkingObjects<Article>
    /// ```
    @inlinable
    public init<Target: Object>(originProperty: String) where Value == LinkingObjects<Target> {
        self.init(value: LinkingObjects(fromType: Target.self, property: originProperty), options: 0)
    }
}

extension LinkingObjects: _PersistableNonOptional {
    public static var _rlmType: PropertyType { .linkingObjects }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: LinkingObjects<Element> {
        fatalError("LinkingObjects<\(Element.className())> needs its origin: declare it '@Persisted(originProperty: \"…\")'")
    }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> LinkingObjects<Element> {
        fatalError("LinkingObjects are read through their object")
    }
    /// Nothing is stored in the record: the backlinks are read from the links.
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R { try body(nil) }

    public static func _rlmGet(_ object: Object, column: Int32) -> LinkingObjects<Element> {
        let info = object._binding?.classInfo ?? ClassInfo.of(type(of: object))
        let property = info.schema.properties[Int(column)]
        guard object._realm != nil else {
            // The key-path recorder: the read is what it records.
            _ = ClassInfo.recordAccess(column)
            return LinkingObjects(fromType: Element.self, property: property.linkOriginPropertyName ?? "")
        }
        return LinkingObjects(of: object, through: property.linkOriginPropertyName!)
    }

    public static func _rlmSet(_ object: Object, column: Int32, _ value: LinkingObjects<Element>) {
        fatalError("LinkingObjects are read-only: change the links of \(Element.className()).\(value.propertyName) instead")
    }
}

/// What the schema needs of a `LinkingObjects` property, whatever its element type.
protocol LinkingObjectsValue {
    static var originClass: Object.Type { get }
    var propertyName: String { get }
}

extension LinkingObjects: LinkingObjectsValue {
    static var originClass: Object.Type { Element.self }
}
