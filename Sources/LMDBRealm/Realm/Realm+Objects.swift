import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension Realm {
    // MARK: - Adding

    /// Adds an unmanaged object to the realm; the instance itself becomes managed, a live view
    /// of its stored record.
    ///
    /// ```swift
    /// try realm.write {
    ///     realm.add(article)                       // the write throws if the id is taken
    ///     realm.add(newer, update: .modified)      // replaces the stored one
    /// }
    /// ```
    /// Adding an object this realm already manages does nothing. Must be called inside a write
    /// transaction.
    /// - Parameters:
    ///   - object: The object to add.
    ///   - update: What to do if an object with the same primary key is stored.
    ///
    /// As in RealmSwift, `add` does not throw. What goes wrong is recorded in the write, and
    /// `write {}` (or ``commitWrite()``) throws the first such error and rolls the whole
    /// transaction back: ``RealmError/Code/primaryKeyExists`` under `.error`;
    /// ``RealmError/Code/invalidValue`` for a primary key too long to store;
    /// ``RealmError/Code/schemaMismatch`` if the stored class differs;
    /// ``RealmError/Code/mapFull`` when the file reaches its maximum size. After such an error
    /// the rest of the write changes nothing: the object stays unmanaged.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        do {
            try addLinked(object, update: update, directly: true)
        } catch {
            recordWriteFailure(error, doing: "Cannot add an object of '\(type(of: object).className())' to")
        }
    }

    /// Adds `object` and its graph; an embedded object only through its parent (`directly`
    /// false).
    func addLinked(_ object: Object, update: UpdatePolicy = .error, directly: Bool = false) throws {
        checkWriteThread()
        if let failure = writing.failure { throw failure }
        if let owner = object._realm {
            require(
                owner === self,
                "Object is already managed by another Realm. Use create instead to copy it into this Realm.")
            return
        }
        let binding = try binding(for: type(of: object), create: true)!
        if directly && binding.classInfo.isEmbedded {
            fatalError("Embedded objects cannot be added directly: assign them to a property of their parent")
        }
        if binding.classInfo.links.isEmpty && binding.classInfo.lists.isEmpty && binding.classInfo.mixed.isEmpty {
            try insert(object, binding: binding, update: update)
        } else {
            try insertGraph(object, binding: binding, update: update)
        }
    }

    /// Adds every object of `objects`, as ``add(_:update:)`` does each.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for object in objects {
            add(object, update: update)
            if writing.failure != nil { return }
        }
    }

    /// Stores `object` through the write session and makes it a managed accessor.
    func insert(_ object: Object, binding: TableBinding, update: UpdatePolicy) throws {
        let key: ObjectKey
        do {
            key = try explainingRefusals { try session!.insert(object, binding: binding, update: update) }
        } catch let error as Realm.Error {
            throw error
        } catch {
            recordWriteFailure(error, doing: "Cannot add an object of '\(binding.table.className)' to")
            throw writing.failure!
        }
        // Its wrappers read through their column numbers from now on: set from the class's
        // description, they are right however the object was made (a decoded wrapper has
        // none, and an object made after a failed initialiser counted on from its count).
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        binding.classInfo.columnOffsets.withUnsafeBufferPointer { offsets in
            for column in offsets.indices {
                (base + offsets[column]).storeBytes(of: Int32(truncatingIfNeeded: column), as: Int32.self)
            }
        }
        binding.classInfo.adopt(object)
        object._realm = self
        object._isManaged = true
        object._binding = binding
        object._key = key
        object._record = BorrowedRecord()
    }

    /// Runs `body`, turning what the write session refuses into the errors users see.
    @inline(__always)
    func explainingRefusals<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch WriteSession.Refusal.primaryKeyExists(let className, let shown) {
            throw Realm.Error(
                .primaryKeyExists, "Attempting to create an object of type '\(className)' with an existing primary key value \(shown).",
                fileURL: file.url)
        } catch WriteSession.Refusal.keyTooLong(let className, let bytes, let maximum) {
            throw Realm.Error(
                .invalidValue, "The primary key of '\(className)' takes \(bytes) bytes; at most \(maximum) can be stored", fileURL: file.url)
        }
    }

    /// Rewrites `object`'s record with `value` in `storedColumn`; a failure is the write's
    /// (its commit throws it).
    func replaceField(of object: Object, storedColumn: Int, with value: UnsafeRawBufferPointer?) {
        let table = object._binding!.table
        do {
            try object._record.read(at: generation) { record in
                try session!.replaceField(of: object._key, record: record, in: table, storedColumn: storedColumn, with: value)
            }
        } catch {
            // A setter cannot throw: the write records the error, and its commit throws it.
            recordWriteFailure(error, doing: "Cannot update an object of '\(table.className)' in")
        }
    }

    // MARK: - Deleting

    /// Deletes a managed object; it becomes invalidated. Must be called inside a write
    /// transaction.
    public func delete(_ object: Object) {
        checkWriteThread()
        // A failed write changes nothing more (its commit throws the failure).
        guard writing.failure == nil else { return }
        require(object._realm === self, "Can only delete an object from the Realm it belongs to.")
        require(!object.isInvalidated, "Object has been deleted or invalidated.")
        if let current = currentBinding(of: object), current !== object._binding { object._binding = current }
        let table = object._binding!.table
        do {
            try session!.removeObjects([object._key], from: table)
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
        guard writing.failure == nil else { return }
        let core = results.core
        require(core.realm === self, "Can only delete objects from the Realm they belong to.")
        guard let binding = core.resolveBinding() else { return }
        do {
            try session!.removeObjects(core.isWholeTable ? nil : core.evaluatedKeys(), from: binding.table)
        } catch {
            recordWriteFailure(error, doing: "Cannot delete objects of '\(binding.table.className)' from")
        }
    }

    /// Deletes every object of every class stored in the file; their accessors become
    /// invalidated. Must be called inside a write transaction.
    public func deleteAll() {
        checkWriteThread()
        guard writing.failure == nil else { return }
        // Every index is emptied: the entries not yet written need not be.
        session!.discardPendingIndexEntries()
        do {
            for table in try allTables() { try session!.removeObjects(nil, from: table, nullifyingLinks: false) }
        } catch {
            recordWriteFailure(error, doing: "Cannot delete all objects of")
        }
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
        let info = ClassInfo.of(type)
        require(!info.isEmbedded, "\(info.schema.className) is an EmbeddedObject: query it through its parent (\"ANY multimedia.width > 600\")")
        return Results(realm: self, info: info)
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
    func lookUp(_ binding: TableBinding, key: UnsafeRawBufferPointer) -> Object? {
        guard key.count <= file.maximumKeySize else { return nil }
        guard let found = record(of: binding.table, key: key, in: readView()) else { return nil }
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

    /// The binding of the class called `className` for reading: its Swift class's if this
    /// process declares one, else the file's stored class read dynamically.
    func bindingForReading(className: String) -> TableBinding? {
        // A class read a moment ago (a query through a link plans with its target's binding
        // every time) is found by name among the recent ones, before the process-wide registry.
        if let recent = recentBinding(named: className) { return recent }
        if let info = file.classInfo(named: className), let binding = bindingForReading(info.type) { return binding }
        return dynamicBinding(named: className)
    }

    /// A managed accessor for the record `record` stored under `key`.
    @inline(__always)
    func makeObject(_ binding: TableBinding, key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) -> Object {
        makeObject(binding, key: key, record: record, checked: false)
    }

    /// A managed accessor for the record `record` stored under `key`, which the caller checked
    /// already (as ``checkRecord(_:of:)`` does) if `checked`.
    @inline(__always)
    func makeObject(_ binding: TableBinding, key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer, checked: Bool) -> Object {
        if !checked { checkRecord(record, of: binding.table) }
        ColumnCounter.begin(accessor: binding.classInfo.hasGeneratedDefaults)
        let object = binding.classInfo.type.init()
        binding.classInfo.adopt(object)
        object._realm = self
        object._isManaged = true
        object._binding = binding
        object._key = ObjectKey(key)
        object._record = BorrowedRecord(record, at: generation)
        return object
    }

    /// A managed accessor for an evaluated object, whose record must be current.
    @inline(__always)
    func makeObject(_ binding: TableBinding, _ entry: ResultsCore.Entry) -> Object {
        entry.key.withBytes { key in entry.record.read(at: generation) { makeObject(binding, key: key, record: $0) } }
    }

    /// A managed accessor for the object stored under `key`, made without its record: it reads
    /// its primary key from `key` and looks the record up on its first read of anything else.
    /// For objects found in an index, whose records the caller may never read; never for a
    /// frozen realm, whose objects any thread may read at once.
    @inline(__always)
    func makeObject(_ binding: TableBinding, key: ObjectKey) -> Object {
        ColumnCounter.begin(accessor: binding.classInfo.hasGeneratedDefaults)
        let object = binding.classInfo.type.init()
        binding.classInfo.adopt(object)
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
        object._record = BorrowedRecord(keyOnlyAt: generation)
    }

    /// Points an existing accessor of the same table at another record.
    @inline(__always)
    func rebind(_ object: Object, key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer, checked: Bool = false) {
        if !checked { checkRecord(record, of: object._binding.unsafelyUnwrapped.table) }
        object._key = ObjectKey(key)
        object._record = BorrowedRecord(record, at: generation)
    }

    /// Checks a record from disk before it is trusted (its checksum too, unless a scan has
    /// checked every record of its table in the version the realm reads).
    @inline(__always)
    func checkRecord(_ record: UnsafeRawBufferPointer, of table: Table) {
        table.checkRecord(record, in: file) { checkedVersion }
    }

    /// The committed version whose records the realm reads where its write has not changed
    /// them: the snapshot's, or the one its write began from (see `Table.checkedVersion`).
    var checkedVersion: Int {
        @inline(__always) get { if let session { session.checkedVersion } else { reading.version } }
    }
}

extension Realm: QueryContext {}

extension Realm {
    /// What `add` and `create` do with an object whose primary key is already stored, under
    /// RealmSwift's name (`Realm.UpdatePolicy.modified`); the same type as ``UpdatePolicy``.
    public typealias UpdatePolicy = LMDBRealm.UpdatePolicy
}
