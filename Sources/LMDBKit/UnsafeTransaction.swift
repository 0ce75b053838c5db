internal import CLMDB
import Foundation

/// A copyable view of an open transaction for the object store's hot paths.
///
/// It is valid only while the ``Transaction`` it came from is open (and, for a read
/// transaction, not reset). Values it returns point into the memory map: they are valid until
/// the transaction ends or, in a write transaction, until the next change.
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

    /// The corresponding LMDB function is `mdb_get`.
    @usableFromInline package func get(_ dbi: UInt32, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = lmdb("mdb_get") { mdb_get(handle, MDB_dbi(dbi), &k, &v) }
        if rc == MDB_SUCCESS { return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size) }
        if rc == MDB_NOTFOUND { return nil }
        try poisoned(rc, "mdb_get")
    }

    /// The corresponding LMDB function is `mdb_put`.
    /// - Returns: `false` if the key exists and `flags` holds `MDB_NOOVERWRITE` or `MDB_NODUPDATA`,
    ///   or `flags` holds `MDB_APPEND` and the key does not sort after every key present.
    @discardableResult
    package func put(_ dbi: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws -> Bool {
        if let poison = state.poison { throw poison }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = lmdb("mdb_put") { mdb_put(handle, MDB_dbi(dbi), &k, &v, flags) }
        if rc == MDB_SUCCESS { return true }
        // Refused, with nothing changed and the transaction usable: the key (or pair) exists
        // under `noOverwrite`/`noDuplicateData`, or the key does not sort after the last one
        // under `append` (LMDB compares it with the last key before touching any page).
        if rc == MDB_KEYEXIST && flags & UInt32(MDB_NOOVERWRITE | MDB_NODUPDATA | MDB_APPEND) != 0 { return false }
        try poisoned(rc, "mdb_put")
    }

    /// The corresponding LMDB function is `mdb_del`. With `value`, deletes that one value of a
    /// `duplicateSort` key.
    /// - Returns: Whether anything was deleted.
    @discardableResult
    package func delete(_ dbi: UInt32, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer? = nil) throws -> Bool {
        if let poison = state.poison { throw poison }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc: Int32
        if let value {
            var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            rc = lmdb("mdb_del") { mdb_del(handle, MDB_dbi(dbi), &k, &v) }
        } else {
            rc = lmdb("mdb_del") { mdb_del(handle, MDB_dbi(dbi), &k, nil) }
        }
        if rc == MDB_SUCCESS { return true }
        if rc == MDB_NOTFOUND { return false }
        try poisoned(rc, "mdb_del")
    }

    /// The corresponding LMDB function is `mdb_stat`.
    package func statistics(_ dbi: UInt32) throws -> Database.Statistics {
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

    /// The corresponding LMDB function is `mdb_drop` with `del` 0.
    package func empty(_ dbi: UInt32) throws {
        if let poison = state.poison { throw poison }
        let rc = lmdb("mdb_drop") { mdb_drop(handle, MDB_dbi(dbi), 0) }
        if rc != MDB_SUCCESS { try poisoned(rc, "mdb_drop") }
    }

    /// The snapshot's transaction ID (`mdb_txn_id`).
    package var id: Int { Int(mdb_txn_id(handle)) }
}
