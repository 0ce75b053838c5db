public import LMDBRealmFormat

/// A batch of objects read in key order from one version of the file: their keys and records,
/// borrowed from the memory map at one realm generation.
///
/// As with ``BorrowedRecord``, the bytes stay valid only while that generation is the realm's
/// own; an entry is only ever read through ``withEntry(_:at:_:)``, which checks it.
@usableFromInline
package struct BorrowedBatch {
    package init() {}

    @usableFromInline var entries = ContiguousArray<(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer)>()
    /// The generation the batch was read at.
    @usableFromInline package private(set) var generation: UInt64 = 0

    package var count: Int { entries.count }
    package var isEmpty: Bool { entries.isEmpty }

    /// Empties the batch and lets `fill` append the entries read at `generation`.
    package mutating func refill<R>(
        at generation: UInt64,
        _ fill: (inout ContiguousArray<(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer)>) throws -> R
    ) rethrows -> R {
        entries.removeAll(keepingCapacity: true)
        self.generation = generation
        return try fill(&entries)
    }

    /// Calls `body` with entry `i`'s key and record; the batch must be current at
    /// `generation` (a stale batch stops the process rather than being read).
    @inlinable @inline(__always)
    package func withEntry<R>(_ i: Int, at generation: UInt64, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> R) -> R {
        guard generation == self.generation else { staleBatch() }
        let entry = entries[i]
        return body(entry.key, entry.record)
    }

    /// Starts loading entry `i`'s record into the cache, if the batch is current.
    @inlinable @inline(__always)
    package func prefetch(_ i: Int, at generation: UInt64) {
        if generation == self.generation { Record.prefetch(entries[i].record) }
    }

    @usableFromInline func staleBatch() -> Never {
        fatalError("A batch of records was read after the version it was borrowed from changed")
    }
}
