public import CHotPaths
public import LMDBKit
import Foundation
public import LMDBRealmFormat
public import Synchronization

/// One class's objects in one file: an LMDB database whose keys are the objects' keys (the
/// encoded primary key, or an auto-assigned number) and whose values are their records.
///
/// Keying the table by the primary key itself means a lookup by primary key is one B-tree
/// descent, with no separate key-to-object index.
@usableFromInline
package final class Table: @unchecked Sendable {
    // @unchecked Sendable: every stored property but `writeState` is a `let` set in init.
    // `writeState` is touched only by the thread holding the file's LMDB write lock, whose
    // mutex orders one writer's accesses before the next writer's.

    package let className: String
    /// The schema as stored in the file: the column order of the records.
    package let schema: ObjectSchema
    @usableFromInline package let database: Database
    /// Per stored column, its fixed size in bytes, or 0 if it varies.
    @usableFromInline package let fixedSizes: UnsafeMutableBufferPointer<Int32>
    /// The number of stored columns.
    @usableFromInline package let columnCount: Int
    /// The stored column of the primary key, if the class has one.
    package let primaryKeyColumn: Int?
    /// The kind of the primary key, if the class has one.
    package let primaryKeyType: PropertyType?
    /// The secondary indexes: for each indexed stored column, its `duplicateSort` database
    /// mapping index keys to object keys.
    package let indexes: [Int: Database]
    /// The stored columns that have an index, ascending.
    let indexedColumns: [Int]
    /// The indexes of groups of columns (see `Object.compoundIndexes()`).
    package let compoundIndexes: [CompoundIndex]
    /// Whether objects of the table have index entries of any kind.
    let hasIndexes: Bool
    /// The databases of each list column (see ``ListDatabases``).
    package let lists: [Int: ListDatabases]
    /// `lists` by stored column, for reads that look one up per object.
    private let listsByColumn: [ListDatabases?]
    /// Whether any column links to objects (a to-one link or a collection of objects).
    package let hasLinks: Bool

    package init(
        schema: ObjectSchema, database: Database, indexes: [Int: Database] = [:], compoundIndexes: [CompoundIndex] = [],
        lists: [Int: ListDatabases] = [:]
    ) {
        self.className = schema.className
        self.schema = schema
        self.database = database
        self.indexes = indexes
        self.compoundIndexes = compoundIndexes
        self.lists = lists
        self.listsByColumn = (0..<schema.properties.count).map { lists[$0] }
        self.indexedColumns = indexes.keys.sorted()
        self.hasIndexes = !indexes.isEmpty || !compoundIndexes.isEmpty
        self.fixedSizes = .allocate(capacity: schema.properties.count)
        _ = fixedSizes.initialize(from: schema.properties.map { Int32($0.type.fixedSize ?? 0) })
        self.columnCount = schema.properties.count
        self.primaryKeyColumn = schema.properties.firstIndex { $0.isPrimary }
        self.primaryKeyType = primaryKeyColumn.map { schema.properties[$0].type }
        self.hasLinks = schema.properties.contains { $0.type == .object }
    }

    /// The databases of list column `column`, or `nil` if it is not one.
    @inline(__always)
    package func list(at column: Int) -> ListDatabases? {
        column >= 0 && column < listsByColumn.count ? listsByColumn[column] : lists[column]
    }

    deinit {
        fixedSizes.deallocate()
    }

    /// Whether `transaction` can read every database of the table: one whose handle was
    /// opened after the transaction began (the class came from another process) is read
    /// after the next refresh.
    package func isUsable(in transaction: UnsafeTransaction) -> Bool {
        transaction.canUse(database) && indexes.values.allSatisfy(transaction.canUse)
            && compoundIndexes.allSatisfy { transaction.canUse($0.database) }
            && lists.values.allSatisfy { transaction.canUse($0.items) && ($0.references.map(transaction.canUse) ?? true) }
    }

    /// The bytes of stored column `column` of `record`, checked; damage stops the process with
    /// a message naming the file and class rather than letting a wrong value through.
    @inlinable @inline(__always)
    package func field(_ record: UnsafeRawPointer, size: Int, column: Int, in file: StoreFile) -> UnsafeRawBufferPointer? {
        switch Record.field(record, size: size, column: column, fixedSize: fixedSizes[column]) {
        case .value(let bytes): return bytes
        case .null: return nil
        case .damaged(let problem): damaged(problem, in: file)
        }
    }

    /// Checks a record's header before it is trusted, and its checksum when the file checks
    /// them, unless every record of the table has been checked in committed version `version`
    /// already (see ``checkedVersion``; -1 for a record of no such version).
    @inlinable @inline(__always)
    package func checkRecord(_ record: UnsafeRawBufferPointer, in file: StoreFile, version: Int = -1) {
        if let problem = Record.checkHeader(record, columns: columnCount) { damaged(problem, in: file) }
        if file.verifiesChecksums, !isChecked(in: version), let problem = Record.checksumProblem(record) { damaged(problem, in: file) }
    }

    /// ``checkRecord(_:in:version:)`` for a caller that finds the version out only if the
    /// file checks checksums.
    @inlinable @inline(__always)
    package func checkRecord(_ record: UnsafeRawBufferPointer, in file: StoreFile, version: () -> Int) {
        if let problem = Record.checkHeader(record, columns: columnCount) { damaged(problem, in: file) }
        if file.verifiesChecksums, !isChecked(in: version()), let problem = Record.checksumProblem(record) { damaged(problem, in: file) }
    }

    /// Whether a record's header is sound (a caller that finds one that is not reads it
    /// through ``checkRecord(_:in:version:)``, which stops saying what is wrong).
    @inlinable @inline(__always)
    package func headerIsSound(_ record: UnsafeRawBufferPointer) -> Bool {
        Record.checkHeader(record, columns: columnCount) == nil
    }

    /// Whether a record's header and checksum are sound (a caller that finds one that is not
    /// reads it through ``checkRecord(_:in:version:)``, which stops saying what is wrong).
    @inlinable @inline(__always)
    package func checksumMatches(_ record: UnsafeRawBufferPointer) -> Bool {
        Record.checkHeader(record, columns: columnCount) == nil && Record.checksumMatches(record)
    }

    /// The committed version of the file every record of which a read has checked against its
    /// checksum (-1 if none): a scan that checked the whole table records it. The bytes of a
    /// version do not change while a reader has it, so its records need not be checked twice;
    /// a write that began from that version changes only records it writes itself. Relaxed:
    /// a thread that sees the version reads records of its own map, and one that does not
    /// only checks again.
    @usableFromInline package let checkedVersion = Atomic<Int>(-1)

    /// Whether every record of committed version `version` has been checked.
    @inlinable @inline(__always)
    package func isChecked(in version: Int) -> Bool {
        version >= 0 && checkedVersion.load(ordering: .relaxed) == version
    }

    /// Records that a read of committed version `version` checked every record of the table.
    package func markChecked(in version: Int) {
        checkedVersion.store(version, ordering: .relaxed)
    }

    @usableFromInline func damaged(_ problem: String, in file: StoreFile) -> Never {
        fatalError("The realm at '\(file.url.path)' is damaged: an object of '\(className)' has a bad record (\(problem))")
    }

    /// What the current write knows about the table's keys, valid while `writeState.writeID`
    /// is the writing realm's `writeID`. (Exclusivity unchecked: only the writing thread
    /// touches it, and no access to it overlaps another.)
    @exclusivity(unchecked) var writeState = WriteTableState()

    /// The LMDB database name of a class's table.
    static func databaseName(for className: String) -> String { "class_" + className }
}

/// A table seen through one Swift class: which stored column each declared property reads.
///
/// Realm lets a model reorder its properties without a migration, so the declared column
/// order and the stored one may differ; the map here is built once per class and file.
@usableFromInline
package final class TableBinding: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; `columnMap` is written only in init and
    // freed in deinit.

    package let table: Table
    /// The declared class bound (the object layer's `ClassInfo`; it reads it back as
    /// `classInfo`).
    package let declared: any DeclaredClass
    /// Declared column → stored column.
    @usableFromInline package let columnMap: UnsafeMutableBufferPointer<Int32>
    /// Whether declared and stored order agree.
    package let isIdentity: Bool
    /// The table's primary-key column and kind, kept here too for property reads.
    package let primaryKeyColumn: Int?
    package let primaryKeyType: PropertyType?

    /// Binds `declared` to `table`, or returns the differences that forbid it.
    package init(table: Table, declared: any DeclaredClass) throws(SchemaMismatch) {
        let differences = table.schema.differences(from: declared.schema)
        guard differences.isEmpty else { throw SchemaMismatch(lines: differences) }
        self.table = table
        self.declared = declared
        let stored = Dictionary(uniqueKeysWithValues: table.schema.properties.enumerated().map { ($1.name, $0) })
        let map = declared.schema.properties.map { Int32(stored[$0.name]!) }
        columnMap = .allocate(capacity: map.count)
        _ = columnMap.initialize(from: map)
        isIdentity = map == map.indices.map { Int32($0) }
        primaryKeyColumn = table.primaryKeyColumn
        primaryKeyType = table.primaryKeyType
    }

    deinit {
        columnMap.deallocate()
    }

    /// The stored column of declared column `column`.
    @inlinable @inline(__always)
    package func storedColumn(_ column: Int32) -> Int {
        Int(columnMap[Int(column)])
    }

    package struct SchemaMismatch: Error {
        package let lines: [String]
    }
}

/// What a write knows about a table's keys, to append in key order when it can.
package struct WriteTableState {
    /// The write this state belongs to.
    var writeID: UInt64 = 0
    /// The largest key in the table, if known.
    package var lastKey: [UInt8]?
    /// The next auto-assigned key, for classes without a primary key.
    var nextAutoKey: UInt64?
}

extension Record {
    /// How much of a record ``prefetch(_:)`` asks for.
    @usableFromInline package static let prefetchLimit = 512

    /// Starts loading `record` (at most its first 512 bytes) into the processor's cache
    /// without waiting for it, a cache line at a time: a walk calls this for a record a few
    /// places ahead of the one it reads, so the loads overlap.
    @inlinable @inline(__always)
    package static func prefetch(_ record: UnsafeRawBufferPointer) {
        guard let base = record.baseAddress else { return }
        let end = Swift.min(record.count, prefetchLimit)
        var offset = 0
        while offset < end {
            lmdbrealm_prefetch(base + offset)
            offset &+= 64
        }
    }
}
