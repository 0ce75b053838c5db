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

/// Sorts `entries` by database, then key, then value, keys and values in LMDB's default order
/// (bytes as `memcmp` compares them, then the shorter first); `bytes` is the buffer the slices
/// point into, read only for keys or values longer than 16 bytes. Entries equal in all three
/// come out side by side, in no particular order.
void lmdbrealm_sort_pending_entries(lmdbrealm_pending_entry *entries, size_t count, const uint8_t *bytes);

/// The same order by heapsort alone: the sort's fallback once quicksort's partitions go too deep
/// (which ordinary inputs never reach), for tests.
void lmdbrealm_heap_sort_pending_entries(lmdbrealm_pending_entry *entries, size_t count, const uint8_t *bytes);

#endif
