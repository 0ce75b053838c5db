#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H

// The system LMDB headers, from Debian's liblmdb-dev.
#include <lmdb.h>

/// Asks the processor to start loading the cache line at `address` for reading, without
/// waiting for it: a scan calls it for records it will reach shortly.
static inline void clmdb_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
