#ifndef LMDBREALM_KEY_ORDER_H
#define LMDBREALM_KEY_ORDER_H

#include <stddef.h>

/// The order of LMDB's default comparator (`memcmp` over the shorter length, then the shorter
/// key first): negative, 0 or positive as `a` sorts before, with or after `b`. It compares
/// eight bytes at a time in registers, where LMDB's own calls `memcmp` for every key it meets
/// on the way down a B-tree.
int lmdbkit_compare_keys(const void *a, size_t a_size, const void *b, size_t b_size);

#endif
