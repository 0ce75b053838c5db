#ifndef LMDBREALM_PREFETCH_H
#define LMDBREALM_PREFETCH_H

/// Asks the processor to bring the cache line at `address` in for reading (`__builtin_prefetch`
/// with high locality), without waiting for it. A hint: it never faults, even on an address
/// that is not mapped. Static inline, so that Swift code inlines it (a scan calls it for the
/// records a few places ahead of the one it reads).
static inline void lmdbrealm_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
