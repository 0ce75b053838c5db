import Foundation
import LMDBKit
package import LMDBRealmFormat

// The catalog: the tables and indexes a write creates or changes.
extension WriteSession {
    /// A table for `schema`'s class, created in the write with its indexes; the catalog
    /// records the class.
    package func createTable(_ schema: ObjectSchema) throws -> Table {
        guard let db = try transaction?.createDatabase(named: Table.databaseName(for: schema.className)) else {
            fatalError("the write has ended")
        }
        try storeSchema(schema)
        let indexes = try Table.openIndexes(of: schema) { name, _ in
            try transaction?.createDatabase(named: name, flags: .duplicateSort)
        }
        let compound = try Table.openCompoundIndexes(of: schema) { name, _ in
            try transaction?.createDatabase(named: name, flags: .duplicateSort)
        }
        let lists = try Table.openLists(of: schema) { name, duplicateSort in
            try transaction?.createDatabase(named: name, flags: duplicateSort ? .duplicateSort : [])
        }
        let table = Table(schema: schema, database: db, indexes: indexes, compoundIndexes: compound, lists: lists)
        catalog.tables[schema.className] = table
        changed()
        return table
    }

    /// Builds the indexes `declared` adds to `table` and empties those it removes; the stored
    /// schema records the new set.
    package func reindex(_ table: Table, declared: ObjectSchema) throws -> Table {
        let wanted = declared.indexedNames
        let properties = table.schema.properties.map {
            Property(
                name: $0.name, type: $0.type, isOptional: $0.isOptional,
                isIndexed: wanted.contains($0.name) && !$0.isPrimary && $0.type != .object, isPrimary: $0.isPrimary,
                objectClassName: $0.objectClassName, isArray: $0.isArray, linkOriginPropertyName: $0.linkOriginPropertyName,
                isSet: $0.isSet, isMap: $0.isMap)
        }
        let schema = ObjectSchema(
            className: table.className, properties: properties, compoundIndexes: declared.compoundIndexes,
            coveringIndexes: declared.coveringIndexes, isEmbedded: declared.isEmbedded)
        var indexes: [Int: Database] = [:]
        for (column, property) in properties.enumerated() {
            let name = Table.indexDatabaseName(className: table.className, property: property.name)
            if property.hasIndex {
                if let existing = table.indexes[column] {
                    indexes[column] = existing
                } else if let db = try transaction?.createDatabase(named: name, flags: .duplicateSort) {
                    try writer.empty(db.dbi)
                    try buildIndex(db, of: table, column: column)
                    indexes[column] = db
                }
            } else if let old = table.indexes[column] {
                // Emptied, not deleted: its database handle stays valid for every handle of
                // the process, and an index added back reuses it.
                try writer.empty(old.dbi)
            }
        }
        // Compound and covering indexes: one kept keeps its entries, a new one is built, one
        // dropped is emptied.
        func groups(_ schema: ObjectSchema, covering: Bool) -> [[String]] { covering ? schema.coveringIndexes : schema.compoundIndexes }
        for index in table.compoundIndexes where !groups(schema, covering: index.covering).contains(index.names) {
            try writer.empty(index.database.dbi)
        }
        let compound = try Table.openCompoundIndexes(of: schema) { name, _ in
            try transaction?.createDatabase(named: name, flags: .duplicateSort)
        }
        for index in compound where !groups(table.schema, covering: index.covering).contains(index.names) {
            try writer.empty(index.database.dbi)
            try buildIndex(index, of: table)
        }
        try storeSchema(schema)
        let newTable = Table(schema: schema, database: table.database, indexes: indexes, compoundIndexes: compound, lists: table.lists)
        catalog.tables[table.className] = newTable
        return newTable
    }

    /// Writes `schema` to the catalog and moves the catalog version on.
    func storeSchema(_ schema: ObjectSchema) throws {
        let key = Array(schema.className.utf8)
        let sealed = SealedValue.sealed(Array(try JSONEncoder().encode(schema)), key: key)
        try key.withUnsafeBytes { key in
            try sealed.withUnsafeBytes { _ = try writer.put(file.catalog.dbi, key: key, value: $0) }
        }
        try bumpCatalogVersion()
    }

    /// Moves the catalog version on: every handle and process then reads the catalog again.
    package func bumpCatalogVersion() throws {
        let version = try file.catalogVersion(in: view) &+ 1
        try file.storeCatalogVersion(version, in: writer)
        catalog.version = version
        changed()
    }

    /// The table of `className` in the catalog as the write sees it (another handle or process
    /// may have added it), opened by the write itself: another transaction of this thread
    /// would be handed the same database slot. Kept with the write's catalog changes.
    package func findTable(named className: String) throws -> Table? {
        if let table = catalog.tables[className] ?? file.table(named: className) { return table }
        let table = try file.findTable(named: className, in: view, useShared: false) { name in
            try transaction?.openDatabase(named: name) ?? nil
        }
        if let table { catalog.tables[className] = table }
        return table
    }
}
