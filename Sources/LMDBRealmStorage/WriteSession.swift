import Foundation
package import LMDBKit
import Synchronization
package import LMDBRealmFormat

/// Told by a write session whenever bytes lent out earlier may have moved: before every put,
/// delete and empty of a database (see ``StoreWriter``), and when the write ends or the
/// catalog gains a table. The realm implements it by
/// moving its generation on, so that accessors look their records up again.
package protocol WriteSessionObserver: AnyObject {
    func writeSessionChanged()
    /// The declared class of the file's class `name` (a link's target): what a delete asks to
    /// find cascading links and embedded targets.
    func declaredClass(named name: String) -> (any DeclaredClass)?
}

/// The catalog changes of a write: the tables it created or re-indexed, and the catalog version
/// it moves the file to. Published to the file once the write is durable, dropped otherwise.
package struct CatalogChanges {
    package var tables: [String: Table] = [:]
    package var version: UInt64?

    package init() {}
}

/// Scratch space the writes of one realm reuse, so that a write allocates nothing per object.
package final class WriteBuffers {
    @exclusivity(unchecked) package var record = RecordWriter()
    @exclusivity(unchecked) package var key: [UInt8] = []
    @exclusivity(unchecked) package var indexEntries = PendingIndexEntries()
    /// A list chunk's key and bytes, while a new list is stored.
    @exclusivity(unchecked) package var listKey: [UInt8] = []
    @exclusivity(unchecked) package var listChunk: [UInt8] = []

    package init() {}
}

/// One write transaction of a realm: it owns the LMDB write transaction and everything a write
/// does to the file — records and their keys, index entries (buffered, then written in key
/// order), what changed (the change log observers read), and catalog changes.
///
/// The realm above keeps confinement, its snapshot and the public API; it begins a session in
/// `beginWrite` (or in a group commit's turn) and ends it by ``commit()``, ``commitNested()``
/// or ``abort()``. Every change of the file goes through its ``writer``, which tells the
/// observer that lent bytes may be stale; ``changed()`` tells it of the rest (the end of the
/// write, a table added to the catalog). Errors are thrown as they come from the file (LMDB's), or as
/// ``Refusal`` for values the file cannot take; the realm maps both to `RealmError`.
package final class WriteSession {
    /// A value the file cannot take.
    package enum Refusal: Error {
        /// `add` under `.error` met a stored object with the same primary key (shown as people
        /// read it).
        case primaryKeyExists(className: String, key: String)
        /// An encoded primary key longer than LMDB's keys can be.
        case keyTooLong(className: String, bytes: Int, maximum: Int)
    }

    package let file: StoreFile
    /// Identifies the write, for per-table state kept in ``Table/writeState``.
    package let id: UInt64
    /// The write's own view: reads inside the write see its changes.
    package let view: StoreView
    package private(set) var transaction: Transaction?
    package unowned let observer: any WriteSessionObserver
    /// What every change of the write passes through (see ``StoreWriter``).
    package let writer: StoreWriter
    package let buffers: WriteBuffers
    /// What the write changed, while anything in the process observes the file.
    @exclusivity(unchecked) private(set) var changeLog: ChangeLog?
    package var catalog = CatalogChanges()
    /// The file's sync state, if it is synced: each commit then writes an outbox entry.
    package let sync: SyncStore?
    /// The write applies change sets of other nodes (which are in the shared log already):
    /// it writes no outbox entry.
    package var appliesRemoteChanges = false

    private static let nextID = Atomic<UInt64>(0)

    private init(
        file: StoreFile, transaction: consuming Transaction, sync: SyncStore?, recording: Bool, buffers: WriteBuffers,
        observer: any WriteSessionObserver
    ) {
        self.file = file
        view = StoreView(transaction.unsafe, verifiesChecksums: file.verifiesChecksums)
        writer = StoreWriter(transaction, observer: observer)
        self.transaction = consume transaction
        id = WriteSession.nextID.add(1, ordering: .relaxed).newValue
        self.sync = sync
        changeLog = recording || sync != nil ? ChangeLog() : nil
        self.buffers = buffers
        self.observer = observer
        buffers.indexEntries.removeAll()
    }

    deinit {
        transaction.take()?.abort()
    }

    /// Begins a write, waiting for LMDB's write lock (held by one writer of the file at a time,
    /// across processes).
    package static func begin(
        _ file: StoreFile, recording: Bool, buffers: WriteBuffers, observer: any WriteSessionObserver
    ) throws -> WriteSession {
        while true {
            let txn = try Transaction(environment: file.environment, readOnly: false)
            let sync: SyncStore?
            switch try file.discoverSync(txn) {
            case .synced(let store): sync = store
            case .notSynced: sync = nil
            case .needsHandle:
                txn.abort()
                try file.openSyncHandle()
                continue
            }
            return WriteSession(file: file, transaction: txn, sync: sync, recording: recording, buffers: buffers, observer: observer)
        }
    }

    /// Begins a write nested in a group commit's transaction (see ``GroupCommitter``): its
    /// changes join the group's when it commits, and vanish alone when it aborts.
    package static func begin(
        nestedIn turn: GroupCommitter.Turn, recording: Bool, buffers: WriteBuffers, observer: any WriteSessionObserver
    ) throws -> WriteSession {
        let txn = try Transaction(nestedIn: turn.parent, environment: turn.file.environment)
        return WriteSession(file: turn.file, transaction: txn, sync: turn.sync, recording: recording, buffers: buffers, observer: observer)
    }

    /// Tells the observer that bytes lent before may have moved, for what is not a change of
    /// a database (those pass through ``writer``): the end of the write, a table added.
    @inline(__always)
    package func changed() {
        observer.writeSessionChanged()
    }

    // MARK: - Ending

    /// Commits the write: its changes are durable when this returns, and the change log is
    /// staged with the file's announcer for the version it creates.
    /// - Returns: The version the commit created.
    /// - Throws: The file's error; nothing of the write was written then.
    package func commit() throws -> Int {
        try recordForSyncIfSynced()
        try flushIndexEntries()
        let log = takeChangeLog()
        let txn = transaction.take()!
        let version = txn.id
        if let log, !log.isEmpty { file.announcer.stage(log, version: version) }
        do {
            try txn.commit()
        } catch {
            file.announcer.unstage(version: version)
            throw error
        }
        if let sync, file.sync == nil { file.publishSync(sync) }
        buffers.indexEntries.removeAllReleasingLarge()
        changed()
        return version
    }

    /// Commits a write nested in a group's transaction into it.
    /// - Returns: What the write changed, for the group's change log.
    package func commitNested() throws -> ChangeLog? {
        try recordForSyncIfSynced()
        try flushIndexEntries()
        let log = takeChangeLog()
        try transaction.take()!.commit()
        buffers.indexEntries.removeAllReleasingLarge()
        changed()
        return log
    }

    /// Discards the write's changes.
    package func abort() {
        buffers.indexEntries.removeAllReleasingLarge()
        changeLog = nil
        transaction.take()?.abort()
        changed()
    }

    /// Writes the outbox entry of a local write to a synced file.
    private func recordForSyncIfSynced() throws {
        guard let sync, !appliesRemoteChanges, let changeLog, !changeLog.tables.isEmpty else { return }
        try flushIndexEntries()
        try recordForSync(changeLog, sync)
    }

    /// What the write recorded, marked if it changed the catalog; it records nothing more.
    private func takeChangeLog() -> ChangeLog? {
        let log = changeLog
        changeLog = nil
        if let log, catalog.version != nil { log.catalogChanged = true }
        return log
    }

    // MARK: - Objects

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
                table.checkRecord(old, in: file)
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
    private func changedColumns(_ table: Table, old: UnsafeRawBufferPointer, new: UnsafeRawBufferPointer) -> UInt64 {
        var mask: UInt64 = 0
        for c in 0..<table.columnCount {
            let a = table.field(old.baseAddress!, size: old.count, column: c, in: file)
            let b = table.field(new.baseAddress!, size: new.count, column: c, in: file)
            if !ByteOrder.equal(a, b) { mask |= ChangeLog.bit(c) }
        }
        return mask
    }

    /// The largest key stored in `table`, seen by the write.
    private func lastKey(of table: Table) throws -> [UInt8]? {
        try view.withLastObject(of: table) { key, _ in Array(key) }
    }

    private func lastAutoKey(of table: Table) throws -> UInt64 {
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
                table.checkRecord(record, in: file)
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

    // MARK: - Delete rules

    /// The stored link and list columns of `table` whose targets go with a deleted object, and
    /// the class each points to (declared `.cascade`, or of embedded objects).
    private func cascadeColumns(of table: Table) -> [(column: Int, target: String)] {
        guard let info = observer.declaredClass(named: table.className), !info.cascading.isEmpty else { return [] }
        return table.schema.properties.enumerated().compactMap { column, property in
            guard info.cascading.contains(property.name), property.type == .object, let target = property.objectClassName else {
                return nil
            }
            return (column, target)
        }
    }

    /// Deletes the targets of cascading links of objects just deleted: each embedded object,
    /// and each other object no link points to any more (one still linked from elsewhere,
    /// through a link that does not cascade, stays).
    private func removeCascaded(_ doomed: [(target: String, key: ObjectKey)]) throws {
        try flushIndexEntries()
        var byClass: [String: [ObjectKey]] = [:]
        for (target, key) in doomed { byClass[target, default: []].append(key) }
        for (className, keys) in byClass {
            guard let table = try findTable(named: className) else { continue }
            let embedded = observer.declaredClass(named: className)?.isEmbedded ?? false
            let sources = embedded ? [] : try linkColumns(to: className)
            var unique = Set<ObjectKey>()
            var gone: [ObjectKey] = []
            for key in keys where unique.insert(key).inserted {
                let linked = try key.withBytes { k in
                    try sources.contains { try view.backlinkCount(from: $0.table, column: $0.column, to: k, file: file) > 0 }
                }
                if !linked { gone.append(key) }
            }
            if !gone.isEmpty { try removeObjects(gone, from: table) }
        }
    }

    /// The table of embedded objects the link or list `column` of `table` holds, if it holds
    /// embedded objects.
    package func embeddedTargets(of table: Table, column: Int) throws -> Table? {
        let property = table.schema.properties[column]
        guard property.type == .object, let name = property.objectClassName, observer.declaredClass(named: name)?.isEmbedded == true else {
            return nil
        }
        return try findTable(named: name)
    }

    // MARK: - Links

    /// The link columns, in every class of the file, that point to objects of `className`.
    package func linkColumns(to className: String) throws -> [(table: Table, column: Int)] {
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
    private func nullifyLinks(to target: Table, removed: [ObjectKey]?) throws {
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
                    source.checkRecord(record, in: file)
                    guard let field = source.field(record.baseAddress!, size: record.count, column: column, in: file) else { return }
                    // An index key cut short may name objects linking to another target.
                    if let removedSet, !removedSet.contains(ObjectKey(field)) { return }
                    try replaceField(of: key, record: record, in: source, storedColumn: column, with: nil)
                }
            }
        }
    }

    // MARK: - Index entries

    /// The index keys of an object's record, one per index (of every index, or of those that
    /// hold stored column `column`), with the index's database, copied out of the record
    /// (values read from LMDB are only valid until the next change).
    private func indexKeys(
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
    private func appendCompoundEntry(
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
    private func addIndexEntries(_ table: Table, _ keys: [IndexEntry], key: UnsafeRawBufferPointer) throws {
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
    private func bufferIndexEntries(_ table: Table, record: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws {
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
                _ = try writer.insert(value, at: cursor!, forKey: key, flags: sameKey ? .appendDuplicate : .append)
            } else {
                _ = try writer.insert(value, at: cursor!, forKey: key, flags: .noDuplicateData)
            }
        }
    }

    /// Removes index entries of the object `key`.
    private func removeIndexEntries(_ table: Table, _ keys: [IndexEntry], key: UnsafeRawBufferPointer) throws {
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
    package func buildIndex(_ index: CompoundIndex, of table: Table) throws {
        let maximum = file.environment.maxKeySize
        let value: ((UnsafeRawBufferPointer, UnsafeRawBufferPointer, inout [UInt8]) -> Void)? =
            index.covering ? { key, record, out in CoveringValue.append(key: key, record: record, maximum: maximum, to: &out) } : nil
        try buildIndex(index.database, of: table, indexKey: { record, out in table.appendCompoundKey(index, record: record, in: file, to: &out) }, value: value)
    }

    /// Writes the index entries of every object of `table` into the index of `column`.
    package func buildIndex(_ index: Database, of table: Table, column: Int) throws {
        try buildIndex(index, of: table) { record, out in
            table.appendIndexKey(table.field(record.baseAddress!, size: record.count, column: column, in: file), column: column, to: &out)
        }
    }

    /// Writes the index entries of every object of `table` into `index`, each under the key
    /// `indexKey` appends for its record.
    package func buildIndex(
        _ index: Database, of table: Table, indexKey appendKey: (UnsafeRawBufferPointer, inout [UInt8]) -> Void,
        value appendValue: ((_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer, inout [UInt8]) -> Void)? = nil
    ) throws {
        let txn = view.transaction
        var entries: [([UInt8], [UInt8])] = []
        let cursor = try UnsafeCursor(transaction: txn, dbi: table.database.dbi)
        try cursor.forEach { key, record in
            table.checkRecord(record, in: file)
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

    // MARK: - Catalog

    /// A table for `schema`'s class, created in the write with its indexes; the catalog
    /// records the class.
    package func createTable(_ schema: ObjectSchema) throws -> Table {
        guard let db = try transaction?.createDatabase(named: Table.databaseName(for: schema.className)) else {
            fatalError("the write has ended")
        }
        try storeSchema(schema)
        let indexes = try Table.openIndexes(of: schema) { name, _ in
            try transaction?.createDatabase(named: name, flags: .duplicateSort)
        }
        let compound = try Table.openCompoundIndexes(of: schema) { name, _ in
            try transaction?.createDatabase(named: name, flags: .duplicateSort)
        }
        let lists = try Table.openLists(of: schema) { name, duplicateSort in
            try transaction?.createDatabase(named: name, flags: duplicateSort ? .duplicateSort : [])
        }
        let table = Table(schema: schema, database: db, indexes: indexes, compoundIndexes: compound, lists: lists)
        catalog.tables[schema.className] = table
        changed()
        return table
    }

    /// Builds the indexes `declared` adds to `table` and empties those it removes; the stored
    /// schema records the new set.
    package func reindex(_ table: Table, declared: ObjectSchema) throws -> Table {
        let wanted = declared.indexedNames
        let properties = table.schema.properties.map {
            Property(
                name: $0.name, type: $0.type, isOptional: $0.isOptional,
                isIndexed: wanted.contains($0.name) && !$0.isPrimary && $0.type != .object, isPrimary: $0.isPrimary,
                objectClassName: $0.objectClassName, isArray: $0.isArray, linkOriginPropertyName: $0.linkOriginPropertyName,
                isSet: $0.isSet, isMap: $0.isMap)
        }
        let schema = ObjectSchema(
            className: table.className, properties: properties, compoundIndexes: declared.compoundIndexes,
            coveringIndexes: declared.coveringIndexes, isEmbedded: declared.isEmbedded)
        var indexes: [Int: Database] = [:]
        for (column, property) in properties.enumerated() {
            let name = Table.indexDatabaseName(className: table.className, property: property.name)
            if property.hasIndex {
                if let existing = table.indexes[column] {
                    indexes[column] = existing
                } else if let db = try transaction?.createDatabase(named: name, flags: .duplicateSort) {
                    try writer.empty(db.dbi)
                    try buildIndex(db, of: table, column: column)
                    indexes[column] = db
                }
            } else if let old = table.indexes[column] {
                // Emptied, not deleted: its database handle stays valid for every handle of
                // the process, and an index added back reuses it.
                try writer.empty(old.dbi)
            }
        }
        // Compound and covering indexes: one kept keeps its entries, a new one is built, one
        // dropped is emptied.
        func groups(_ schema: ObjectSchema, covering: Bool) -> [[String]] { covering ? schema.coveringIndexes : schema.compoundIndexes }
        for index in table.compoundIndexes where !groups(schema, covering: index.covering).contains(index.names) {
            try writer.empty(index.database.dbi)
        }
        let compound = try Table.openCompoundIndexes(of: schema) { name, _ in
            try transaction?.createDatabase(named: name, flags: .duplicateSort)
        }
        for index in compound where !groups(table.schema, covering: index.covering).contains(index.names) {
            try writer.empty(index.database.dbi)
            try buildIndex(index, of: table)
        }
        try storeSchema(schema)
        let newTable = Table(schema: schema, database: table.database, indexes: indexes, compoundIndexes: compound, lists: table.lists)
        catalog.tables[table.className] = newTable
        return newTable
    }

    /// Writes `schema` to the catalog and moves the catalog version on.
    package func storeSchema(_ schema: ObjectSchema) throws {
        let key = Array(schema.className.utf8)
        let sealed = SealedValue.sealed(Array(try JSONEncoder().encode(schema)), key: key)
        try key.withUnsafeBytes { key in
            try sealed.withUnsafeBytes { _ = try writer.put(file.catalog.dbi, key: key, value: $0) }
        }
        try bumpCatalogVersion()
    }

    /// Moves the catalog version on: every handle and process then reads the catalog again.
    package func bumpCatalogVersion() throws {
        let version = try file.catalogVersion(in: view) &+ 1
        try file.storeCatalogVersion(version, in: writer)
        catalog.version = version
        changed()
    }

    /// The table of `className` in the catalog as the write sees it (another handle or process
    /// may have added it), opened by the write itself: another transaction of this thread
    /// would be handed the same database slot. Kept with the write's catalog changes.
    package func findTable(named className: String) throws -> Table? {
        if let table = catalog.tables[className] ?? file.table(named: className) { return table }
        let table = try file.findTable(named: className, in: view, useShared: false) { name in
            try transaction?.openDatabase(named: name) ?? nil
        }
        if let table { catalog.tables[className] = table }
        return table
    }
}
