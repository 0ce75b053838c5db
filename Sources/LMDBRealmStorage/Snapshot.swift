import Foundation
internal import LMDBKit
import LMDBRealmFormat

/// One pinned version of a file: an LMDB read transaction, shared by the realm that took it,
/// the frozen realms made from it, and the observers that diff against it.
///
/// A realm reuses its snapshot in place (reset and renew) while nothing else holds it; once it
/// is shared, moving to a newer version takes a new transaction and leaves this one pinned
/// until its last holder lets go.
package final class Snapshot: @unchecked Sendable {
    // @unchecked Sendable: the transaction is reset or renewed only by a realm that holds the
    // sole reference (checked with isKnownUniquelyReferenced). While shared, it is only read,
    // and LMDB allows reads of one read transaction (MDB_NOTLS) from several threads once its
    // databases' records are loaded, which `warm` does before a snapshot is shared.
    private var transaction: Transaction?
    package let view: StoreView
    package let file: StoreFile
    /// The LMDB transaction ID of the version, while not reset.
    package private(set) var version: Int
    package private(set) var isReset = false

    /// Pins the newest committed version of `file`.
    package init(file: StoreFile) throws {
        let txn = try Transaction(environment: file.environment, readOnly: true)
        view = StoreView(txn.unsafe, verifiesChecksums: file.verifiesChecksums)
        version = txn.id
        transaction = consume txn
        self.file = file
        try openHandles()
        file.versions.pin(version)
    }

    /// A snapshot that pins no version yet: a read transaction begun and reset at once, so that
    /// it holds a reader slot for ``renew()`` — which then cannot meet a full reader table.
    package init(reservingReaderSlotOf file: StoreFile) throws {
        let txn = try Transaction(environment: file.environment, readOnly: true)
        view = StoreView(txn.unsafe, verifiesChecksums: file.verifiesChecksums)
        version = txn.id
        txn.reset()
        transaction = consume txn
        self.file = file
        isReset = true
    }

    /// Makes every class of the version readable: if another process added classes or
    /// indexes, their database handles are opened and the snapshot taken again (a handle
    /// opened after a transaction began is unknown to it).
    /// - Throws: `LMDBError`; the snapshot is reset then, pinning nothing.
    private func openHandles() throws {
        do {
            while try file.openHandlesOfCatalog(in: view) {
                transaction?.reset()
                try transaction?.renew()
                version = view.version
            }
        } catch {
            transaction?.reset()
            isReset = true
            throw error
        }
    }

    deinit {
        if !isReset { file.versions.unpin(version) }
        transaction.take()?.abort()
    }

    /// Releases the version, keeping the transaction for ``renew()``.
    package func reset() {
        guard !isReset else { return }
        transaction?.reset()
        file.versions.unpin(version)
        isReset = true
    }

    /// Pins the newest committed version again.
    package func renew() throws {
        guard isReset else { return }
        try transaction?.renew()
        version = view.version
        try openHandles()
        file.versions.pin(version)
        isReset = false
    }

    /// Loads, into the transaction, the records of every database a reader may touch, so that
    /// readers on several threads only read it afterwards (LMDB refreshes a named database's
    /// record in the transaction on its first use).
    /// - Throws: `LMDBError` if a database cannot be read; the snapshot must not be shared then.
    package func warm(_ tables: [Table]) throws {
        let txn = view.transaction
        _ = try txn.statistics(file.meta.dbi)
        _ = try txn.statistics(file.catalog.dbi)
        // A table another thread made after this version began is not part of it (and its
        // database handle is unknown to the transaction).
        for table in tables where table.isUsable(in: txn) {
            _ = try txn.statistics(table.database.dbi)
            for index in table.indexes.values { _ = try txn.statistics(index.dbi) }
        }
    }
}

/// The versions of one file pinned by this process, counted for
/// `Realm.Configuration.maximumNumberOfActiveVersions`.
package final class PinnedVersions: @unchecked Sendable {
    // @unchecked Sendable: `counts` is only touched under `lock`.
    private let lock = NSLock()
    private var counts: [Int: Int] = [:]

    package func pin(_ version: Int) {
        lock.withLock { counts[version, default: 0] += 1 }
    }

    func unpin(_ version: Int) {
        lock.withLock {
            let n = counts[version, default: 1] - 1
            counts[version] = n == 0 ? nil : n
        }
    }

    /// How many distinct versions are pinned.
    package var count: Int { lock.withLock { counts.count } }

    /// The oldest pinned version, if any.
    package var oldest: Int? { lock.withLock { counts.keys.min() } }
}
