import Dispatch
import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

/// A handle on a realm file, confined to the thread or serial queue that opened it.
///
/// ```swift
/// let realm = try Realm(configuration: config)
/// try realm.write {
///     realm.add(article)
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

    // The handle's state, in three values and a counter. Exclusivity is unchecked on it: a
    // realm is confined to one thread or queue (checked on every entry), so the dynamic checks
    // would only cost time on the hot paths.

    /// The version the realm reads when it is not writing (see ``ReadState``).
    @exclusivity(unchecked) var reading: ReadState
    /// Everything the realm knows of its current write (see ``WriteState``).
    @exclusivity(unchecked) var writing = WriteState()
    /// The tables this handle reads and writes, and the bindings of its classes to them
    /// (see ``TableBindings``).
    @exclusivity(unchecked) var tables = TableBindings()
    /// Changes whenever pointers handed out earlier may have gone stale: a new snapshot, any
    /// change inside a write, the end of a write. Accessors compare it with their own.
    @exclusivity(unchecked) @usableFromInline final var generation: UInt64 = 1

    /// The current write, from `beginWrite` to its end (`nil` in a write that failed to begin).
    var session: WriteSession? {
        @inline(__always) get { writing.session }
    }
    /// Where primary keys read from an accessor's key, not its record, are decoded.
    let keyFieldBuffer = UnsafeKeyFieldBuffer()

    // MARK: Notifications

    /// Where the handle cache keeps this realm, if it does.
    var cacheKey: HandleKey?

    /// The realm's observers and the delivery of their notifications.
    let notifier = RealmNotifier()
    /// How many times this realm worked out what a commit did to an observed query.
    @_spi(Testing) public var resultsChangesComputed: Int { notifier.resultsChangesComputed }
    /// How many times this realm evaluated an observed query for its first notification.
    @_spi(Testing) public var initialResultsEvaluated: Int { notifier.initialResultsEvaluated }
    /// Serialises the caches of a frozen realm, which any thread may read.
    let frozenLock: NSRecursiveLock?

    /// Whether a queue- or actor-confined realm moves to the newest version by itself when
    /// another thread or process commits, then delivers its notifications (default `true`).
    ///
    /// A thread-confined realm has no queue to run on between calls: it moves on
    /// ``refresh()`` and on each write, and delivers its notifications then.
    public var autorefresh = true {
        didSet { checkThread() }
    }

    // MARK: - Opening

    init(configuration: Configuration, confinement: Confinement) throws {
        try configuration.checkSupported()
        self.configuration = configuration
        self.confinement = confinement
        isFrozen = false
        frozenLock = nil
        let file = try Realm.openFile(configuration)
        self.file = file
        let url = file.url
        do {
            reading = ReadState(try Snapshot(file: file))
        } catch {
            throw Realm.Error(error, url: url, doing: "Unable to read the realm at path")
        }
        try checkActiveVersions()
        try migrateIfNeeded()
        log(.debug, "Opened the realm at '\(url.path)'")
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
        case .thread, .lent, .frozen:
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
        reading = ReadState(snapshot)
        autorefresh = false
        syncCatalog(reading.view)
    }

    private static func runListener(_ listener: RefreshListener, on actor: isolated any Actor) {
        listener.run()
    }

    private func startListening(_ deliver: @escaping @Sendable (RefreshListener, Duration?) -> Void) {
        let listener = RefreshListener(deliver: deliver)
        listener.realm = self
        notifier.listener = listener
        file.hub.add(listener)
    }

    deinit {
        leaveHandleCache()
        session?.abort()
        if let listener = notifier.listener { file.hub.remove(listener) }
        for observer in notifier.observers { observer.detach(file) }
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
                        tables.forget(info.type)
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
            _ = try beginOwnWrite()
            do {
                for info in missing { _ = try binding(for: info, create: true) }
                try commitWrite()
            } catch {
                // A failed commit has ended the write already.
                if isInWriteTransactionUnchecked { cancelWrite() }
                throw error
            }
        }
    }

    // MARK: - Testing hooks

    /// The LMDB transaction ID of the snapshot the realm reads.
    @_spi(Testing) public var snapshotVersion: Int {
        checkThread()
        return readView().version
    }

    /// Reader slots in use in the file's lock table, across processes.
    @_spi(Testing) public var readerSlotsInUse: Int {
        file.readerSlotsInUse
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
