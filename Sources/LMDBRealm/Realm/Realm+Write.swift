import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - Write transactions

extension Realm {
    /// Whether the realm is inside a write transaction.
    public var isInWriteTransaction: Bool {
        checkThread()
        return writing.thread != nil
    }

    /// As ``isInWriteTransaction``, without the confinement check.
    var isInWriteTransactionUnchecked: Bool { writing.thread != nil }

    /// Runs `block` in a write transaction and commits it.
    ///
    /// ```swift
    /// let count = try realm.write {
    ///     realm.add(article)
    ///     return realm.objects(Article.self).count
    /// }
    /// ```
    ///
    /// The realm refreshes to the newest version first. If `block` throws, the transaction is
    /// cancelled — nothing of it reaches the file or any other handle — and the error is
    /// rethrown. Only one write transaction runs at a time per file, across threads and
    /// processes; this call waits for the others.
    /// - Returns: What `block` returned.
    /// - Throws: What `block` threw, or a ``RealmError`` from the commit (for example
    ///   ``RealmError/Code/mapFull`` or ``RealmError/Code/noSpace``).
    @discardableResult
    public func write<Result>(_ block: () throws -> Result) throws -> Result {
        try write(withoutNotifying: [], block)
    }

    /// Begins a write transaction, waiting for any other writer of the file.
    ///
    /// On a queue-confined realm, `beginWrite` and its `commitWrite` must run in the same
    /// block: LMDB ends a write on the thread that began it. Prefer ``write(_:)``.
    ///
    /// A write that cannot begin (the write lock cannot be taken, a new snapshot cannot be had)
    /// is still a write, as `beginWrite` does not throw: it changes nothing, and
    /// ``commitWrite()`` throws the error.
    public func beginWrite() {
        checkThread()
        require(!isFrozen, "Can't perform transactions on a frozen Realm")
        require(writing.thread == nil, "The Realm is already in a write transaction")
        require(!configuration.readOnly, "Can't perform transactions on read-only Realms.")
        runQueuedAsyncWrites()
        if !notifier.observers.isEmpty && !notifier.isDelivering {
            // Observers first see the changes others made before this write.
            do {
                try releaseSnapshot()
                try takeNewestSnapshot()
            } catch {
                beginFailedWrite(error)
                return
            }
            deliverNotifications()
            require(writing.thread == nil, "The Realm is already in a write transaction")
        }
        // Released before the write begins: adopting another process's map growth waits for
        // every transaction of this process, this snapshot included.
        do {
            try releaseSnapshot()
            try startWrite(.file)
        } catch {
            beginFailedWrite(error)
        }
    }

    /// Begins a write of the realm's own (opening, migrating): a write that cannot begin throws
    /// its error at once, rather than becoming a failed write whose commit throws it.
    func beginOwnWrite() throws -> WriteSession {
        beginWrite()
        guard let session else {
            let failure = writing.failure
            cancelWrite()
            throw failure ?? Realm.Error(.fileAccess, "Cannot begin a write to '\(file.url.path)'", fileURL: file.url)
        }
        return session
    }

    /// Enters a write that could not begin: it reads the newest version it can, changes
    /// nothing, and its commit throws `error`.
    func beginFailedWrite(_ error: any Swift.Error) {
        writing.thread = pthread_self()
        generation &+= 1
        recordWriteFailure(error, doing: "Cannot begin a write to")
    }

    /// Commits the write transaction: its changes reach the disk and every other handle that
    /// refreshes.
    ///
    /// - Throws: ``RealmError`` if the commit fails — including a failure a setter, `delete`
    ///   or `deleteAll` met earlier in the write; the transaction is over either way and none
    ///   of it was written.
    public func commitWrite() throws {
        try commitWrite(withoutNotifying: [])
    }

    /// Commits the write transaction; the observers of `tokens` are not told of its changes.
    ///
    /// - Throws: As ``commitWrite()``.
    public func commitWrite(withoutNotifying tokens: [NotificationToken]) throws {
        checkWriteThread()
        if try commitAsyncTurnNow() { return }
        try endWriteIfFailed()
        do {
            // The new version would be one more than the versions pinned now.
            try checkActiveVersions(adding: 1)
        } catch {
            cancelWrite()
            throw error
        }
        let session = endWrite()!
        let version: Int
        do {
            version = try session.commit()
        } catch {
            drop(session.catalog)
            throw Realm.Error(error, url: file.url, doing: "Cannot commit a write to")
        }
        publish(session.catalog)
        file.hub.announceCommitted()
        if !notifier.observers.isEmpty {
            notifier.skippedTokens = tokens
            defer { notifier.skippedTokens = [] }
            notifier.skipVersion = version
            deliverNotifications()
        }
    }

    /// Commits a nested write into its group's transaction; its change log is kept in
    /// `writing.changeLogOfLastNestedWrite` and its catalog changes in
    /// `writing.catalogChangesOfLastNestedWrite`, for the group.
    func commitNested() throws {
        do {
            try endWriteIfFailed()
        } catch {
            writing.changeLogOfLastNestedWrite = recordsChangeLogs ? ChangeLog() : nil
            throw error
        }
        let session = endWrite()!
        do {
            writing.changeLogOfLastNestedWrite = try session.commitNested()
        } catch {
            drop(session.catalog)
            writing.changeLogOfLastNestedWrite = recordsChangeLogs ? ChangeLog() : nil
            throw Realm.Error(error, url: file.url, doing: "Cannot commit a write to")
        }
        writing.catalogChangesOfLastNestedWrite = session.catalog
    }

    /// Writes the index entries still buffered; if that or anything earlier failed, cancels
    /// the write and throws the failure.
    private func endWriteIfFailed() throws {
        if let session, writing.failure == nil {
            do {
                try session.flushIndexEntries()
            } catch {
                recordWriteFailure(error, doing: "Cannot commit a write to")
            }
        }
        if let failure = writing.failure {
            cancelWrite()
            throw failure
        }
    }

    /// Discards the write transaction's changes. Objects added in it become invalidated.
    public func cancelWrite() {
        checkWriteThread()
        if let session = endWrite() {
            session.abort()
            drop(session.catalog)
        }
        giveBackAsyncTurn()
    }

    /// Ends the current write's state on the realm and returns its session, to commit or
    /// abort (none if the write failed to begin).
    private func endWrite() -> WriteSession? {
        let ended = session
        writing.session = nil
        writing.thread = nil
        writing.failure = nil
        generation &+= 1
        return ended
    }

    /// Makes the catalog changes of a committed write visible to every handle.
    func publish(_ changes: CatalogChanges) {
        if let version = changes.version {
            file.noteCatalogVersion(version)
            tables.catalogVersion = version
        }
        for table in changes.tables.values { file.publish(table) }
    }

    /// Forgets the bindings made to tables of a write that did not commit.
    func drop(_ changes: CatalogChanges) {
        for table in changes.tables.values { tables.forgetBindings(to: table) }
    }

    /// Records `error` as the current write's failure, unless one is recorded already: the
    /// later errors of a failed LMDB transaction are consequences of the first.
    ///
    /// The non-throwing mutators (setters, `delete`, `deleteAll`) report what the world did to
    /// them this way, and `commitWrite` throws it, leaving the file as it was.
    func recordWriteFailure(_ error: any Swift.Error, doing what: @autoclosure () -> String) {
        guard writing.failure == nil else { return }
        writing.failure = Realm.Error(error, url: file.url, doing: what())
    }

    /// Stops the process unless a write transaction is open on this thread.
    @inline(__always)
    func checkWriteThread() {
        checkThread()
        guard let writeThread = writing.thread else {
            if isFrozen { fatalError("Attempting to modify a frozen object - call thaw on the Object instance first.") }
            fatalError(
                "Cannot modify managed objects outside of a write transaction.")
        }
        if pthread_equal(writeThread, pthread_self()) == 0 {
            fatalError(
                "A write transaction must end on the thread that began it; use write {} on a queue-confined Realm")
        }
    }

    /// The version queries read: as ``readView()``, with the current write's buffered index
    /// entries written first. A failure to write them is the write's failure (see
    /// ``recordWriteFailure(_:doing:)``).
    func queryView() -> StoreView {
        guard let session else { return readView() }
        if session.hasPendingIndexEntries && writing.failure == nil {
            do {
                try session.flushIndexEntries()
            } catch {
                recordWriteFailure(error, doing: "Cannot write the index entries of a write to")
            }
        }
        return session.view
    }

    // MARK: - Reads that cannot fail

    /// The record stored under `key` in `table` as `view` sees it, or `nil`; a failed read
    /// stops the process (see ``cannotRead(_:_:)``).
    func record(of table: Table, key: UnsafeRawBufferPointer, in view: StoreView) -> UnsafeRawBufferPointer? {
        do {
            return try view.record(of: table, key: key)
        } catch {
            cannotRead("objects of '\(table.className)'", error)
        }
    }

    /// The number of objects stored in `table` as `view` sees it; a failed read stops the
    /// process.
    func objectCount(of table: Table, in view: StoreView) -> Int {
        do {
            return try view.count(of: table)
        } catch {
            cannotRead("objects of '\(table.className)'", error)
        }
    }

    /// Stops the process because reading `what` ("objects of 'Article'") met `error`: reads
    /// cannot throw, and an answer made up without the data would be wrong. Every read that
    /// cannot go on stops here.
    func cannotRead(_ what: String, _ error: any Swift.Error) -> Never {
        var message = "Cannot read \(what) from the realm at '\(file.url.path)': \(error)"
        if let failure = writing.failure {
            message += " (the write transaction had already failed: \(failure.message); commitWrite throws that error)"
        }
        fatalError(message)
    }
}

extension Realm: ObjectStore {
    typealias Accessor = Object

    var writeHasFailed: Bool {
        @inline(__always) get { writing.failure != nil }
    }
}

extension Realm: WriteSessionObserver {
    func writeSessionChanged() {
        generation &+= 1
    }

    func declaredClass(named name: String) -> (any DeclaredClass)? {
        file.classInfo(named: name)
    }
}
