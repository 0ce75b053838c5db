internal import LMDBKit

/// Secondary indexes: one LMDB `duplicateSort` database per indexed property, whose keys are
/// the order-preserving encodings of the property's values (see ``KeyEncoding``) and whose
/// values are the keys of the objects holding them.
///
/// One index answers equality (`mdb_cursor_count` counts it without reading a record), `IN`,
/// ranges, `BEGINSWITH` on strings, and sorting. It is maintained in the same LMDB transaction
/// as the records, so a cancelled write leaves both as they were.
extension Table {
    /// The LMDB database name of the index of `property` of `className`.
    static func indexDatabaseName(className: String, property: String) -> String {
        "index_" + className + "_" + property
    }

    /// Index keys are cut to this many bytes (LMDB keys hold at most 511); a probe as long as
    /// this may match longer values too, so lookups check candidates against their records.
    static let maximumIndexKeyLength = 480

    /// The index key of a field of stored column `column`.
    func appendIndexKey(_ field: UnsafeRawBufferPointer?, column: Int, to out: inout [UInt8]) {
        KeyEncoding.append(field, type: schema.properties[column].type, to: &out)
        if out.count > Table.maximumIndexKeyLength { out.removeLast(out.count - Table.maximumIndexKeyLength) }
    }

    /// Opens (or, with `create`, creates) the index databases of every indexed property of
    /// `schema`.
    static func openIndexes(
        of schema: ObjectSchema, _ open: (String, Bool) throws -> Database?
    ) throws -> [Int: Database] {
        var indexes: [Int: Database] = [:]
        for (column, property) in schema.properties.enumerated() where property.isIndexed && !property.isPrimary {
            if let db = try open(indexDatabaseName(className: schema.className, property: property.name), true) {
                indexes[column] = db
            }
        }
        return indexes
    }
}

extension Realm {
    /// The index keys of an object's record, one per indexed column, copied out of the record
    /// (values read from LMDB are only valid until the next change).
    func indexKeys(_ table: Table, record: UnsafeRawBufferPointer) -> [(column: Int, key: [UInt8])] {
        table.indexedColumns.map { column in
            var key: [UInt8] = []
            table.appendIndexKey(
                table.field(record.baseAddress!, size: record.count, column: column, in: file), column: column, to: &key)
            return (column, key)
        }
    }

    /// Adds index entries for the object `key`.
    func addIndexEntries(_ table: Table, _ keys: [(column: Int, key: [UInt8])], key: UnsafeRawBufferPointer) throws {
        let txn = writeTxn
        for (column, indexKey) in keys {
            try indexKey.withUnsafeBytes { k in
                _ = try txn.put(table.indexes[column]!.dbi, key: k, value: key, flags: PutFlags.noDuplicateData.rawValue)
            }
        }
    }

    /// Removes index entries of the object `key`.
    func removeIndexEntries(_ table: Table, _ keys: [(column: Int, key: [UInt8])], key: UnsafeRawBufferPointer) throws {
        let txn = writeTxn
        for (column, indexKey) in keys {
            try indexKey.withUnsafeBytes { k in _ = try txn.delete(table.indexes[column]!.dbi, key: k, value: key) }
        }
    }

    /// Writes the index entries of every object of `table` into the index of `column`.
    func buildIndex(_ index: Database, of table: Table, column: Int) throws {
        let txn = writeTxn
        var entries: [([UInt8], [UInt8])] = []
        let cursor = try Cursor(transaction: txn, dbi: table.database.dbi)
        try cursor.forEach { key, record in
            table.checkRecord(record, in: file)
            var indexKey: [UInt8] = []
            table.appendIndexKey(table.field(record.baseAddress!, size: record.count, column: column, in: file), column: column, to: &indexKey)
            entries.append((indexKey, Array(key)))
            return true
        }
        // Sorted, so the index is written in key order: no page splits in the middle.
        entries.sort { $0.0.lexicographicallyPrecedes($1.0) || ($0.0 == $1.0 && $0.1.lexicographicallyPrecedes($1.1)) }
        for (k, v) in entries {
            try k.withUnsafeBytes { k in try v.withUnsafeBytes { v in _ = try txn.put(index.dbi, key: k, value: v) } }
        }
    }
}

extension Realm {
    /// Walks every table and every index of the file and lists each way they disagree: an
    /// index entry with no object, an object missing from an index, an entry under the wrong
    /// value. Empty when the file is consistent.
    @_spi(Testing) public func indexProblems() -> [String] {
        checkThread()
        var problems: [String] = []
        let txn = readTransaction()
        do {
            for table in try allTables() {
                for (column, index) in table.indexes.sorted(by: { $0.key < $1.key }) {
                    let name = "\(table.className).\(table.schema.properties[column].name)"
                    var expected = Set<[UInt8]>()
                    let records = try Cursor(transaction: txn, dbi: table.database.dbi)
                    try records.forEach { key, record in
                        table.checkRecord(record, in: file)
                        var entry: [UInt8] = []
                        table.appendIndexKey(
                            table.field(record.baseAddress!, size: record.count, column: column, in: file), column: column, to: &entry)
                        withUnsafeBytes(of: UInt32(entry.count)) { entry.insert(contentsOf: $0, at: 0) }
                        entry.append(contentsOf: key)
                        expected.insert(entry)
                        return true
                    }
                    var actual = Set<[UInt8]>()
                    let entries = try Cursor(transaction: txn, dbi: index.dbi)
                    try entries.forEach { key, objectKey in
                        var entry = Array(key)
                        withUnsafeBytes(of: UInt32(entry.count)) { entry.insert(contentsOf: $0, at: 0) }
                        entry.append(contentsOf: objectKey)
                        if !actual.insert(entry).inserted { problems.append("\(name): a duplicate index entry") }
                        return true
                    }
                    let missing = expected.subtracting(actual).count
                    let extra = actual.subtracting(expected).count
                    if missing > 0 { problems.append("\(name): \(missing) object(s) missing from the index") }
                    if extra > 0 { problems.append("\(name): \(extra) index entr(ies) with no matching object") }
                }
            }
        } catch {
            problems.append("reading failed: \(error)")
        }
        return problems
    }
}
