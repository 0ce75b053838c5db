import Foundation
public import LMDBKit
package import LMDBRealmFormat

/// Who reads through Storage: the file it reads, and where a read that cannot go on stops (a
/// read does not throw; the realm implements this with the file, class and write named).
package protocol StoreReader: AnyObject {
    var file: StoreFile { get }
    func cannotRead(_ what: String, _ error: any Error) -> Never
}

/// One version of the file as reads see it: a snapshot's read transaction, or the current
/// write's transaction (with the write's own changes).
///
/// A view is valid while its transaction is open (and, for a snapshot, not reset). The bytes it
/// lends — keys and records — point into the memory map: they stay valid until the transaction
/// ends or, in a write, until the next change, and must not be kept longer (accessors check the
/// realm's generation before reusing them). Failures are thrown as they come from the file;
/// callers that cannot throw stop through `Realm.cannotRead`.
@usableFromInline
package struct StoreView {
    @usableFromInline package let transaction: UnsafeTransaction
    /// Whether values other than records (list chunks) are checked against their checksums as
    /// they are read (`Realm.Configuration.verifiesChecksums`; records are checked by `Table`).
    package let verifiesChecksums: Bool

    /// Whether the view is a write's (its transaction changes the file).
    package let isWrite: Bool

    package init(_ transaction: UnsafeTransaction, verifiesChecksums: Bool = false, isWrite: Bool = false) {
        self.transaction = transaction
        self.verifiesChecksums = verifiesChecksums
        self.isWrite = isWrite
    }

    /// The LMDB transaction ID of the version: it changes exactly when the data does.
    package var version: Int { transaction.id }

    /// The committed version whose bytes the view reads where it has not changed them: a
    /// snapshot's own, or the version a write began from (see ``Table/checkedVersion``).
    package var checkedVersion: Int { isWrite ? transaction.id - 1 : transaction.id }

    /// The record stored under `key` in `table`, or `nil`; its header is not checked yet.
    @inlinable @inline(__always)
    package func record(of table: Table, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try transaction.get(table.database.dbi, key: key)
    }

    /// The number of objects stored in `table`, from the B-tree's header: no record is read.
    package func count(of table: Table) throws -> Int {
        try transaction.statistics(table.database.dbi).entries
    }

    /// How many objects the index of `column` of `table` holds under `keys`, from the index's
    /// duplicate counts: no record is read.
    package func indexCount(of table: Table, column: Int, keys: [[UInt8]]) throws -> Int {
        guard let index = table.indexes[column] else { return 0 }
        let cursor = try UnsafeCursor(transaction: transaction, dbi: index.dbi)
        var total = 0
        for key in keys where try key.withUnsafeBytes({ try cursor.seek(exactly: $0) }) != nil {
            total += try cursor.valueCount()
        }
        return total
    }

    /// Lends `body` the key and record of the object with the largest key in `table`, if any.
    package func withLastObject<R>(of table: Table, _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> R) throws -> R? {
        let cursor = try UnsafeCursor(transaction: transaction, dbi: table.database.dbi)
        return try cursor.last().map { body($0.key, $0.value) }
    }

    /// Calls `body` with each key of `table`, ascending.
    package func forEachKey(of table: Table, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        let cursor = try UnsafeCursor(transaction: transaction, dbi: table.database.dbi)
        try cursor.forEach { key, _ in
            body(key)
            return true
        }
    }

    /// Calls `body` with each key and record of `table`, ascending, until it returns false;
    /// the record's header is checked first.
    package func forEachObject(
        of table: Table, in file: StoreFile, _ body: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let version = checkedVersion
        let cursor = try UnsafeCursor(transaction: transaction, dbi: table.database.dbi)
        var whole = true
        try cursor.forEach { key, record in
            table.checkRecord(record, in: file, version: version)
            whole = try body(key, record)
            return whole
        }
        if whole && !isWrite { table.markChecked(in: version) }
    }

    /// Refills `batch` with the objects of `table` after `lastKey` (from the first without it),
    /// at most `limit`, in key order, borrowed at `generation`.
    /// - Returns: Whether the table has no objects beyond the batch.
    package func readBatch(
        of table: Table, after lastKey: ObjectKey?, limit: Int, into batch: inout BorrowedBatch, at generation: UInt64
    ) throws -> Bool {
        let cursor = try UnsafeCursor(transaction: transaction, dbi: table.database.dbi)
        return try batch.refill(at: generation) { entries in
            var entry: UnsafeCursor.Entry?
            if let lastKey {
                entry = try lastKey.withBytes { key in
                    let found = try cursor.seek(atLeast: key)
                    if let found, found.key.elementsEqual(key) { return try cursor.next() }
                    return found
                }
            } else {
                entry = try cursor.first()
            }
            while let e = entry {
                entries.append((e.key, e.value))
                if entries.count == limit { return false }
                entry = try cursor.next()
            }
            return true
        }
    }

    /// The names of the classes in the file's catalog, as this version sees it.
    package func classNames(in file: StoreFile) throws -> [String] {
        var names: [String] = []
        let cursor = try UnsafeCursor(transaction: transaction, dbi: file.catalog.dbi)
        try cursor.forEach { key, _ in
            names.append(String(decoding: key, as: UTF8.self))
            return true
        }
        return names
    }
}
