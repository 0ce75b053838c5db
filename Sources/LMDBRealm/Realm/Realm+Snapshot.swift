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

    /// Takes the newest version in the realm's released snapshot: a reset transaction keeps its
    /// reader slot (see ``releaseSnapshot()``), so a full reader table cannot stop it.
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

    /// Releases the realm's snapshot between versions: reset in place when the realm holds it
    /// alone; when frozen realms or observers share it, left to them, and a new one, reset at
    /// once, put in its place — the realm keeps a reader slot of its own, so that its next read
    /// can always take the newest version.
    /// - Throws: `LMDBError` (`readersFull` when every reader slot is taken) if the snapshot is
    ///   shared and no new one can be had; the realm then keeps reading the version it had.
    /// - Parameter standby: The snapshot to put in place of a shared one, if one was reserved
    ///   already (see ``standbyForSharedSnapshot()``).
    func releaseSnapshot(standby reserved: Snapshot? = nil) throws {
        guard !reading.isReset else { return }
        if isKnownUniquelyReferenced(&reading.snapshot) {
            reading.snapshot?.reset()
        } else {
            let standby = try reserved ?? Snapshot(reservingReaderSlotOf: file)
            reading.snapshot = standby
            reading.view = standby.view
        }
        reading.isReset = true
        // The pages behind handed-out pointers may now be reused by a writer.
        generation &+= 1
        file.hub.prune(oldestPinned: file.versions.oldest)
    }

    /// A reset snapshot holding a reader slot, for ``releaseSnapshot(standby:)`` to put in place
    /// of the realm's snapshot if frozen realms or observers share it; `nil` otherwise.
    /// - Throws: `LMDBError` (`readersFull`) if the snapshot is shared and no slot can be had.
    func standbyForSharedSnapshot() throws -> Snapshot? {
        guard !reading.isReset, !isKnownUniquelyReferenced(&reading.snapshot) else { return nil }
        return try Snapshot(reservingReaderSlotOf: file)
    }

    /// Tells the realm's log and observers that the realm could not move to the newest
    /// version (every reader slot taken, or the file failing): it keeps the version it had.
    func reportVersionFailure(_ error: any Swift.Error) {
        let failure = Realm.Error(error, url: file.url, doing: "Cannot move to the newest version of")
        log(.error, failure.message)
        for observer in notifier.observers where observer.isLive { observer.fail(failure) }
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
    ///
    /// A realm that cannot take the newest version — every reader slot is taken
    /// (``Configuration/maximumNumberOfReaders``) while frozen realms or observers share its
    /// version, or the file fails — keeps the version it had and returns `false`; its observers
    /// hear `.error` with the ``Realm/Error`` and its logger logs it.
    @discardableResult
    public func refresh() -> Bool {
        checkThread()
        guard !isFrozen, !isInWriteTransaction else { return false }
        guard refreshWithoutDelivering() else { return false }
        deliverNotifications()
        return true
    }

    /// Takes the newest version without delivering notifications; one that cannot be had is
    /// reported (see ``reportVersionFailure(_:)``) and the realm keeps the version it had.
    /// - Returns: Whether the version changed.
    func refreshWithoutDelivering() -> Bool {
        let before = reading.version
        do {
            try moveToNewestVersionKeepingOnFailure()
        } catch {
            reportVersionFailure(error)
            return false
        }
        return reading.version != before
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
                reportVersionFailure(error)
                return
            }
        }
        deliverNotifications()
        if reading.version < latest { notifier.listener?.retrySoon() }
    }

    /// Takes the newest version; if that needs a new reader slot (observers or frozen realms
    /// share the current snapshot) and none can be had, throws and keeps the current one.
    func moveToNewestVersionKeepingOnFailure() throws {
        try releaseSnapshot()
        try takeNewestSnapshot()
    }

    /// Releases the realm's snapshot, so the file can reuse the space of old versions; the
    /// next read takes a new snapshot. Accessors read before stay usable: they reload.
    ///
    /// A realm whose version frozen realms or observers share needs a reader slot of its own
    /// to let go of it; with every slot taken it keeps reading that version (and logs why).
    public func invalidate() {
        checkThread()
        guard !isFrozen else { return }
        if isInWriteTransaction { cancelWrite() }
        do {
            try releaseSnapshot()
        } catch {
            log(.warn, Realm.Error(error, url: file.url, doing: "Cannot release the version read of").message)
        }
    }
}
