internal import CHotPaths
internal import CLMDB

/// Gives database `dbi`, just opened by `txn`, LMDBKit's comparator of keys (and of the values
/// of a `duplicateSort` database): LMDB's default order, compared eight bytes at a time in
/// registers rather than by a `memcmp` call for every key a B-tree descent meets. Databases
/// with another order (`integerKey`, reverse keys) keep LMDB's. Files are unchanged: the order
/// is the one every program using LMDB's default comparator reads and writes.
///
/// lmdb.h: a comparator must be set "before any data access functions are used" on the
/// handle; both places that open handles call this right after `mdb_dbi_open`.
func useFastKeyOrder(_ txn: OpaquePointer, _ dbi: MDB_dbi, onError: (Int32) throws -> Void) rethrows {
    var flags: UInt32 = 0
    let rc = mdb_dbi_flags(txn, dbi, &flags)
    if rc != MDB_SUCCESS { return try onError(rc) }
    if flags & UInt32(MDB_INTEGERKEY | MDB_REVERSEKEY) == 0 {
        let rc = mdb_set_compare(txn, dbi, fastKeyOrder)
        if rc != MDB_SUCCESS { return try onError(rc) }
    }
    if flags & UInt32(MDB_DUPSORT) != 0, flags & UInt32(MDB_INTEGERDUP | MDB_REVERSEDUP) == 0 {
        let rc = mdb_set_dupsort(txn, dbi, fastKeyOrder)
        if rc != MDB_SUCCESS { return try onError(rc) }
    }
}

/// CHotPaths' comparator as LMDB's `MDB_cmp_func`, called by LMDB directly on every key it
/// compares (a Swift closure around it cost 5 % of a primary-key lookup's instructions).
/// CHotPaths declares `lmdbkit_value` with `MDB_val`'s layout, since it includes no lmdb.h; the
/// two layouts are checked to agree before the function is handed over.
private var fastKeyOrder: @convention(c) (UnsafePointer<MDB_val>?, UnsafePointer<MDB_val>?) -> Int32 {
    precondition(
        MemoryLayout<lmdbkit_value>.size == MemoryLayout<MDB_val>.size
            && MemoryLayout<lmdbkit_value>.offset(of: \.mv_size) == MemoryLayout<MDB_val>.offset(of: \.mv_size)
            && MemoryLayout<lmdbkit_value>.offset(of: \.mv_data) == MemoryLayout<MDB_val>.offset(of: \.mv_data),
        "CHotPaths' lmdbkit_value does not have the layout of lmdb.h's MDB_val")
    let compare: @convention(c) (UnsafePointer<lmdbkit_value>?, UnsafePointer<lmdbkit_value>?) -> Int32 = lmdbkit_compare_values
    return unsafeBitCast(compare, to: (@convention(c) (UnsafePointer<MDB_val>?, UnsafePointer<MDB_val>?) -> Int32).self)
}

/// The order of two keys under LMDB's default comparator: negative, 0 or positive as `a`
/// sorts before, with or after `b` (the comparator ``useFastKeyOrder(_:_:onError:)`` installs).
package func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    Int(lmdbkit_compare_keys(a.baseAddress, a.count, b.baseAddress, b.count))
}
