import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// Changes to linked objects, reported as modifications of the objects linking to them: an
// observer of articles hears that an article's author was renamed. Without key paths, every
// link and list of objects is followed up to four levels (Realm's default); with key paths,
// exactly those through links (`"byline.name"`). Found backwards, from the objects a commit
// modified through the links' own indexes, so a commit that touches no linked class costs
// nothing.

/// How far links are followed when no key paths are given.
let linkedChangeDepth = 4

extension Realm {
    /// The objects of `table` whose links reach, within the depth or along `keyPaths`, an object
    /// that `logs` modified in place (in an observed property: any for a followed link, the
    /// named one for a key path), as `view` sees the links. A logged change that left the
    /// object's values as they were in `base` (an upsert of the same values) is none.
    /// Each object found comes with the columns of `table` (a mask) its changed links start from.
    /// - Throws: What reading a list or the backlinks threw (never "no linked change").
    func linkedModifications(_ logs: [ChangeLog], of table: Table, keyPaths: [String]?, from base: StoreView, in view: StoreView)
        throws -> [ObjectKey: UInt64]
    {
        // The classes modified in place, with their changes merged.
        var modified: [String: [ObjectKey: UInt64]] = [:]
        for log in logs {
            for (name, changes) in log.tables where !changes.modified.isEmpty {
                modified[name, default: [:]].merge(changes.modified) { $0 | $1 }
            }
        }
        guard !modified.isEmpty else { return [:] }
        var found: [ObjectKey: UInt64] = [:]

        /// The keys of `changes` (of `target`) whose values in `columns` really differ.
        func differing(_ changes: [ObjectKey: UInt64], of target: Table, columns: UInt64) throws -> [ObjectKey] {
            try changes.compactMap { key, logged in
                guard logged & columns != 0 else { return nil }
                return try key.withBytes { k in
                    guard let old = record(of: target, key: k, in: base), let new = record(of: target, key: k, in: view) else {
                        return false
                    }
                    return try observedFieldsDiffer(target, old, new, observed: columns, file: file)
                        || listsDiffer(target, owner: k, base, view, columns: columns)
                } ? key : nil
            }
        }

        /// Adds the objects of `table` that reach `keys` (objects at the end of `path`).
        func walkBack(_ keys: [ObjectKey], along path: [(table: Table, column: Int)]) throws {
            guard !keys.isEmpty else { return }
            var current = keys
            for step in path.reversed() {
                var sources = Set<ObjectKey>()
                for key in current {
                    try key.withBytes { k in
                        try view.forEachBacklink(from: step.table, column: step.column, to: k, file: file) { owner in
                            sources.insert(ObjectKey(owner))
                            return true
                        }
                    }
                }
                guard !sources.isEmpty else { return }
                current = Array(sources)
            }
            let bit = ChangeLog.bit(path[0].column)
            for key in current { found[key, default: 0] |= bit }
        }

        /// The table links of `property` lead to.
        func target(of property: Property) -> Table? {
            guard property.type == .object, let name = property.objectClassName,
                let type = file.classInfo(named: name)?.type
            else { return nil }
            return bindingForReading(type)?.table
        }

        if let keyPaths {
            for keyPath in keyPaths where keyPath.isKeyPath {
                var names = keyPath.split(separator: ".").map(String.init)
                let last = names.removeLast()
                var path: [(table: Table, column: Int)] = []
                var here = table
                var reachable = true
                for name in names {
                    guard let column = here.schema.properties.firstIndex(where: { $0.name == name }),
                        let next = target(of: here.schema.properties[column])
                    else {
                        reachable = false
                        break
                    }
                    path.append((here, column))
                    here = next
                }
                guard reachable, let changes = modified[here.className],
                    let column = here.schema.properties.firstIndex(where: { $0.name == last })
                else { continue }
                try walkBack(differing(changes, of: here, columns: ChangeLog.bit(column)), along: path)
            }
            return found
        }

        /// The objects of each class whose values really changed, found once.
        var really: [String: [ObjectKey]] = [:]
        /// Follows every link of `here`, reached along `path`, to the depth.
        func follow(_ here: Table, _ path: [(table: Table, column: Int)]) throws {
            guard path.count < linkedChangeDepth else { return }
            for (column, property) in here.schema.properties.enumerated() {
                guard let next = target(of: property) else { continue }
                let longer = path + [(here, column)]
                if let changes = modified[next.className] {
                    if really[next.className] == nil { really[next.className] = try differing(changes, of: next, columns: ChangeLog.allColumns) }
                    try walkBack(really[next.className]!, along: longer)
                }
                try follow(next, longer)
            }
        }
        try follow(table, [])
        return found
    }
}

// MARK: - Comparing linked objects between two versions

/// Changes to linked objects found forwards, by comparing versions: for a commit whose change
/// log is unknown (another process's), the objects reachable from an observed object are read
/// in both versions. A record on a page both versions share is the same record, so objects
/// the commit did not touch cost one lookup each. Each object is compared once per depth.
final class LinkedComparison {
    private let realm: Realm
    private let base: StoreView
    private let view: StoreView
    private let keyPaths: [String]?
    private struct Visit: Hashable {
        let table: ObjectIdentifier
        let key: ObjectKey
        let hops: Int
    }
    private var known: [Visit: Bool] = [:]

    init(_ realm: Realm, keyPaths: [String]?, from base: StoreView, in view: StoreView) {
        self.realm = realm
        self.base = base
        self.view = view
        self.keyPaths = keyPaths?.filter(\.isKeyPath)
    }

    /// The link columns of `table` (a mask) through which the object `key` reaches an object
    /// that changed: within the depth without key paths, along them with.
    func columns(of table: Table, key: UnsafeRawBufferPointer) -> UInt64 {
        guard let keyPaths else { return linkedColumns(of: table, key: key, hops: linkedChangeDepth) }
        var mask: UInt64 = 0
        for keyPath in keyPaths {
            let names = keyPath.split(separator: ".").map(String.init)
            guard let column = table.schema.properties.firstIndex(where: { $0.name == names[0] }), mask & ChangeLog.bit(column) == 0,
                let next = target(of: table.schema.properties[column])
            else { continue }
            let rest = names.dropFirst()
            if targets(of: table, column: column, key: key).contains(where: { t in
                t.withUnsafeBytes { changed(next, key: $0, along: rest) }
            }) {
                mask |= ChangeLog.bit(column)
            }
        }
        return mask
    }

    /// Whether the object `key` of `table` changed, or reaches within the depth an object that
    /// did (an element of an observed list of objects).
    func objectChanged(_ table: Table, key: UnsafeRawBufferPointer) -> Bool {
        changedWithin(table, key: key, hops: linkedChangeDepth)
    }

    /// Whether the object `key` of `table` changed in a property `keyPaths` names (a name, or
    /// a key path through links); with no key paths, as ``objectChanged(_:key:)``.
    func objectChanged(_ table: Table, key: UnsafeRawBufferPointer, keyPaths: [String]?) -> Bool {
        guard let keyPaths else { return objectChanged(table, key: key) }
        return keyPaths.contains { changed(table, key: key, along: $0.split(separator: ".").map(String.init)[...]) }
    }

    /// Whether the object `key` of `table` changed in the last name of `path`, reached through
    /// the names before it.
    private func changed(_ table: Table, key: UnsafeRawBufferPointer, along path: ArraySlice<String>) -> Bool {
        guard let name = path.first, let column = table.schema.properties.firstIndex(where: { $0.name == name }) else {
            return false
        }
        if path.count == 1 { return differs(table, key: key, columns: ChangeLog.bit(column)) }
        guard let next = target(of: table.schema.properties[column]) else { return false }
        return targets(of: table, column: column, key: key).contains { t in
            t.withUnsafeBytes { changed(next, key: $0, along: path.dropFirst()) }
        }
    }

    /// The link columns of `table` through which `key` reaches, within `hops` links, an object
    /// that changed.
    private func linkedColumns(of table: Table, key: UnsafeRawBufferPointer, hops: Int) -> UInt64 {
        var mask: UInt64 = 0
        for (column, property) in table.schema.properties.enumerated() {
            guard let next = target(of: property) else { continue }
            if targets(of: table, column: column, key: key).contains(where: { t in
                t.withUnsafeBytes { changedWithin(next, key: $0, hops: hops - 1) }
            }) {
                mask |= ChangeLog.bit(column)
            }
        }
        return mask
    }

    /// Whether the object `key` of `table` changed, or reaches within `hops` links one that did.
    private func changedWithin(_ table: Table, key: UnsafeRawBufferPointer, hops: Int) -> Bool {
        let visit = Visit(table: ObjectIdentifier(table), key: ObjectKey(key), hops: hops)
        if let answer = known[visit] { return answer }
        known[visit] = false  // a cycle back here adds nothing
        let answer = differs(table, key: key, columns: ChangeLog.allColumns)
            || (hops > 0 && linkedColumns(of: table, key: key, hops: hops) != 0)
        known[visit] = answer
        return answer
    }

    /// Whether the object's values in `columns` differ between the versions (an object only
    /// one of them has differs).
    private func differs(_ table: Table, key: UnsafeRawBufferPointer, columns: UInt64) -> Bool {
        guard let old = realm.record(of: table, key: key, in: base), let new = realm.record(of: table, key: key, in: view) else {
            return true
        }
        do {
            return try observedFieldsDiffer(table, old, new, observed: columns, file: realm.file)
                || listsDiffer(table, owner: key, base, view, columns: columns)
        } catch {
            realm.cannotRead("a list of '\(table.className)'", error)
        }
    }

    /// The keys of the objects the link or collection `column` of the object `key` holds now.
    private func targets(of table: Table, column: Int, key: UnsafeRawBufferPointer) -> [[UInt8]] {
        if let list = table.lists[column] {
            do {
                return list.targets(of: try view.listElements(list, owner: key))
            } catch {
                realm.cannotRead("a list of '\(table.className)'", error)
            }
        }
        guard let record = realm.record(of: table, key: key, in: view),
            let field = table.field(record.baseAddress!, size: record.count, column: column, in: realm.file)
        else { return [] }
        return [Array(field)]
    }

    /// The table the links of `property` lead to (a to-one link or a collection of objects).
    private func target(of property: Property) -> Table? {
        guard property.type == .object, let name = property.objectClassName, let type = realm.file.classInfo(named: name)?.type else {
            return nil
        }
        return realm.bindingForReading(type)?.table
    }
}
