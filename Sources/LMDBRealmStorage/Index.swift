import Foundation
package import LMDBKit
internal import CHotPaths
package import LMDBRealmFormat

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
    package static let maximumIndexKeyLength = 480

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
        for (column, property) in schema.properties.enumerated() where property.hasIndex {
            if let db = try open(indexDatabaseName(className: schema.className, property: property.name), true) {
                indexes[column] = db
            }
        }
        return indexes
    }
}

/// The index of a group of columns: one `duplicateSort` database whose keys join the columns'
/// index keys, every one but the last in a form no other key is a prefix of (see
/// ``KeyEncoding/appendPrefixFree(_:type:to:)``), so that the objects with given values of the
/// leading columns lie together, in the order of the last column.
///
/// A covering index (see `Object.coveringIndexes()`) has the same keys; each value is a
/// ``CoveringValue``: the object's key and a copy of its record.
package struct CompoundIndex {
    /// The stored columns, in the order their keys are joined.
    package let columns: [Int]
    package let database: Database
    /// The columns' property names and kinds, for the planner (read per query).
    package let names: [String]
    package let types: [PropertyType]
    /// Whether each entry holds its object's record too.
    package let covering: Bool
}

/// The value of a covering index's entry: the object's key, a copy of its record when both fit
/// in an LMDB value, and two bytes (little-endian): the key's length, with ``noRecord`` set
/// when the record was not copied.
///
/// The object key comes first, so the objects under one index key are in key order, as in any
/// other index.
package enum CoveringValue {
    static let noRecord: UInt16 = 0x8000

    /// Appends the value for the object `key` whose record is `record` to `out`; the record is
    /// left out if the value would pass `maximum` bytes.
    package static func append(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer, maximum: Int, to out: inout [UInt8]) {
        out.append(contentsOf: key)
        var trailer = UInt16(truncatingIfNeeded: key.count)
        if key.count + record.count + 2 <= maximum {
            out.append(contentsOf: record)
        } else {
            trailer |= noRecord
        }
        out.append(UInt8(truncatingIfNeeded: trailer))
        out.append(UInt8(truncatingIfNeeded: trailer >> 8))
    }

    /// The object key and record copy (`nil`: not copied) of a value; `nil` if the value is
    /// not one.
    @inline(__always)
    package static func split(_ value: UnsafeRawBufferPointer) -> (key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer?)? {
        let count = value.count
        guard count >= 3 else { return nil }
        let trailer = UInt16(value[count - 2]) | UInt16(value[count - 1]) << 8
        let keyCount = Int(trailer & ~noRecord)
        guard keyCount > 0, keyCount <= count - 2 else { return nil }
        let key = UnsafeRawBufferPointer(rebasing: value[0..<keyCount])
        if trailer & noRecord != 0 { return keyCount == count - 2 ? (key, nil) : nil }
        guard keyCount < count - 2 else { return nil }
        return (key, UnsafeRawBufferPointer(rebasing: value[keyCount..<(count - 2)]))
    }
}

extension Table {
    /// The LMDB database name of the index of the properties `names` of `className`.
    static func compoundIndexDatabaseName(className: String, properties names: [String], covering: Bool = false) -> String {
        (covering ? "covering_" : "cindex_") + className + "_" + names.joined(separator: "+")
    }

    /// Opens (or, with `create`, creates) the databases of the compound and covering indexes
    /// `schema` declares, the covering ones first (the planner takes the first that answers a
    /// query); one whose database is missing (`open` gives nil) is left out.
    static func openCompoundIndexes(of schema: ObjectSchema, _ open: (String, Bool) throws -> Database?) throws -> [CompoundIndex] {
        var indexes: [CompoundIndex] = []
        for (names, covering) in schema.coveringIndexes.map({ ($0, true) }) + schema.compoundIndexes.map({ ($0, false) }) {
            let columns = names.compactMap { name in schema.properties.firstIndex { $0.name == name } }
            guard columns.count == names.count,
                let db = try open(compoundIndexDatabaseName(className: schema.className, properties: names, covering: covering), true)
            else { continue }
            indexes.append(
                CompoundIndex(
                    columns: columns, database: db, names: names, types: columns.map { schema.properties[$0].type }, covering: covering))
        }
        return indexes
    }

    /// Appends the key of `record` in the compound index `index` to `out`, cut to the index
    /// key length.
    func appendCompoundKey(_ index: CompoundIndex, record: UnsafeRawBufferPointer, in file: StoreFile, to out: inout [UInt8]) {
        let start = out.count
        for (position, column) in index.columns.enumerated() {
            let field = field(record.baseAddress!, size: record.count, column: column, in: file)
            let type = index.types[position]
            if position == index.columns.count - 1 {
                KeyEncoding.append(field, type: type, to: &out)
            } else {
                KeyEncoding.appendPrefixFree(field, type: type, to: &out)
            }
        }
        let end = start + Table.maximumIndexKeyLength
        if out.count > end { out.removeLast(out.count - end) }
    }
}

/// Index entries added in a write and not yet written: one byte buffer and a table of
/// (database, key, value) slices into it, each with its first 16 key and value bytes as
/// big-endian integers so that sorting rarely needs to look at the bytes themselves.
package struct PendingIndexEntries {
    /// Past this many entries, a write flushes early to bound its memory.
    static let flushThreshold = 1 << 20
    /// Past this many bytes of keys and values, too (positions in the buffer are 32-bit).
    static let flushBytes = 1 << 30

    /// An entry: `lmdbrealm_pending_entry` (CHotPaths), 48 bytes, sorted in place by
    /// `lmdbrealm_sort_pending_entries`.
    private typealias Entry = lmdbrealm_pending_entry

    private var bytes: [UInt8] = []
    /// The entries, in C's table (see `lmdbrealm_pending_table`): a big write's table grows
    /// without copies. Copied before a change when shared, as an array would be.
    private var table = Table()

    /// `lmdbrealm_pending_table`, freed with its owner.
    private final class Table {
        // Unchecked: a table is changed only through the one `PendingIndexEntries` that holds
        // it alone (`unique()`), on one thread.
        @exclusivity(unchecked) package var raw = lmdbrealm_pending_table()

        deinit { lmdbrealm_pending_table_release(&raw) }

        /// Room for `minimum` entries, or the process stops, as an array's growth does.
        @inline(never)
        package func reserve(_ minimum: Int) {
            guard lmdbrealm_pending_table_reserve(&raw, minimum) == 0 else {
                fatalError("Out of memory: cannot hold \(minimum) pending index entries of a write")
            }
        }

        package func copy() -> Table {
            let other = Table()
            other.reserve(max(raw.count, 1))
            if raw.count > 0 { other.raw.base!.update(from: raw.base!, count: raw.count) }
            other.raw.count = raw.count
            return other
        }
    }

    /// Makes the table this value's own before a change.
    @inline(__always)
    private mutating func unique() {
        if !isKnownUniquelyReferenced(&table) { table = table.copy() }
    }

    @inline(__always)
    private mutating func appendEntry(_ entry: Entry) {
        unique()
        let t = table
        if t.raw.count == t.raw.capacity { t.reserve(t.raw.count + 1) }
        t.raw.base.unsafelyUnwrapped[t.raw.count] = entry
        t.raw.count += 1
    }

    package var isEmpty: Bool { table.raw.count == 0 }
    package var count: Int { table.raw.count }
    /// Whether the write should flush the entries now, to bound its memory.
    var isFull: Bool { table.raw.count >= Self.flushThreshold || bytes.count >= Self.flushBytes }

    /// The first 16 bytes of `b` as two big-endian integers, zero-padded.
    @inline(__always)
    private static func prefix(_ b: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var raw: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: b.prefix(16))) }
        return (UInt64(bigEndian: raw.0), UInt64(bigEndian: raw.1))
    }

    /// Appends an entry; a key and value of 16 bytes or fewer each (object keys: backlinks and
    /// list references) live in the entry alone, with nothing written to the byte buffer.
    @inline(__always)
    package mutating func append(dbi: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        guard key.count <= 16 && value.count <= 16 else {
            return append(dbi: dbi, value: value) { $0.append(contentsOf: key) }
        }
        let kp = Self.prefix(key)
        let vp = Self.prefix(value)
        appendEntry(Entry(
            k0: kp.0, k1: kp.1, v0: vp.0, v1: vp.1, dbi: dbi, start: 0, key_count: UInt32(truncatingIfNeeded: key.count),
            value_count: UInt32(truncatingIfNeeded: value.count)))
    }

    package mutating func append(dbi: UInt32, key: [UInt8], value: UnsafeRawBufferPointer) {
        key.withUnsafeBytes { append(dbi: dbi, key: $0, value: value) }
    }

    /// Appends an entry whose key `writeKey` appends to the end of the buffer; it must not
    /// change the bytes already there.
    package mutating func append(dbi: UInt32, value: UnsafeRawBufferPointer, writeKey: (inout [UInt8]) -> Void) {
        append(dbi: dbi, writeKey: writeKey) { $0.append(contentsOf: value) }
    }

    /// Appends an entry whose key `writeKey` and then value `writeValue` append to the end of
    /// the buffer; neither may change the bytes already there.
    package mutating func append(dbi: UInt32, writeKey: (inout [UInt8]) -> Void, writeValue: (inout [UInt8]) -> Void) {
        let start = bytes.count
        writeKey(&bytes)
        let k = start..<bytes.count
        writeValue(&bytes)
        let v = k.upperBound..<bytes.count
        let (kp, vp) = bytes.withUnsafeBytes {
            (Self.prefix(UnsafeRawBufferPointer(rebasing: $0[k])), Self.prefix(UnsafeRawBufferPointer(rebasing: $0[v])))
        }
        // A key or value is at most LMDB's key size (511 bytes), and the write flushes once the
        // buffer holds `flushBytes`: positions fit in 32 bits.
        appendEntry(Entry(
            k0: kp.0, k1: kp.1, v0: vp.0, v1: vp.1, dbi: dbi,
            start: UInt32(truncatingIfNeeded: start), key_count: UInt32(truncatingIfNeeded: k.count),
            value_count: UInt32(truncatingIfNeeded: v.count)))
    }

    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        unique()
        table.raw.count = 0
    }

    /// Past this many entries' room (3 MiB) or bytes of keys and values, a finished write's
    /// entries give their memory back rather than keep it for the realm's next write.
    package static let retainedEntries = 1 << 16
    static let retainedBytes = 4 << 20

    /// The memory the entries hold: their table's and their byte buffer's.
    package var reservedBytes: Int { table.raw.capacity * MemoryLayout<Entry>.stride + bytes.capacity }

    /// Empties the entries, giving back the memory of a big write's (up to 48 MiB of table and
    /// 1 GiB of buffer); smaller ones keep theirs for the next write.
    mutating func removeAllReleasingLarge() {
        guard table.raw.capacity > Self.retainedEntries || bytes.capacity > Self.retainedBytes else { return removeAll() }
        bytes = []
        table = Table()
    }

    /// Whether two entries have the same key (their words and length; their bytes past 16).
    @inline(__always)
    private static func sameKey(_ a: Entry, _ b: Entry, _ all: UnsafeRawBufferPointer) -> Bool {
        guard a.k0 == b.k0, a.k1 == b.k1, a.key_count == b.key_count else { return false }
        guard a.key_count > 16 else { return true }
        return memcmp(all.baseAddress! + Int(a.start), all.baseAddress! + Int(b.start), Int(a.key_count)) == 0
    }

    /// Whether two entries with the same key have the same value.
    @inline(__always)
    private static func sameValue(_ a: Entry, _ b: Entry, _ all: UnsafeRawBufferPointer) -> Bool {
        guard a.v0 == b.v0, a.v1 == b.v1, a.value_count == b.value_count else { return false }
        guard a.value_count > 16 else { return true }
        return memcmp(
            all.baseAddress! + Int(a.start + a.key_count), all.baseAddress! + Int(b.start + b.key_count), Int(a.value_count)) == 0
    }

    /// Hands every entry to `put` in (database, key, value) order, then empties the buffer.
    ///
    /// The entries themselves are sorted (in C, as 48-byte structures), not positions into
    /// them: a comparison reads two neighbouring entries instead of two anywhere in the table,
    /// and `put` walks the table in order. Keys and values of 16 bytes or fewer (object keys,
    /// most index keys) are handed out from the entry's own words, so the byte buffer is read
    /// only for longer ones.
    package mutating func drain(_ put: (UInt32, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Void) throws {
        try drainInOrder { dbi, key, value, _ in try put(dbi, key, value) }
    }

    /// How an entry drained stands to the one drained before it.
    package enum Sequel {
        /// The first of its database.
        case firstOfDatabase
        /// A key after the previous entry's, in the same database.
        case nextKey
        /// The previous entry's key with a later value.
        case nextValue
        /// The previous entry again (buffered twice).
        case repeated
    }

    /// ``drain(_:)``, telling `put` how each entry stands to the one before it, found from the
    /// entries' words (their bytes only past 16): the flush needs no copy of the previous one.
    package mutating func drainInOrder(_ put: (UInt32, UnsafeRawBufferPointer, UnsafeRawBufferPointer, Sequel) throws -> Void) throws {
        defer { removeAll() }
        unique()
        let t = table
        let entries = UnsafeBufferPointer(start: t.raw.base, count: t.raw.count)
        try bytes.withUnsafeBufferPointer { all in
            lmdbrealm_sort_pending_entries(t.raw.base, t.raw.count, all.baseAddress)
            let all = UnsafeRawBufferPointer(all)
            var keyWords: (UInt64, UInt64) = (0, 0)
            var valueWords: (UInt64, UInt64) = (0, 0)
            var previous: Entry?
            for e in entries {
                keyWords = (e.k0.bigEndian, e.k1.bigEndian)
                valueWords = (e.v0.bigEndian, e.v1.bigEndian)
                let keyCount = Int(e.key_count), valueCount = Int(e.value_count), start = Int(e.start)
                let key = { (k: UnsafeRawBufferPointer) in
                    keyCount <= 16
                        ? UnsafeRawBufferPointer(rebasing: k.prefix(keyCount)) : UnsafeRawBufferPointer(rebasing: all[start..<(start + keyCount)])
                }
                let value = { (v: UnsafeRawBufferPointer) in
                    valueCount <= 16
                        ? UnsafeRawBufferPointer(rebasing: v.prefix(valueCount))
                        : UnsafeRawBufferPointer(rebasing: all[(start + keyCount)..<(start + keyCount + valueCount)])
                }
                let sequel: Sequel
                if let p = previous, p.dbi == e.dbi {
                    if Self.sameKey(p, e, all) {
                        sequel = Self.sameValue(p, e, all) ? .repeated : .nextValue
                    } else {
                        sequel = .nextKey
                    }
                } else {
                    sequel = .firstOfDatabase
                }
                previous = e
                try withUnsafeBytes(of: &keyWords) { k in
                    try withUnsafeBytes(of: &valueWords) { v in try put(e.dbi, key(k), value(v), sequel) }
                }
            }
        }
    }
}
