#ifndef LMDBREALM_KEY_ORDER_H
#define LMDBREALM_KEY_ORDER_H

#include <stddef.h>

/// The order of LMDB's default comparator (`memcmp` over the shorter length, then the shorter
/// key first): negative, 0 or positive as `a` sorts before, with or after `b`. It compares
/// eight bytes at a time in registers, where LMDB's own calls `memcmp` for every key it meets
/// on the way down a B-tree.
int lmdbkit_compare_keys(const void *a, size_t a_size, const void *b, size_t b_size);

/// Makes `lmdbkit_compare_keys` the comparator of the keys of database `dbi` (and of the
/// values, for a `MDB_DUPSORT` database), unless the database's flags ask for another order
/// (`MDB_INTEGERKEY`, `MDB_REVERSEKEY`, `MDB_INTEGERDUP`, `MDB_REVERSEDUP`). The order is the
/// default one, so files stay readable by every program that uses LMDB's comparator.
/// `txn` is the `MDB_txn *` that opened the handle, before any data access through it.
/// Returns 0, or the error of `mdb_dbi_flags`.
int lmdbkit_use_fast_key_order(void *txn, unsigned int dbi);

#endif
