public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

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
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        managedResults.filter(predicateFormat, argumentArray: args)
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

    /// The smallest value of `property` among the list's objects; `nil` for an empty or
    /// unmanaged list.
    public func min<T: _Persistable & Comparable>(ofProperty property: String) -> T? {
        owner == nil ? nil : managedResults.min(ofProperty: property)
    }
    /// The largest value of `property` among the list's objects.
    public func max<T: _Persistable & Comparable>(ofProperty property: String) -> T? {
        owner == nil ? nil : managedResults.max(ofProperty: property)
    }
    /// The sum of `property` over the list's objects (each occurrence counted).
    public func sum<T: _Persistable & AdditiveArithmetic>(ofProperty property: String) -> T {
        owner == nil ? .zero : managedResults.sum(ofProperty: property)
    }
    /// The mean of `property` over the list's objects, or `nil` for none.
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
    /// - Parameter keyPaths: In a list of objects, the properties of the objects (names, or key
    ///   paths through links) whose changes count as modifications; `nil`: any change to them,
    ///   or to objects they link to. The list's own changes always count.
    /// - Precondition: The list is managed and not frozen.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<List<Element>>) -> Void) -> NotificationToken {
        guard let owner, let realm = owner._realm else { fatalError("Only a managed List can be observed") }
        require(!realm.isFrozen, "Frozen Lists do not change and cannot be observed.")
        let info = ClassInfo.of(type(of: owner))
        realm.prepareToObserve(keyPaths: nil, of: info)
        Self.checkElementKeyPaths(keyPaths)
        let token = NotificationToken()
        token.keep(owner)
        realm.addNotifier(ListObserver<Element>(token: token, info: info, key: owner._key, column: column, keyPaths: keyPaths, callback: block))
        realm.scheduleDelivery()
        return token
    }

    /// Observes the list from `queue`: the list is read again on a realm of the same file
    /// confined to `queue`, and `block` gets lists of that realm there.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue, _ block: @escaping @Sendable (RealmCollectionChange<List<Element>>) -> Void
    ) -> NotificationToken {
        Self.checkElementKeyPaths(keyPaths)
        return observe(on: queue, keyPaths: keyPaths, releaseSynchronously: false, block)
    }

    /// Stops with a message if `keyPaths` name no property of the list's objects.
    static func checkElementKeyPaths(_ keyPaths: [String]?) {
        guard let keyPaths else { return }
        // A map's values are optional objects.
        let elementType = (Element.self as? any _OptionalType.Type)?.wrappedType ?? Element.self
        guard let type = elementType as? Object.Type else {
            fatalError("Key paths are observed on lists of objects; a List<\(Element.self)> has none")
        }
        let schema = ClassInfo.of(type).schema
        for name in keyPaths where schema[String(name.split(separator: ".").first ?? "")] == nil {
            fatalError("Property '\(name)' not found in object of type '\(schema.className)'")
        }
    }

    func observe(
        on queue: DispatchQueue, keyPaths: [String]? = nil, releaseSynchronously: Bool,
        _ block: @escaping @Sendable (RealmCollectionChange<List<Element>>) -> Void
    ) -> NotificationToken {
        guard let owner, let realm = owner._realm else { fatalError("Only a managed List can be observed") }
        realm.checkThread()
        require(!realm.isFrozen, "Frozen Lists do not change and cannot be observed.")
        let handover = ListHandover(configuration: realm.configuration, info: ClassInfo.of(type(of: owner)), key: owner._key, column: column)
        return observeFromQueue(
            queue, configuration: handover.configuration, info: handover.info, keyPaths: nil,
            releaseSynchronously: releaseSynchronously,
            observer: { token in
                ListObserver<Element>(
                    token: token, info: handover.info, key: handover.key, column: handover.column, keyPaths: keyPaths, callback: block)
            },
            failed: { block(.error($0)) })
    }

    /// The list's changes as an asynchronous sequence, each carrying the list frozen at that
    /// version, observed on a private queue (see ``Results/changes``).
    public var changes: AsyncStream<RealmCollectionChange<FrozenList<Element>>> {
        guard let realm else { fatalError("Only lists of managed objects support change notifications") }
        return changeStream(realm.configuration) { queue, releaseSynchronously, deliver in
            observe(on: queue, releaseSynchronously: releaseSynchronously) { change in
                switch change {
                case .initial(let list): deliver(.initial(FrozenList(unchecked: list.freeze())), false)
                case .update(let list, let deletions, let insertions, let modifications):
                    deliver(.update(FrozenList(unchecked: list.freeze()), deletions: deletions, insertions: insertions, modifications: modifications), false)
                case .error(let error): deliver(.error(error), false)
                }
            }
        }
    }
}

/// What a managed `List` is, without its realm: enough to read it again on another one.
struct ListHandover: Sendable {
    let configuration: Realm.Configuration
    let info: ClassInfo
    let key: ObjectKey
    let column: Int32
}

/// A frozen `List`, `Sendable`: read it from any thread (``List/changes`` hands these out).
public struct FrozenList<Element: _Persistable>: @unchecked Sendable {
    // @unchecked Sendable: the list reads a frozen realm, whose version never changes; every
    // read takes the frozen realm's lock, which serialises the caches of its objects.
    private let list: List<Element>

    init(unchecked list: List<Element>) {
        self.list = list
    }

    private func locked<R>(_ body: () -> R) -> R {
        let lock = list.owner?._realm?.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        return body()
    }

    /// The number of elements.
    public var count: Int { locked { list.count } }
    /// The element at `position`.
    public subscript(position: Int) -> Element { locked { list[position] } }
    /// The elements, read at once.
    public var elements: [Element] { locked { Array(list) } }
    /// Always `true`.
    public var isFrozen: Bool { true }
}

/// Watches one list of one object on a realm: `.initial`, then the index changes of each
/// commit that changed it (its elements compared between the versions).
final class ListObserver<Element: _Persistable>: NotificationObserver {
    let info: ClassInfo
    let key: ObjectKey
    let column: Int32
    /// The properties of the list's objects whose changes count as modifications (`nil`: all).
    let keyPaths: [String]?
    let callback: (RealmCollectionChange<List<Element>>) -> Void
    private var previous: [[UInt8]?] = []

    init(
        token: NotificationToken, info: ClassInfo, key: ObjectKey, column: Int32, keyPaths: [String]? = nil,
        callback: @escaping (RealmCollectionChange<List<Element>>) -> Void
    ) {
        self.info = info
        self.key = key
        self.column = column
        self.keyPaths = keyPaths
        self.callback = callback
        super.init(token: token, needsInitial: true)
    }

    override func deliverInitial(_ realm: Realm, at current: Snapshot) {
        baseline = current
        guard let owner = realm.object(withKey: key, of: info.type) else {
            isFinished = true
            callback(.initial(List()))
            return
        }
        previous = owner._listFields(column)
        callback(.initial(List(owner: owner, column: column)))
    }

    override func fail(_ error: any Error) {
        callback(.error(error))
    }

    override func advance(_ realm: Realm, from base: Snapshot, to current: Snapshot, logs: [ChangeLog]?, notify: Bool) {
        baseline = current
        // A commit of this process that touched neither the object nor its list, nor (for a
        // list of objects) modified any object, needs no read.
        if let logs, !logs.contains(where: \.catalogChanged), let binding = realm.bindingForReading(info.type) {
            let stored = binding.isIdentity ? Int(column) : binding.storedColumn(column)
            let touched = MergedChanges(logs, className: binding.table.className).map { $0.columns(of: key) & ChangeLog.bit(stored) != 0 } ?? false
            let modifiedObjects = binding.table.lists[stored]?.references != nil
                && logs.contains { $0.tables.values.contains { !$0.modified.isEmpty } }
            guard touched || modifiedObjects else { return }
        }
        guard let owner = realm.object(withKey: key, of: info.type) else {
            isFinished = true
            let deletions = Array(previous.indices)
            previous = []
            if notify && !deletions.isEmpty { callback(.update(List(), deletions: deletions, insertions: [], modifications: [])) }
            return
        }
        let now = owner._listFields(column)
        var (deletions, insertions, modifications) = listDifference(previous, now)
        modifications = elementModifications(
            realm, from: base, to: current, now: now, deletions: deletions, insertions: insertions, modifications)
        previous = now
        guard notify, !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else { return }
        callback(.update(List(owner: owner, column: column), deletions: deletions, insertions: insertions, modifications: modifications))
    }
}

extension ListObserver {
    /// `modifications` (positions in the old list) and, in a list of objects, the positions
    /// of the elements kept in place whose objects changed, or reach within the depth an
    /// object that did.
    private func elementModifications(
        _ realm: Realm, from base: Snapshot, to current: Snapshot, now: [[UInt8]?], deletions: [Int], insertions: [Int],
        _ modifications: [Int]
    ) -> [Int] {
        guard let binding = realm.bindingForReading(info.type) else { return modifications }
        let stored = binding.isIdentity ? Int(column) : binding.storedColumn(column)
        let property = binding.table.schema.properties[stored]
        guard let list = binding.table.lists[stored], list.references != nil,
            let targetType = property.objectClassName.flatMap(realm.file.classInfo(named:))?.type,
            let target = realm.bindingForReading(targetType)?.table
        else { return modifications }
        let comparison = LinkedComparison(realm, keyPaths: nil, from: base.view, in: current.view)
        // The elements after the run inserted or deleted moved by the difference in length.
        let shift = now.count - previous.count
        let movedFrom = insertions.last.map { $0 + 1 } ?? deletions.first ?? Int.max
        var found = Set(modifications)
        let inserted = Set(insertions)
        for (j, element) in now.enumerated() where !inserted.contains(j) {
            let old = j >= movedFrom ? j - shift : j
            guard old >= 0, old < previous.count, !found.contains(old), previous[old] == element,
                let key = list.target(of: element)
            else { continue }
            if key.withUnsafeBytes({ comparison.objectChanged(target, key: $0, keyPaths: keyPaths) }) { found.insert(old) }
        }
        return found.sorted()
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

extension List where Element: Object {
    /// As ``observe(keyPaths:_:)-(_,_)``, naming the properties of the list's objects by key path.
    public func observe(
        keyPaths: [PartialKeyPath<Element>], _ block: @escaping (RealmCollectionChange<List<Element>>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: ClassInfo.of(Element.self).propertyNames(for: keyPaths), block)
    }

    /// As ``observe(keyPaths:on:_:)-(_,_,_)``, naming the properties of the list's objects by key path.
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue,
        _ block: @escaping @Sendable (RealmCollectionChange<List<Element>>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: ClassInfo.of(Element.self).propertyNames(for: keyPaths), on: queue, block)
    }
}
