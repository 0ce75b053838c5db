public import Foundation

// A managed list of objects answers queries as `Results` over its elements, in list order;
// a list of values aggregates its values in place. Both are observed through their owner.

extension List where Element: Object {
    /// The list's objects as ``Results``, in list order (an object held twice appears twice),
    /// on which every query, sort, aggregate and notification of `Results` works; `nil` while
    /// the list is unmanaged.
    public var asResults: Results<Element>? {
        owner == nil ? nil : managedResults
    }

    /// ``asResults`` of a managed list.
    private var managedResults: Results<Element> {
        guard let owner, let realm = owner._realm else {
            fatalError("Only a managed List can be queried: add its object to a realm first")
        }
        let info = ClassInfo.of(type(of: owner))
        let node = QueryNode.elementOf(
            owner: info.schema.className, property: info.schema.properties[Int(column)].name,
            key: owner._key.withBytes { Data($0) })
        return Results(core: Results<Element>(realm: realm, info: ClassInfo.of(Element.self)).core.appending(.filter(node)))
    }

    /// The list's objects for which `isIncluded` holds, in list order.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { managedResults.where(isIncluded) }

    /// The list's objects matching a predicate string, in list order.
    public func filter(_ predicateFormat: String, _ args: Any...) throws -> Results<Element> {
        try managedResults.filter(predicateFormat, argumentArray: args)
    }

    /// The list's objects matching `predicate`, in list order.
    public func filter(_ predicate: Predicate<Element>) -> Results<Element> { managedResults.filter(predicate) }

    /// The list's objects sorted by `keyPath`.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        managedResults.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The list's objects sorted by the persisted property `keyPath` reads.
    public func sorted<Value>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results<Element> {
        managedResults.sorted(by: keyPath, ascending: ascending)
    }

    /// The list's objects sorted by several keys.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        managedResults.sorted(by: descriptors)
    }

    /// The first of the list's objects for each combination of values of `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        managedResults.distinct(by: keyPaths)
    }

    public func min<T: _Persistable & Comparable>(ofProperty property: String) -> T? {
        owner == nil ? nil : managedResults.min(ofProperty: property)
    }
    public func max<T: _Persistable & Comparable>(ofProperty property: String) -> T? {
        owner == nil ? nil : managedResults.max(ofProperty: property)
    }
    public func sum<T: _Persistable & AdditiveArithmetic>(ofProperty property: String) -> T {
        owner == nil ? .zero : managedResults.sum(ofProperty: property)
    }
    public func average<T: BinaryFloatingPoint>(ofProperty property: String) -> T? {
        owner == nil ? nil : managedResults.average(ofProperty: property)
    }
}

/// Values a list can add up: its numbers.
public protocol _ListAddable: _Persistable, AdditiveArithmetic {
    var _doubleValue: Double { get }
}
extension Int: _ListAddable { public var _doubleValue: Double { Double(self) } }
extension Int8: _ListAddable { public var _doubleValue: Double { Double(self) } }
extension Int16: _ListAddable { public var _doubleValue: Double { Double(self) } }
extension Int32: _ListAddable { public var _doubleValue: Double { Double(self) } }
extension Int64: _ListAddable { public var _doubleValue: Double { Double(self) } }
extension Float: _ListAddable { public var _doubleValue: Double { Double(self) } }
extension Double: _ListAddable { public var _doubleValue: Double { self } }
extension Decimal: _ListAddable { public var _doubleValue: Double { NSDecimalNumber(decimal: self).doubleValue } }

extension List where Element: Comparable {
    /// The smallest value, or `nil` for an empty list.
    public func min() -> Element? { self.lazy.min() }
    /// The largest value, or `nil` for an empty list.
    public func max() -> Element? { self.lazy.max() }
    /// The values in ascending (or descending) order, as an array.
    public func sorted(ascending: Bool = true) -> [Element] { ascending ? Array(self).sorted() : Array(self).sorted(by: >) }
}

extension List where Element: _ListAddable {
    /// The sum of the values; 0 for an empty list.
    public func sum() -> Element { reduce(.zero, +) }
    /// The mean of the values, or `nil` for an empty list.
    public func average<T: BinaryFloatingPoint>() -> T? {
        let values = Array(self)
        guard !values.isEmpty else { return nil }
        return T(values.reduce(0.0) { $0 + $1._doubleValue } / Double(values.count))
    }
}

extension List {
    /// Whether the list belongs to a frozen realm.
    public var isFrozen: Bool { owner?._realm?.isFrozen ?? false }

    /// The list as it is now, frozen: readable from any thread, never changing. An unmanaged
    /// or frozen list is returned as it is.
    public func freeze() -> List<Element> {
        guard let owner, let realm = owner._realm, !realm.isFrozen else { return self }
        realm.checkThread()
        let frozen = realm.freeze()
        guard let frozenOwner = frozen.object(withKey: owner._key, of: type(of: owner)) else {
            fatalError("Object has been deleted or invalidated.")
        }
        return List(owner: frozenOwner, column: column)
    }

    /// Observes the list: the first call is `.initial`, then each commit that changes it
    /// delivers `.update` with the positions deleted (in the old list), inserted and modified
    /// (in the new one). Delivery follows the realm's confinement, as for ``Results``.
    /// Deleting the list's object reports every element deleted, then nothing more.
    /// - Precondition: The list is managed and not frozen.
    public func observe(_ block: @escaping (RealmCollectionChange<List<Element>>) -> Void) -> NotificationToken {
        guard let owner, let realm = owner._realm else { fatalError("Only a managed List can be observed") }
        require(!realm.isFrozen, "Frozen Lists do not change and cannot be observed.")
        let info = ClassInfo.of(type(of: owner))
        let name = info.schema.properties[Int(column)].name
        realm.prepareToObserve(keyPaths: [name], of: info)
        let column = column
        var previous = owner._listFields(column)
        let token = NotificationToken()
        token.keep(owner)
        realm.addNotifier(
            ObjectObserver<Object>(token: token, info: info, key: owner._key, keyPaths: [name]) { change in
                switch change {
                case .change(let object, _):
                    let current = object._listFields(column)
                    let (deletions, insertions, modifications) = listDifference(previous, current)
                    previous = current
                    guard !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return }
                    block(.update(List(owner: object, column: column), deletions: deletions, insertions: insertions, modifications: modifications))
                case .deleted:
                    let deletions = Array(previous.indices)
                    previous = []
                    block(.update(List(), deletions: deletions, insertions: [], modifications: []))
                case .error(let error):
                    block(.error(error))
                }
            })
        block(.initial(self))
        realm.scheduleDelivery()
        return token
    }
}

/// What changed from `old` to `new`: the common beginning and end are kept; between them, a
/// run of the same length is modified in place, otherwise deleted and inserted.
func listDifference(_ old: [[UInt8]?], _ new: [[UInt8]?]) -> (deletions: [Int], insertions: [Int], modifications: [Int]) {
    let prefix = zip(old, new).prefix { $0 == $1 }.count
    var suffix = 0
    while suffix < min(old.count, new.count) - prefix, old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
    let oldMiddle = prefix..<(old.count - suffix)
    let newMiddle = prefix..<(new.count - suffix)
    if oldMiddle.count == newMiddle.count {
        return ([], [], newMiddle.filter { old[$0] != new[$0] })
    }
    return (Array(oldMiddle), Array(newMiddle), [])
}
