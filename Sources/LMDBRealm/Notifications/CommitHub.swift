import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
import LMDBRealmFormat
import LMDBRealmStorage
#endif

/// One per file per process: learns of every commit to the file and tells the realms that
/// refresh themselves (queue- and actor-confined handles with `autorefresh`).
///
/// Commits made in this process are announced by the writer right after they are durable,
/// together with what they changed (a ``ChangeLog``) while anything observes the file. Commits
/// of other processes are noticed through inotify on the data file: LMDB writes the new meta
/// page with `pwrite`, which wakes the process's ``FileWatcher``; no thread polls.
final class CommitHub: CommitAnnouncer, @unchecked Sendable {
    // @unchecked Sendable: every mutable property is touched only under `lock`, except
    // `observerCount`, which is atomic.

    let path: String
    /// Reads the newest version committed to the file, by any process.
    private let lastCommittedVersion: @Sendable () -> Int
    private let lock = NSLock()
    /// Change logs of in-process commits, by the version they created.
    private var logs: [Int: ChangeLog] = [:]
    /// The newest version announced.
    private var latest = 0
    private var listeners: [ObjectIdentifier: Weak] = [:]
    /// The inotify watch on the data file while anything listens.
    private var watch: Int32?
    /// Observers in this process; writes record change logs while there are any.
    private let observerCount = Atomic<Int>(0)

    private struct Weak { weak var listener: RefreshListener? }

    init(file: StoreFile) {
        path = file.url.path
        lastCommittedVersion = file.lastCommittedVersionReader
    }

    deinit {
        if let watch { FileWatcher.shared.unwatch(watch, for: self) }
    }

    // MARK: - Change logs

    /// Whether a write beginning now should record what it changes.
    var isRecording: Bool { observerCount.load(ordering: .acquiring) > 0 }

    func observerAdded() { observerCount.add(1, ordering: .releasing) }
    func observerRemoved() { observerCount.subtract(1, ordering: .releasing) }

    /// Files what the write that will create `version` changed, before it commits, so that a
    /// handle refreshing to the version on another thread finds it.
    func stage(_ log: ChangeLog, version: Int) {
        lock.withLock { logs[version] = log }
    }

    /// Forgets a staged log whose write failed to commit.
    func unstage(version: Int) {
        _ = lock.withLock { logs.removeValue(forKey: version) }
    }

    /// The change logs of every version after `from` up to `to`, or `nil` if any of them is
    /// unknown (committed by another process, or while nothing recorded).
    func logs(after from: Int, through to: Int) -> [ChangeLog]? {
        guard to > from else { return [] }
        return lock.withLock {
            var found: [ChangeLog] = []
            found.reserveCapacity(to - from)
            for v in (from + 1)...to {
                guard let log = logs[v] else { return nil }
                found.append(log)
            }
            return found
        }
    }

    /// Drops the logs no pinned snapshot can need: those of versions at or before the oldest
    /// pinned one (every observer diffs from a pinned snapshot).
    func prune(oldestPinned: Int?) {
        lock.withLock {
            guard !logs.isEmpty else { return }
            guard let oldest = oldestPinned else {
                logs.removeAll()
                return
            }
            logs = logs.filter { $0.key > oldest }
        }
    }

    // MARK: - Announcing commits

    /// Tells every listener that the file reached `version` (or later), once per version.
    func announce(_ version: Int) {
        let toWake: [RefreshListener] = lock.withLock {
            guard version > latest else { return [] }
            latest = version
            return listeners.values.compactMap(\.listener)
        }
        for listener in toWake { listener.wake() }
    }

    /// Announces the file's newest committed version, after a commit of this process (which
    /// may have changed nothing, and so created no version).
    func announceCommitted() {
        announce(lastCommittedVersion())
    }

    /// The newest version this process knows the file has.
    var latestVersion: Int {
        let committed = lastCommittedVersion()
        return lock.withLock { max(latest, committed) }
    }

    /// Registers a handle that refreshes itself; starts watching the file for other processes'
    /// commits if nobody did yet.
    func add(_ listener: RefreshListener) {
        lock.withLock {
            listeners[ObjectIdentifier(listener)] = Weak(listener: listener)
            if watch == nil { watch = FileWatcher.shared.watch(path, for: self) }
        }
    }

    func remove(_ listener: RefreshListener) {
        lock.withLock {
            listeners[ObjectIdentifier(listener)] = nil
            listeners = listeners.filter { $0.value.listener != nil }
            if listeners.isEmpty { stopWatching() }
        }
    }

    /// The file was written (by any process): tells the listeners of its newest version.
    func fileWritten() {
        announce(lastCommittedVersion())
    }

    private func stopWatching() {
        if let watch { FileWatcher.shared.unwatch(watch, for: self) }
        watch = nil
    }

}

/// A handle that refreshes itself when the file changes: wakes it on its own queue or actor,
/// at most once until it has run.
final class RefreshListener: @unchecked Sendable {
    // @unchecked Sendable: `realm` is a weak reference, loaded atomically by the runtime, and
    // the realm is only used inside `deliver`, which runs on the realm's own queue or actor;
    // `pending` is atomic.
    weak var realm: Realm?
    private let pending = Atomic<Bool>(false)
    private let deliver: @Sendable (RefreshListener, _ after: Duration?) -> Void

    init(deliver: @escaping @Sendable (RefreshListener, _ after: Duration?) -> Void) {
        self.deliver = deliver
    }

    /// Schedules one refresh on the realm's queue or actor, unless one is already waiting.
    func wake() {
        if pending.exchange(true, ordering: .acquiringAndReleasing) { return }
        deliver(self, nil)
    }

    /// Schedules a refresh a millisecond from now: the file's meta page already shows a commit
    /// that new snapshots do not see yet (LMDB publishes the version to readers just after
    /// writing the page, and inotify reports the write in between).
    func retrySoon() {
        if pending.exchange(true, ordering: .acquiringAndReleasing) { return }
        deliver(self, .milliseconds(1))
    }

    /// Called on the realm's queue or actor when the scheduled refresh runs.
    func run() {
        pending.store(false, ordering: .releasing)
        realm?.autorefreshNow()
    }
}

extension StoreFile {
    /// The file's announcer, which this layer made: the hub of its observers.
    var hub: CommitHub { unsafeDowncast(announcer as AnyObject, to: CommitHub.self) }
}
