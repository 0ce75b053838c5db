package import Foundation
internal import LMDBKit
package import LMDBRealmFormat

// Changing a stored class's layout inside a write: the records rewritten in place in the new
// column order, list and index databases made or emptied, the catalog updated. A migration
// does all of it in one LMDB write transaction, so an abort (a thrown error, a crash) leaves
// the file exactly as it was.

extension StoreFile {
    static let schemaVersionKey = Array("schemaVersion".utf8)

    /// The schema version stored in the file, or `nil` if none was ever stored (a file
    /// written before versions were recorded, or a new one).
    package func schemaVersion(in view: StoreView) throws -> UInt64? {
        try readVersion(StoreFile.schemaVersionKey, named: "schema version", in: view)
    }
}

extension WriteSession {
    /// Records `version` as the file's schema version.
    package func storeSchemaVersion(_ version: UInt64) throws {
        try file.storeVersion(version, under: StoreFile.schemaVersionKey, in: writer)
    }

    /// Rewrites every record of `table` in the layout of `schema` (the same class): a property
    /// of the same name and kind keeps its value (a `nil` where the new property is required
    /// takes the default); a new property, or one whose kind changed, takes its value from
    /// `defaults`, a record of `schema`. Lists of a removed property are emptied, and every
    /// index is rebuilt.
    /// - Returns: The table in its new layout, known to this write from now on.
    /// `progress` hears the number of records rewritten every `interval` of them.
    package func relayout(
        _ table: Table, to schema: ObjectSchema, defaults: UnsafeRawBufferPointer, interval: Int = 100_000,
        progress: (Int) -> Void = { _ in }
    ) throws -> Table {
        let txn = view.transaction
        let old = table.schema
        let sources: [Int?] = schema.properties.map { p in
            guard let i = old.properties.firstIndex(where: { $0.name == p.name }) else { return nil }
            let o = old.properties[i]
            let sameKind =
                o.type == p.type && o.objectClassName == p.objectClassName && o.isArray == p.isArray
                && o.isSet == p.isSet && o.isMap == p.isMap
            return sameKind ? i : nil
        }
        let defaultsTable = Table(schema: schema, database: table.database)
        // Records, in place: each is replaced under the cursor.
        let writer = RecordWriter()
        let cursor = try UnsafeCursor(transaction: txn, dbi: table.database.dbi)
        var entry = try cursor.first()
        var key: [UInt8] = []
        var done = 0
        while let e = entry {
            done += 1
            if done % interval == 0 { progress(done) }
            table.checkRecord(e.value, in: file)
            writer.begin(columns: schema.properties.count)
            for (j, property) in schema.properties.enumerated() {
                var field = sources[j].flatMap { i in table.field(e.value.baseAddress!, size: e.value.count, column: i, in: file) }
                if field == nil && (sources[j] == nil || !property.isOptional) {
                    field = defaultsTable.field(defaults.baseAddress!, size: defaults.count, column: j, in: file)
                }
                writer.append(field)
            }
            key.removeAll(keepingCapacity: true)
            key.append(contentsOf: e.key)
            try writer.withRecord { record in
                try key.withUnsafeBytes { try self.writer.put(record, at: cursor, forKey: $0, flags: .current) }
            }
            entry = try cursor.next()
        }
        // Lists: a kept property keeps its databases (named after it); a new one gets them; a
        // removed one is emptied (not deleted: other handles of the process may hold its handle).
        let lists = try Table.openLists(of: schema) { name, duplicateSort in
            try transaction?.createDatabase(named: name, flags: duplicateSort ? .duplicateSort : [])
        }
        for (column, list) in table.lists where !schema.properties.contains(where: { $0.name == old.properties[column].name && $0.isArray }) {
            try self.writer.empty(list.items.dbi)
            if let references = list.references { try self.writer.empty(references.dbi) }
        }
        // Indexes: every one of the new layout is rebuilt; one no longer wanted is emptied.
        for (column, index) in table.indexes where !schema.properties.contains(where: { $0.name == old.properties[column].name && $0.hasIndex }) {
            try self.writer.empty(index.dbi)
        }
        for index in table.compoundIndexes { try self.writer.empty(index.database.dbi) }
        let indexes = try Table.openIndexes(of: schema) { name, _ in
            try transaction?.createDatabase(named: name, flags: .duplicateSort)
        }
        let compound = try Table.openCompoundIndexes(of: schema) { name, _ in
            try transaction?.createDatabase(named: name, flags: .duplicateSort)
        }
        let newTable = Table(schema: schema, database: table.database, indexes: indexes, compoundIndexes: compound, lists: lists)
        try rebuildIndexes(of: newTable)
        try storeSchema(schema)
        catalog.tables[schema.className] = newTable
        return newTable
    }

    /// Empties and builds again every index of `table` from its records.
    package func rebuildIndexes(of table: Table) throws {
        try flushIndexEntries()
        for (column, index) in table.indexes {
            try self.writer.empty(index.dbi)
            try buildIndex(index, of: table, column: column)
        }
        for index in table.compoundIndexes {
            try self.writer.empty(index.database.dbi)
            try buildIndex(index, of: table)
        }
    }

    /// Replaces stored column `column` of the object `key` of `table` with `field`. Indexes are
    /// not touched: the caller rebuilds them.
    package func setField(_ table: Table, key: UnsafeRawBufferPointer, column: Int, to field: UnsafeRawBufferPointer?) throws {
        let txn = view.transaction
        guard let record = try txn.get(table.database.dbi, key: key) else { return }
        table.checkRecord(record, in: file)
        let writer = buffers.record
        writer.begin(columns: table.columnCount)
        for c in 0..<table.columnCount {
            writer.append(c == column ? field : table.field(record.baseAddress!, size: record.count, column: c, in: file))
        }
        try writer.withRecord { record in _ = try self.writer.put(table.database.dbi, key: key, value: record) }
    }

    /// Deletes every object of `table`, its lists and its index entries, and nullifies the links
    /// to them, as `removeObjects(nil, from:)` does; with `removingClass`
    /// the class leaves the catalog too (its databases are emptied, not deleted).
    package func deleteAllData(of table: Table, removingClass: Bool) throws {
        // As `deleteAll` of the class: the links to its objects are nullified too.
        try removeObjects(nil, from: table)
        if removingClass {
            try Array(table.className.utf8).withUnsafeBytes { _ = try writer.delete(file.catalog.dbi, key: $0) }
            let version = try file.catalogVersion(in: view) &+ 1
            try file.storeCatalogVersion(version, in: writer)
            catalog.version = version
            catalog.tables[table.className] = nil
        }
    }
}

extension StoreFile {
    /// The meta key under which the Swift type of `className` is recorded.
    static func swiftTypeKey(_ className: String) -> [UInt8] { Array(("swiftType:" + className).utf8) }

    /// The mangled name of the Swift class that stored `className`, if recorded: a file opened
    /// without `objectTypes` finds its model classes by it.
    package func swiftTypeName(of className: String, in view: StoreView) throws -> String? {
        try StoreFile.swiftTypeKey(className).withUnsafeBytes { key in
            guard let stored = try view.transaction.get(meta.dbi, key: key) else { return nil }
            switch SealedValue.open(stored, key: key) {
            case .success(let value): return String(decoding: value, as: UTF8.self)
            case .failure(let damage):
                throw RealmError(
                    .invalidDatabase, "The realm at '\(url.path)' is damaged: the Swift type name of '\(className)' \(damage)", fileURL: url)
            }
        }
    }
}

extension WriteSession {
    /// Records the mangled name of the Swift class `type` for its stored class `className`.
    package func storeSwiftTypeName(_ mangled: String, of className: String) throws {
        let key = StoreFile.swiftTypeKey(className)
        try SealedValue.sealed(Array(mangled.utf8), key: key).withUnsafeBytes { value in
            try key.withUnsafeBytes { _ = try writer.put(file.meta.dbi, key: $0, value: value) }
        }
    }
}

extension WriteSession {
    /// Stores `record` (of `table`'s layout) as a new object: its key is its primary key, or
    /// the next number. Indexes are not touched: the caller rebuilds them.
    /// - Returns: The new object's key.
    /// - Throws: ``RealmError/Code/primaryKeyExists`` if an object has its primary key.
    package func insertRecord(_ record: UnsafeRawBufferPointer, into table: Table) throws -> [UInt8] {
        var key: [UInt8] = []
        if let pk = table.primaryKeyColumn {
            let field = table.field(record.baseAddress!, size: record.count, column: pk, in: file)
            KeyEncoding.append(field, type: table.schema.properties[pk].type, to: &key)
        } else {
            let next =
                try view.withLastObject(of: table) { key, _ -> UInt64 in
                    key.count == 8 ? UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) : 0
                } ?? 0
            KeyEncoding.appendBigEndian(next &+ 1, to: &key)
        }
        let stored = try key.withUnsafeBytes {
            try writer.put(table.database.dbi, key: $0, value: record, flags: PutFlags.noOverwrite.rawValue)
        }
        guard stored else {
            let pk = table.primaryKeyColumn!
            let shown = describe(table.field(record.baseAddress!, size: record.count, column: pk, in: file), type: table.schema.properties[pk].type)
            throw RealmError(
                .primaryKeyExists, "Attempting to create an object of type '\(table.className)' with an existing primary key value \(shown).",
                fileURL: file.url)
        }
        return key
    }
}

extension StoreFile {
    /// The figures of `Realm.Statistics`, read from a fresh read transaction.
    package func statistics() throws -> (fileSize: Int, usedSize: Int, mapSize: Int, readers: Int, oldestReaderVersion: Int?, currentVersion: Int) {
        let info = environment.info()
        let free: Int
        do {
            let txn = try Transaction(environment: environment, readOnly: true)
            free = try environment.freePageCount(in: txn)
            txn.abort()
        }
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        // try?: a file that cannot be stat'ed reports the pages LMDB wrote instead.
        let fileSize = (attributes?[.size] as? NSNumber)?.intValue ?? (info.lastPageNumber + 1) * info.pageSize
        let versions = environment.readerVersions()
        return (
            fileSize, max(0, info.lastPageNumber + 1 - free) * info.pageSize, info.mapSize, versions.count, versions.min(),
            info.lastTransactionID
        )
    }
}

extension StoreFile {
    /// Writes the version `view` reads into a new compacted file at `url`, which must not
    /// exist: written beside it under another name, then linked in place (never replacing a
    /// file), so `url` holds a whole copy or nothing.
    package func writeCopy(of view: StoreView, to url: URL) throws {
        if FileManager.default.fileExists(atPath: url.path) {
            throw RealmError(.fileAccess, "Cannot write a copy of the realm to '\(url.path)': a file is there already", fileURL: url)
        }
        var options = Environment.Options()
        options.mapSize = environment.info().mapSize
        options.maximumMapSize = options.mapSize
        options.maxDatabases = StoreFile.maximumDatabases
        options.fileMode = 0o600
        try FilePlacement.place(at: url, purpose: "the copy of the realm", mode: .new) { temporary in
            do {
                let names = try environment.openAllDatabases()
                if try !environment.writeCopy(of: view.transaction, names: names, to: temporary.path, options: options) {
                    // The version predates a database this process opened since: the newest is copied.
                    let txn = try Transaction(environment: environment, readOnly: true)
                    guard try environment.writeCopy(of: txn.unsafe, names: names, to: temporary.path, options: options) else {
                        throw RealmError(
                            .fileAccess, "Cannot write a copy of the realm to '\(url.path)': its databases changed while copying",
                            fileURL: url)
                    }
                }
            } catch let error as LMDBError {
                throw RealmError(error, url: url, doing: "Cannot write a copy of the realm to")
            }
        }
    }
}
