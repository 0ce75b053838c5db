import Foundation
import LMDBKit
package import LMDBRealmFormat

// What a write does to objects: records stored, replaced and removed, with their keys.
extension WriteSession {
    /// Stores a record given as its fields in stored column order (`nil`: null; a list
    /// column's is always `nil`), with its index entries, as ``insert(_:binding:update:)``
    /// stores an object's.
    package func insert(fields: [[UInt8]?], into table: Table, update: UpdatePolicy) throws -> ObjectKey {
        let recordWriter = buffers.record
        recordWriter.begin(columns: table.columnCount)
        for field in fields { field.withUnsafeBytesIfPresent { recordWriter.append($0) } }
        return try insertBuiltRecord(into: table, update: update)
    }

    /// Stores the record in the record buffer under its key, with its index entries.
    package func insertBuiltRecord(into table: Table, update: UpdatePolicy) throws -> ObjectKey {
        let recordWriter = buffers.record
        // The key: the encoded primary key, or the next auto-assigned number.
        // The table's write state is used in place: a local copy would share `lastKey`'s
        // buffer and make every update of it allocate.
        if table.writeState.writeID != id { table.writeState = WriteTableState(writeID: id) }
        buffers.key.removeAll(keepingCapacity: true)
        if let pk = table.primaryKeyColumn {
            // Encoded from the record just written, not read from the object a second time.
            let type = table.schema.properties[pk].type
            recordWriter.withRecord { record in
                KeyEncoding.append(table.field(record.baseAddress!, size: record.count, column: pk, in: file), type: type, to: &buffers.key)
            }
            if buffers.key.count > file.environment.maxKeySize {
                throw Refusal.keyTooLong(className: table.className, bytes: buffers.key.count - 1, maximum: file.environment.maxKeySize - 1)
            }
        } else {
            if table.writeState.nextAutoKey == nil { table.writeState.nextAutoKey = try lastAutoKey(of: table) &+ 1 }
            KeyEncoding.appendBigEndian(table.writeState.nextAutoKey!, to: &buffers.key)
            table.writeState.nextAutoKey! &+= 1
        }

        // Keys arriving in ascending order are appended (MDB_APPEND): no page splits in the
        // middle of the tree, and full pages.
        if table.writeState.lastKey == nil { table.writeState.lastKey = try lastKey(of: table) ?? [] }
        let appending = ByteOrder.compare(buffers.key, table.writeState.lastKey!) > 0
        var flags = appending ? PutFlags.append.rawValue : 0
        if update == .error { flags |= PutFlags.noOverwrite.rawValue }
        let txn = view.transaction
        var replaced = false
        // Replacing a stored object: its old index entries go first.
        if update != .error && !appending && (table.hasIndexes || changeLog != nil) {
            let old = try buffers.key.withUnsafeBytes { try txn.get(table.database.dbi, key: $0) }
            if let old {
                table.checkRecord(old, in: file, version: checkedVersion)
                replaced = true
                if let changeLog {
                    let mask = recordWriter.withRecord { changedColumns(table, old: old, new: $0) }
                    changeLog.changes(for: table).modified[ObjectKey(buffers.key), default: 0] |= mask
                }
                if table.hasIndexes {
                    try buffers.key.withUnsafeBytes { key in try removeIndexEntries(table, indexKeys(table, record: old, objectKey: key), key: key) }
                }
            }
        }
        let stored = try recordWriter.withRecord { record in
            try buffers.key.withUnsafeBytes { key in try writer.put(table.database.dbi, key: key, value: record, flags: flags) }
        }
        guard stored else {
            let pk = table.primaryKeyColumn!
            let shown = recordWriter.withRecord { record in
                describe(table.field(record.baseAddress!, size: record.count, column: pk, in: file), type: table.schema.properties[pk].type)
            }
            throw Refusal.primaryKeyExists(className: table.className, key: shown)
        }
        if table.hasIndexes {
            try recordWriter.withRecord { record in
                try buffers.key.withUnsafeBytes { try bufferIndexEntries(table, record: record, key: $0) }
            }
        }
        if appending {
            table.writeState.lastKey!.removeAll(keepingCapacity: true)
            table.writeState.lastKey!.append(contentsOf: buffers.key)
        }
        let key = ObjectKey(buffers.key)
        if let changeLog, !replaced { changeLog.changes(for: table).inserted.append(key) }
        return key
    }

    /// The stored columns whose values differ between two records of `table`.
    func changedColumns(_ table: Table, old: UnsafeRawBufferPointer, new: UnsafeRawBufferPointer) -> UInt64 {
        var mask: UInt64 = 0
        for c in 0..<table.columnCount {
            let a = table.field(old.baseAddress!, size: old.count, column: c, in: file)
            let b = table.field(new.baseAddress!, size: new.count, column: c, in: file)
            if !ByteOrder.equal(a, b) { mask |= ChangeLog.bit(c) }
        }
        return mask
    }

    /// The largest key stored in `table`, seen by the write.
    func lastKey(of table: Table) throws -> [UInt8]? {
        try view.withLastObject(of: table) { key, _ in Array(key) }
    }

    func lastAutoKey(of table: Table) throws -> UInt64 {
        guard let key = try lastKey(of: table), key.count == 8 else { return 0 }
        return key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// Rewrites the record `record` of the object `key` of `table` with `value` in
    /// `storedColumn`, and its index entry if the column is indexed.
    package func replaceField(
        of key: ObjectKey, record: UnsafeRawBufferPointer, in table: Table, storedColumn: Int, with value: UnsafeRawBufferPointer?
    ) throws {
        let columns = table.columnCount
        let fixed = table.fixedSizes[storedColumn]
        if let value, fixed > 0, value.count != Int(fixed) {
            fatalError("A value of \(value.count) bytes does not fit column \(storedColumn) of '\(table.className)'")
        }
        let recordWriter = buffers.record
        recordWriter.begin(columns: columns)
        for c in 0..<columns {
            recordWriter.append(c == storedColumn ? value : table.field(record.baseAddress!, size: record.count, column: c, in: file))
        }
        // A covering index holds every column.
        let indexed = table.indexes[storedColumn] != nil || table.compoundIndexes.contains { $0.covering || $0.columns.contains(storedColumn) }
        let oldKeys = indexed ? key.withBytes { indexKeys(table, record: record, objectKey: $0, column: storedColumn) } : []
        // An embedded object replaced by another (or by nil) is deleted.
        var replacedEmbedded: (Table, ObjectKey)?
        if let old = table.field(record.baseAddress!, size: record.count, column: storedColumn, in: file),
            !ByteOrder.equal(old, value), let targets = try embeddedTargets(of: table, column: storedColumn)
        {
            replacedEmbedded = (targets, ObjectKey(old))
        }
        try recordWriter.withRecord { newRecord in
            try key.withBytes { key in _ = try writer.put(table.database.dbi, key: key, value: newRecord) }
        }
        if indexed {
            let newKeys = recordWriter.withRecord { record in key.withBytes { indexKeys(table, record: record, objectKey: $0, column: storedColumn) } }
            if !newKeys.elementsEqual(oldKeys, by: { $0.key == $1.key && $0.value == $1.value }) {
                try key.withBytes { key in
                    try removeIndexEntries(table, oldKeys, key: key)
                    try addIndexEntries(table, newKeys, key: key)
                }
            }
        }
        changeLog?.changes(for: table).modified[key, default: 0] |= ChangeLog.bit(storedColumn)
        if let (targets, old) = replacedEmbedded { try removeObjects([old], from: targets) }
    }

    /// Removes objects of `table` with their index entries: every object (`keys` nil: the
    /// table and its indexes are emptied) or those with the listed keys (keys not stored are
    /// passed over). Every deletion of objects goes through here.
    ///
    /// Links to the removed objects are set to null, unless `nullifyingLinks` is false (every
    /// table is being emptied).
    package func removeObjects(_ keys: [ObjectKey]?, from table: Table, nullifyingLinks: Bool = true) throws {
        let changes = changeLog?.changes(for: table)
        // The index entries still buffered are written first: those of the objects removed go
        // with them below.
        try flushIndexEntries()
        let txn = view.transaction
        let cascade = nullifyingLinks ? cascadeColumns(of: table) : []
        // A class whose deletion cascades is emptied object by object, so the targets are known.
        var keys = keys
        // So is a synced class: its deletions are sent object by object.
        if keys == nil, !cascade.isEmpty || (sync != nil && table.primaryKeyColumn != nil) {
            var all: [ObjectKey] = []
            try UnsafeCursor(transaction: txn, dbi: table.database.dbi).forEach { key, _ in
                all.append(ObjectKey(key))
                return true
            }
            keys = all
        }
        guard let keys else {
            try writer.empty(table.database.dbi)
            for index in table.indexes.values { try writer.empty(index.dbi) }
            for index in table.compoundIndexes { try writer.empty(index.database.dbi) }
            for list in table.lists.values {
                try writer.empty(list.items.dbi)
                if let references = list.references { try writer.empty(references.dbi) }
            }
            table.writeState = WriteTableState()
            changes?.cleared = true
            if nullifyingLinks { try nullifyLinks(to: table, removed: nil) }
            return
        }
        // Each record is found with a cursor, its index keys read from it, and it is deleted
        // where the cursor stands: one B-tree descent per object. Its index entries are removed
        // afterwards, sorted, so that each index is walked in order.
        var entries = PendingIndexEntries()
        var removed: [ObjectKey] = []
        var doomed: [(target: String, key: ObjectKey)] = []
        let cursor = try UnsafeCursor(transaction: txn, dbi: table.database.dbi)
        for key in keys {
            try key.withBytes { key in
                guard let found = try cursor.seek(exactly: key) else { return }
                removed.append(ObjectKey(key))
                let record = found.value
                table.checkRecord(record, in: file, version: checkedVersion)
                for (column, target) in cascade {
                    if let list = table.lists[column] {
                        for element in list.targets(of: try view.listElements(list, owner: key)) { doomed.append((target, ObjectKey(element))) }
                    } else if let field = table.field(record.baseAddress!, size: record.count, column: column, in: file) {
                        doomed.append((target, ObjectKey(field)))
                    }
                }
                for column in table.indexedColumns {
                    let field = table.field(record.baseAddress!, size: record.count, column: column, in: file)
                    entries.append(dbi: table.indexes[column]!.dbi, value: key) { out in
                        table.appendIndexKey(field, column: column, to: &out)
                    }
                }
                for index in table.compoundIndexes {
                    appendCompoundEntry(index, of: table, record: record, key: key, to: &entries)
                }
                try writer.deleteCurrent(of: cursor)
                changes?.deleted.append(ObjectKey(key))
            }
        }
        try entries.drain { dbi, key, value in _ = try writer.delete(dbi, key: key, value: value) }
        if !table.lists.isEmpty && !removed.isEmpty { try removeLists(of: removed, in: table) }
        if nullifyingLinks && !removed.isEmpty { try nullifyLinks(to: table, removed: removed) }
        if !doomed.isEmpty { try removeCascaded(doomed) }
    }
}
