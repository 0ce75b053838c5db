internal import CLMDB

/// Asks the processor to bring the cache line at `address` in for reading (`__builtin_prefetch`
/// with high locality), without waiting for it. A hint: it never faults, even on an address
/// that is not mapped.
@inline(__always)
package func prefetch(_ address: UnsafeRawPointer) {
    clmdb_prefetch(address)
}
