import Foundation
internal import LMDBKit
import LMDBRealmFormat

// Re-keying a class whose primary key a migration changed: its objects are stored under their
// keys, and so is every reference to them — link fields, list and map elements, its own
// lists' chunks, and the indexes and references built from those.

extension WriteSession {
    /// Stores every object of `table` under the key its primary key gives now (or, for a class
    /// that has none, the next numbers in the old order), and rewrites every reference to them
    /// in `tables` (all of the file's). Indexes and list references of the tables concerned are
    /// built again.
    /// - Throws: ``RealmError/Code/primaryKeyExists`` if two objects have one key.
    package func rekey(_ table: Table, in tables: [Table]) throws {
        try flushIndexEntries()
        let txn = view.transaction
        // The new key of each object, checked for duplicates.
        var mapping: [[UInt8]: [UInt8]] = [:]
        var records: [([UInt8], [UInt8])] = []
        var seen = Set<[UInt8]>()
        var next: UInt64 = 1
        try UnsafeCursor(transaction: txn, dbi: table.database.dbi).forEach { key, record in
            table.checkRecord(record, in: file)
            var newKey: [UInt8] = []
            if let pk = table.primaryKeyColumn {
                let field = table.field(record.baseAddress!, size: record.count, column: pk, in: file)
                KeyEncoding.append(field, type: table.schema.properties[pk].type, to: &newKey)
                if !seen.insert(newKey).inserted {
                    throw RealmError(
                        .primaryKeyExists,
                        "Migrating '\(table.className)' leaves two objects with the primary key \(describe(field, type: table.schema.properties[pk].type)): set distinct values in the migration block",
                        fileURL: file.url)
                }
            } else {
                KeyEncoding.appendBigEndian(next, to: &newKey)
                next += 1
            }
            mapping[Array(key)] = newKey
            records.append((newKey, Array(record)))
            return true
        }
        guard mapping.contains(where: { $0.key != $0.value }) else { return }
        // The objects, under their new keys.
        try writer.empty(table.database.dbi)
        records.sort { ByteOrder.compare($0.0, $1.0) < 0 }
        for (key, record) in records {
            try key.withUnsafeBytes { k in
                try record.withUnsafeBytes { _ = try writer.put(table.database.dbi, key: k, value: $0, flags: PutFlags.append.rawValue) }
            }
        }
        records.removeAll()
        // Its own lists: each chunk moves under its owner's new key.
        for list in table.lists.values {
            var chunks: [([UInt8], [UInt8])] = []
            try UnsafeCursor(transaction: txn, dbi: list.items.dbi).forEach { key, chunk in
                guard let owner = ListKey.owner(of: key), let newOwner = mapping[Array(owner)] else { return true }
                let position = key.loadUnaligned(fromByteOffset: key.count - 4, as: UInt32.self)
                var newKey = newOwner.withUnsafeBytes { ListKey.prefix($0) }
                withUnsafeBytes(of: position) { newKey.append(contentsOf: $0) }
                let resealed = newKey.withUnsafeBytes { ListChunk.sealed(ListChunk.opened(chunk), key: $0) }
                chunks.append((newKey, resealed))
                return true
            }
            try writer.empty(list.items.dbi)
            chunks.sort { ByteOrder.compare($0.0, $1.0) < 0 }
            for (key, chunk) in chunks {
                try key.withUnsafeBytes { k in
                    try chunk.withUnsafeBytes { _ = try writer.put(list.items.dbi, key: k, value: $0, flags: PutFlags.append.rawValue) }
                }
            }
        }
        // Every reference to its objects, in every class.
        for other in tables {
            let source = other.className == table.className ? table : other
            for (column, property) in source.schema.properties.enumerated()
            where property.type == .object && property.objectClassName == table.className {
                if let list = source.lists[column] {
                    try remapElements(of: list, through: mapping)
                } else {
                    try remapLinks(of: source, column: column, through: mapping)
                }
            }
        }
        for other in tables {
            let source = other.className == table.className ? table : other
            let concerned =
                source.className == table.className
                || source.schema.properties.contains { $0.type == .object && $0.objectClassName == table.className }
            guard concerned else { continue }
            try rebuildIndexes(of: source)
            for list in source.lists.values where list.references != nil { try rebuildReferences(of: list) }
        }
    }

    /// Rewrites the link field `column` of every object of `table` found in `mapping`.
    private func remapLinks(of table: Table, column: Int, through mapping: [[UInt8]: [UInt8]]) throws {
        var changes: [([UInt8], [UInt8])] = []
        try view.forEachObject(of: table, in: file) { key, record in
            if let field = table.field(record.baseAddress!, size: record.count, column: column, in: file), let target = mapping[Array(field)] {
                changes.append((Array(key), target))
            }
            return true
        }
        for (key, target) in changes {
            try key.withUnsafeBytes { k in try target.withUnsafeBytes { try setField(table, key: k, column: column, to: $0) } }
        }
    }

    /// Rewrites every element of `list` (a map entry's value) found in `mapping`.
    private func remapElements(of list: ListDatabases, through mapping: [[UInt8]: [UInt8]]) throws {
        let txn = view.transaction
        var rewritten: [([UInt8], [UInt8])] = []
        try UnsafeCursor(transaction: txn, dbi: list.items.dbi).forEach { key, chunk in
            var out: [UInt8] = []
            var changed = false
            ListChunk.forEach(chunk) { _, element in
                let bytes = element.map(Array.init)
                guard let target = list.target(of: bytes), let replacement = mapping[target] else {
                    ListChunk.append(bytes, to: &out)
                    return true
                }
                changed = true
                if list.isMap, let bytes, let name = MapEntry.key(of: bytes) {
                    var entry: [UInt8] = [UInt8(truncatingIfNeeded: name.utf8.count >> 8), UInt8(truncatingIfNeeded: name.utf8.count)]
                    entry.append(contentsOf: name.utf8)
                    entry.append(1)
                    entry.append(contentsOf: replacement)
                    ListChunk.append(entry, to: &out)
                } else {
                    ListChunk.append(replacement, to: &out)
                }
                return true
            }
            if changed { rewritten.append((Array(key), ListChunk.sealed(out, key: key))) }
            return true
        }
        for (key, chunk) in rewritten {
            try key.withUnsafeBytes { k in try chunk.withUnsafeBytes { _ = try writer.put(list.items.dbi, key: k, value: $0) } }
        }
    }

    /// Empties and builds again the references (target → owners) of `list` from its elements.
    private func rebuildReferences(of list: ListDatabases) throws {
        guard let references = list.references else { return }
        let txn = view.transaction
        var pairs = Set<[UInt8]>()
        var entries: [([UInt8], [UInt8])] = []
        try UnsafeCursor(transaction: txn, dbi: list.items.dbi).forEach { key, chunk in
            guard let owner = ListKey.owner(of: key).map(Array.init) else { return true }
            ListChunk.forEach(chunk) { _, element in
                if let target = list.target(of: element.map(Array.init)) {
                    let pair = [UInt8(truncatingIfNeeded: target.count >> 8), UInt8(truncatingIfNeeded: target.count)] + target + owner
                    if pairs.insert(pair).inserted { entries.append((target, owner)) }
                }
                return true
            }
            return true
        }
        try writer.empty(references.dbi)
        for (target, owner) in entries {
            try target.withUnsafeBytes { t in try owner.withUnsafeBytes { try bufferReference(references, target: t, owner: $0) } }
        }
        try flushIndexEntries()
    }
}
