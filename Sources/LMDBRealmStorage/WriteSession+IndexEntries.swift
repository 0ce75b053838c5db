import Foundation
package import LMDBKit
import LMDBRealmFormat

// Index entries: computed from records, buffered, and written in key order.
extension WriteSession {
    /// The index keys of an object's record, one per index (of every index, or of those that
    /// hold stored column `column`), with the index's database, copied out of the record
    /// (values read from LMDB are only valid until the next change).
    func indexKeys(
        _ table: Table, record: UnsafeRawBufferPointer, objectKey: UnsafeRawBufferPointer, column only: Int? = nil
    ) -> [IndexEntry] {
        var keys: [IndexEntry] = []
        for column in table.indexedColumns where only == nil || only == column {
            var key: [UInt8] = []
            table.appendIndexKey(
                table.field(record.baseAddress!, size: record.count, column: column, in: file), column: column, to: &key)
            keys.append(IndexEntry(dbi: table.indexes[column]!.dbi, key: key, value: nil))
        }
        // A covering index holds every column: a change to any changes its entry.
        for index in table.compoundIndexes where index.covering || (only.map(index.columns.contains) ?? true) {
            var key: [UInt8] = []
            table.appendCompoundKey(index, record: record, in: file, to: &key)
            var value: [UInt8]?
            if index.covering {
                value = []
                CoveringValue.append(key: objectKey, record: record, maximum: file.environment.maxKeySize, to: &value!)
            }
            keys.append(IndexEntry(dbi: index.database.dbi, key: key, value: value))
        }
        return keys
    }

    /// An index entry of one object: its index's database, its key, and its value (`nil`: the
    /// object's key; a covering index's ``CoveringValue``).
    package struct IndexEntry {
        package let dbi: UInt32
        package let key: [UInt8]
        package let value: [UInt8]?
    }

    /// Appends the entry of the object `key` whose record is `record` in the compound (or
    /// covering) index `index` to `entries`.
    func appendCompoundEntry(
        _ index: CompoundIndex, of table: Table, record: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer,
        to entries: inout PendingIndexEntries
    ) {
        if index.covering {
            let maximum = file.environment.maxKeySize
            entries.append(dbi: index.database.dbi) { out in
                table.appendCompoundKey(index, record: record, in: file, to: &out)
            } writeValue: { out in
                CoveringValue.append(key: key, record: record, maximum: maximum, to: &out)
            }
        } else {
            entries.append(dbi: index.database.dbi, value: key) { out in
                table.appendCompoundKey(index, record: record, in: file, to: &out)
            }
        }
    }

    /// Adds index entries for the object `key`: buffered, and written in key order when the
    /// write next reads or removes index entries, or commits (see ``flushIndexEntries()``).
    func addIndexEntries(_ table: Table, _ keys: [IndexEntry], key: UnsafeRawBufferPointer) throws {
        for entry in keys {
            if let value = entry.value {
                value.withUnsafeBytes { buffers.indexEntries.append(dbi: entry.dbi, key: entry.key, value: $0) }
            } else {
                buffers.indexEntries.append(dbi: entry.dbi, key: entry.key, value: key)
            }
        }
        if buffers.indexEntries.isFull { try flushIndexEntries() }
    }

    /// Buffers the index entries of a new object whose record is `record`, encoding each index
    /// key straight into the buffer (no allocation per object).
    func bufferIndexEntries(_ table: Table, record: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws {
        for column in table.indexedColumns {
            let field = table.field(record.baseAddress!, size: record.count, column: column, in: file)
            buffers.indexEntries.append(dbi: table.indexes[column]!.dbi, value: key) { out in
                table.appendIndexKey(field, column: column, to: &out)
            }
        }
        for index in table.compoundIndexes {
            appendCompoundEntry(index, of: table, record: record, key: key, to: &buffers.indexEntries)
        }
        if buffers.indexEntries.isFull { try flushIndexEntries() }
    }

    /// Buffers the entry *(target → owner)* of a list's references database, written sorted
    /// with the index entries: the targets of one write's lists come in no order.
    package func bufferReference(_ references: Database, target: UnsafeRawBufferPointer, owner: UnsafeRawBufferPointer) throws {
        buffers.indexEntries.append(dbi: references.dbi, key: target, value: owner)
        if buffers.indexEntries.isFull { try flushIndexEntries() }
    }

    /// Forgets the index entries not written yet: every index is about to be emptied.
    package func discardPendingIndexEntries() {
        buffers.indexEntries.removeAll()
    }

    /// Whether index entries wait to be written: a query that reads an index must
    /// ``flushIndexEntries()`` first.
    package var hasPendingIndexEntries: Bool { !buffers.indexEntries.isEmpty }

    /// Writes the buffered index entries, sorted, so each index is written in key order:
    /// random-order inserts into a B-tree cost 2-5 times more (page splits, cache misses).
    package func flushIndexEntries() throws {
        guard !buffers.indexEntries.isEmpty else { return }
        let txn = view.transaction
        // Entries come sorted per index. Once an entry sorts after everything the index holds,
        // the rest are appended (MDB_APPEND / MDB_APPENDDUP): no search, and full pages.
        // One cursor per index: LMDB looks for the next key on the cursor's page before it
        // descends from the root, and the entries come sorted.
        var cursor: UnsafeCursor?
        var appending = false
        try writer.batch { batch in try flushIndexEntries(txn, cursor: &cursor, appending: &appending, batch) }
    }

    /// ``flushIndexEntries()``'s walk of the buffered entries, each written through `batch`.
    private func flushIndexEntries(_ txn: UnsafeTransaction, cursor: inout UnsafeCursor?, appending: inout Bool, _ batch: StoreWriter.Batch) throws {
        try buffers.indexEntries.drainInOrder { dbi, key, value, sequel in
            let sameKey: Bool
            switch sequel {
            case .firstOfDatabase:
                appending = false
                cursor = try UnsafeCursor(transaction: txn, dbi: dbi)
                if let last = try cursor!.last() {
                    let c = ByteOrder.compare(key, last.key)
                    appending = c > 0 || (c == 0 && ByteOrder.compare(value, last.value) > 0)
                    sameKey = c == 0
                } else {
                    appending = true
                    sameKey = false
                }
            case .repeated: return  // the same entry twice
            case .nextValue: sameKey = true
            case .nextKey: sameKey = false
            }
            if appending {
                _ = try batch.insert(value, at: cursor!, forKey: key, flags: sameKey ? .appendDuplicate : .append)
            } else {
                _ = try batch.insert(value, at: cursor!, forKey: key, flags: .noDuplicateData)
            }
        }
    }

    /// Removes index entries of the object `key`.
    func removeIndexEntries(_ table: Table, _ keys: [IndexEntry], key: UnsafeRawBufferPointer) throws {
        try flushIndexEntries()
        for entry in keys {
            try entry.key.withUnsafeBytes { k in
                if let value = entry.value {
                    _ = try value.withUnsafeBytes { try writer.delete(entry.dbi, key: k, value: $0) }
                } else {
                    _ = try writer.delete(entry.dbi, key: k, value: key)
                }
            }
        }
    }

    /// Writes the entries of every object of `table` into the compound (or covering) index
    /// `index`.
    func buildIndex(_ index: CompoundIndex, of table: Table) throws {
        let maximum = file.environment.maxKeySize
        let value: ((UnsafeRawBufferPointer, UnsafeRawBufferPointer, inout [UInt8]) -> Void)? =
            index.covering ? { key, record, out in CoveringValue.append(key: key, record: record, maximum: maximum, to: &out) } : nil
        try buildIndex(index.database, of: table, indexKey: { record, out in table.appendCompoundKey(index, record: record, in: file, to: &out) }, value: value)
    }

    /// Writes the index entries of every object of `table` into the index of `column`.
    func buildIndex(_ index: Database, of table: Table, column: Int) throws {
        try buildIndex(index, of: table) { record, out in
            table.appendIndexKey(table.field(record.baseAddress!, size: record.count, column: column, in: file), column: column, to: &out)
        }
    }

    /// Writes the index entries of every object of `table` into `index`, each under the key
    /// `indexKey` appends for its record.
    func buildIndex(
        _ index: Database, of table: Table, indexKey appendKey: (UnsafeRawBufferPointer, inout [UInt8]) -> Void,
        value appendValue: ((_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer, inout [UInt8]) -> Void)? = nil
    ) throws {
        let txn = view.transaction
        var entries: [([UInt8], [UInt8])] = []
        let cursor = try UnsafeCursor(transaction: txn, dbi: table.database.dbi)
        try cursor.forEach { key, record in
            table.checkRecord(record, in: file, version: checkedVersion)
            var indexKey: [UInt8] = []
            appendKey(record, &indexKey)
            if let appendValue {
                var value: [UInt8] = []
                appendValue(key, record, &value)
                entries.append((indexKey, value))
            } else {
                entries.append((indexKey, Array(key)))
            }
            return true
        }
        // Sorted, so the index is written in key order: no page splits in the middle.
        entries.sort { ByteOrder.compare($0.0, $1.0) < 0 || ($0.0 == $1.0 && ByteOrder.compare($0.1, $1.1) < 0) }
        for (k, v) in entries {
            try k.withUnsafeBytes { k in try v.withUnsafeBytes { v in _ = try writer.put(index.dbi, key: k, value: v) } }
        }
    }
}
