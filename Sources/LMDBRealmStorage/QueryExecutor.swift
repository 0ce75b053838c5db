import CHotPaths
import Foundation
internal import LMDBKit
package import LMDBRealmFormat

/// Runs a ``QueryPlan`` over one snapshot: walks the access path and hands every candidate that
/// passes the filter to a closure, as its key and record straight from the map (valid until
/// the snapshot changes).
///
/// A class, not a struct: its walks' closures capture it whole, and each copy of a struct would
/// count a reference to the realm, the table and the file — all three weakly referenced
/// elsewhere, so every such count takes the runtime's slow path, dozens of times a query. A
/// class is counted once, on the fast path.
package final class QueryExecutor {
    // unowned(unsafe): an executor lives while its realm (the reader) runs a query, or in the
    // realm's own cache of the last one; it is never kept past the realm.
    package unowned(unsafe) let reader: any StoreReader
    package let table: Table
    package let view: StoreView
    let file: StoreFile
    private var txn: UnsafeTransaction { view.transaction }

    /// The committed version the view reads (see ``Table/checkedVersion``).
    let checkedVersion: Int
    /// The index entry a record stands for, made again to check an entry (kept: one
    /// allocation a query, not one an entry).
    private var expectedEntry: [UInt8] = []

    package init(reader: any StoreReader, table: Table, view: StoreView) {
        self.reader = reader
        self.table = table
        self.view = view
        file = reader.file
        checkedVersion = view.checkedVersion
    }

    package typealias Visit = (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> Bool

    /// How many records a full scan reads ahead of the ones it visits.
    static let scanBatchSize = 256
    /// How many records ahead of the one visited a full scan prefetches.
    static let prefetchDistance = 8

    /// Calls `body` with each matching object in the access path's order until it returns false.
    ///
    /// With `records` false, a walk that finds its objects in an index and has no filter to
    /// test hands over their keys alone, each with an empty record (a `nil` base address),
    /// instead of looking every record up: for a caller that may never read them. (A covering
    /// index's copies, free to hand over, come all the same.)
    package func forEach(_ plan: QueryPlan, records: Bool = true, _ body: Visit) {
        let keysOnly = !records && plan.filter == nil
        do {
            var whole = true
            try walk(plan, keysOnly: keysOnly) { key, record in
                if keysOnly && record.baseAddress == nil { return body(key, record) }
                table.checkRecord(record, in: file, version: checkedVersion)
                if let filter = plan.filter, !filter(key, record) { return true }
                whole = body(key, record)
                return whole
            }
            // A full scan that went to the end checked every record.
            if whole, case .fullScan = plan.access, !view.isWrite { table.markChecked(in: checkedVersion) }
        } catch {
            reader.cannotRead("objects of '\(table.className)'", error)
        }
    }

    /// The count of a lone equality or `IN` on an index, from the index alone (what
    /// ``count(_:)`` answers for such a plan), without an executor: each is an object on the
    /// heap, and this is the count a sectioned screen asks for once per section.
    /// - Returns: `nil` for any other plan, and when checksums are checked (counting entries
    ///   trusts them; the walk of ``count(_:)`` checks each record).
    package static func indexCount(_ plan: QueryPlan, in view: StoreView, reader: any StoreReader) -> Int? {
        guard plan.countFromIndex, !reader.file.verifiesChecksums, case .indexKeys(let column, let keys) = plan.access else { return nil }
        do {
            let cursor = try UnsafeCursor(transaction: view.transaction, dbi: plan.table.indexes[column]!.dbi)
            var total = 0
            for key in keys {
                if try key.withUnsafeBytes({ try cursor.seek(exactly: $0) }) != nil { total += try cursor.valueCount() }
            }
            return total
        } catch {
            reader.cannotRead("the index of '\(plan.table.className)'", error)
        }
    }

    /// The number of matching objects, from the index alone when the plan allows.
    package func count(_ plan: QueryPlan) -> Int {
        if plan.countFromIndex, case .backlinks(let column, let targets) = plan.access {
            // One target, or the targets of a to-one link: each object counts once.
            var total = 0
            var failure: (any Error)?
            func add(_ target: UnsafeRawBufferPointer) -> Bool {
                do {
                    total += try view.backlinkCount(from: table, column: column, to: target, file: file)
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
            switch targets {
            case .keys(let keys): for key in keys where !key.withUnsafeBytes(add) { break }
            case .query(let inner):
                QueryExecutor(reader: reader, table: inner.table, view: view).forEach(inner, records: false) { key, _ in add(key) }
            }
            if let failure { reader.cannotRead("the links of '\(table.className)'", failure) }
            return total
        }
        if let n = Self.indexCount(plan, in: view, reader: reader) { return n }
        if case .fullScan = plan.access, plan.filter == nil {
            do {
                return try view.count(of: table)
            } catch {
                reader.cannotRead("objects of '\(table.className)'", error)
            }
        }
        var n = 0
        if case .fullScan = plan.access, let filter = plan.filter {
            // The common unindexed count, without forEach's layers around each record.
            do {
                let version = checkedVersion
                try scanTable(prefetching: plan.filterFieldPosition) { key, record in
                    // Every record, the rejected ones too: a flipped bit can turn a match into
                    // a non-match.
                    table.checkRecord(record, in: file, version: version)
                    if filter(key, record) { n += 1 }
                    return true
                }
                if !view.isWrite { table.markChecked(in: version) }
            } catch {
                reader.cannotRead("objects of '\(table.className)'", error)
            }
            return n
        }
        forEach(plan) { _, _ in
            n += 1
            return true
        }
        return n
    }

    // MARK: - Access paths

    /// Walks the access path; with `keysOnly`, objects found in an index are visited without
    /// their records.
    private func walk(_ plan: QueryPlan, keysOnly: Bool, _ visit: Visit) throws {
        let tableDBI = table.database.dbi
        switch plan.access {
        case .fullScan:
            try scanTable(prefetching: plan.filterFieldPosition, visit)

        case .primaryKeys(let keys):
            for key in keys {
                let found = try key.withUnsafeBytes { try txn.get(tableDBI, key: $0) }
                if let found, !key.withUnsafeBytes({ visit($0, found) }) { return }
            }

        case .primaryKeyRange(let lower, let upper):
            let cursor = try UnsafeCursor(transaction: txn, dbi: tableDBI)
            var entry = try lower.map { l in try l.withUnsafeBytes { try cursor.seek(atLeast: $0) } } ?? cursor.first()
            while let e = entry {
                if let upper, ByteOrder.compare(e.key, upper) > 0 { return }
                guard visit(e.key, e.value) else { return }
                entry = try cursor.next()
            }

        case .indexKeys(let column, let keys):
            let cursor = try UnsafeCursor(transaction: txn, dbi: table.indexes[column]!.dbi)
            let checked = checkedEntries(.column(column))
            for key in keys {
                var entry = try key.withUnsafeBytes { try cursor.seek(exactly: $0) }
                while let e = entry {
                    guard try visitObject(e.value, keysOnly, visit, entry: e.key, checked) else { return }
                    entry = try cursor.nextValue()
                }
            }

        case .indexRange(let column, let lower, let upper):
            let cursor = try UnsafeCursor(transaction: txn, dbi: table.indexes[column]!.dbi)
            let checked = checkedEntries(.column(column))
            var entry = try lower.map { l in try l.withUnsafeBytes { try cursor.seek(atLeast: $0) } } ?? cursor.first()
            while let e = entry {
                if let upper, ByteOrder.compare(e.key, upper) > 0, !isCutPrefix(upper, of: e.key) { return }
                guard try visitObject(e.value, keysOnly, visit, entry: e.key, checked) else { return }
                entry = try cursor.next()
            }

        case .indexPrefix(let column, let prefix):
            let cursor = try UnsafeCursor(transaction: txn, dbi: table.indexes[column]!.dbi)
            let checked = checkedEntries(.column(column))
            var entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let e = entry, e.key.count >= prefix.count,
                ByteOrder.compare(UnsafeRawBufferPointer(rebasing: e.key.prefix(prefix.count)), prefix) == 0
            {
                guard try visitObject(e.value, keysOnly, visit, entry: e.key, checked) else { return }
                entry = try cursor.next()
            }

        case .ordered(nil, let ascending):
            let cursor = try UnsafeCursor(transaction: txn, dbi: tableDBI)
            var entry = try ascending ? cursor.first() : cursor.last()
            while let e = entry {
                guard visit(e.key, e.value) else { return }
                entry = try ascending ? cursor.next() : cursor.previous()
            }

        case .ordered(let column?, let ascending):
            try walkIndexInOrder(
                table.indexes[column]!, column: column, ascending: ascending, keysOnly: keysOnly, checked: checkedEntries(.column(column)), visit)

        case .compound(let i, let prefix, let ascending):
            let index = table.compoundIndexes[i]
            try walkIndexInOrder(
                index.database, column: index.columns.last!, prefix: prefix, ascending: ascending, keysOnly: keysOnly,
                checked: checkedEntries(.compound(index)), covering: index.covering, visit)

        case .backlinks(let column, let targets):
            let keys: [[UInt8]]
            switch targets {
            case .keys(let given): keys = given
            case .query(let inner):
                var found: [[UInt8]] = []
                QueryExecutor(reader: reader, table: inner.table, view: view).forEach(inner, records: false) { key, _ in
                    found.append(Array(key))
                    return true
                }
                keys = found
            }
            if keys.count == 1 {
                var failure: (any Error)?
                try keys[0].withUnsafeBytes { target in
                    try view.forEachBacklink(from: table, column: column, to: target, file: file) { owner in
                        do {
                            return try visitObject(owner, keysOnly, visit)
                        } catch {
                            failure = error
                            return false
                        }
                    }
                }
                if let failure { throw failure }
                return
            }
            // Several targets may share owners: each is visited once, in key order.
            var owners = Set<[UInt8]>()
            for key in keys {
                try key.withUnsafeBytes { target in
                    try view.forEachBacklink(from: table, column: column, to: target, file: file) { owner in
                        owners.insert(Array(owner))
                        return true
                    }
                }
            }
            for owner in owners.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                guard try owner.withUnsafeBytes({ try visitObject($0, keysOnly, visit) }) else { return }
            }
        }
    }

    /// Visits every record of the table in key order, a batch at a time: the cursor's steps run
    /// back to back, so the processor overlaps the cache misses of one record's node with the
    /// next ones' instead of waiting for each between two visits; and while testing one record
    /// it starts loading the field the filter reads of one a few places ahead, whose cache line
    /// the cursor's step may not have touched.
    @inline(__always)
    private func scanTable(prefetching field: FieldPosition?, _ visit: Visit) throws {
        let cursor = try UnsafeCursor(transaction: txn, dbi: table.database.dbi)
        var batch = ContiguousArray<(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer)>()
        batch.reserveCapacity(Self.scanBatchSize)
        var entry = try cursor.first()
        while entry != nil {
            batch.removeAll(keepingCapacity: true)
            while let e = entry, batch.count < Self.scanBatchSize {
                batch.append((e.key, e.value))
                entry = try cursor.next()
            }
            let count = batch.count
            for i in 0..<count {
                if let field, i + Self.prefetchDistance < count,
                    let ahead = field.address(in: batch[i + Self.prefetchDistance].record)
                {
                    lmdbrealm_prefetch(ahead)
                }
                let e = batch[i]
                guard visit(e.key, e.record) else { return }
            }
        }
    }

    /// Whether `key` is a full-length index key cut from a value that `bound` may equal.
    private func isCutPrefix(_ bound: [UInt8], of key: UnsafeRawBufferPointer) -> Bool {
        bound.count == Table.maximumIndexKeyLength && key.count == Table.maximumIndexKeyLength
            && ByteOrder.compare(key, bound) == 0
    }

    /// Looks up the object `key` found in an index and visits it; with `keysOnly`, visits its
    /// key alone. With `checked`, the index entry `entry` that named it is checked against its
    /// record first (and the record handed over).
    @inline(__always)
    private func visitObject(
        _ key: UnsafeRawBufferPointer, _ keysOnly: Bool, _ visit: Visit, entry: UnsafeRawBufferPointer? = nil, _ checked: IndexedColumns? = nil,
        copy: UnsafeRawBufferPointer? = nil
    ) throws -> Bool {
        if let checked, let entry {
            let record = try copy ?? record(of: key)
            try check(entry, against: record, checked)
            return visit(key, record)
        }
        // A copy costs nothing to hand over, even to a caller that may not read it.
        if let copy { return visit(key, copy) }
        return keysOnly ? visit(key, UnsafeRawBufferPointer(start: nil, count: 0)) : visit(key, try record(of: key))
    }

    /// The object key an index entry's value names and, in a covering index, the copy of its
    /// record the value holds (`nil`: none, look it up).
    @inline(__always)
    private func object(
        in value: UnsafeRawBufferPointer, covering: Bool
    ) throws -> (key: UnsafeRawBufferPointer, copy: UnsafeRawBufferPointer?) {
        guard covering else { return (value, nil) }
        guard let (key, copy) = CoveringValue.split(value) else {
            throw DamagedValue(description: "an entry of a covering index of '\(table.className)' is damaged: its value is not an object key and record")
        }
        return (key, copy)
    }

    /// What an index's keys are made of.
    package enum IndexedColumns {
        case column(Int)
        case compound(CompoundIndex)
    }

    /// `columns` when the configuration asks for checksums to be checked, nil otherwise.
    ///
    /// An index entry has no checksum of its own: it repeats what the record it names holds,
    /// and that record's checksum is checked. So each entry a query uses is checked against the
    /// record (a flipped bit in its key or in the object key it names shows as a record whose
    /// value is not the entry's). An entry missing altogether is found by `verify` alone.
    @inline(__always)
    private func checkedEntries(_ columns: IndexedColumns) -> IndexedColumns? {
        file.verifiesChecksums ? columns : nil
    }

    /// Throws unless `record` (checked first) holds the value the index entry with key `entry`
    /// stands for.
    private func check(_ entry: UnsafeRawBufferPointer, against record: UnsafeRawBufferPointer, _ columns: IndexedColumns) throws {
        table.checkRecord(record, in: file, version: checkedVersion)
        expectedEntry.removeAll(keepingCapacity: true)
        switch columns {
        case .column(let column):
            table.appendIndexKey(table.field(record.baseAddress!, size: record.count, column: column, in: file), column: column, to: &expectedEntry)
        case .compound(let index):
            table.appendCompoundKey(index, record: record, in: file, to: &expectedEntry)
        }
        guard expectedEntry.withUnsafeBytes({ ByteOrder.compare($0, entry) }) == 0 else {
            throw DamagedValue(description: "an index entry of '\(table.className)' is damaged: it names an object that does not hold its value")
        }
    }

    /// Visits every object in the order of the index of `column`. Objects with equal values
    /// come in key order either way (a stable sort), and values cut to the index's key length
    /// are ordered by their whole value.
    ///
    /// The walk steps entry by entry (MDB_NEXT / MDB_PREV) and tells an index key with one
    /// object, the usual case, from the next entry's key: that object is visited straight from
    /// the map, with no copy and no count. Keys and records visited are pointers into the
    /// snapshot, valid for the whole walk (nothing writes while it runs).
    ///
    /// With a `prefix`, only the keys that start with it are walked (a compound index's entries
    /// for given values of its leading columns, ordered by `column`, its last).
    ///
    /// In a `covering` index, each entry's value holds its object's key and a copy of its
    /// record, visited without a lookup (see ``CoveringValue``).
    private func walkIndexInOrder(
        _ index: Database, column: Int, prefix: [UInt8]? = nil, ascending: Bool, keysOnly: Bool, checked: IndexedColumns?,
        covering: Bool = false, _ visit: Visit
    ) throws {
        let cursor = try UnsafeCursor(transaction: txn, dbi: index.dbi)
        // The objects of one index key, reused from key to key.
        var group: [(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer)] = []
        var entry: UnsafeCursor.Entry?
        if let prefix {
            if ascending {
                entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            } else if let after = Self.successor(of: prefix), try after.withUnsafeBytes({ try cursor.seek(atLeast: $0) }) != nil {
                entry = try cursor.previous()
            } else {
                entry = try cursor.last()
            }
        } else {
            entry = try ascending ? cursor.first() : cursor.last()
        }
        func inRange(_ e: UnsafeCursor.Entry?) -> UnsafeCursor.Entry? {
            guard let e, let prefix, !prefix.isEmpty else { return e }
            guard e.key.count >= prefix.count,
                prefix.withUnsafeBytes({ memcmp(e.key.baseAddress!, $0.baseAddress!, $0.count) == 0 })
            else { return nil }
            return e
        }
        entry = inRange(entry)
        while let e = entry {
            var next = inRange(try ascending ? cursor.next() : cursor.previous())
            guard let n = next, Self.sameKey(n.key, e.key) else {
                let (key, copy) = try object(in: e.value, covering: covering)
                guard try visitObject(key, keysOnly, visit, entry: e.key, checked, copy: copy) else { return }
                entry = next
                continue
            }
            // Several objects under this index key. Objects under a cut key are ordered by their
            // records, whatever `keysOnly` says.
            let cut = e.key.count == Table.maximumIndexKeyLength
            let withRecords = cut || !keysOnly || checked != nil
            func member(_ value: UnsafeRawBufferPointer) throws -> (key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) {
                let (object, copy) = try object(in: value, covering: covering)
                guard withRecords else { return (object, copy ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
                let record = try copy ?? record(of: object)
                if let checked { try check(e.key, against: record, checked) }
                return (object, record)
            }
            group.removeAll(keepingCapacity: true)
            group.append(try member(e.value))
            group.append(try member(n.value))
            next = inRange(try ascending ? cursor.next() : cursor.previous())
            while let v = next, Self.sameKey(v.key, e.key) {
                group.append(try member(v.value))
                next = inRange(try ascending ? cursor.next() : cursor.previous())
            }
            // The values of one key come in object-key order: going down, reversed.
            if !ascending { group.reverse() }
            if cut {
                let order = FieldOrder(table: table, column: column, file: file)
                group = group.enumerated().sorted { a, b in
                    let c = order.compare(a.element.record, b.element.record)
                    if c != 0 { return ascending ? c < 0 : c > 0 }
                    return a.offset < b.offset
                }.map(\.element)
            }
            for (key, record) in group {
                guard visit(key, record) else { return }
            }
            entry = next
        }
    }

    /// The smallest key after every key that starts with `prefix`, or `nil` if none is (the
    /// prefix is all 0xFF bytes).
    static func successor(of prefix: [UInt8]) -> [UInt8]? {
        var key = prefix
        while let last = key.last {
            if last < 0xFF {
                key[key.count - 1] = last + 1
                return key
            }
            key.removeLast()
        }
        return nil
    }

    /// Whether two index keys are equal. Neighbours mostly differ in their first eight bytes,
    /// or, in a compound index walked under a prefix, in their last eight (the ordering
    /// column's value).
    @inline(__always)
    private static func sameKey(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        if a.baseAddress == b.baseAddress { return true }
        if a.count >= 8 {
            if a.loadUnaligned(as: UInt64.self) != b.loadUnaligned(as: UInt64.self) { return false }
            let last = a.count - 8
            if a.loadUnaligned(fromByteOffset: last, as: UInt64.self) != b.loadUnaligned(fromByteOffset: last, as: UInt64.self) { return false }
        }
        return ByteOrder.compare(a, b) == 0
    }

    /// The record of the object `key` an index names.
    private func record(of key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        guard let record = try txn.get(table.database.dbi, key: key) else {
            fatalError("The realm at '\(file.url.path)' is damaged: an index of '\(table.className)' names a missing object")
        }
        return record
    }
}

/// The sort order of one stored column, compared on raw records: nulls first, numbers by
/// value, strings and bytes by code point / byte, floating point by the same total order the
/// index encoding uses.
package struct FieldOrder {
    package let table: Table
    package let column: Int
    package let file: StoreFile
    package let type: PropertyType

    package init(table: Table, column: Int, file: StoreFile) {
        self.table = table
        self.column = column
        self.file = file
        self.type = table.schema.properties[column].type
    }

    @inline(__always)
    package func field(_ record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        table.field(record.baseAddress!, size: record.count, column: column, in: file)
    }

    /// Negative, zero or positive as `a`'s value sorts before, with or after `b`'s.
    package func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let fa = field(a)
        let fb = field(b)
        guard let x = fa else { return fb == nil ? 0 : -1 }
        guard let y = fb else { return 1 }
        return FieldOrder.compare(x, y, type)
    }

    package static func compare(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer, _ type: PropertyType) -> Int {
        switch type {
        case .int:
            let (l, r) = (StoredField.int(x), StoredField.int(y))
            return l < r ? -1 : (l > r ? 1 : 0)
        case .double, .date:
            let (l, r) = (orderedBits(StoredField.double(x)), orderedBits(StoredField.double(y)))
            return l < r ? -1 : (l > r ? 1 : 0)
        case .float:
            let (l, r) = (orderedBits(Double(StoredField.float(x))), orderedBits(Double(StoredField.float(y))))
            return l < r ? -1 : (l > r ? 1 : 0)
        case .decimal:
            // Exactly, over Decimal128's whole range; NaN first.
            return DecimalOrder.compare(x, y)
        case .bool, .string, .data, .uuid, .objectId, .object, .linkingObjects:
            return ByteOrder.compare(x, y)
        case .mixed:
            guard let a = MixedField.split(x), let b = MixedField.split(y) else { return ByteOrder.compare(x, y) }
            let (ra, rb) = (MixedField.rank(a.type), MixedField.rank(b.type))
            if ra != rb { return ra < rb ? -1 : 1 }
            if a.type == b.type { return compare(a.payload, b.payload, a.type) }
            // Numbers of two kinds: by value.
            return ExactDecimal(numberIn: a.payload, type: a.type).key.withUnsafeBytes { l in
                ExactDecimal(numberIn: b.payload, type: b.type).key.withUnsafeBytes { r in ByteOrder.compare(l, r) }
            }
        }
    }

    /// The IEEE total order as an unsigned integer: negatives inverted, positives with the
    /// sign bit set (the order ``KeyEncoding`` stores).
    @inline(__always)
    static func orderedBits(_ d: Double) -> UInt64 {
        let bits = d.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }
}
