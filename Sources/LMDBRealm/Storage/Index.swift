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

    /// Appends the index key of a field of stored column `column` to `out`.
    func appendIndexKey(_ field: UnsafeRawBufferPointer?, column: Int, to out: inout [UInt8]) {
        let start = out.count
        KeyEncoding.append(field, type: schema.properties[column].type, to: &out)
        let end = start + Table.maximumIndexKeyLength
        if out.count > end { out.removeLast(out.count - end) }
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

    /// Adds index entries for the object `key`: buffered, and written in key order when the
    /// write next reads or removes index entries, or commits (see ``flushIndexEntries()``).
    func addIndexEntries(_ table: Table, _ keys: [(column: Int, key: [UInt8])], key: UnsafeRawBufferPointer) throws {
        for (column, indexKey) in keys {
            pendingIndexEntries.append(dbi: table.indexes[column]!.dbi, key: indexKey, value: key)
        }
        if pendingIndexEntries.count >= PendingIndexEntries.flushThreshold { try flushIndexEntries() }
    }

    /// Buffers the index entries of a new object whose record is `record`, encoding each index
    /// key straight into the buffer (no allocation per object).
    func bufferIndexEntries(_ table: Table, record: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws {
        for column in table.indexedColumns {
            let field = table.field(record.baseAddress!, size: record.count, column: column, in: file)
            pendingIndexEntries.append(dbi: table.indexes[column]!.dbi, value: key) { out in
                table.appendIndexKey(field, column: column, to: &out)
            }
        }
        if pendingIndexEntries.count >= PendingIndexEntries.flushThreshold { try flushIndexEntries() }
    }

    /// Writes the buffered index entries, sorted, so each index is written in key order:
    /// random-order inserts into a B-tree cost 2-5 times more (page splits, cache misses).
    func flushIndexEntries() throws {
        guard !pendingIndexEntries.isEmpty else { return }
        let txn = writeTxn
        // Values read earlier in this write may be stale after these changes.
        generation &+= 1
        // Entries come sorted per index. Once an entry sorts after everything the index holds,
        // the rest are appended (MDB_APPEND / MDB_APPENDDUP): no search, and full pages.
        var currentDBI: UInt32?
        var appending = false
        var previousKey: [UInt8] = []
        var previousValue: [UInt8] = []
        try pendingIndexEntries.drain { dbi, key, value in
            if dbi != currentDBI {
                currentDBI = dbi
                appending = false
                let cursor = try Cursor(transaction: txn, dbi: dbi)
                if let last = try cursor.last() {
                    let c = ByteOrder.compare(key, last.key)
                    appending = c > 0 || (c == 0 && ByteOrder.compare(value, last.value) > 0)
                    previousKey = Array(last.key)
                    previousValue = Array(last.value)
                } else {
                    appending = true
                    previousKey = []
                    previousValue = []
                }
            }
            if appending {
                let sameKey = key.elementsEqual(previousKey)
                if sameKey && value.elementsEqual(previousValue) { return }  // the same entry twice
                _ = try txn.put(dbi, key: key, value: value, flags: sameKey ? PutFlags.appendDuplicate.rawValue : PutFlags.append.rawValue)
                if !sameKey { previousKey = Array(key) }
                previousValue = Array(value)
            } else {
                _ = try txn.put(dbi, key: key, value: value, flags: PutFlags.noDuplicateData.rawValue)
            }
        }
    }

    /// Removes index entries of the object `key`.
    func removeIndexEntries(_ table: Table, _ keys: [(column: Int, key: [UInt8])], key: UnsafeRawBufferPointer) throws {
        try flushIndexEntries()
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
        let txn = queryTransaction()
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

/// Index entries added in a write and not yet written: one byte buffer and a table of
/// (database, key, value) slices into it, each with its first 16 key and value bytes as
/// big-endian integers so that sorting rarely needs to look at the bytes themselves.
struct PendingIndexEntries {
    /// Past this many entries, a write flushes early to bound its memory.
    static let flushThreshold = 1 << 20

    private struct Entry {
        var dbi: UInt32
        var key: Range<Int>
        var value: Range<Int>
        var k0: UInt64, k1: UInt64, v0: UInt64, v1: UInt64
    }

    private var bytes: [UInt8] = []
    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The first 16 bytes of `b` as two big-endian integers, zero-padded.
    @inline(__always)
    private static func prefix(_ b: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var raw: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b.prefix(16))) }
        return (UInt64(bigEndian: raw.0), UInt64(bigEndian: raw.1))
    }

    mutating func append(dbi: UInt32, key: [UInt8], value: UnsafeRawBufferPointer) {
        append(dbi: dbi, value: value) { $0.append(contentsOf: key) }
    }

    /// Appends an entry whose key `writeKey` appends to the end of the buffer; it must not
    /// change the bytes already there.
    mutating func append(dbi: UInt32, value: UnsafeRawBufferPointer, writeKey: (inout [UInt8]) -> Void) {
        let start = bytes.count
        writeKey(&bytes)
        let k = start..<bytes.count
        let v = bytes.count..<(bytes.count + value.count)
        bytes.append(contentsOf: value)
        let kp = bytes.withUnsafeBytes { Self.prefix(UnsafeRawBufferPointer(rebasing: $0[k])) }
        let vp = Self.prefix(value)
        entries.append(Entry(dbi: dbi, key: k, value: v, k0: kp.0, k1: kp.1, v0: vp.0, v1: vp.1))
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }

    /// Hands every entry to `put` in (database, key, value) order, then empties the buffer.
    mutating func drain(_ put: (UInt32, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        defer { removeAll() }
        try bytes.withUnsafeBytes { all in
            func slice(_ r: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: all[r]) }
            try entries.withUnsafeBufferPointer { entries in
                // Sorts positions (4 bytes each), not the entries themselves.
                var order = (0..<UInt32(entries.count)).map { $0 }
                order.sort { i, j in
                    let a = entries[Int(i)]
                    let b = entries[Int(j)]
                    if a.dbi != b.dbi { return a.dbi < b.dbi }
                    if a.k0 != b.k0 { return a.k0 < b.k0 }
                    if a.k1 != b.k1 { return a.k1 < b.k1 }
                    if a.key.count > 16 || b.key.count > 16 || a.key.count != b.key.count {
                        let c = ByteOrder.compare(slice(a.key), slice(b.key))
                        if c != 0 { return c < 0 }
                    }
                    if a.v0 != b.v0 { return a.v0 < b.v0 }
                    if a.v1 != b.v1 { return a.v1 < b.v1 }
                    return ByteOrder.compare(slice(a.value), slice(b.value)) < 0
                }
                for i in order {
                    let e = entries[Int(i)]
                    try put(e.dbi, slice(e.key), slice(e.value))
                }
            }
        }
    }
}
