internal import CHotPaths
internal import CLMDB
public import Foundation

/// An LMDB transaction: a consistent snapshot to read, and for a write transaction, the only
/// place changes can be made.
///
/// A transaction is `~Copyable`: exactly one owner ends it, by ``commit()`` or ``abort()``,
/// and dropping it without either aborts it. Most code never holds one directly; it uses the
/// scoped ``Environment/read(_:)`` and ``Environment/write(_:)``, which lend a transaction to a
/// closure and end it when the closure returns.
///
/// lmdb.h: "A transaction and its cursors must only be used by a single thread, and a thread
/// may only have a single [write] transaction at a time." Read transactions of an
/// ``Environment`` (opened with `MDB_NOTLS`) may move between threads but not be shared; a
/// write transaction must begin and end on one OS thread.
public struct Transaction: ~Copyable {
    @usableFromInline let handle: OpaquePointer
    /// The environment the transaction belongs to.
    public let environment: Environment
    /// Whether the transaction can only read.
    public let isReadOnly: Bool
    @usableFromInline let state: State

    /// What the transaction remembers beyond its handle.
    @usableFromInline final class State {
        /// The first error that poisoned the transaction (LMDB refuses every later operation
        /// with `MDB_BAD_TXN`; callers see this error again instead).
        var poison: LMDBError?
        /// Databases created in this transaction, published to the environment on commit.
        var created: [Database] = []
        /// Whether `dbiLock` is held for `created`.
        var holdsDBILock = false
        /// Handles a nested transaction's parents opened.
        var inherited: [Database] = []
        /// Handles below it were published before the transaction began (see ``canUse(_:)``).
        var handleCeiling = MDB_dbi.max
        /// A reset read transaction holds no snapshot (see ``reset()``).
        @exclusivity(unchecked) var isReset = false
        /// Set by commit and abort, so deinit does not end the transaction twice, and so that
        /// an ``UnsafeTransaction`` kept past the end stops instead of using a freed handle.
        @exclusivity(unchecked) var ended = false
        /// A nested transaction does not count as one of the environment's active
        /// transactions: its parent does.
        var isNested = false
        /// A top-level write transaction: its end releases the environment's writer thread.
        var isWriter = false
        init() {}
    }

    /// Begins a transaction. The corresponding LMDB function is `mdb_txn_begin`.
    ///
    /// If another process grew the map (`MDB_MAP_RESIZED`), the new size is adopted once no
    /// transaction of this process is active, and the begin is retried.
    package init(environment: Environment, readOnly: Bool) throws {
        if !readOnly { environment.checkNotWritingOnThisThread() }
        var txn: OpaquePointer?
        var ceiling = MDB_dbi.max
        while true {
            environment.enterTransaction()
            ceiling = environment.publishedHandleCeiling
            let rc = lmdb("mdb_txn_begin") { mdb_txn_begin(environment.handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn) }
            if rc == MDB_SUCCESS { break }
            environment.leaveTransaction()
            if rc == MDB_MAP_RESIZED {
                try environment.resizeMap(adoptingOtherProcess: true)
                continue
            }
            try check(rc, "beginning a \(readOnly ? "read" : "write") transaction on \(environment.path)")
        }
        self.handle = txn!
        self.environment = environment
        self.isReadOnly = readOnly
        self.state = State()
        state.handleCeiling = ceiling
        if !readOnly {
            state.isWriter = true
            environment.setWriterThread(pthread_self())
        }
    }

    /// Begins a write transaction nested in the write transaction `parent`: its changes join the
    /// parent's when it commits and vanish when it aborts, leaving the parent as it was. The
    /// parent must not be used until the nested transaction ends. The corresponding LMDB
    /// function is `mdb_txn_begin` with a parent.
    package init(nestedIn parent: UnsafeTransaction, environment: Environment) throws {
        var txn: OpaquePointer?
        try check(lmdb("mdb_txn_begin") { mdb_txn_begin(environment.handle, parent.handle, 0, &txn) }, "beginning a nested transaction on \(environment.path)")
        self.handle = txn!
        self.environment = environment
        self.isReadOnly = false
        self.state = State()
        state.isNested = true
        // LMDB hands a nested transaction its parent's table of handles.
        state.handleCeiling = parent.state.handleCeiling
        state.inherited = parent.state.created + parent.state.inherited
    }

    deinit {
        if !state.ended {
            mdb_txn_abort(handle)
            Transaction.finish(state: state, environment: environment, committed: false)
        }
    }

    /// Commits the transaction. The corresponding LMDB function is `mdb_txn_commit`.
    ///
    /// The transaction is over afterwards whether or not this throws (lmdb.h: "The transaction
    /// handle is freed. It and its cursors must not be used again after this call"); it is
    /// never aborted after a failed commit. If an earlier operation poisoned the transaction
    /// (for example with ``LMDBError/mapFull``), the transaction is aborted and that error is
    /// thrown again.
    public consuming func commit() throws {
        let handle = self.handle
        let state = self.state
        let environment = self.environment
        state.ended = true
        if let poison = state.poison {
            mdb_txn_abort(handle)
            Transaction.finish(state: state, environment: environment, committed: false)
            throw poison
        }
        var rc = MDB_SUCCESS
        if state.isReset {
            mdb_txn_abort(handle)
        } else if let injected = FaultInjection.injected("mdb_txn_commit") {
            // As a failed mdb_txn_commit does, the transaction is freed.
            mdb_txn_abort(handle)
            rc = injected
        } else {
            rc = mdb_txn_commit(handle)
        }
        Transaction.finish(state: state, environment: environment, committed: rc == MDB_SUCCESS)
        try check(rc, "committing a transaction on \(environment.path)")
    }

    /// Ends the transaction, discarding its changes. The corresponding LMDB function is
    /// `mdb_txn_abort`.
    public consuming func abort() {
        let handle = self.handle
        let state = self.state
        let environment = self.environment
        state.ended = true
        mdb_txn_abort(handle)
        Transaction.finish(state: state, environment: environment, committed: false)
    }

    private static func finish(state: State, environment: Environment, committed: Bool) {
        if state.isWriter { environment.setWriterThread(nil) }
        if state.holdsDBILock {
            if committed { for db in state.created { _ = environment.publish(db) } }
            environment.setDBILockOwner(nil)
            environment.dbiLock.unlock()
        }
        if !state.isReset && !state.isNested { environment.leaveTransaction() }
    }

    /// The snapshot's transaction ID (`mdb_txn_id`): it changes exactly when the data does.
    public var id: Int { Int(mdb_txn_id(handle)) }

    // MARK: - Long-lived read transactions

    /// Releases a read transaction's snapshot but keeps its handle for ``renew()``.
    /// The corresponding LMDB function is `mdb_txn_reset`.
    package func reset() {
        require(isReadOnly, "only a read transaction can be reset")
        guard !state.isReset else { return }
        mdb_txn_reset(handle)
        state.isReset = true
        environment.leaveTransaction()
    }

    /// Takes a new snapshot in a reset read transaction. The corresponding LMDB function is
    /// `mdb_txn_renew`.
    package func renew() throws {
        require(isReadOnly, "only a read transaction can be renewed")
        guard state.isReset else { return }
        while true {
            environment.enterTransaction()
            state.handleCeiling = environment.publishedHandleCeiling
            let rc = lmdb("mdb_txn_renew") { mdb_txn_renew(handle) }
            if rc == MDB_SUCCESS { break }
            environment.leaveTransaction()
            if rc == MDB_MAP_RESIZED {
                try environment.resizeMap(adoptingOtherProcess: true)
                continue
            }
            try check(rc, "renewing a read transaction on \(environment.path)")
        }
        state.isReset = false
    }

    /// Whether the read transaction is reset (holds no snapshot).
    package var isReset: Bool { state.isReset }

    /// A copyable view of the handle for the object store's hot paths: reads only.
    package var unsafe: UnsafeTransaction { UnsafeTransaction(handle: handle, state: state) }

    /// A copyable view of a write transaction's handle that can change the databases. The
    /// object store hands it to one type, which every change of a write passes through.
    package var unsafeWrite: UnsafeWriteTransaction {
        require(!isReadOnly, "a read transaction cannot write")
        return UnsafeWriteTransaction(unsafe)
    }

    // MARK: - Databases

    /// Opens or creates the named database `name` inside this write transaction. It becomes
    /// visible to other transactions when this one commits, and vanishes if it aborts.
    /// The corresponding LMDB function is `mdb_dbi_open`.
    public func createDatabase(named name: String, flags: Database.Flags = []) throws -> Database {
        require(!isReadOnly, "createDatabase(named:) needs a write transaction")
        return try openDatabase(named: name, flags: flags.rawValue | UInt32(MDB_CREATE))!
    }

    /// Opens the existing named database `name` inside this write transaction, or returns
    /// `nil` if there is none. Use it instead of ``Environment/database(named:)`` while a write
    /// transaction on this thread creates databases. The corresponding LMDB function is
    /// `mdb_dbi_open`.
    public func openDatabase(named name: String) throws -> Database? {
        require(!isReadOnly, "openDatabase(named:) needs a write transaction")
        return try openDatabase(named: name, flags: 0)
    }

    private func openDatabase(named name: String, flags: UInt32) throws -> Database? {
        if let db = environment.cachedDatabase(named: name) { return db }
        if let db = state.created.first(where: { $0.name == name }) { return db }
        if !state.holdsDBILock {
            // lmdb.h: a transaction that opens a database handle "must finish (either commit
            // or abort) before any other transaction in the process may use this function."
            environment.dbiLock.lock()
            state.holdsDBILock = true
            environment.setDBILockOwner(pthread_self())
        }
        var dbi = MDB_dbi()
        let rc = lmdb("mdb_dbi_open") { mdb_dbi_open(handle, name, flags, &dbi) }
        if rc == MDB_NOTFOUND && flags & UInt32(MDB_CREATE) == 0 { return nil }
        if rc != MDB_SUCCESS { try unsafe.poisoned(rc, "opening database '\(name)' in \(environment.path)") }
        try useFastKeyOrder(handle, dbi) { rc in try unsafe.poisoned(rc, "reading the flags of database '\(name)' in \(environment.path)") }
        // Published to the environment when this transaction commits: until then no other
        // transaction can use the handle (lmdb.h: it is "private to the current transaction").
        let db = Database(dbi: dbi, name: name)
        state.created.append(db)
        return db
    }

    /// Whether this transaction can use `db`: LMDB sizes a transaction's table of handles when
    /// it begins, so a handle another thread opened afterwards is unknown to it (LMDB answers
    /// `EINVAL`). A reader that meets one reads the database after its next renewal.
    package func canUse(_ db: Database) -> Bool {
        unsafe.canUse(db)
    }

    /// Statistics of `db`. The corresponding LMDB function is `mdb_stat`.
    public func statistics(of db: Database) throws -> Database.Statistics {
        try unsafe.statistics(db.dbi)
    }

    /// Removes every entry of `db`, keeping the database. The corresponding LMDB function is
    /// `mdb_drop` with `del` 0.
    public func empty(_ db: Database) throws {
        try unsafeWrite.empty(db.dbi)
    }

    // MARK: - Reading and writing

    /// Lends the value stored under `key` to `body`.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    /// - Parameters:
    ///   - key: The key's bytes.
    ///   - db: The database to look in.
    ///   - body: Receives the value's bytes, which point into the memory map. They must not be
    ///     stored or used outside the closure.
    /// - Returns: What `body` returned, or `nil` if the key is absent.
    public func get<R>(
        _ key: some ContiguousBytes, in db: Database,
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        let value = try key.withUnsafeBytes { try unsafe.get(db.dbi, key: $0) }
        guard let value else { return nil }
        return try body(value)
    }

    /// Stores `value` under `key`. The corresponding LMDB function is `mdb_put`.
    /// - Throws: ``LMDBError/keyExists`` under `.noOverwrite`, ``LMDBError/mapFull``,
    ///   ``LMDBError/badValueSize`` for an empty or too long key.
    public func put(
        _ value: some ContiguousBytes, forKey key: some ContiguousBytes, in db: Database,
        flags: PutFlags = []
    ) throws {
        require(!isReadOnly, "put needs a write transaction")
        let stored = try key.withUnsafeBytes { k in
            try value.withUnsafeBytes { v in try unsafeWrite.put(db.dbi, key: k, value: v, flags: flags.rawValue) }
        }
        if !stored {
            throw LMDBError(code: LMDBError.keyExists.code, context: "mdb_put in database '\(db.name)'")
        }
    }

    /// Deletes `key` (and, in a `duplicateSort` database, all its values).
    /// The corresponding LMDB function is `mdb_del`.
    /// - Returns: Whether the key was present.
    @discardableResult
    public func delete(_ key: some ContiguousBytes, in db: Database) throws -> Bool {
        require(!isReadOnly, "delete needs a write transaction")
        return try key.withUnsafeBytes { try unsafeWrite.delete(db.dbi, key: $0) }
    }

    /// Lends a cursor over `db` to `body` and closes it afterwards.
    /// The corresponding LMDB functions are `mdb_cursor_open` and `mdb_cursor_close`.
    public func withCursor<R>(on db: Database, _ body: (borrowing Cursor) throws -> R) throws -> R {
        let cursor = try Cursor(transaction: unsafe, dbi: db.dbi)
        return try body(cursor)
    }

    /// Calls `body` with each key/value pair whose key lies in `range`, in key order or in
    /// reverse, until `body` returns `false`.
    ///
    /// - Parameters:
    ///   - db: The database to walk.
    ///   - range: Keys from `range.lowerBound` (inclusive) to `range.upperBound` (exclusive);
    ///     `nil` bounds are open.
    ///   - reverse: Walk from the highest key down.
    ///   - body: Receives the key and value bytes, which point into the memory map. They must
    ///     not be stored or used outside the closure.
    public func forEach(
        in db: Database, from lower: [UInt8]? = nil, to upper: [UInt8]? = nil, reverse: Bool = false,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try withCursor(on: db) { cursor in
            try cursor.forEach(from: lower, to: upper, reverse: reverse, body)
        }
    }
}

// MARK: - Scoped transactions

extension Environment {
    /// Runs `body` in a read transaction and ends it when `body` returns.
    ///
    /// ```swift
    /// let count = try env.read { txn in try txn.statistics(of: db).entries }
    /// ```
    @available(*, noasync, message: "a transaction blocks its thread; call it from a synchronous context")
    public func read<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        let txn = try Transaction(environment: self, readOnly: true)
        let result = try body(txn)
        txn.abort()
        return result
    }

    /// Runs `body` in a write transaction and commits it when `body` returns.
    ///
    /// If `body` throws, the transaction is aborted, nothing of it is visible anywhere, and the
    /// error is rethrown. If the map fills up (`MDB_MAP_FULL`), the transaction is aborted,
    /// the map grows geometrically up to ``Options/maximumMapSize`` once no transaction of
    /// this process is active, and `body` runs again, so it must do nothing it cannot repeat.
    /// The whole write runs on the calling thread, as LMDB requires.
    ///
    /// ```swift
    /// try env.write { txn in try txn.put(value, forKey: key, in: db) }
    /// ```
    /// - Throws: Whatever `body` throws, or ``LMDBError/mapFull`` at the maximum map size.
    @available(*, noasync, message: "a write transaction blocks its thread and must end on it")
    public func write<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        while true {
            do {
                return try writeOnce(body)
            } catch LMDBError.mapFull {
                try resizeMap(adoptingOtherProcess: false)
            }
        }
    }

    private func writeOnce<R>(_ body: (borrowing Transaction) throws -> R) throws -> R {
        let txn = try Transaction(environment: self, readOnly: false)
        let result: R
        do {
            result = try body(txn)
        } catch {
            txn.abort()
            throw error
        }
        try txn.commit()
        return result
    }
}
