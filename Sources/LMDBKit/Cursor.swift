internal import CLMDB
import Foundation

/// A position in a database, moved in key order.
///
/// Cursors are lent to a closure by ``Transaction/withCursor(on:_:)`` and closed when it
/// returns. The key and value bytes of an ``Entry`` point into the memory map: they are valid
/// until the cursor moves or the closure returns, and must not be stored.
public struct Cursor: ~Copyable {
    let handle: OpaquePointer
    let transaction: UnsafeTransaction

    /// One key/value pair under the cursor. Its bytes must not outlive the cursor's closure.
    public struct Entry {
        public var key: UnsafeRawBufferPointer
        public var value: UnsafeRawBufferPointer
    }

    /// The corresponding LMDB function is `mdb_cursor_open`.
    package init(transaction: UnsafeTransaction, dbi: UInt32) throws {
        var cursor: OpaquePointer?
        let rc = lmdb("mdb_cursor_open") { mdb_cursor_open(transaction.handle, MDB_dbi(dbi), &cursor) }
        if rc != MDB_SUCCESS { try transaction.poisoned(rc, "mdb_cursor_open") }
        self.handle = cursor!
        self.transaction = transaction
    }

    deinit {
        // lmdb.h: "A cursor in a read-only transaction must be closed explicitly"; closing
        // one in a write transaction before it ends is allowed too.
        mdb_cursor_close(handle)
    }

    @inline(__always)
    private func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws -> Entry? {
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
        var v = MDB_val()
        let rc = mdb_cursor_get(handle, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        if rc != MDB_SUCCESS { try transaction.poisoned(rc, "mdb_cursor_get") }
        return Entry(
            key: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            value: UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// Moves to the first entry (`MDB_FIRST`).
    public func first() throws -> Entry? { try move(MDB_FIRST) }
    /// Moves to the last entry (`MDB_LAST`).
    public func last() throws -> Entry? { try move(MDB_LAST) }
    /// Moves to the next entry (`MDB_NEXT`); from an unpositioned cursor, to the first.
    public func next() throws -> Entry? { try move(MDB_NEXT) }
    /// Moves to the previous entry (`MDB_PREV`); from an unpositioned cursor, to the last.
    public func previous() throws -> Entry? { try move(MDB_PREV) }
    /// Moves to the next key, skipping the other values of this one (`MDB_NEXT_NODUP`).
    public func nextKey() throws -> Entry? { try move(MDB_NEXT_NODUP) }
    /// Moves to the previous key, to its last value (`MDB_PREV_NODUP`).
    public func previousKey() throws -> Entry? { try move(MDB_PREV_NODUP) }
    /// Moves to the first value of the current key (`MDB_FIRST_DUP`).
    public func firstValue() throws -> Entry? { try move(MDB_FIRST_DUP) }
    /// Moves to the next value of the current key (`MDB_NEXT_DUP`).
    public func nextValue() throws -> Entry? { try move(MDB_NEXT_DUP) }
    /// Moves to the first key not less than `key` (`MDB_SET_RANGE`).
    public func seek(atLeast key: UnsafeRawBufferPointer) throws -> Entry? { try move(MDB_SET_RANGE, key: key) }
    /// Moves to `key` exactly (`MDB_SET_KEY`).
    public func seek(exactly key: UnsafeRawBufferPointer) throws -> Entry? { try move(MDB_SET_KEY, key: key) }

    /// The number of values of the current key in a `duplicateSort` database
    /// (`mdb_cursor_count`).
    public func valueCount() throws -> Int {
        var count = 0
        let rc = mdb_cursor_count(handle, &count)
        if rc != MDB_SUCCESS { try transaction.poisoned(rc, "mdb_cursor_count") }
        return count
    }

    /// Stores a value at the cursor (`mdb_cursor_put`); with ``PutFlags/append`` this is the
    /// fast path for keys that arrive in order.
    public func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, flags: PutFlags = []) throws {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = lmdb("mdb_cursor_put") { mdb_cursor_put(handle, &k, &v, flags.rawValue) }
        if rc != MDB_SUCCESS { try transaction.poisoned(rc, "mdb_cursor_put") }
    }

    /// Deletes the entry under the cursor (`mdb_cursor_del`).
    public func deleteCurrent() throws {
        let rc = lmdb("mdb_cursor_del") { mdb_cursor_del(handle, 0) }
        if rc != MDB_SUCCESS { try transaction.poisoned(rc, "mdb_cursor_del") }
    }

    /// Calls `body` with each entry whose key lies in `lower ..< upper` (`nil` bounds are
    /// open), ascending or descending, until `body` returns `false`.
    public func forEach(
        from lower: [UInt8]? = nil, to upper: [UInt8]? = nil, reverse: Bool = false,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        // No key is less than the empty key, and LMDB cannot seek to it.
        let lower = lower?.isEmpty == true ? nil : lower
        if upper?.isEmpty == true { return }
        if !reverse {
            var entry = try lower.map { l in try l.withUnsafeBytes { try seek(atLeast: $0) } } ?? first()
            while let e = entry {
                if let upper, compare(e.key, upper) >= 0 { return }
                guard try body(e.key, e.value) else { return }
                entry = try next()
            }
        } else {
            var entry: Entry?
            if let upper {
                entry = try upper.withUnsafeBytes { try seek(atLeast: $0) } != nil ? previous() : last()
            } else {
                entry = try last()
            }
            while let e = entry {
                if let lower, compare(e.key, lower) < 0 { return }
                guard try body(e.key, e.value) else { return }
                entry = try previous()
            }
        }
    }
}

/// Compares `a` with `b` in the key order of the cursor's database (`mdb_cmp`), which is not
/// byte-wise for `integerKey` and `reverseKey` databases.
extension Cursor {
    @inline(__always)
    func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int32 {
        b.withUnsafeBytes { b in
            var x = MDB_val(mv_size: a.count, mv_data: UnsafeMutableRawPointer(mutating: a.baseAddress))
            var y = MDB_val(mv_size: b.count, mv_data: UnsafeMutableRawPointer(mutating: b.baseAddress))
            return mdb_cmp(transaction.handle, mdb_cursor_dbi(handle), &x, &y)
        }
    }
}
