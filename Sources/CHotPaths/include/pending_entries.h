#ifndef LMDBREALM_PENDING_ENTRIES_H
#define LMDBREALM_PENDING_ENTRIES_H

#include <stddef.h>
#include <stdint.h>

/// An index or backlink entry a write has buffered (`PendingIndexEntries`): its database, its
/// key and value as a slice of the write's byte buffer (the value right after the key), and the
/// first 16 bytes of each as two big-endian words, zero-padded. 48 bytes.
typedef struct {
    uint64_t k0, k1, v0, v1;
    uint32_t dbi;
    /// Where the key starts in the byte buffer; the value follows it.
    uint32_t start;
    uint32_t key_count;
    uint32_t value_count;
} lmdbrealm_pending_entry;

/// The table of a write's pending entries: `count` of `capacity` in use at `base`. Grown by
/// `lmdbrealm_pending_table_reserve`, freed by `lmdbrealm_pending_table_release`; zeroed, it is
/// empty.
typedef struct {
    lmdbrealm_pending_entry *base;
    size_t count;
    size_t capacity;
    /// Whether `base` is an anonymous mapping (past 1 MiB) rather than from `malloc`.
    int mapped;
} lmdbrealm_pending_table;

/// Makes room for at least `minimum` entries, doubling the capacity: returns 0, or -1 (nothing
/// changed) if memory ran out. Past 1 MiB the table is an anonymous mapping grown by `mremap`:
/// the kernel moves its pages, so growing copies nothing and touches no page twice.
int lmdbrealm_pending_table_reserve(lmdbrealm_pending_table *table, size_t minimum);

/// Frees the table's memory and empties it.
void lmdbrealm_pending_table_release(lmdbrealm_pending_table *table);

/// Sorts `entries` by database, then key, then value, keys and values in LMDB's default order
/// (bytes as `memcmp` compares them, then the shorter first); `bytes` is the buffer the slices
/// point into, read only for keys or values longer than 16 bytes. Entries equal in all three
/// come out side by side, in no particular order.
void lmdbrealm_sort_pending_entries(lmdbrealm_pending_entry *entries, size_t count, const uint8_t *bytes);

/// The same order by heapsort alone: the sort's fallback once quicksort's partitions go too deep
/// (which ordinary inputs never reach), for tests.
void lmdbrealm_heap_sort_pending_entries(lmdbrealm_pending_entry *entries, size_t count, const uint8_t *bytes);

#endif
