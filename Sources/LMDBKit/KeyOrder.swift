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
    let rc = lmdbkit_use_fast_key_order(UnsafeMutableRawPointer(txn), dbi)
    if rc != MDB_SUCCESS { try onError(rc) }
}

/// The order of two keys under LMDB's default comparator: negative, 0 or positive as `a`
/// sorts before, with or after `b` (the comparator ``useFastKeyOrder(_:_:onError:)`` installs).
package func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    Int(lmdbkit_compare_keys(a.baseAddress, a.count, b.baseAddress, b.count))
}
