import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - Snapshots

extension Realm {
    /// The version reads go through: the write's inside a write, else the snapshot's, taken
    /// anew if it was released.
    @inline(__always)
    func readView() -> StoreView {
        if let session { return session.view }
        if reading.isReset { renewSnapshot() }
        return reading.view
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
    /// - Parameter prepared: A snapshot of the newest version taken already, to use instead.
    /// - Throws: `LMDBError`, such as `readersFull`; the realm still has no snapshot then.
    func takeNewestSnapshot(prepared: Snapshot? = nil) throws {
        if let prepared {
            reading.snapshot = prepared
            reading.view = prepared.view
        } else if let snapshot = reading.snapshot {
            try snapshot.renew()
        } else {
            let fresh = try Snapshot(file: file)
            reading.snapshot = fresh
            reading.view = fresh.view
        }
        reading.isReset = false
        let id = reading.view.version
        if id != reading.version {
            reading.version = id
            generation &+= 1
            syncCatalog(reading.view)
        }
    }

    func releaseSnapshot() {
        guard !reading.isReset else { return }
        if isKnownUniquelyReferenced(&reading.snapshot) {
            reading.snapshot?.reset()
        } else {
            // Frozen realms or observers still read this version: leave it to them.
            reading.snapshot = nil
        }
        reading.isReset = true
        // The pages behind handed-out pointers may now be reused by a writer.
        generation &+= 1
        file.hub.prune(oldestPinned: file.versions.oldest)
    }

    /// The realm's current snapshot, taken anew if it was released.
    func currentSnapshot() -> Snapshot {
        _ = readView()
        return reading.snapshot!
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
        let before = reading.version
        moveToNewestVersion()
        let changed = reading.version != before
        deliverNotifications()
        return changed
    }

    /// Takes the newest version without delivering notifications.
    func refreshWithoutDelivering() -> Bool {
        let before = reading.version
        moveToNewestVersion()
        return reading.version != before
    }

    /// Takes the newest version without delivering notifications.
    private func moveToNewestVersion() {
        releaseSnapshot()
        renewSnapshot()
    }

    /// A queue- or actor-confined realm's own refresh, when the file changed; with
    /// ``autorefresh`` off, its realm observers hear `.refreshRequired` instead.
    func autorefreshNow() {
        guard writing.thread == nil else { return }
        let latest = file.hub.latestVersion
        guard autorefresh else {
            if reading.isReset || reading.version < latest { deliverRefreshRequired() }
            return
        }
        if reading.isReset || reading.version < latest {
            do {
                try moveToNewestVersionKeepingOnFailure()
            } catch {
                // Every reader slot taken, or the file failing: the observers hear it, the
                // realm keeps the version it had, and the next commit tries again.
                let failure = Realm.Error(error, url: file.url, doing: "Cannot move to the newest version of")
                log(.error, failure.message)
                for observer in notifier.observers where observer.isLive { observer.fail(failure) }
                return
            }
        }
        deliverNotifications()
        if reading.version < latest { notifier.listener?.retrySoon() }
    }

    /// Takes the newest version; if that needs a new reader slot (observers or frozen realms
    /// share the current snapshot) and none can be had, throws and keeps the current one.
    private func moveToNewestVersionKeepingOnFailure() throws {
        let shared = !reading.isReset && !isKnownUniquelyReferenced(&reading.snapshot)
        let prepared = shared ? try Snapshot(file: file) : nil
        releaseSnapshot()
        try takeNewestSnapshot(prepared: prepared)
    }

    /// Releases the realm's snapshot, so the file can reuse the space of old versions; the
    /// next read takes a new snapshot. Accessors read before stay usable: they reload.
    public func invalidate() {
        checkThread()
        guard !isFrozen else { return }
        if isInWriteTransaction { cancelWrite() }
        releaseSnapshot()
    }
}
