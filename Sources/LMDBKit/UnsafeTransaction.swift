internal import CLMDB
import Foundation

/// A copyable view of an open transaction for the object store's hot paths: it reads. (What
/// changes a write transaction's databases is ``UnsafeWriteTransaction``.)
///
/// It is usable only while the ``Transaction`` it came from is open (and, for a read
/// transaction, not reset): used afterwards, it stops the process, naming the operation,
/// rather than hand a freed handle to LMDB. Values it returns point into the memory map: they
/// are valid until the transaction ends or, in a write transaction, until the next change.
@usableFromInline
package struct UnsafeTransaction {
    @usableFromInline let handle: OpaquePointer
    let state: Transaction.State

    init(handle: OpaquePointer, state: Transaction.State) {
        self.handle = handle
        self.state = state
    }

    /// See ``Transaction/canUse(_:)``.
    package func canUse(_ db: Database) -> Bool {
        db.dbi < state.handleCeiling || db.dbi < 2 || state.created.contains(db) || state.inherited.contains(db)
    }

    /// Remembers the first error that left the transaction unusable and rethrows it; later
    /// operations throw it again instead of LMDB's `MDB_BAD_TXN`.
    func poisoned(_ rc: Int32, _ operation: @autoclosure () -> String) throws -> Never {
        if let poison = state.poison { throw poison }
        do {
            try fail(rc, operation())
        } catch {
            if error.code == MDB_MAP_FULL || error.code == MDB_TXN_FULL || error.code == MDB_PANIC
                || error.code == ENOSPC || error.code == EIO
            {
                state.poison = error
            }
            throw error
        }
        fatalError("unreachable")
    }

    /// Stops the process if the transaction has ended or been reset.
    @inline(__always)
    func checkUsable(_ operation: StaticString) {
        if state.ended || state.isReset { Self.unusable(operation, reset: !state.ended) }
    }

    private static func unusable(_ operation: StaticString, reset: Bool) -> Never {
        let when = reset ? "after its read transaction was reset" : "after its transaction ended"
        fatalError("LMDBKit: \(operation) on a transaction \(when): its handle and the values it returned are no longer valid")
    }

    /// The corresponding LMDB function is `mdb_get`.
    @usableFromInline package func get(_ dbi: UInt32, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        checkUsable("mdb_get")
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = lmdb("mdb_get") { mdb_get(handle, MDB_dbi(dbi), &k, &v) }
        if rc == MDB_SUCCESS { return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size) }
        if rc == MDB_NOTFOUND { return nil }
        try poisoned(rc, "mdb_get")
    }

    /// The corresponding LMDB function is `mdb_stat`.
    package func statistics(_ dbi: UInt32) throws -> Database.Statistics {
        checkUsable("mdb_stat")
        var stat = MDB_stat()
        let rc = lmdb("mdb_stat") { mdb_stat(handle, MDB_dbi(dbi), &stat) }
        if rc != MDB_SUCCESS { try poisoned(rc, "mdb_stat") }
        // The counts come from the database's record in the file, unchecked by LMDB; `size_t`
        // reads as `Int`, so a damaged count past `Int.max` would be negative.
        for (name, count) in [
            ("entries", stat.ms_entries), ("branch pages", stat.ms_branch_pages), ("leaf pages", stat.ms_leaf_pages),
            ("overflow pages", stat.ms_overflow_pages),
        ] where count < 0 {
            throw LMDBError(
                code: MDB_CORRUPTED, context: "mdb_stat",
                finding: "the database's record counts \(UInt(bitPattern: count)) \(name), more than a file can hold: the file is damaged")
        }
        return Database.Statistics(
            entries: stat.ms_entries, depth: Int(stat.ms_depth), branchPages: stat.ms_branch_pages,
            leafPages: stat.ms_leaf_pages, overflowPages: stat.ms_overflow_pages)
    }

    /// The snapshot's transaction ID (`mdb_txn_id`).
    package var id: Int {
        checkUsable("mdb_txn_id")
        return Int(mdb_txn_id(handle))
    }
}

/// A copyable view of an open write transaction that changes its databases: `mdb_put`,
/// `mdb_del`, `mdb_drop` and their cursor forms. Usable, like ``UnsafeTransaction``, only while
/// the transaction is open.
@usableFromInline
package struct UnsafeWriteTransaction {
    /// The same transaction, for reading.
    package let reads: UnsafeTransaction

    init(_ reads: UnsafeTransaction) {
        self.reads = reads
    }

    /// The corresponding LMDB function is `mdb_put`.
    /// - Returns: `false` if the key exists and `flags` holds `MDB_NOOVERWRITE` or `MDB_NODUPDATA`,
    ///   or `flags` holds `MDB_APPEND` and the key does not sort after every key present.
    @discardableResult
    package func put(_ dbi: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws -> Bool {
        reads.checkUsable("mdb_put")
        if let poison = reads.state.poison { throw poison }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = lmdb("mdb_put") { mdb_put(reads.handle, MDB_dbi(dbi), &k, &v, flags) }
        if rc == MDB_SUCCESS { return true }
        // Refused, with nothing changed and the transaction usable: the key (or pair) exists
        // under `noOverwrite`/`noDuplicateData`, or the key does not sort after the last one
        // under `append` (LMDB compares it with the last key before touching any page).
        if rc == MDB_KEYEXIST && flags & UInt32(MDB_NOOVERWRITE | MDB_NODUPDATA | MDB_APPEND) != 0 { return false }
        try reads.poisoned(rc, "mdb_put")
    }

    /// The corresponding LMDB function is `mdb_del`. With `value`, deletes that one value of a
    /// `duplicateSort` key.
    /// - Returns: Whether anything was deleted.
    @discardableResult
    package func delete(_ dbi: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer? = nil) throws -> Bool {
        reads.checkUsable("mdb_del")
        if let poison = reads.state.poison { throw poison }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc: Int32
        if let value {
            var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            rc = lmdb("mdb_del") { mdb_del(reads.handle, MDB_dbi(dbi), &k, &v) }
        } else {
            rc = lmdb("mdb_del") { mdb_del(reads.handle, MDB_dbi(dbi), &k, nil) }
        }
        if rc == MDB_SUCCESS { return true }
        if rc == MDB_NOTFOUND { return false }
        try reads.poisoned(rc, "mdb_del")
    }

    /// The corresponding LMDB function is `mdb_drop` with `del` 0.
    package func empty(_ dbi: UInt32) throws {
        reads.checkUsable("mdb_drop")
        if let poison = reads.state.poison { throw poison }
        let rc = lmdb("mdb_drop") { mdb_drop(reads.handle, MDB_dbi(dbi), 0) }
        if rc != MDB_SUCCESS { try reads.poisoned(rc, "mdb_drop") }
    }

    /// Stores a value at `cursor` (`mdb_cursor_put`); with ``PutFlags/append`` this is the
    /// fast path for keys that arrive in order.
    package func put(_ value: UnsafeRawBufferPointer, at cursor: borrowing UnsafeCursor, forKey key: UnsafeRawBufferPointer, flags: PutFlags = []) throws {
        reads.checkUsable("mdb_cursor_put")
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = lmdb("mdb_cursor_put") { mdb_cursor_put(cursor.handle, &k, &v, flags.rawValue) }
        if rc != MDB_SUCCESS { try reads.poisoned(rc, "mdb_cursor_put") }
    }

    /// Stores a value at `cursor` (`mdb_cursor_put`) unless `flags` forbid it: returns false,
    /// with nothing changed, when the key (or pair) exists under `noOverwrite` or
    /// `noDuplicateData`, or the key does not sort last under `append`. Successive puts of
    /// nearby keys through one cursor skip the descent from the root that `mdb_put` makes
    /// each time (LMDB looks on the cursor's page first).
    package func insert(_ value: UnsafeRawBufferPointer, at cursor: borrowing UnsafeCursor, forKey key: UnsafeRawBufferPointer, flags: PutFlags) throws -> Bool {
        reads.checkUsable("mdb_cursor_put")
        if let poison = reads.state.poison { throw poison }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = lmdb("mdb_cursor_put") { mdb_cursor_put(cursor.handle, &k, &v, flags.rawValue) }
        if rc == MDB_SUCCESS { return true }
        if rc == MDB_KEYEXIST && flags.rawValue & UInt32(MDB_NOOVERWRITE | MDB_NODUPDATA | MDB_APPEND) != 0 { return false }
        try reads.poisoned(rc, "mdb_cursor_put")
    }

    /// Deletes the entry under `cursor` (`mdb_cursor_del`).
    package func deleteCurrent(of cursor: borrowing UnsafeCursor) throws {
        reads.checkUsable("mdb_cursor_del")
        let rc = lmdb("mdb_cursor_del") { mdb_cursor_del(cursor.handle, 0) }
        if rc != MDB_SUCCESS { try reads.poisoned(rc, "mdb_cursor_del") }
    }
}
