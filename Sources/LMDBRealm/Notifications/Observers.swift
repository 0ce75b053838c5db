import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

/// One observation registered with a realm: told of every version the realm moves to.
class NotificationObserver {
    /// The token that keeps the observation alive; released or invalidated, it ends it.
    weak var token: NotificationToken?
    /// The version last delivered; observers diff against it, so it stays pinned.
    var baseline: Snapshot?
    /// Whether `.initial` is still to be delivered.
    var needsInitial: Bool
    private var isDetached = false
    /// Set once the observation can deliver nothing more (its object was deleted).
    var isFinished = false

    init(token: NotificationToken, needsInitial: Bool) {
        self.token = token
        self.needsInitial = needsInitial
    }

    var isLive: Bool {
        guard let token, !isFinished else { return false }
        return !token.isInvalidated
    }

    /// Stops counting as an observer of `file` (idempotent).
    func detach(_ file: StoreFile) {
        guard !isDetached else { return }
        isDetached = true
        baseline = nil
        file.hub.observerRemoved()
    }

    func deliverInitial(_ realm: Realm, at current: Snapshot) {
        baseline = current
    }

    /// Tells the observer its realm could not move to a new version (`error` is a
    /// ``RealmError``); the observation goes on with the next commit.
    func fail(_ error: any Error) {}

    /// Moves from `base` to `current`: computes what changed (with the change logs of the
    /// versions in between when `logs` has them) and, if `notify`, tells the observer.
    func advance(_ realm: Realm, from base: Snapshot, to current: Snapshot, logs: [ChangeLog]?, notify: Bool) {
        baseline = current
    }
}

extension Realm {
    /// Whether a write beginning now records what it changes: while anything in the process
    /// observes the file, unless the configuration says otherwise.
    var recordsChangeLogs: Bool { configuration.recordsChangeLogs && file.hub.isRecording }

    /// Registers `observer` (see ``RealmNotifier/add(_:to:)``).
    func addNotifier(_ observer: NotificationObserver) { notifier.add(observer, to: self) }

    /// Drops the observers whose tokens ended.
    func pruneNotifiers() { notifier.prune(file) }

    /// Delivers every pending notification for the version the realm reads now (see
    /// ``RealmNotifier/deliver(in:)``).
    func deliverNotifications() { notifier.deliver(in: self) }

    /// Tells realm observers that the file changed while the realm does not refresh itself.
    func deliverRefreshRequired() { notifier.deliverRefreshRequired(in: self) }
}

// MARK: - Realm observers

final class RealmObserver: NotificationObserver {
    let callback: (Realm.Notification, Realm) -> Void

    init(token: NotificationToken, callback: @escaping (Realm.Notification, Realm) -> Void) {
        self.callback = callback
        super.init(token: token, needsInitial: false)
    }

    override func advance(_ realm: Realm, from base: Snapshot, to current: Snapshot, logs: [ChangeLog]?, notify: Bool) {
        baseline = current
        if notify { callback(.didChange, realm) }
    }
}

// MARK: - Results observers

/// Which stored columns a key-path list names, as a mask (`nil`: all).
func columnMask(_ names: [String]?, of table: Table) -> UInt64 {
    guard let names else { return ChangeLog.allColumns }
    var mask: UInt64 = 0
    for name in names {
        let property = name.split(separator: ".").first.map(String.init) ?? name
        guard let c = table.schema.properties.firstIndex(where: { $0.name == property }) else {
            fatalError("Property '\(property)' not found in object of type '\(table.className)'")
        }
        mask |= ChangeLog.bit(c)
    }
    return mask
}

/// Whether any list of `columns` (a column mask) of the object `owner` holds other elements in
/// `new` than in `old`.
/// - Throws: What reading a list threw (never "no change": observers get `.error`).
func listsDiffer(_ table: Table, owner: UnsafeRawBufferPointer, _ old: StoreView, _ new: StoreView, columns: UInt64) throws -> Bool {
    guard columns != 0 else { return false }
    for (column, list) in table.lists where columns & ChangeLog.bit(column) != 0 {
        if try old.listElements(list, owner: owner) != new.listElements(list, owner: owner) { return true }
    }
    return false
}

/// Whether any column of `observed` differs between two records of `table`.
func observedFieldsDiffer(_ table: Table, _ old: UnsafeRawBufferPointer, _ new: UnsafeRawBufferPointer, observed: UInt64, file: StoreFile) -> Bool {
    // The same bytes in the map in both versions: the page is shared, so the record is too.
    if old.baseAddress == new.baseAddress && old.count == new.count { return false }
    for c in 0..<table.columnCount where observed & ChangeLog.bit(c) != 0 {
        let a = table.field(old.baseAddress!, size: old.count, column: c, in: file)
        let b = table.field(new.baseAddress!, size: new.count, column: c, in: file)
        if !ByteOrder.equal(a, b) { return true }
    }
    return false
}

final class ResultsObserver<Element: Object>: NotificationObserver {
    let info: ClassInfo
    let steps: [ResultsStep]
    let keyPaths: [String]?
    let callback: (RealmCollectionChange<Results<Element>>) -> Void
    /// The keys of the results at `baseline`, in order.
    private var keys: [ObjectKey] = []

    init(
        token: NotificationToken, info: ClassInfo, steps: [ResultsStep], keyPaths: [String]?,
        callback: @escaping (RealmCollectionChange<Results<Element>>) -> Void
    ) {
        self.info = info
        self.steps = steps
        self.keyPaths = keyPaths
        self.callback = callback
        super.init(token: token, needsInitial: true)
    }

    override func deliverInitial(_ realm: Realm, at current: Snapshot) {
        // Observers of one query starting at one version start from the same keys: a thousand
        // subscribers of one folder evaluate it once and hold one array of its keys.
        var key = shareKey
        key?.base = current.version
        let core = ResultsCore(realm: realm, info: info, steps: steps)
        if let key, let shared = realm.notifier.sharedInitialKeys(key) {
            keys = shared
        } else {
            keys = core.evaluatedKeys()
            realm.notifier.initialResultsEvaluated += 1
            if let key { realm.notifier.shareInitialKeys(key, keys) }
        }
        baseline = current
        callback(.initial(Results(core: core)))
    }

    /// The stored columns the chain's filters, sorts and distincts read.
    private func dependentColumns(_ table: Table) -> UInt64 {
        var names = Set<String>()
        for step in steps {
            switch step {
            case .filter(let node):
                if node.hasBlock { return ChangeLog.allColumns }
                names.formUnion(node.propertyNames)
            case .sort(let descriptors): names.formUnion(descriptors.map(\.keyPath))
            case .distinct(let properties): names.formUnion(properties)
            case .limit: break
            case .section(let property?): names.insert(property)
            // A key function may read any property.
            case .section(nil): return ChangeLog.allColumns
            }
        }
        var mask: UInt64 = 0
        for (c, property) in table.schema.properties.enumerated() where names.contains(property.name) {
            mask |= ChangeLog.bit(c)
        }
        return mask
    }

    override func fail(_ error: any Error) {
        callback(.error(error))
    }

    /// Observers of one query (no closure in it) on one realm share what each commit did to
    /// it, when they start from the same version: their keys there are the same.
    private lazy var shareKey: SharedResultsChange.Key? = {
        for case .filter(let node) in steps where node.hasBlock { return nil }
        return SharedResultsChange.Key(info: ObjectIdentifier(info), steps: steps, keyPaths: keyPaths, base: 0)
    }()

    override func advance(_ realm: Realm, from base: Snapshot, to current: Snapshot, logs: [ChangeLog]?, notify: Bool) {
        baseline = current
        var key = shareKey
        key?.base = base.version
        let change: SharedResultsChange
        if let key, let shared = realm.notifier.sharedResultsChanges[key] {
            change = shared
        } else {
            do {
                change = try computeChange(realm, from: base, to: current, logs: logs)
            } catch {
                // What the commit changed cannot be read: the observer is told, not given an
                // incomplete change (it hears of the next commit as usual).
                if notify { fail(Realm.Error(error, url: realm.file.url, doing: "Cannot read the changes to '\(info.schema.className)' in")) }
                return
            }
            if let key { realm.notifier.sharedResultsChanges[key] = change }
        }
        keys = change.keys
        guard notify, let (deletions, insertions, modifications) = change.indices else { return }
        callback(.update(Results(core: change.core), deletions: deletions, insertions: insertions, modifications: modifications))
    }

    /// What moving from `base` to `current` does to the results: their keys at `current`, and
    /// the indices that changed.
    private func computeChange(_ realm: Realm, from base: Snapshot, to current: Snapshot, logs: [ChangeLog]?) throws -> SharedResultsChange {
        realm.notifier.resultsChangesComputed += 1
        let core = ResultsCore(realm: realm, info: info, steps: steps)
        let oldKeys = keys
        var newKeys: [ObjectKey]
        var diff: CollectionDiff?
        var modifications: [Int] = []

        guard let binding = core.resolveBinding() else {
            return SharedResultsChange(core: core, keys: [], indices: oldKeys.isEmpty ? nil : (Array(oldKeys.indices), [], []))
        }
        let table = binding.table
        let observed = columnMask(keyPaths, of: table)

        // Lists are stored apart from records: their elements in both versions are compared.
        let observedLists = table.lists.keys.reduce(UInt64(0)) { $0 | ChangeLog.bit($1) } & observed

        /// Whether the object under `key` changed in an observed column between the versions;
        /// `logged` are the columns the change logs name for it.
        func changed(_ key: ObjectKey, logged: UInt64 = 0) throws -> Bool {
            try key.withBytes { k in
                guard let old = realm.record(of: table, key: k, in: base.view),
                    let new = realm.record(of: table, key: k, in: current.view)
                else { return true }
                return try observedFieldsDiffer(table, old, new, observed: observed, file: realm.file)
                    || listsDiffer(table, owner: k, base.view, current.view, columns: observedLists)
            }
        }

        if let logs, !logs.contains(where: \.catalogChanged) {
            // Objects whose linked objects changed count as modified too.
            let throughLinks = try realm.linkedModifications(logs, of: table, keyPaths: keyPaths, from: base.view, in: current.view)
            guard let merged = MergedChanges(logs, className: table.className) ?? (throughLinks.isEmpty ? nil : MergedChanges())
            else { return SharedResultsChange(core: core, keys: oldKeys, indices: nil) }
            defer {
                if !throughLinks.isEmpty {
                    let kept = Set(newKeys)
                    var more = Set(modifications)
                    for (i, key) in oldKeys.enumerated() where throughLinks[key] != nil && kept.contains(key) { more.insert(i) }
                    modifications = more.sorted()
                }
            }
            let dependent = dependentColumns(table)
            let reordered = merged.structural || merged.modified.values.contains { $0 & dependent != 0 }
            if !reordered {
                // The same objects in the same order: find the modified ones.
                newKeys = oldKeys
                let candidates = merged.modified.filter { $0.value & observed != 0 }.map(\.key)
                if candidates.count <= 8 {
                    for key in candidates {
                        if let i = oldKeys.firstIndex(of: key), try changed(key, logged: merged.modified[key] ?? 0) { modifications.append(i) }
                    }
                    modifications.sort()
                } else {
                    let set = Set(candidates)
                    for (i, key) in oldKeys.enumerated() where set.contains(key) {
                        if try changed(key, logged: merged.modified[key] ?? 0) { modifications.append(i) }
                    }
                }
            } else {
                newKeys = core.evaluatedKeys()
                let d = CollectionDiff(old: oldKeys, new: newKeys)
                diff = d
                let candidates = merged.cleared ? Set(oldKeys) : merged.touched.union(merged.modified.keys)
                if candidates.count * 4 < oldKeys.count {
                    var oldIndex: [ObjectKey: Int] = [:]
                    for (i, key) in oldKeys.enumerated() where candidates.contains(key) { oldIndex[key] = i }
                    for (key, i) in oldIndex where d.keptOldToNew[i] >= 0 && merged.columns(of: key) & observed != 0 {
                        if try changed(key, logged: merged.columns(of: key)) { modifications.append(i) }
                    }
                    modifications.sort()
                } else {
                    for (i, key) in oldKeys.enumerated()
                    where d.keptOldToNew[i] >= 0 && candidates.contains(key) && merged.columns(of: key) & observed != 0 {
                        if try changed(key, logged: merged.columns(of: key)) { modifications.append(i) }
                    }
                }
            }
        } else {
            // Another process committed (or nothing recorded): compare the two versions.
            let oldRealm = Realm(frozen: base, configuration: realm.configuration)
            let oldEntries = ResultsCore(realm: oldRealm, info: info, steps: steps).evaluate()
            let newEntries = core.evaluate()
            newKeys = newEntries.map(\.key)
            let d = CollectionDiff(old: oldEntries.map(\.key), new: newKeys)
            diff = d
            // Objects whose linked objects changed count as modified too: those are read in
            // both versions.
            let linked = table.hasLinks ? LinkedComparison(realm, keyPaths: keyPaths, from: base.view, in: current.view) : nil
            for i in oldEntries.indices {
                let j = d.keptOldToNew[i]
                guard j >= 0 else { continue }
                let differ = oldEntries[i].record.read(at: oldRealm.generation) { old in
                    newEntries[j].record.read(at: realm.generation) { new in
                        observedFieldsDiffer(table, old, new, observed: observed, file: realm.file)
                    }
                }
                if try differ
                    || newKeys[j].withBytes({ k in
                        try listsDiffer(table, owner: k, base.view, current.view, columns: observedLists)
                            || (linked?.columns(of: table, key: k) ?? 0) != 0
                    })
                {
                    modifications.append(i)
                }
            }
        }
        let deletions = diff?.deletions ?? []
        let insertions = diff?.insertions ?? []
        guard !(deletions.isEmpty && insertions.isEmpty && modifications.isEmpty) else {
            return SharedResultsChange(core: core, keys: newKeys, indices: nil)
        }
        return SharedResultsChange(core: core, keys: newKeys, indices: (deletions, insertions, modifications))
    }
}

/// What one commit did to one query's results on one realm.
final class SharedResultsChange {
    /// Which observers may share a change: those of one class and chain of steps, observing
    /// the same key paths, moving from the same version.
    struct Key: Hashable {
        let info: ObjectIdentifier
        let steps: [ResultsStep]
        let keyPaths: [String]?
        var base: Int
    }

    /// The results at the new version (one evaluation for every observer).
    let core: ResultsCore
    /// Their keys there, in order.
    let keys: [ObjectKey]
    /// The indices deleted, inserted and modified; `nil` when nothing changed.
    let indices: (deletions: [Int], insertions: [Int], modifications: [Int])?

    init(core: ResultsCore, keys: [ObjectKey], indices: (deletions: [Int], insertions: [Int], modifications: [Int])?) {
        self.core = core
        self.keys = keys
        self.indices = indices
    }
}

extension QueryNode {
    /// Whether the query runs a closure on objects (whose reads cannot be known).
    var hasBlock: Bool {
        switch self {
        case .block: true
        case .constant, .comparison, .between, .membership, .stringMatch, .elementOf: false
        case .collection(_, _, let element): element.hasBlock
        case .aggregate(_, _, _, let filter, _, _): filter?.hasBlock ?? false
        case .and(let children), .or(let children): children.contains { $0.hasBlock }
        case .not(let child): child.hasBlock
        }
    }
}

// MARK: - Object observers

final class ObjectObserver<T: Object>: NotificationObserver {
    let info: ClassInfo
    let key: ObjectKey
    let keyPaths: [String]?
    let callback: (ObjectChange<T>) -> Void

    /// With a `baseline`, changes are reported from that version on (the version an
    /// observation from another queue was asked for at).
    init(
        token: NotificationToken, info: ClassInfo, key: ObjectKey, keyPaths: [String]?, baseline: Snapshot? = nil,
        callback: @escaping (ObjectChange<T>) -> Void
    ) {
        self.info = info
        self.key = key
        self.keyPaths = keyPaths
        self.callback = callback
        super.init(token: token, needsInitial: baseline == nil)
        self.baseline = baseline
    }

    override func deliverInitial(_ realm: Realm, at current: Snapshot) {
        baseline = current
    }

    override func fail(_ error: any Error) {
        callback(.error(error))
    }

    override func advance(_ realm: Realm, from base: Snapshot, to current: Snapshot, logs: [ChangeLog]?, notify: Bool) {
        baseline = current
        do {
            try advanceThrowing(realm, from: base, to: current, logs: logs, notify: notify)
        } catch {
            // What the commit changed cannot be read: the observer is told, not given an
            // incomplete change (it hears of the next commit as usual).
            if notify { fail(Realm.Error(error, url: realm.file.url, doing: "Cannot read the changes to an object of '\(info.schema.className)' in")) }
        }
    }

    private func advanceThrowing(_ realm: Realm, from base: Snapshot, to current: Snapshot, logs: [ChangeLog]?, notify: Bool) throws {
        guard let binding = realm.bindingForReading(info.type) else {
            isFinished = true
            if notify { callback(.deleted) }
            return
        }
        let table = binding.table
        var candidates = ChangeLog.allColumns
        // The link columns through which a linked object changed.
        var throughLinks: UInt64 = 0
        if let logs, !logs.contains(where: \.catalogChanged) {
            throughLinks = try realm.linkedModifications(logs, of: table, keyPaths: keyPaths, from: base.view, in: current.view)[key] ?? 0
            let merged = MergedChanges(logs, className: table.className)
            if merged == nil && throughLinks == 0 { return }
            // A deleted or replaced object counts as touched: every column is a candidate.
            candidates = merged?.columns(of: key) ?? 0
            if candidates == 0 && throughLinks == 0 { return }
        } else if table.hasLinks {
            // Another process committed: linked objects are compared between the versions.
            throughLinks = key.withBytes { k in
                guard realm.record(of: table, key: k, in: current.view) != nil else { return 0 }
                return LinkedComparison(realm, keyPaths: keyPaths, from: base.view, in: current.view).columns(of: table, key: k)
            }
        }
        let observed = columnMask(keyPaths, of: table) & candidates
        let found = key.withBytes { k -> (old: UnsafeRawBufferPointer?, new: UnsafeRawBufferPointer?) in
            (realm.record(of: table, key: k, in: base.view), realm.record(of: table, key: k, in: current.view))
        }
        guard let new = found.new else {
            isFinished = true
            if notify { callback(.deleted) }
            return
        }
        guard observed != 0 || throughLinks != 0 else { return }
        var changes: [PropertyChange] = []
        let file = realm.file
        for (c, property) in table.schema.properties.enumerated() where throughLinks & ChangeLog.bit(c) != 0 {
            // A linked object changed: the link itself is reported, as RealmSwift does.
            changes.append(PropertyChange(name: property.name, oldValue: nil, newValue: nil))
        }
        for (c, property) in table.schema.properties.enumerated() where observed & ChangeLog.bit(c) != 0 && throughLinks & ChangeLog.bit(c) == 0 {
            if let list = table.lists[c] {
                // A list lives outside the record: its elements in both versions are compared.
                // (RealmSwift gives no old and new value for a collection property either.)
                let differs = try key.withBytes { k in
                    try base.view.listElements(list, owner: k) != current.view.listElements(list, owner: k)
                }
                if differs { changes.append(PropertyChange(name: property.name, oldValue: nil, newValue: nil)) }
                continue
            }
            let newField = table.field(new.baseAddress!, size: new.count, column: c, in: file)
            let oldField = found.old.flatMap { table.field($0.baseAddress!, size: $0.count, column: c, in: file) }
            if found.old != nil, ByteOrder.equal(oldField, newField) { continue }
            changes.append(
                PropertyChange(
                    name: property.name, oldValue: oldField.map { decodeValue($0, type: property.type) },
                    newValue: newField.map { decodeValue($0, type: property.type) }))
        }
        guard notify, !changes.isEmpty else { return }
        let object = key.withBytes { k in unsafeDowncast(realm.makeObject(binding, key: k, record: new), to: T.self) }
        callback(.change(object, changes))
    }
}
