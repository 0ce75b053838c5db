import Foundation

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
    func linkedModifications(_ logs: [ChangeLog], of table: Table, keyPaths: [String]?, from base: StoreView, in view: StoreView)
        -> [ObjectKey: UInt64]
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
        func differing(_ changes: [ObjectKey: UInt64], of target: Table, columns: UInt64) -> [ObjectKey] {
            changes.compactMap { key, logged in
                guard logged & columns != 0 else { return nil }
                return key.withBytes { k in
                    guard let old = record(of: target, key: k, in: base), let new = record(of: target, key: k, in: view) else {
                        return false
                    }
                    return observedFieldsDiffer(target, old, new, observed: columns, file: file)
                        || listsDiffer(target, owner: k, base, view, columns: columns)
                } ? key : nil
            }
        }

        /// Adds the objects of `table` that reach `keys` (objects at the end of `path`).
        func walkBack(_ keys: [ObjectKey], along path: [(table: Table, column: Int)]) {
            guard !keys.isEmpty else { return }
            var current = keys
            for step in path.reversed() {
                var sources = Set<ObjectKey>()
                for key in current {
                    key.withBytes { k in
                        try? view.forEachBacklink(from: step.table, column: step.column, to: k, file: file) { owner in
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
                let type = ClassInfo.named(name)?.type
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
                walkBack(differing(changes, of: here, columns: ChangeLog.bit(column)), along: path)
            }
            return found
        }

        /// The objects of each class whose values really changed, found once.
        var really: [String: [ObjectKey]] = [:]
        /// Follows every link of `here`, reached along `path`, to the depth.
        func follow(_ here: Table, _ path: [(table: Table, column: Int)]) {
            guard path.count < linkedChangeDepth else { return }
            for (column, property) in here.schema.properties.enumerated() {
                guard let next = target(of: property) else { continue }
                let longer = path + [(here, column)]
                if let changes = modified[next.className] {
                    if really[next.className] == nil { really[next.className] = differing(changes, of: next, columns: ChangeLog.allColumns) }
                    walkBack(really[next.className]!, along: longer)
                }
                follow(next, longer)
            }
        }
        follow(table, [])
        return found
    }
}
