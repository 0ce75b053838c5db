internal import CLMDB
import Foundation

/// A position in a database, moved in key order.
///
/// Cursors are lent to a closure by ``Transaction/withCursor(on:_:)`` and closed when it
/// returns. Each move lends the entry it reaches to `body` and returns what `body` returns, or
/// `nil` when there is no such entry:
///
/// ```swift
/// let firstKey = try txn.withCursor(on: db) { cursor in try cursor.first { Array($0.key) } }
/// ```
///
/// The forms without a closure only move, and say whether the cursor stands on an entry.
public struct Cursor: ~Copyable {
    @usableFromInline let unsafe: UnsafeCursor

    /// One key/value pair under the cursor, lent to a closure. Its bytes point into the memory
    /// map: they must not be stored or used outside the closure.
    public struct Entry {
        public let key: UnsafeRawBufferPointer
        public let value: UnsafeRawBufferPointer

        @usableFromInline init(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            self.key = key
            self.value = value
        }
    }

    init(transaction: UnsafeTransaction, dbi: UInt32) throws {
        unsafe = try UnsafeCursor(transaction: transaction, dbi: dbi)
    }

    @inlinable @inline(__always)
    func lend<R>(_ entry: UnsafeCursor.Entry?, _ body: (Entry) throws -> R) rethrows -> R? {
        guard let entry else { return nil }
        return try body(Entry(key: entry.key, value: entry.value))
    }

    /// Moves to the first entry (`MDB_FIRST`) and lends it to `body`.
    @inlinable public func first<R>(_ body: (Entry) throws -> R) throws -> R? { try lend(unsafe.first(), body) }
    /// Moves to the last entry (`MDB_LAST`) and lends it to `body`.
    @inlinable public func last<R>(_ body: (Entry) throws -> R) throws -> R? { try lend(unsafe.last(), body) }
    /// Moves to the next entry (`MDB_NEXT`; from an unpositioned cursor, to the first) and
    /// lends it to `body`.
    @inlinable public func next<R>(_ body: (Entry) throws -> R) throws -> R? { try lend(unsafe.next(), body) }
    /// Moves to the previous entry (`MDB_PREV`; from an unpositioned cursor, to the last) and
    /// lends it to `body`.
    @inlinable public func previous<R>(_ body: (Entry) throws -> R) throws -> R? { try lend(unsafe.previous(), body) }
    /// Moves to the next key, skipping the other values of this one (`MDB_NEXT_NODUP`).
    @inlinable public func nextKey<R>(_ body: (Entry) throws -> R) throws -> R? { try lend(unsafe.nextKey(), body) }
    /// Moves to the previous key, to its last value (`MDB_PREV_NODUP`).
    @inlinable public func previousKey<R>(_ body: (Entry) throws -> R) throws -> R? { try lend(unsafe.previousKey(), body) }
    /// Moves to the first value of the current key (`MDB_FIRST_DUP`).
    @inlinable public func firstValue<R>(_ body: (Entry) throws -> R) throws -> R? { try lend(unsafe.firstValue(), body) }
    /// Moves to the next value of the current key (`MDB_NEXT_DUP`).
    @inlinable public func nextValue<R>(_ body: (Entry) throws -> R) throws -> R? { try lend(unsafe.nextValue(), body) }
    /// Moves to the first key not less than `key` (`MDB_SET_RANGE`) and lends its entry to `body`.
    @inlinable public func seek<R>(atLeast key: UnsafeRawBufferPointer, _ body: (Entry) throws -> R) throws -> R? {
        try lend(unsafe.seek(atLeast: key), body)
    }
    /// Moves to `key` exactly (`MDB_SET_KEY`) and lends its entry to `body`.
    @inlinable public func seek<R>(exactly key: UnsafeRawBufferPointer, _ body: (Entry) throws -> R) throws -> R? {
        try lend(unsafe.seek(exactly: key), body)
    }

    /// Moves to the first entry (`MDB_FIRST`).
    /// - Returns: Whether there is one.
    @discardableResult public func first() throws -> Bool { try unsafe.first() != nil }
    /// Moves to the last entry (`MDB_LAST`).
    /// - Returns: Whether there is one.
    @discardableResult public func last() throws -> Bool { try unsafe.last() != nil }
    /// Moves to the next entry (`MDB_NEXT`).
    /// - Returns: Whether there is one.
    @discardableResult public func next() throws -> Bool { try unsafe.next() != nil }
    /// Moves to the previous entry (`MDB_PREV`).
    /// - Returns: Whether there is one.
    @discardableResult public func previous() throws -> Bool { try unsafe.previous() != nil }

    /// The number of values of the current key in a `duplicateSort` database
    /// (`mdb_cursor_count`).
    public func valueCount() throws -> Int { try unsafe.valueCount() }

    /// Stores a value at the cursor (`mdb_cursor_put`); with ``PutFlags/append`` this is the
    /// fast path for keys that arrive in order.
    public func put(_ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, flags: PutFlags = []) throws {
        try UnsafeWriteTransaction(unsafe.transaction).put(value, at: unsafe, forKey: key, flags: flags)
    }

    /// Deletes the entry under the cursor (`mdb_cursor_del`).
    public func deleteCurrent() throws { try UnsafeWriteTransaction(unsafe.transaction).deleteCurrent(of: unsafe) }

    /// Calls `body` with each entry whose key lies in `lower ..< upper` (`nil` bounds are
    /// open), ascending or descending, until `body` returns `false`.
    ///
    /// `body` receives the key and value bytes, which point into the memory map: they must not
    /// be stored or used outside the closure.
    public func forEach(
        from lower: [UInt8]? = nil, to upper: [UInt8]? = nil, reverse: Bool = false,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try unsafe.forEach(from: lower, to: upper, reverse: reverse, body)
    }
}

/// A cursor for the object store's hot paths, which hands out the map's bytes as pointers.
///
/// The pointer code of cursors lives here, for `UnsafeTransaction`'s users: the object store
/// wraps each entry at once in a type that checks it is still valid before reading it. lmdb.h:
/// "Values returned from the database are valid only until a subsequent update operation, or
/// the end of the transaction" — so in a read transaction an entry stays valid after the
/// cursor moves on, until the transaction ends or is reset; in a write transaction, until the
/// next change. ``Cursor`` is the public form, which lends each entry to a closure.
@usableFromInline package struct UnsafeCursor: ~Copyable {
    let handle: OpaquePointer
    let transaction: UnsafeTransaction

    /// One key/value pair under the cursor, pointing into the memory map (valid as the type's
    /// documentation says).
    @usableFromInline package struct Entry {
        @usableFromInline package var key: UnsafeRawBufferPointer
        @usableFromInline package var value: UnsafeRawBufferPointer
    }

    /// The corresponding LMDB function is `mdb_cursor_open`.
    package init(transaction: UnsafeTransaction, dbi: UInt32) throws {
        transaction.checkUsable("mdb_cursor_open")
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
        let rc = lmdb("mdb_cursor_get") { mdb_cursor_get(handle, &k, &v, op) }
        if rc == MDB_NOTFOUND { return nil }
        if rc != MDB_SUCCESS { try transaction.poisoned(rc, "mdb_cursor_get") }
        return Entry(
            key: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            value: UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// Moves to the first entry (`MDB_FIRST`).
    @usableFromInline package func first() throws -> Entry? { try move(MDB_FIRST) }
    /// Moves to the last entry (`MDB_LAST`).
    @usableFromInline package func last() throws -> Entry? { try move(MDB_LAST) }
    /// Moves to the next entry (`MDB_NEXT`); from an unpositioned cursor, to the first.
    @usableFromInline package func next() throws -> Entry? { try move(MDB_NEXT) }
    /// Moves to the previous entry (`MDB_PREV`); from an unpositioned cursor, to the last.
    @usableFromInline package func previous() throws -> Entry? { try move(MDB_PREV) }
    /// Moves to the next key, skipping the other values of this one (`MDB_NEXT_NODUP`).
    @usableFromInline package func nextKey() throws -> Entry? { try move(MDB_NEXT_NODUP) }
    /// Moves to the previous key, to its last value (`MDB_PREV_NODUP`).
    @usableFromInline package func previousKey() throws -> Entry? { try move(MDB_PREV_NODUP) }
    /// Moves to the first value of the current key (`MDB_FIRST_DUP`).
    @usableFromInline package func firstValue() throws -> Entry? { try move(MDB_FIRST_DUP) }
    /// Moves to the next value of the current key (`MDB_NEXT_DUP`).
    @usableFromInline package func nextValue() throws -> Entry? { try move(MDB_NEXT_DUP) }
    /// Moves to the first key not less than `key` (`MDB_SET_RANGE`).
    @usableFromInline package func seek(atLeast key: UnsafeRawBufferPointer) throws -> Entry? { try move(MDB_SET_RANGE, key: key) }
    /// Moves to `key` exactly (`MDB_SET_KEY`).
    @usableFromInline package func seek(exactly key: UnsafeRawBufferPointer) throws -> Entry? { try move(MDB_SET_KEY, key: key) }
    /// Moves to the entry of `key` and `value` exactly, in a `duplicateSort` database
    /// (`MDB_GET_BOTH`): one descent, however many values the key has.
    package func seek(exactly key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> Entry? {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = lmdb("mdb_cursor_get") { mdb_cursor_get(handle, &k, &v, MDB_GET_BOTH) }
        if rc == MDB_NOTFOUND { return nil }
        if rc != MDB_SUCCESS { try transaction.poisoned(rc, "mdb_cursor_get") }
        return Entry(
            key: UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            value: UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// The number of values of the current key in a `duplicateSort` database
    /// (`mdb_cursor_count`).
    package func valueCount() throws -> Int {
        var count = 0
        let rc = mdb_cursor_count(handle, &count)
        if rc != MDB_SUCCESS { try transaction.poisoned(rc, "mdb_cursor_count") }
        // Read from the file unchecked (a sub-database's record): `size_t` as `Int`.
        guard count >= 0 else {
            throw LMDBError(
                code: MDB_CORRUPTED, context: "mdb_cursor_count",
                finding: "the key's record counts \(UInt(bitPattern: count)) values, more than a file can hold: the file is damaged")
        }
        return count
    }

    /// Calls `body` with each entry whose key lies in `lower ..< upper` (`nil` bounds are
    /// open), ascending or descending, until `body` returns `false`.
    package func forEach(
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
extension UnsafeCursor {
    @inline(__always)
    func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int32 {
        b.withUnsafeBytes { b in
            var x = MDB_val(mv_size: a.count, mv_data: UnsafeMutableRawPointer(mutating: a.baseAddress))
            var y = MDB_val(mv_size: b.count, mv_data: UnsafeMutableRawPointer(mutating: b.baseAddress))
            return mdb_cmp(transaction.handle, mdb_cursor_dbi(handle), &x, &y)
        }
    }
}
