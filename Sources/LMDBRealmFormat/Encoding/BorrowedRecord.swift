/// A record an accessor borrowed from the memory map: where it is, its size, and the realm
/// generation it was read at.
///
/// The bytes stay valid only while that generation is the realm's own: a new snapshot, any
/// change inside a write and the end of a write move the realm's generation on, and the pages
/// behind the record may then be reused. So the record is only ever read through
/// ``read(at:_:)``, which checks the generation, and its bytes are not kept anywhere else.
@usableFromInline
package struct BorrowedRecord {
    @usableFromInline var base: UnsafeRawPointer?
    @usableFromInline var count: Int
    /// The generation the record (or, for an accessor made from a key, the key) was read at.
    @usableFromInline package private(set) var generation: UInt64

    /// Nothing borrowed: an accessor that has not read its record yet.
    @inlinable
    package init() {
        base = nil
        count = 0
        generation = 0
    }

    /// `record`, borrowed at `generation`.
    @inlinable @inline(__always)
    package init(_ record: UnsafeRawBufferPointer, at generation: UInt64) {
        base = record.baseAddress
        count = record.count
        self.generation = generation
    }

    /// No record, but a key current at `generation` (an accessor made from an index's keys:
    /// it reads its primary key from its key, and looks its record up for anything else).
    @inlinable @inline(__always)
    package init(keyOnlyAt generation: UInt64) {
        base = nil
        count = 0
        self.generation = generation
    }

    /// Whether the record is held and still valid at `generation`.
    @inlinable @inline(__always)
    package func isCurrent(at generation: UInt64) -> Bool {
        self.generation == generation && base != nil
    }

    /// Calls `body` with the record, which must be current at `generation` (the caller looked
    /// it up again otherwise); a stale record stops the process rather than being read.
    @inlinable @inline(__always)
    package func read<R>(at generation: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard isCurrent(at: generation) else { staleRecord() }
        return try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    @usableFromInline func staleRecord() -> Never {
        fatalError("A record was read after the version it was borrowed from changed")
    }
}
