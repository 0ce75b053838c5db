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
    // LMDB calls the comparator with the two values; CHotPaths compares their bytes (a literal
    // closure, so that Swift forms the C function pointer LMDB needs).
    if flags & UInt32(MDB_INTEGERKEY | MDB_REVERSEKEY) == 0 {
        let rc = mdb_set_compare(txn, dbi) { a, b in
            lmdbkit_compare_keys(a.unsafelyUnwrapped.pointee.mv_data, a.unsafelyUnwrapped.pointee.mv_size,
                                 b.unsafelyUnwrapped.pointee.mv_data, b.unsafelyUnwrapped.pointee.mv_size)
        }
        if rc != MDB_SUCCESS { return try onError(rc) }
    }
    if flags & UInt32(MDB_DUPSORT) != 0, flags & UInt32(MDB_INTEGERDUP | MDB_REVERSEDUP) == 0 {
        let rc = mdb_set_dupsort(txn, dbi) { a, b in
            lmdbkit_compare_keys(a.unsafelyUnwrapped.pointee.mv_data, a.unsafelyUnwrapped.pointee.mv_size,
                                 b.unsafelyUnwrapped.pointee.mv_data, b.unsafelyUnwrapped.pointee.mv_size)
        }
        if rc != MDB_SUCCESS { return try onError(rc) }
    }
}

/// The order of two keys under LMDB's default comparator: negative, 0 or positive as `a`
/// sorts before, with or after `b` (the comparator ``useFastKeyOrder(_:_:onError:)`` installs).
package func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    Int(lmdbkit_compare_keys(a.baseAddress, a.count, b.baseAddress, b.count))
}
