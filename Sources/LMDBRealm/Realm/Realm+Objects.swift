import Foundation
internal import LMDBKit

/// What `add` does when an object with the same primary key is already stored.
public enum UpdatePolicy: Sendable {
    /// Throw ``Realm/Error/Code/primaryKeyExists`` (the default).
    case error
    /// Overwrite the stored object's properties that differ.
    case modified
    /// Overwrite every property of the stored object.
    case all
}

extension Realm {
    // MARK: - Adding

    /// Adds an unmanaged object to the realm; the instance itself becomes managed, a live view
    /// of its stored record.
    ///
    /// ```swift
    /// try realm.write {
    ///     try realm.add(article)                       // throws if the id is taken
    ///     try realm.add(newer, update: .modified)      // replaces the stored one
    /// }
    /// ```
    /// Adding an object this realm already manages does nothing. Must be called inside a write
    /// transaction.
    /// - Parameters:
    ///   - object: The object to add.
    ///   - update: What to do if an object with the same primary key is stored.
    /// - Throws: ``Realm/Error/Code/primaryKeyExists`` under `.error`;
    ///   ``Realm/Error/Code/invalidValue`` for a primary key too long to store;
    ///   ``Realm/Error/Code/schemaMismatch`` if the stored class differs;
    ///   ``Realm/Error/Code/mapFull`` when the file reaches its maximum size. If the error leaves
    ///   the `write` block, the whole transaction is rolled back.
    public func add(_ object: Object, update: UpdatePolicy = .error) throws {
        checkWriteThread()
        if let writeFailure { throw writeFailure }
        if let owner = object._realm {
            require(
                owner === self,
                "Object is already managed by another Realm. Use create instead to copy it into this Realm.")
            return
        }
        let binding = try binding(for: type(of: object), create: true)!
        try insert(object, info: binding.classInfo, binding: binding, update: update)
    }

    /// Adds every object of `objects`, as ``add(_:update:)`` does each.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) throws where S.Element: Object {
        for object in objects { try add(object, update: update) }
    }

    private func insert(_ object: Object, info: ClassInfo, binding: TableBinding, update: UpdatePolicy) throws {
        let table = binding.table
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        let columns = table.schema.properties.count

        // The record, in stored column order.
        recordWriter.begin(columns: columns)
        if binding.isIdentity {
            for field in info.fields {
                field.accessor.encodeValue(at: base + field.offset, into: recordWriter)
            }
        } else {
            var declared = [Int](repeating: 0, count: columns)
            for d in 0..<columns { declared[binding.storedColumn(Int32(d))] = d }
            for s in 0..<columns {
                let field = info.fields[declared[s]]
                field.accessor.encodeValue(at: base + field.offset, into: recordWriter)
            }
        }

        // The key: the encoded primary key, or the next auto-assigned number.
        // The table's write state is used in place: a local copy would share `lastKey`'s
        // buffer and make every update of it allocate.
        if table.writeState.writeID != writeID { table.writeState = WriteTableState(writeID: writeID) }
        keyScratch.removeAll(keepingCapacity: true)
        if let pk = table.primaryKeyColumn {
            // Encoded from the record just written, not read from the object a second time.
            let type = table.schema.properties[pk].type
            recordWriter.withRecord { record in
                KeyEncoding.append(table.field(record.baseAddress!, size: record.count, column: pk, in: file), type: type, to: &keyScratch)
            }
            if keyScratch.count > file.environment.maxKeySize {
                throw Realm.Error(
                    .invalidValue,
                    "The primary key of '\(table.className)' takes \(keyScratch.count - 1) bytes; at most \(file.environment.maxKeySize - 1) can be stored",
                    fileURL: file.url)
            }
        } else {
            if table.writeState.nextAutoKey == nil { table.writeState.nextAutoKey = try lastAutoKey(of: table) &+ 1 }
            KeyEncoding.appendBigEndian(table.writeState.nextAutoKey!, to: &keyScratch)
            table.writeState.nextAutoKey! &+= 1
        }

        // Keys arriving in ascending order are appended (MDB_APPEND): no page splits in the
        // middle of the tree, and full pages.
        if table.writeState.lastKey == nil { table.writeState.lastKey = try lastKey(of: table) ?? [] }
        let appending = ByteOrder.compare(keyScratch, table.writeState.lastKey!) > 0
        var flags = appending ? PutFlags.append.rawValue : 0
        if update == .error { flags |= PutFlags.noOverwrite.rawValue }
        let txn = writeTxn
        let stored: Bool
        var replaced = false
        do {
            // Replacing a stored object: its old index entries go first.
            if update != .error && !appending && (!table.indexedColumns.isEmpty || changeLog != nil) {
                let old = try keyScratch.withUnsafeBytes { try txn.get(table.database.dbi, key: $0) }
                if let old {
                    table.checkRecord(old, in: file)
                    replaced = true
                    if let changeLog {
                        let mask = recordWriter.withRecord { changedColumns(table, old: old, new: $0) }
                        changeLog.changes(for: table).modified[ObjectKey(keyScratch), default: 0] |= mask
                    }
                    if !table.indexedColumns.isEmpty {
                        let keys = indexKeys(table, record: old)
                        try keyScratch.withUnsafeBytes { try removeIndexEntries(table, keys, key: $0) }
                    }
                }
            }
            stored = try recordWriter.withRecord { record in
                try keyScratch.withUnsafeBytes { key in try txn.put(table.database.dbi, key: key, value: record, flags: flags) }
            }
            if stored && !table.indexedColumns.isEmpty {
                try recordWriter.withRecord { record in
                    try keyScratch.withUnsafeBytes { try bufferIndexEntries(table, record: record, key: $0) }
                }
            }
        } catch {
            recordWriteFailure(error, doing: "Cannot add an object of '\(table.className)' to")
            throw writeFailure!
        }
        guard stored else {
            let pk = info.primaryKeyColumn!
            let shown = info.fields[pk].accessor.withValueBytes(at: base + info.fields[pk].offset) {
                describe($0, type: info.schema.properties[pk].type)
            }
            throw Realm.Error(
                .primaryKeyExists,
                "Attempting to create an object of type '\(table.className)' with an existing primary key value \(shown).",
                fileURL: file.url)
        }
        if appending {
            table.writeState.lastKey!.removeAll(keepingCapacity: true)
            table.writeState.lastKey!.append(contentsOf: keyScratch)
        }
        if let changeLog, !replaced { changeLog.changes(for: table).inserted.append(ObjectKey(keyScratch)) }
        generation &+= 1

        object._realm = self
        object._isManaged = true
        object._binding = binding
        object._key = ObjectKey(keyScratch)
        object._generation = 0
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

    /// The largest key stored in `table`, seen by the current write.
    private func lastKey(of table: Table) throws -> [UInt8]? {
        let cursor = try Cursor(transaction: writeTxn, dbi: table.database.dbi)
        return try cursor.last().map { Array($0.key) }
    }

    private func lastAutoKey(of table: Table) throws -> UInt64 {
        guard let key = try lastKey(of: table), key.count == 8 else { return 0 }
        return key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// Rewrites `object`'s record with `value` in `storedColumn`.
    func replaceField(of object: Object, storedColumn: Int, with value: UnsafeRawBufferPointer?) {
        let binding = object._binding!
        let table = binding.table
        let record = object._record!
        let size = object._recordSize
        let columns = table.columnCount
        let fixed = table.fixedSizes[storedColumn]
        if let value, fixed > 0, value.count != Int(fixed) {
            fatalError("A value of \(value.count) bytes does not fit column \(storedColumn) of '\(table.className)'")
        }
        recordWriter.begin(columns: columns)
        for c in 0..<columns {
            recordWriter.append(c == storedColumn ? value : table.field(record, size: size, column: c, in: file))
        }
        let indexed = table.indexes[storedColumn] != nil
        let oldKeys = indexed ? indexKeys(table, record: UnsafeRawBufferPointer(start: record, count: size)).filter { $0.column == storedColumn } : []
        do {
            try recordWriter.withRecord { newRecord in
                try object._key.withBytes { key in _ = try writeTxn.put(table.database.dbi, key: key, value: newRecord) }
            }
            if indexed {
                let newKeys = recordWriter.withRecord { indexKeys(table, record: $0) }.filter { $0.column == storedColumn }
                if newKeys.first?.key != oldKeys.first?.key {
                    try object._key.withBytes { key in
                        try removeIndexEntries(table, oldKeys, key: key)
                        try addIndexEntries(table, newKeys, key: key)
                    }
                }
            }
            changeLog?.changes(for: table).modified[object._key, default: 0] |= ChangeLog.bit(storedColumn)
        } catch {
            // A setter cannot throw: the write records the error, and its commit throws it.
            recordWriteFailure(error, doing: "Cannot update an object of '\(table.className)' in")
        }
        generation &+= 1
    }

    // MARK: - Deleting

    /// Deletes a managed object; it becomes invalidated. Must be called inside a write
    /// transaction.
    public func delete(_ object: Object) {
        checkWriteThread()
        // A failed write changes nothing more (its commit throws the failure).
        guard writeFailure == nil else { return }
        require(object._realm === self, "Can only delete an object from the Realm it belongs to.")
        require(!object.isInvalidated, "Object has been deleted or invalidated.")
        if let current = bindingForReading(type(of: object)), current !== object._binding { object._binding = current }
        let table = object._binding!.table
        do {
            try removeObjects([object._key], from: table)
        } catch {
            recordWriteFailure(error, doing: "Cannot delete an object of '\(table.className)' from")
        }
    }

    /// Deletes every object of `objects`.
    public func delete<S: Sequence>(_ objects: S) where S.Element: Object {
        for object in Array(objects) { delete(object) }
    }

    /// Deletes every object of `results`; their accessors become invalidated. Must be called
    /// inside a write transaction.
    ///
    /// ```swift
    /// try realm.write {
    ///     realm.delete(realm.objects(Article.self))                          // the whole table
    ///     realm.delete(realm.objects(Draft.self).where { $0.age > 30 })      // some objects
    /// }
    /// ```
    /// A whole class (``Realm/objects(_:)`` with no filter, sort or limit) is emptied at once,
    /// with its indexes, without reading a single object. Otherwise the objects are found as the
    /// results are evaluated, and deleted by key without creating accessors.
    public func delete<Element>(_ results: Results<Element>) {
        checkWriteThread()
        guard writeFailure == nil else { return }
        let core = results.core
        require(core.realm === self, "Can only delete objects from the Realm they belong to.")
        guard let binding = core.resolveBinding() else { return }
        do {
            try removeObjects(core.isWholeTable ? nil : core.evaluatedKeys(), from: binding.table)
        } catch {
            recordWriteFailure(error, doing: "Cannot delete objects of '\(binding.table.className)' from")
        }
    }

    /// Deletes every object of every class stored in the file; their accessors become
    /// invalidated. Must be called inside a write transaction.
    public func deleteAll() {
        checkWriteThread()
        guard writeFailure == nil else { return }
        // Every index is emptied: the entries not yet written need not be.
        pendingIndexEntries.removeAll()
        do {
            for table in try allTables() { try removeObjects(nil, from: table) }
        } catch {
            recordWriteFailure(error, doing: "Cannot delete all objects of")
        }
    }

    /// Removes objects of `table` in the current write, with their index entries: every object
    /// (`keys` nil: the table and its indexes are emptied) or those with the listed keys (keys
    /// not stored are passed over). Every deletion of objects goes through here.
    func removeObjects(_ keys: [ObjectKey]?, from table: Table) throws {
        generation &+= 1
        let changes = changeLog?.changes(for: table)
        // The index entries still buffered are written first: those of the objects removed go
        // with them below.
        try flushIndexEntries()
        let txn = writeTxn
        guard let keys else {
            try txn.empty(table.database.dbi)
            for index in table.indexes.values { try txn.empty(index.dbi) }
            table.writeState = WriteTableState()
            changes?.cleared = true
            return
        }
        // Each record is found with a cursor, its index keys read from it, and it is deleted
        // where the cursor stands: one B-tree descent per object. Its index entries are removed
        // afterwards, sorted, so that each index is walked in order.
        var entries = PendingIndexEntries()
        let cursor = try Cursor(transaction: txn, dbi: table.database.dbi)
        for key in keys {
            try key.withBytes { key in
                guard let found = try cursor.seek(exactly: key) else { return }
                let record = found.value
                table.checkRecord(record, in: file)
                for column in table.indexedColumns {
                    let field = table.field(record.baseAddress!, size: record.count, column: column, in: file)
                    entries.append(dbi: table.indexes[column]!.dbi, value: key) { out in
                        table.appendIndexKey(field, column: column, to: &out)
                    }
                }
                try cursor.deleteCurrent()
                changes?.deleted.append(ObjectKey(key))
            }
        }
        try entries.drain { dbi, key, value in _ = try txn.delete(dbi, key: key, value: value) }
    }

    // MARK: - Reading

    /// Every object of `type`, as live ``Results``.
    ///
    /// ```swift
    /// let articles = realm.objects(Article.self)
    /// print(articles.count)
    /// ```
    public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> {
        checkThread()
        return Results(realm: self, info: ClassInfo.of(type))
    }

    /// The object of `type` whose primary key is `key`, or `nil`. One B-tree lookup.
    ///
    /// ```swift
    /// let article = realm.object(ofType: Article.self, forPrimaryKey: "nyt://article/1")
    /// ```
    /// - Precondition: `type` has a primary key of `key`'s kind.
    public func object<Element: Object, KeyType: _Persistable>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        lookUp(type, key: key, keyType: KeyType.self)
    }

    /// The object of `type` whose primary key is `key`, or `nil`, for a key whose type is only
    /// known at run time.
    /// - Precondition: `type` has a primary key of `key`'s kind.
    public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        guard let value = key as? any _Persistable else {
            fatalError("Invalid value '\(key)' of type '\(KeyType.self)' for the primary key of '\(type.className())'")
        }
        return lookUp(type, key: value, keyType: Swift.type(of: value))
    }

    private func lookUp<Element: Object>(_ type: Element.Type, key: some _Persistable, keyType: any _Persistable.Type) -> Element? {
        checkThread()
        guard let binding = bindingForReading(type) else { return nil }
        guard let keyKind = binding.primaryKeyType else {
            fatalError("'\(binding.classInfo.schema.className)' does not have a primary key")
        }
        if keyType._rlmType != keyKind {
            let info = binding.classInfo
            let property = info.schema.properties[info.primaryKeyColumn!]
            require(
                false,
                "Invalid value '\(key)' of type '\(keyType)' for '\(info.schema.className)' primary key '\(property.name)' of type '\(property.type.rawValue)'")
        }
        // The closures return an Object, not an Element: a result of a type only known at run
        // time would be looked up (its metadata) on every call.
        let object: Object? = key._rlmWithBytes { field in
            KeyEncoding.withKey(field, type: keyKind) { lookUp(binding, key: $0) }
        }
        guard let object else { return nil }
        return unsafeDowncast(object, to: Element.self)
    }

    /// The object stored under `key`, or `nil`.
    private func lookUp(_ binding: TableBinding, key: UnsafeRawBufferPointer) -> Object? {
        guard key.count <= file.environment.maxKeySize else { return nil }
        let txn = readTransaction()
        let found: UnsafeRawBufferPointer?
        do {
            found = try txn.get(binding.table.database.dbi, key: key)
        } catch {
            cannotRead("objects of '\(binding.table.className)'", error)
        }
        guard let found else { return nil }
        return makeObject(binding, key: key, record: found)
    }

    /// The binding of a class for reading, or `nil` if the file has no such class yet.
    /// A stored class that differs stops the process: reads cannot throw, and a configuration
    /// that lists its `objectTypes` reports the mismatch as an error when the realm opens.
    func bindingForReading(_ type: Object.Type) -> TableBinding? {
        do {
            return try binding(for: type, create: false)
        } catch {
            fatalError("\(error)")
        }
    }

    /// A managed accessor for the record `record` stored under `key`.
    @inline(__always)
    func makeObject(_ binding: TableBinding, key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) -> Object {
        checkRecord(record, of: binding.table)
        let object = binding.classInfo.type.init()
        object._realm = self
        object._isManaged = true
        object._binding = binding
        object._key = ObjectKey(key)
        object._record = record.baseAddress
        object._recordSize = record.count
        object._generation = generation
        return object
    }

    /// A managed accessor for the object stored under `key`, made without its record: it reads
    /// its primary key from `key` and looks the record up on its first read of anything else.
    /// For objects found in an index, whose records the caller may never read.
    @inline(__always)
    func makeObject(_ binding: TableBinding, key: ObjectKey) -> Object {
        let object = binding.classInfo.type.init()
        object._realm = self
        object._isManaged = true
        object._binding = binding
        rebind(object, key: key)
        return object
    }

    /// Points an existing accessor of the same table at another object, without its record
    /// (see ``makeObject(_:key:)``).
    @inline(__always)
    func rebind(_ object: Object, key: ObjectKey) {
        object._key = key
        object._record = nil
        object._recordSize = 0
        object._generation = generation
        // A frozen object may be read from several threads at once, so its first read must not
        // write to it (nor to the realm's key buffer): it holds its record from the start.
        if isFrozen { object.rebind(self) }
    }

    /// Points an existing accessor of the same table at another record.
    @inline(__always)
    func rebind(_ object: Object, key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) {
        checkRecord(record, of: object._binding.unsafelyUnwrapped.table)
        object._key = ObjectKey(key)
        object._record = record.baseAddress
        object._recordSize = record.count
        object._generation = generation
    }

    /// Checks a record from disk before it is trusted.
    @inline(__always)
    func checkRecord(_ record: UnsafeRawBufferPointer, of table: Table) {
        table.checkRecord(record, in: file)
    }
}
