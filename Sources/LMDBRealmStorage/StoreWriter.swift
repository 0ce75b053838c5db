package import LMDBKit

/// The one way a write changes the file. Every put, delete and empty of a database in a write
/// session passes through its writer, and each first moves the realm's generation on (through
/// the session's ``WriteSessionObserver``), so that bytes lent before — a `BorrowedRecord`, a
/// ``BorrowedBatch``, an accessor's cached record — are looked up again rather than read where
/// LMDB may have moved or reused their page. A write path cannot forget it: the transaction's
/// reading view (``StoreView/transaction``) cannot change anything, and nothing else in this
/// target holds an `UnsafeWriteTransaction` (`Scripts/check-layers.sh` checks that this file
/// alone takes one).
package struct StoreWriter {
    private let transaction: UnsafeWriteTransaction
    // unowned(unsafe): the realm (the observer) owns its write session, which owns this
    // writer; the session ends before the realm does.
    private unowned(unsafe) let observer: any WriteSessionObserver

    package init(_ transaction: borrowing Transaction, observer: any WriteSessionObserver) {
        self.transaction = transaction.unsafeWrite
        self.observer = observer
    }

    /// Bytes lent out before this point may move.
    @inline(__always)
    private func changing() {
        observer.writeSessionChanged()
    }

    /// `mdb_put`; see `UnsafeWriteTransaction.put(_:key:value:flags:)`.
    @discardableResult
    package func put(_ dbi: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws -> Bool {
        changing()
        return try transaction.put(dbi, key: key, value: value, flags: flags)
    }

    /// `mdb_del`, of one value of a `duplicateSort` key with `value`.
    @discardableResult
    package func delete(_ dbi: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer? = nil) throws -> Bool {
        changing()
        return try transaction.delete(dbi, key: key, value: value)
    }

    /// Empties the database (`mdb_drop` with `del` 0).
    package func empty(_ dbi: UInt32) throws {
        changing()
        try transaction.empty(dbi)
    }

    /// `mdb_cursor_put` at `cursor`.
    package func put(_ value: UnsafeRawBufferPointer, at cursor: borrowing UnsafeCursor, forKey key: UnsafeRawBufferPointer, flags: PutFlags = []) throws {
        changing()
        try transaction.put(value, at: cursor, forKey: key, flags: flags)
    }

    /// `mdb_cursor_put` at `cursor` unless `flags` forbid it (then `false`, nothing changed).
    package func insert(_ value: UnsafeRawBufferPointer, at cursor: borrowing UnsafeCursor, forKey key: UnsafeRawBufferPointer, flags: PutFlags) throws -> Bool {
        changing()
        return try transaction.insert(value, at: cursor, forKey: key, flags: flags)
    }

    /// `mdb_cursor_del`: deletes the entry under `cursor`.
    package func deleteCurrent(of cursor: borrowing UnsafeCursor) throws {
        changing()
        try transaction.deleteCurrent(of: cursor)
    }

    /// Runs `body`, which makes many changes in a row (a write's buffered index entries), with
    /// the generation moved on once before the first and once after the last, instead of once
    /// per change: nothing borrows bytes from the file while `body` runs. `batch` must not be
    /// kept past `body`.
    // Batch is copyable, and this is not generic: Swift 6.3's optimizer stops (signal 6) on
    // a closure that borrows a noncopyable batch, in release builds.
    package func batch(_ body: (Batch) throws -> Void) throws {
        changing()
        defer { changing() }
        try body(Batch(transaction: transaction))
    }

    /// The changes of one ``StoreWriter/batch(_:)``.
    package struct Batch {
        fileprivate let transaction: UnsafeWriteTransaction

        /// `mdb_cursor_put` at `cursor` unless `flags` forbid it (then `false`).
        package func insert(_ value: UnsafeRawBufferPointer, at cursor: borrowing UnsafeCursor, forKey key: UnsafeRawBufferPointer, flags: PutFlags) throws -> Bool {
            try transaction.insert(value, at: cursor, forKey: key, flags: flags)
        }
    }
}
