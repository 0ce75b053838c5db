#ifndef LMDBREALM_KEY_ORDER_H
#define LMDBREALM_KEY_ORDER_H

#include <stddef.h>

/// The order of LMDB's default comparator (`memcmp` over the shorter length, then the shorter
/// key first): negative, 0 or positive as `a` sorts before, with or after `b`. It compares
/// eight bytes at a time in registers, where LMDB's own calls `memcmp` for every key it meets
/// on the way down a B-tree.
int lmdbkit_compare_keys(const void *a, size_t a_size, const void *b, size_t b_size);

/// A value as LMDB lends it to a comparator: the layout of lmdb.h's `MDB_val`, declared here so
/// that this module needs no lmdb.h (LMDBKit checks that the two layouts agree).
typedef struct lmdbkit_value {
    size_t mv_size;
    void *mv_data;
} lmdbkit_value;

/// `lmdbkit_compare_keys` with the signature of LMDB's `MDB_cmp_func`, which LMDBKit gives
/// `mdb_set_compare` and `mdb_set_dupsort` (one call, no thunk, on every key comparison).
int lmdbkit_compare_values(const lmdbkit_value *a, const lmdbkit_value *b);

#endif
