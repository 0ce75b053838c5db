import Foundation
import LMDBKit
import LMDBRealmFormat

// The links to removed objects, nullified.
extension WriteSession {
    /// The link columns, in every class of the file, that point to objects of `className`.
    func linkColumns(to className: String) throws -> [(table: Table, column: Int)] {
        var found: [(table: Table, column: Int)] = []
        for name in try view.classNames(in: file) {
            guard let table = try findTable(named: name) else { continue }
            for (column, property) in table.schema.properties.enumerated() where property.type == .object && property.objectClassName == className {
                found.append((table, column))
            }
        }
        return found
    }

    /// Sets to null every link to the objects `removed` from `target` (`nil`: to any object of
    /// it), found through the links' indexes: no record is scanned.
    func nullifyLinks(to target: Table, removed: [ObjectKey]?) throws {
        let all = try linkColumns(to: target.className)
        guard !all.isEmpty else { return }
        // Lists of objects lose the removed ones; to-one links become null.
        try removeFromLists(removed, of: target, sources: all.filter { $0.table.schema.properties[$0.column].isArray })
        let sources = all.filter { !$0.table.schema.properties[$0.column].isArray }
        guard !sources.isEmpty else { return }
        // The index entries still buffered are written first, so the indexes are complete.
        try flushIndexEntries()
        let txn = view.transaction
        let removedSet = removed.map(Set.init)
        for (source, column) in sources {
            guard let index = source.indexes[column] else { continue }
            // The objects linking to a removed one, collected before anything changes.
            var linking = Set<ObjectKey>()
            let cursor = try UnsafeCursor(transaction: txn, dbi: index.dbi)
            if let removed {
                var probe: [UInt8] = []
                for key in removed {
                    probe.removeAll(keepingCapacity: true)
                    key.withBytes { source.appendIndexKey($0, column: column, to: &probe) }
                    var entry = try probe.withUnsafeBytes { try cursor.seek(exactly: $0) }
                    while let e = entry {
                        linking.insert(ObjectKey(e.value))
                        entry = try cursor.nextValue()
                    }
                }
            } else {
                var null: [UInt8] = []
                source.appendIndexKey(nil, column: column, to: &null)
                try cursor.forEach { key, value in
                    if !key.elementsEqual(null) { linking.insert(ObjectKey(value)) }
                    return true
                }
            }
            for key in linking {
                try key.withBytes { k in
                    guard let record = try txn.get(source.database.dbi, key: k) else { return }
                    source.checkRecord(record, in: file, version: checkedVersion)
                    guard let field = source.field(record.baseAddress!, size: record.count, column: column, in: file) else { return }
                    // An index key cut short may name objects linking to another target.
                    if let removedSet, !removedSet.contains(ObjectKey(field)) { return }
                    try replaceField(of: key, record: record, in: source, storedColumn: column, with: nil)
                }
            }
        }
    }
}
