import LMDBRealmFormat
import LMDBRealmStorage

// A managed set is stored as a list is: its queries, aggregates, freezing and observation are
// a list's, through a list view of the same column.

extension MutableSet {
    /// The same stored elements, seen as a list.
    private var listView: List<Element> {
        guard let owner else {
            let list = List<Element>()
            list.storage = storage
            return list
        }
        return List(owner: owner, column: column)
    }

    /// The realm managing the set's object, or `nil` while it is unmanaged.
    public var realm: Realm? { owner?.realm }

    /// Whether the set belongs to a frozen realm.
    public var isFrozen: Bool { listView.isFrozen }

    /// The set as it is now, frozen: readable from any thread, never changing.
    public func freeze() -> MutableSet<Element> {
        let frozen = listView.freeze()
        guard let frozenOwner = frozen.owner, frozenOwner !== owner else { return self }
        return MutableSet(owner: frozenOwner, column: column)
    }

    /// Observes the set: `.initial`, then the positions deleted, inserted and modified (in its
    /// stored order) at each change, as a list's.
    /// - Parameter keyPaths: In a set of objects, the properties of the objects whose changes
    ///   count as modifications (`nil`: all), as for a `List`.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<MutableSet<Element>>) -> Void) -> NotificationToken {
        let column = column
        return listView.observe(keyPaths: keyPaths) { change in
            switch change {
            case .initial(let list): block(.initial(MutableSet(viewing: list, column: column)))
            case .update(let list, let deletions, let insertions, let modifications):
                block(.update(MutableSet(viewing: list, column: column), deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }

    /// Observes the set from `queue`, through a realm of the same file confined to it; the sets
    /// passed to `block` belong to that realm.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue,
        _ block: @escaping @Sendable (RealmCollectionChange<MutableSet<Element>>) -> Void
    ) -> NotificationToken {
        let column = column
        return listView.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let list): block(.initial(MutableSet(viewing: list, column: column)))
            case .update(let list, let deletions, let insertions, let modifications):
                block(.update(MutableSet(viewing: list, column: column), deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }

    /// The set of the object `list` belongs to (an empty unmanaged set for a list with none).
    private convenience init(viewing list: List<Element>, column: Int32) {
        if let owner = list.owner { self.init(owner: owner, column: column) } else { self.init() }
    }
}

extension MutableSet where Element: Object {
    /// As ``observe(keyPaths:_:)-(_,_)``, naming the properties of the set's objects by key path.
    public func observe(
        keyPaths: [PartialKeyPath<Element>], _ block: @escaping (RealmCollectionChange<MutableSet<Element>>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: ClassInfo.of(Element.self).propertyNames(for: keyPaths), block)
    }

    /// As ``observe(keyPaths:on:_:)-(_,_,_)``, naming the properties of the set's objects by key path.
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue,
        _ block: @escaping @Sendable (RealmCollectionChange<MutableSet<Element>>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: ClassInfo.of(Element.self).propertyNames(for: keyPaths), on: queue, block)
    }

    /// The set's objects as ``Results`` (in its stored order); `nil` while it is unmanaged.
    public var asResults: Results<Element>? { listView.asResults }
    // The queries, sorts and aggregates of a set of objects are its list view's (see `List`).
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { listView.where(isIncluded) }
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        listView.filter(predicateFormat, argumentArray: args)
    }
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        listView.sorted(byKeyPath: keyPath, ascending: ascending)
    }
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        listView.sorted(by: descriptors)
    }
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        listView.distinct(by: keyPaths)
    }
    public func index(of object: Element) -> Int? { listView.index(of: object) }
    public func min<T: _Persistable & Comparable>(ofProperty property: String) -> T? { listView.min(ofProperty: property) }
    public func max<T: _Persistable & Comparable>(ofProperty property: String) -> T? { listView.max(ofProperty: property) }
    public func sum<T: _Persistable & AdditiveArithmetic>(ofProperty property: String) -> T { listView.sum(ofProperty: property) }
    public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? { listView.average(ofProperty: property) }
}

extension MutableSet: RealmCollection where Element: Object {}

extension MutableSet where Element: Comparable {
    /// The smallest element, or `nil` for an empty set.
    public func min() -> Element? { listView.min() }
    /// The largest element, or `nil` for an empty set.
    public func max() -> Element? { listView.max() }
    /// The elements in ascending (or descending) order, as an array.
    public func sorted(ascending: Bool = true) -> [Element] { listView.sorted(ascending: ascending) }
}

extension MutableSet where Element: _ListAddable {
    /// The sum of the elements; 0 for an empty set.
    public func sum() -> Element { listView.sum() }
    /// The mean of the elements, or `nil` for an empty set.
    public func average<T: BinaryFloatingPoint>() -> T? { listView.average() }
}

extension MutableSet: _QueryCollection {
    public typealias _QueryElement = Element
}

// A managed map is stored as a list of entries: it is frozen and observed as that list.
extension Map {
    /// Whether the map belongs to a frozen realm.
    public var isFrozen: Bool { owner?._realm?.isFrozen ?? false }

    /// The map as it is now, frozen: readable from any thread, never changing.
    public func freeze() -> Map<Key, Value> {
        guard let owner else { return self }
        let frozen = List<Value>(owner: owner, column: column).freeze()
        guard let frozenOwner = frozen.owner, frozenOwner !== owner else { return self }
        return Map(owner: frozenOwner, column: column)
    }

    /// Observes the map: `.initial`, then, at each change, the keys deleted, inserted and
    /// modified (a changed value is a modification), as RealmSwift's `RealmMapChange` has them.
    /// - Parameter keyPaths: For a map of objects, the properties of the objects whose changes
    ///   count as modifications (`nil`: all), as for a `List`.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (RealmMapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        guard let owner else { fatalError("Only a managed Map can be observed") }
        let keys = MapKeys<Key>()
        let column = column
        return List<Value>(owner: owner, column: column).observe(keyPaths: keyPaths) { change in
            block(keys.mapChange(change, column: column))
        }
    }

    /// Observes the map from `queue`, through a realm of the same file confined to it; the maps
    /// passed to `block` belong to that realm.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue, _ block: @escaping @Sendable (RealmMapChange<Map<Key, Value>>) -> Void
    ) -> NotificationToken {
        guard let owner else { fatalError("Only a managed Map can be observed") }
        let keys = MapKeys<Key>()
        let column = column
        return List<Value>(owner: owner, column: column).observe(keyPaths: keyPaths, on: queue) { change in
            block(keys.mapChange(change, column: column))
        }
    }

    /// The map of the object `list` belongs to (an empty unmanaged map for a list with none).
    convenience init(viewing list: List<Value>, column: Int32) {
        if let owner = list.owner { self.init(owner: owner, column: column) } else { self.init() }
    }
}

/// A change to an observed ``Map``, by key (RealmSwift's type).
public enum RealmMapChange<Collection: _MapKeyed> {
    /// The map when observation began.
    case initial(Collection)
    /// The map after a commit, with the keys removed, added, and whose values changed.
    case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
    /// The map can no longer be observed.
    case error(any Error)
}

/// A collection of values by key: ``Map``.
public protocol _MapKeyed {
    associatedtype Key
}

extension Map: _MapKeyed {}

/// The keys of an observed map as the last change left them (deletions are positions in that
/// version), used only where the observation delivers.
final class MapKeys<Key: _MapKey>: @unchecked Sendable {
    // @unchecked Sendable: read and written only by one observation's deliveries, which run
    // one at a time where the observing realm is confined.
    private var keys: [Key] = []

    /// `change` of the map's stored list as a change of the map, by key.
    func mapChange<Value>(_ change: RealmCollectionChange<List<Value>>, column: Int32) -> RealmMapChange<Map<Key, Value>> {
        switch change {
        case .initial(let list):
            let map = Map<Key, Value>(viewing: list, column: column)
            keys = map.keys
            return .initial(map)
        case .update(let list, let deletions, let insertions, let modifications):
            let map = Map<Key, Value>(viewing: list, column: column)
            let now = map.keys
            defer { keys = now }
            return .update(map, deletions: deletions.map { keys[$0] }, insertions: insertions.map { now[$0] }, modifications: modifications.map { now[$0] })
        case .error(let error):
            return .error(error)
        }
    }
}

extension Map where Value: Comparable {
    /// The smallest value, or `nil` for an empty map.
    public func min() -> Value? { values.min() }
    /// The largest value, or `nil` for an empty map.
    public func max() -> Value? { values.max() }
    /// The values in ascending (or descending) order, as an array.
    public func sorted(ascending: Bool = true) -> [Value] { ascending ? values.sorted() : values.sorted(by: >) }
}

extension Map where Value: _ListAddable {
    /// The sum of the values; 0 for an empty map.
    public func sum() -> Value { values.reduce(.zero, +) }
    /// The mean of the values, or `nil` for an empty map.
    public func average<T: BinaryFloatingPoint>() -> T? {
        let values = values
        guard !values.isEmpty else { return nil }
        return T(values.reduce(0.0) { $0 + $1._doubleValue } / Double(values.count))
    }
}

extension Map {
    /// The entries as `(key, value)` pairs, in the map's order.
    public func asKeyValueSequence() -> [(key: Key, value: Value)] {
        entries()
    }
}
