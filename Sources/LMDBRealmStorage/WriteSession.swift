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
    @exclusivity(unchecked) var listKey: [UInt8] = []
    @exclusivity(unchecked) var listChunk: [UInt8] = []

    package init() {}

    /// The record writer, for code of another target: its accesses to the stored property
    /// would each be checked for exclusive access at run time (the `@exclusivity(unchecked)`
    /// above holds in this target only).
    package var recordWriter: RecordWriter { record }

    /// Lends the list key and chunk buffers to `body` (see ``recordWriter`` for why a call).
    package func withListBuffers<R>(_ body: (_ key: inout [UInt8], _ chunk: inout [UInt8]) throws -> R) rethrows -> R {
        try body(&listKey, &listChunk)
    }
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
    /// The committed version the write began from (see ``Table/checkedVersion``).
    package let checkedVersion: Int
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
        view = StoreView(transaction.unsafe, verifiesChecksums: file.verifiesChecksums, isWrite: true)
        checkedVersion = view.checkedVersion
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
}
