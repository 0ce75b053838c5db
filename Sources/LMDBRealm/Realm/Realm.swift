public import Dispatch
import Foundation
import Synchronization
internal import LMDBKit

/// A handle on a realm file, confined to the thread or serial queue that opened it.
///
/// ```swift
/// let realm = try Realm(configuration: config)
/// try realm.write {
///     try realm.add(article)
/// }
/// let sports = realm.objects(Article.self)
/// ```
///
/// **Snapshots.** A handle reads one consistent version of the file (an LMDB read snapshot)
/// until ``refresh()``, a write (which refreshes first), or ``invalidate()``. Inside a write
/// it sees its own uncommitted changes. Other handles, on other threads or in other
/// processes, see a commit only after they move to a newer version.
///
/// **Confinement.** A handle, its objects and its results belong to the thread (or serial
/// `DispatchQueue`) that opened it. Every entry point checks, and use from anywhere else stops
/// the process with "Realm accessed from incorrect thread." Open one handle per thread; they
/// share one open file.
public final class Realm {
    /// The configuration the realm was opened with.
    public let configuration: Configuration
    let file: StoreFile
    let confinement: Confinement

    /// Whether the realm is frozen: pinned to one version, readable from any thread.
    public let isFrozen: Bool

    /// The snapshot reads go through; reset (holding no version) between versions when the
    /// realm holds it alone, replaced when frozen realms or observers share it.
    private(set) var snapshot: Snapshot?
    @exclusivity(unchecked) private var snapshotView: UnsafeTransaction
    @exclusivity(unchecked) private var snapshotIsReset = false
    private var snapshotID = 0

    /// The write transaction, between `beginWrite` and `commitWrite`/`cancelWrite`.
    var writeTransaction: Transaction?
    @exclusivity(unchecked) var writeView: UnsafeTransaction?
    /// Identifies the current write, for per-table state kept in ``Table``.
    private(set) var writeID: UInt64 = 0
    /// The thread of the current write; set from `beginWrite` to its end, also when the write
    /// failed to begin.
    private var writeThread: pthread_t?
    /// The first error the world caused in the current write (a full map, an I/O error, a
    /// write lock that could not be taken). From then on the write changes nothing more, and
    /// `commitWrite` rolls it back and throws this error.
    private(set) var writeFailure: Realm.Error?
    /// Tables created by the current write, published to the file when it commits.
    private var pendingTables: [String: Table] = [:]
    /// The catalog version the current write moves the file to, if it changes the catalog.
    private var pendingCatalogVersion: UInt64?
    /// The catalog version this handle's `bindings` were made against.
    private var bindingsVersion: UInt64 = 0

    /// Changes whenever pointers handed out earlier may have gone stale: a new snapshot, any
    /// change inside a write, the end of a write. Accessors compare it with their own.
    // Exclusivity is unchecked on the hot state below: a realm is confined to one thread or
    // queue (checked on every entry), so the dynamic checks would only cost time.
    @exclusivity(unchecked) @usableFromInline final var generation: UInt64 = 1

    @exclusivity(unchecked) var bindings: [ObjectIdentifier: TableBinding] = [:]
    /// The binding used last, checked before the dictionary.
    @exclusivity(unchecked) var lastBinding: TableBinding?
    @exclusivity(unchecked) var recordWriter = RecordWriter()
    @exclusivity(unchecked) var keyScratch: [UInt8] = []
    /// Where primary keys read from an accessor's key, not its record, are decoded.
    let keyFieldBuffer = UnsafeKeyFieldBuffer()
    /// Index entries the current write has added but not yet written.
    @exclusivity(unchecked) var pendingIndexEntries = PendingIndexEntries()
    /// What the current write changed, while anything in the process observes the file.
    @exclusivity(unchecked) var changeLog: ChangeLog?

    // MARK: Notifications

    /// The realm's observers: of results, objects, and the realm itself.
    var notifiers: [NotificationObserver] = []
    var isDelivering = false
    var needsAnotherRound = false
    /// Tokens whose observers skip the changes of the write being committed.
    var skippedTokens: [NotificationToken] = []
    /// What the last nested write (of an `asyncWrite`) changed, for its group's change log.
    var changeLogOfLastNestedWrite: ChangeLog?
    /// The version of the write whose changes `skippedTokens` skip.
    var skipVersion = 0
    /// Wakes a queue- or actor-confined realm when the file changes.
    var listener: RefreshListener?
    /// Serialises the caches of a frozen realm, which any thread may read.
    let frozenLock: NSRecursiveLock?
    /// The frozen copy made last, reused while the realm reads the same version.
    weak var frozenCopy: Realm?

    /// Whether a queue- or actor-confined realm moves to the newest version by itself when
    /// another thread or process commits, then delivers its notifications (default `true`).
    ///
    /// A thread-confined realm has no queue to run on between calls: it moves on
    /// ``refresh()`` and on each write, and delivers its notifications then.
    public var autorefresh = true {
        didSet { checkThread() }
    }

    // MARK: - Opening

    /// Opens the realm `configuration` describes, confined to the calling thread.
    ///
    /// - Parameter configuration: Which file, which classes, how to open it.
    /// - Throws: ``Realm/Error`` naming the file: ``Realm/Error/Code/fileNotFound``,
    ///   ``Realm/Error/Code/filePermissionDenied``, ``Realm/Error/Code/invalidDatabase`` (not
    ///   an LMDBRealm file, empty or truncated), ``Realm/Error/Code/schemaMismatch`` (listing
    ///   every difference), ``Realm/Error/Code/tooManyReaders``.
    public convenience init(configuration: Configuration = .defaultConfiguration) throws {
        try self.init(configuration: configuration, confinement: .thread(pthread_self()))
    }

    /// Opens the realm `configuration` describes, confined to the serial queue `queue`.
    ///
    /// Call it from a block running on `queue`; the realm, its objects and its results may then
    /// be used from any block on that queue.
    /// - Throws: As ``init(configuration:)``.
    public convenience init(configuration: Configuration = .defaultConfiguration, queue: DispatchQueue) throws {
        dispatchPrecondition(condition: .onQueue(queue))
        try self.init(configuration: configuration, confinement: .queue(QueueToken.of(queue)))
    }

    init(configuration: Configuration, confinement: Confinement) throws {
        self.configuration = configuration
        self.confinement = confinement
        isFrozen = false
        frozenLock = nil
        let file = try StoreFile.open(configuration)
        self.file = file
        let url = file.url
        do {
            let snapshot = try Snapshot(file: file)
            snapshotView = snapshot.view
            snapshotID = snapshot.version
            self.snapshot = snapshot
        } catch let error as LMDBError {
            throw Realm.Error(error, url: url, doing: "Unable to read the realm at path")
        }
        try checkActiveVersions()
        if let types = configuration.objectTypes {
            try checkSchema(types)
        }
        switch confinement {
        case .queue(let token):
            let queue = token.queue
            startListening { listener, delay in
                if let delay {
                    queue.asyncAfter(deadline: .now() + delay.dispatchInterval) { listener.run() }
                } else {
                    queue.async { listener.run() }
                }
            }
        case .actor(let reference):
            startListening { listener, delay in
                Task {
                    // Never cancelled: nothing holds the task. A cancelled sleep would only
                    // refresh early.
                    if let delay { try? await Task.sleep(for: delay) }
                    guard let actor = reference.actor else { return }
                    await Realm.runListener(listener, on: actor)
                }
            }
        case .thread, .frozen:
            break
        }
    }

    /// A frozen realm reading `snapshot`, made by ``freeze()``.
    init(frozen snapshot: Snapshot, configuration: Configuration) {
        self.configuration = configuration
        confinement = .frozen
        isFrozen = true
        frozenLock = NSRecursiveLock()
        file = snapshot.file
        snapshotView = snapshot.view
        snapshotID = snapshot.version
        self.snapshot = snapshot
        autorefresh = false
        syncCatalog(snapshotView)
    }

    private static func runListener(_ listener: RefreshListener, on actor: isolated any Actor) {
        listener.run()
    }

    private func startListening(_ deliver: @escaping @Sendable (RefreshListener, Duration?) -> Void) {
        let listener = RefreshListener(deliver: deliver)
        listener.realm = self
        self.listener = listener
        file.hub.add(listener)
    }

    deinit {
        if writeTransaction != nil { writeTransaction.take()!.abort() }
        if let listener { file.hub.remove(listener) }
        for notifier in notifiers { notifier.detach(file) }
    }

    /// Throws if the file has more versions pinned in this process than the configuration
    /// allows.
    func checkActiveVersions(adding extra: Int = 0) throws {
        guard let max = configuration.maximumNumberOfActiveVersions else { return }
        let limit = Int(clamping: max)
        let active = file.versions.count + extra
        if active > limit {
            throw Realm.Error(
                .tooManyActiveVersions,
                "Number of active versions (\(active)) in the Realm exceeded the limit of \(limit) (Realm.Configuration.maximumNumberOfActiveVersions): release frozen objects, results and references, or invalidate idle realms",
                fileURL: file.url)
        }
    }

    /// Checks every listed class against the stored schema, collecting all differences, and
    /// adds the classes the file does not have yet.
    private func checkSchema(_ types: [Object.Type]) throws {
        var problems: [String] = []
        var missing: [ClassInfo] = []
        for type in types {
            let info = ClassInfo.of(type)
            do {
                if let binding = try binding(for: info, create: false) {
                    // An index added or removed in the model is built or dropped now.
                    if binding.table.schema.indexedNames != info.schema.indexedNames {
                        bindings[ObjectIdentifier(info.type)] = nil
                        lastBinding = nil
                        missing.append(info)
                    }
                } else {
                    missing.append(info)
                }
            } catch let error as Realm.Error where error.code == .schemaMismatch {
                problems.append(error.message)
            }
        }
        if !problems.isEmpty {
            throw Realm.Error(
                .schemaMismatch,
                "Migration is required due to the following errors:\n- " + problems.joined(separator: "\n- "),
                fileURL: file.url)
        }
        if !missing.isEmpty && !configuration.readOnly {
            beginWrite()
            do {
                for info in missing { _ = try binding(for: info, create: true) }
                try commitWrite()
            } catch {
                cancelWrite()
                throw error
            }
        }
    }

    // MARK: - Confinement

    enum Confinement {
        case thread(pthread_t)
        case queue(QueueToken)
        case actor(ActorReference)
        case frozen
    }

    /// The actor a realm is confined to, held weakly: the actor usually holds the realm.
    final class ActorReference: @unchecked Sendable {
        // @unchecked Sendable: a weak reference set in init, loaded atomically by the runtime.
        weak var actor: (any Actor)?
        init(_ actor: any Actor) { self.actor = actor }
    }

    /// Identifies a serial queue through its queue-specific storage.
    final class QueueToken: @unchecked Sendable {
        // @unchecked Sendable: its only state is a weak reference to the queue, set in init;
        // otherwise only its identity is compared.
        static let key = DispatchSpecificKey<QueueToken>()
        static let lock = NSLock()
        private weak var weakQueue: DispatchQueue?

        private init(_ queue: DispatchQueue) {
            weakQueue = queue
        }

        /// The queue; the realm confined to it keeps it alive.
        var queue: DispatchQueue { weakQueue! }

        static func of(_ queue: DispatchQueue) -> QueueToken {
            lock.withLock {
                if let token = queue.getSpecific(key: key) { return token }
                let token = QueueToken(queue)
                queue.setSpecific(key: key, value: token)
                return token
            }
        }

        /// Whether the calling code runs on the queue.
        var isCurrent: Bool { DispatchQueue.getSpecific(key: QueueToken.key) === self }
    }

    /// Whether the calling code runs where the realm is confined (never for an actor, which
    /// cannot be asked without stopping the process).
    var isOnOwnContext: Bool {
        switch confinement {
        case .thread(let owner): pthread_equal(owner, pthread_self()) != 0
        case .queue(let token): token.isCurrent
        case .actor, .frozen: false
        }
    }

    /// Stops the process unless called from the realm's thread or queue.
    @inline(__always)
    func checkThread() {
        switch confinement {
        case .thread(let owner):
            // pthread_t is an integer (Linux) or a pointer (Darwin): compared directly, not
            // through pthread_equal, a call saved on every property read.
            if owner != pthread_self() { wrongThread() }
        case .queue(let token):
            if DispatchQueue.getSpecific(key: QueueToken.key) !== token { wrongThread() }
        case .actor(let reference):
            guard let actor = reference.actor else { wrongThread() }
            actor.preconditionIsolated("Realm accessed from incorrect thread.")
        case .frozen:
            return
        }
    }

    private func wrongThread() -> Never {
        fatalError("Realm accessed from incorrect thread.")
    }

    // MARK: - Snapshots

    /// The transaction reads go through: the write transaction inside a write, else the
    /// snapshot, taken anew if it was released.
    @inline(__always)
    func readTransaction() -> UnsafeTransaction {
        if let writeView { return writeView }
        if snapshotIsReset { renewSnapshot() }
        return snapshotView
    }

    private func renewSnapshot() {
        do {
            try takeNewestSnapshot()
        } catch {
            cannotRead("a new snapshot", error)
        }
    }

    /// Takes the newest version in place of the released snapshot: in its own transaction if
    /// the realm held it alone, in a new one (a new reader slot) if it was shared.
    /// - Throws: `LMDBError`, such as `readersFull`; the realm still has no snapshot then.
    private func takeNewestSnapshot() throws {
        if let snapshot {
            try snapshot.renew()
        } else {
            let fresh = try Snapshot(file: file)
            snapshot = fresh
            snapshotView = fresh.view
        }
        snapshotIsReset = false
        let id = snapshotView.id
        if id != snapshotID {
            snapshotID = id
            generation &+= 1
            syncCatalog(snapshotView)
        }
    }

    private func releaseSnapshot() {
        guard !snapshotIsReset else { return }
        if isKnownUniquelyReferenced(&snapshot) {
            snapshot?.reset()
        } else {
            // Frozen realms or observers still read this version: leave it to them.
            snapshot = nil
        }
        snapshotIsReset = true
        // The pages behind handed-out pointers may now be reused by a writer.
        generation &+= 1
        file.hub.prune(oldestPinned: file.versions.oldest)
    }

    /// The realm's current snapshot, taken anew if it was released.
    func currentSnapshot() -> Snapshot {
        _ = readTransaction()
        return snapshot!
    }

    /// Moves the realm to the newest committed version.
    ///
    /// Objects and results read afterwards reflect every commit made before the call, by any
    /// thread or process.
    /// - Returns: Whether the version changed.
    ///
    /// The realm's notifications for the changes are delivered before `refresh` returns.
    /// A frozen realm never changes: `refresh` does nothing on it.
    @discardableResult
    public func refresh() -> Bool {
        checkThread()
        guard !isFrozen, !isInWriteTransaction else { return false }
        let before = snapshotID
        moveToNewestVersion()
        let changed = snapshotID != before
        deliverNotifications()
        return changed
    }

    /// Takes the newest version without delivering notifications.
    func refreshWithoutDelivering() -> Bool {
        let before = snapshotID
        moveToNewestVersion()
        return snapshotID != before
    }

    /// Takes the newest version without delivering notifications.
    private func moveToNewestVersion() {
        releaseSnapshot()
        renewSnapshot()
    }

    /// A queue- or actor-confined realm's own refresh, when the file changed; with
    /// ``autorefresh`` off, its realm observers hear `.refreshRequired` instead.
    func autorefreshNow() {
        guard writeThread == nil else { return }
        let latest = file.hub.latestVersion
        guard autorefresh else {
            if snapshotIsReset || snapshotID < latest { deliverRefreshRequired() }
            return
        }
        if snapshotIsReset || snapshotID < latest { moveToNewestVersion() }
        deliverNotifications()
        if snapshotID < latest { listener?.retrySoon() }
    }

    /// Releases the realm's snapshot, so the file can reuse the space of old versions; the
    /// next read takes a new snapshot. Accessors read before stay usable: they reload.
    public func invalidate() {
        checkThread()
        guard !isFrozen else { return }
        if isInWriteTransaction { cancelWrite() }
        releaseSnapshot()
    }

    // MARK: - Write transactions

    /// Whether the realm is inside a write transaction.
    public var isInWriteTransaction: Bool {
        checkThread()
        return writeThread != nil
    }

    /// As ``isInWriteTransaction``, without the confinement check.
    var isInWriteTransactionUnchecked: Bool { writeThread != nil }

    /// Runs `block` in a write transaction and commits it.
    ///
    /// ```swift
    /// let count = try realm.write {
    ///     try realm.add(article)
    ///     return realm.objects(Article.self).count
    /// }
    /// ```
    ///
    /// The realm refreshes to the newest version first. If `block` throws, the transaction is
    /// cancelled — nothing of it reaches the file or any other handle — and the error is
    /// rethrown. Only one write transaction runs at a time per file, across threads and
    /// processes; this call waits for the others.
    /// - Returns: What `block` returned.
    /// - Throws: What `block` threw, or a ``Realm/Error`` from the commit (for example
    ///   ``Realm/Error/Code/mapFull`` or ``Realm/Error/Code/noSpace``).
    @discardableResult
    public func write<Result>(_ block: () throws -> Result) throws -> Result {
        try write(withoutNotifying: [], block)
    }

    /// Begins a write transaction, waiting for any other writer of the file.
    ///
    /// On a queue-confined realm, `beginWrite` and its `commitWrite` must run in the same
    /// block: LMDB ends a write on the thread that began it. Prefer ``write(_:)``.
    public func beginWrite() {
        checkThread()
        require(!isFrozen, "Can't perform transactions on a frozen Realm")
        require(writeThread == nil, "The Realm is already in a write transaction")
        require(!configuration.readOnly, "Can't perform transactions on read-only Realms.")
        if !notifiers.isEmpty && !isDelivering {
            // Observers first see the changes others made before this write.
            releaseSnapshot()
            do {
                try takeNewestSnapshot()
            } catch {
                beginFailedWrite(error)
                return
            }
            deliverNotifications()
            require(writeThread == nil, "The Realm is already in a write transaction")
        }
        // Released before the write begins: adopting another process's map growth waits for
        // every transaction of this process, this snapshot included.
        releaseSnapshot()
        let txn: Transaction
        do {
            txn = try Transaction(environment: file.environment, readOnly: false)
        } catch {
            beginFailedWrite(error)
            return
        }
        beginWrite(adopting: txn)
    }

    /// Enters a write that could not begin. It is still a write, as RealmSwift's `beginWrite`
    /// does not throw: it changes nothing, reads the newest version it can, and `commitWrite`
    /// throws `error`.
    private func beginFailedWrite(_ error: any Swift.Error) {
        writeThread = pthread_self()
        writeID = Realm.nextWriteID.add(1, ordering: .relaxed).newValue
        generation &+= 1
        recordWriteFailure(error, doing: "Cannot begin a write to")
    }

    /// Drops cached tables and bindings if another handle or process changed the catalog
    /// (a class added, an index built or dropped) since they were made.
    private func syncCatalog(_ txn: UnsafeTransaction) {
        let version: UInt64
        do {
            version = try file.catalogVersion(in: txn)
        } catch {
            cannotRead("the catalog", error)
        }
        // A frozen realm may read an older catalog: it leaves the file's shared one alone.
        if !isFrozen { file.noteCatalogVersion(version) }
        if bindingsVersion != version {
            bindings.removeAll()
            lastBinding = nil
            bindingsVersion = version
        }
    }

    private static let nextWriteID = Atomic<UInt64>(0)

    /// Commits the write transaction: its changes reach the disk and every other handle that
    /// refreshes.
    ///
    /// - Throws: ``Realm/Error`` if the commit fails; the transaction is over either way and
    ///   none of it was written.
    public func commitWrite() throws {
        try commitWrite(withoutNotifying: [])
    }

    /// Commits the write transaction; the observers of `tokens` are not told of its changes.
    ///
    /// - Throws: As ``commitWrite()``.
    public func commitWrite(withoutNotifying tokens: [NotificationToken]) throws {
        checkWriteThread()
        do {
            try flushIndexEntries()
        } catch {
            recordWriteFailure(error, doing: "Cannot commit a write to")
        }
        if let failure = writeFailure {
            cancelWrite()
            throw failure
        }
        do {
            // The new version would be one more than the versions pinned now.
            try checkActiveVersions(adding: 1)
        } catch {
            cancelWrite()
            throw error
        }
        let log = takeChangeLog()
        let txn = endWrite()!
        let version = txn.id
        if let log, !log.isEmpty { file.hub.stage(log, version: version) }
        do {
            try txn.commit()
        } catch {
            file.hub.unstage(version: version)
            dropPendingTables()
            throw Realm.Error(error, url: file.url, doing: "Cannot commit a write to")
        }
        publishPendingTables()
        file.hub.announceCommitted()
        if !notifiers.isEmpty {
            skippedTokens = tokens
            defer { skippedTokens = [] }
            skipVersion = version
            deliverNotifications()
        }
    }

    /// Makes the catalog changes and tables of a committed write visible to every handle.
    func publishPendingTables() {
        if let version = pendingCatalogVersion {
            file.noteCatalogVersion(version)
            bindingsVersion = version
            pendingCatalogVersion = nil
        }
        for table in pendingTables.values { file.publish(table) }
        pendingTables.removeAll()
    }

    /// Begins a write in `txn`: a new write transaction, or one nested in a group commit's
    /// (see `asyncWrite`).
    func beginWrite(adopting txn: consuming Transaction) {
        releaseSnapshot()
        writeView = txn.unsafe
        writeTransaction = consume txn
        writeThread = pthread_self()
        writeID = Realm.nextWriteID.add(1, ordering: .relaxed).newValue
        generation &+= 1
        changeLog = recordsChangeLogs ? ChangeLog() : nil
        syncCatalog(writeView!)
    }

    /// What the current write recorded, marked if it changed the catalog; the write records
    /// nothing more.
    private func takeChangeLog() -> ChangeLog? {
        let log = changeLog
        changeLog = nil
        if let log, pendingCatalogVersion != nil { log.catalogChanged = true }
        return log
    }

    /// Ends the current write's state and returns its transaction, to commit or abort (none if
    /// the write failed to begin).
    private func endWrite() -> Transaction? {
        let txn = writeTransaction.take()
        writeView = nil
        writeThread = nil
        writeFailure = nil
        writeID = 0
        generation &+= 1
        return txn
    }

    /// Records `error` as the current write's failure, unless one is recorded already: the
    /// later errors of a failed LMDB transaction are consequences of the first.
    ///
    /// The non-throwing mutators (setters, `delete`, `deleteAll`) report what the world did to
    /// them this way, and `commitWrite` throws it, leaving the file as it was.
    func recordWriteFailure(_ error: any Swift.Error, doing what: @autoclosure () -> String) {
        guard writeFailure == nil else { return }
        writeFailure = Realm.Error(error, url: file.url, doing: what())
    }

    /// The record stored under `key` in `table` as `txn` sees it, or `nil`; a failed read stops
    /// the process (see ``cannotRead(_:_:)``).
    func record(of table: Table, key: UnsafeRawBufferPointer, in txn: UnsafeTransaction) -> UnsafeRawBufferPointer? {
        do {
            return try txn.get(table.database.dbi, key: key)
        } catch {
            cannotRead("objects of '\(table.className)'", error)
        }
    }

    /// The number of objects stored in `table` as `txn` sees it; a failed read stops the process.
    func objectCount(of table: Table, in txn: UnsafeTransaction) -> Int {
        do {
            return try txn.statistics(table.database.dbi).entries
        } catch {
            cannotRead("objects of '\(table.className)'", error)
        }
    }

    /// Stops the process because reading `what` ("objects of 'Article'") met `error`: reads
    /// cannot throw, and an answer made up without the data would be wrong. Every read that
    /// cannot go on stops here.
    func cannotRead(_ what: String, _ error: any Swift.Error) -> Never {
        var message = "Cannot read \(what) from the realm at '\(file.url.path)': \(error)"
        if let writeFailure {
            message += " (the write transaction had already failed: \(writeFailure.message); commitWrite throws that error)"
        }
        fatalError(message)
    }

    /// Commits a nested write into its group's transaction; its change log is kept in
    /// `changeLogOfLastNestedWrite` for the group's.
    func commitNested() throws {
        do {
            try flushIndexEntries()
        } catch {
            recordWriteFailure(error, doing: "Cannot commit a write to")
        }
        if let failure = writeFailure {
            cancelWrite()
            changeLogOfLastNestedWrite = recordsChangeLogs ? ChangeLog() : nil
            throw failure
        }
        let log = takeChangeLog()
        let txn = endWrite()!
        do {
            try txn.commit()
        } catch {
            dropPendingTables()
            changeLogOfLastNestedWrite = recordsChangeLogs ? ChangeLog() : nil
            throw Realm.Error(error, url: file.url, doing: "Cannot commit a write to")
        }
        changeLogOfLastNestedWrite = log
    }

    /// Discards the write transaction's changes. Objects added in it become invalidated.
    public func cancelWrite() {
        checkWriteThread()
        pendingIndexEntries.removeAll()
        changeLog = nil
        endWrite()?.abort()
        dropPendingTables()
    }

    func dropPendingTables() {
        for table in pendingTables.values {
            bindings = bindings.filter { $0.value.table !== table }
        }
        lastBinding = nil
        pendingCatalogVersion = nil
        pendingTables.removeAll()
    }

    /// Stops the process unless a write transaction is open on this thread.
    @inline(__always)
    func checkWriteThread() {
        checkThread()
        guard let writeThread else {
            if isFrozen { fatalError("Attempting to modify a frozen object - call thaw on the Object instance first.") }
            fatalError(
                "Cannot modify managed objects outside of a write transaction.")
        }
        if pthread_equal(writeThread, pthread_self()) == 0 {
            fatalError(
                "A write transaction must end on the thread that began it; use write {} on a queue-confined Realm")
        }
    }

    /// The transaction queries read through: as ``readTransaction()``, with the current
    /// write's buffered index entries written first.
    /// A failure to write them is the write's failure (see ``recordWriteFailure(_:doing:)``).
    func queryTransaction() -> UnsafeTransaction {
        if writeView != nil && !pendingIndexEntries.isEmpty && writeFailure == nil {
            do {
                try flushIndexEntries()
            } catch {
                recordWriteFailure(error, doing: "Cannot write the index entries of a write to")
            }
        }
        return readTransaction()
    }

    /// The write transaction of the current write.
    var writeTxn: UnsafeTransaction { writeView! }

    /// The current write transaction itself, for creating databases.
    func createDatabase(named name: String) throws -> Database {
        guard let db = try writeTransaction?.createDatabase(named: name) else {
            fatalError("not in a write transaction")
        }
        return db
    }

    // MARK: - Tables

    /// The binding of `info`'s class to its table in this file; with `create`, inside a write,
    /// the table is made if the file has none.
    /// - Throws: ``Realm/Error/Code/schemaMismatch`` if the stored class differs.
    func binding(for info: ClassInfo, create: Bool) throws -> TableBinding? {
        try binding(for: info.type, info: info, create: create)
    }

    /// As ``binding(for:create:)``, looking in this realm's caches before asking for the
    /// class's description.
    @inline(__always)
    func binding(for type: Object.Type, info: ClassInfo? = nil, create: Bool) throws -> TableBinding? {
        if let frozenLock {
            frozenLock.lock()
            defer { frozenLock.unlock() }
            return try cachedBinding(for: type, info: info, create: create)
        }
        return try cachedBinding(for: type, info: info, create: create)
    }

    @inline(__always)
    private func cachedBinding(for type: Object.Type, info: ClassInfo?, create: Bool) throws -> TableBinding? {
        if let last = lastBinding, last.classInfo.type == type { return last }
        if let b = bindings[ObjectIdentifier(type)] {
            lastBinding = b
            return b
        }
        return try resolveBinding(info ?? ClassInfo.of(type), create: create)
    }

    private func resolveBinding(_ info: ClassInfo, create: Bool) throws -> TableBinding? {
        if let types = configuration.objectTypes, !types.contains(where: { $0 == info.type }) {
            fatalError(
                "Object type '\(info.schema.className)' is not managed by the Realm. If using a custom `objectTypes` array, make sure all model classes are included.")
        }
        let name = info.schema.className
        var table = try discoverTable(named: name)
        if table == nil {
            guard create else { return nil }
            table = try createTable(info)
        } else if writeTransaction != nil, table!.schema.indexedNames != info.schema.indexedNames {
            table = try reindex(table!, declared: info.schema)
        }
        do {
            let b = try TableBinding(table: table!, classInfo: info)
            bindings[ObjectIdentifier(info.type)] = b
            return b
        } catch {
            throw Realm.Error(
                .schemaMismatch,
                "Migration is required due to the following errors:\n- " + error.lines.joined(separator: "\n- "),
                fileURL: file.url)
        }
    }

    /// Builds the indexes `declared` adds to `table` and empties those it removes, inside the
    /// current write; the stored schema records the new set.
    private func reindex(_ table: Table, declared: ObjectSchema) throws -> Table {
        let wanted = declared.indexedNames
        let properties = table.schema.properties.map {
            Property(
                name: $0.name, type: $0.type, isOptional: $0.isOptional,
                isIndexed: wanted.contains($0.name) && !$0.isPrimary, isPrimary: $0.isPrimary)
        }
        let schema = ObjectSchema(className: table.className, properties: properties)
        do {
            var indexes: [Int: Database] = [:]
            for (column, property) in properties.enumerated() {
                let name = Table.indexDatabaseName(className: table.className, property: property.name)
                if property.isIndexed {
                    if let existing = table.indexes[column] {
                        indexes[column] = existing
                    } else if let db = try writeTransaction?.createDatabase(named: name, flags: .duplicateSort) {
                        try writeTxn.empty(db.dbi)
                        try buildIndex(db, of: table, column: column)
                        indexes[column] = db
                    }
                } else if let old = table.indexes[column] {
                    // Emptied, not deleted: its database handle stays valid for every handle
                    // of the process, and an index added back reuses it.
                    try writeTxn.empty(old.dbi)
                }
            }
            try storeSchema(schema)
            let newTable = Table(schema: schema, database: table.database, indexes: indexes)
            pendingTables[table.className] = newTable
            return newTable
        } catch let error as LMDBError {
            throw Realm.Error(error, url: file.url, doing: "Cannot change the indexes of '\(table.className)' in")
        }
    }

    /// Writes `schema` to the catalog and records that the catalog changed.
    private func storeSchema(_ schema: ObjectSchema) throws {
        let json = try JSONEncoder().encode(schema)
        try Array(schema.className.utf8).withUnsafeBytes { key in
            try json.withUnsafeBytes { _ = try writeTxn.put(file.catalog.dbi, key: key, value: $0) }
        }
        pendingCatalogVersion = try file.catalogVersion(in: writeTxn) &+ 1
        try file.storeCatalogVersion(pendingCatalogVersion!, in: writeTxn)
        generation &+= 1
    }

    private func createTable(_ info: ClassInfo) throws -> Table {
        let schema = info.schema
        do {
            let db = try createDatabase(named: Table.databaseName(for: schema.className))
            try storeSchema(schema)
            let indexes = try Table.openIndexes(of: schema) { name, _ in
                try writeTransaction?.createDatabase(named: name, flags: .duplicateSort)
            }
            let table = Table(schema: schema, database: db, indexes: indexes)
            pendingTables[schema.className] = table
            generation &+= 1
            return table
        } catch let error as LMDBError {
            throw Realm.Error(error, url: file.url, doing: "Cannot add class '\(schema.className)' to")
        }
    }

    /// The table of `className`: known to the file, created by this write, or found in the
    /// catalog (added by another handle or process since the file was loaded).
    private func discoverTable(named className: String) throws -> Table? {
        // A frozen realm uses the file's tables only while they describe its own catalog
        // version, and keeps those it finds otherwise to itself.
        let shared = !isFrozen || file.catalogVersionKnown == bindingsVersion
        if let table = pendingTables[className] ?? (shared ? file.table(named: className) : nil) { return table }
        let inWrite = writeTransaction != nil
        do {
            let table = try file.findTable(named: className, in: readTransaction(), useShared: shared) { name in
                // Inside a write the handle must be opened by the write itself: another
                // transaction of this thread would be handed the same database slot.
                if inWrite { return try writeTransaction?.openDatabase(named: name) ?? nil }
                return try file.environment.database(named: name)
            }
            if let table {
                if inWrite || !shared { pendingTables[className] = table } else if !isFrozen { file.publish(table) }
            }
            return table
        } catch let error as LMDBError {
            throw Realm.Error(error, url: file.url, doing: "Cannot read the schema of '\(className)' in")
        }
    }

    /// Every table in the file, including those other handles or processes added.
    func allTables() throws -> [Table] {
        let lock = frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        let txn = readTransaction()
        var names: [String] = []
        do {
            let cursor = try Cursor(transaction: txn, dbi: file.catalog.dbi)
            try cursor.forEach { key, _ in
                names.append(String(decoding: key, as: UTF8.self))
                return true
            }
            return try names.compactMap { try discoverTable(named: $0) }
        } catch let error as LMDBError {
            throw Realm.Error(error, url: file.url, doing: "Cannot read the catalog of")
        }
    }

    /// Whether the realm holds no objects at all.
    public var isEmpty: Bool {
        checkThread()
        let tables: [Table]
        do {
            tables = try allTables()
        } catch {
            cannotRead("the catalog", error)
        }
        let txn = readTransaction()
        return tables.allSatisfy { objectCount(of: $0, in: txn) == 0 }
    }

    // MARK: - Testing hooks

    /// The LMDB transaction ID of the snapshot the realm reads.
    @_spi(Testing) public var snapshotVersion: Int {
        checkThread()
        return readTransaction().id
    }

    /// Reader slots in use in the file's lock table, across processes.
    @_spi(Testing) public var readerSlotsInUse: Int {
        file.environment.readerSlotsInUse()
    }
}

@available(*, unavailable, message: "a Realm belongs to the thread or queue that opened it; open one per thread")
extension Realm: Sendable {}

extension Duration {
    /// The duration as Dispatch's interval, whole seconds and fraction both.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .never }
        return .nanoseconds(Int(clamping: scaled &+ attoseconds / 1_000_000_000))
    }
}
