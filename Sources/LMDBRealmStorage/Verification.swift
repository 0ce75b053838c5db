import Foundation
internal import LMDBKit
import LMDBRealmFormat

/// One inconsistency ``StoreVerifier`` found; the realm turns it into a public finding.
package struct StoreFinding {
    package enum Kind {
        case damagedRecord, missingIndexEntry, orphanIndexEntry, danglingLink, backlinkMismatch, damagedList, damagedCatalog, damagedDatabase
        case unownedEmbeddedObject
    }

    package let kind: Kind
    package let className: String?
    /// The object concerned, printable (see ``StoreVerifier/printableKey(_:of:)``).
    package let objectKey: String?
    package let message: String
}

/// Checks one version of a whole file, reading its LMDB databases directly: the catalog, every
/// record, every index entry, link, list chunk and list reference. Every byte is checked
/// before it is used, so damage becomes a finding and never a crash or a read out of bounds.
///
/// The walk:
/// 1. the catalog: each stored schema decodes and names its class, and the databases it
///    implies (table, indexes, lists, references) exist;
/// 2. per class, the records: header, offset table and every field valid for its property's
///    kind, required properties set, the key the encoding of the primary key (or an 8-byte
///    auto-assigned key), and each to-one link naming a stored object of its class;
/// 3. per index (a declared or compound index, or a to-one link's index, which holds the
///    backlinks): each sound object has its entry, found in one descent, and each entry names
///    a stored object whose values encode to the entry's key;
/// 4. per list, set or map: each chunk is keyed by a stored owner, positions follow on, the
///    elements parse and are valid (sets unique, map keys unique), links name stored objects,
///    and the references (target → owners) agree with the elements both ways;
/// 5. per embedded class: each object has exactly one owner, counted in the backlinks of every
///    link and list that can hold it.
///
/// Memory stays bounded by the largest list, not the file: index entries are looked up rather
/// than collected. The references of a list column are counted: only when they hold other
/// than the entries its elements account for are the column's (target, owner) pairs
/// collected, to name the extra ones.
///
/// An object whose record is damaged is reported once; its index entries and references are
/// not reported again. Mixed (`AnyRealmValue`) links are checked for their form only: nothing
/// indexes them, and one whose object was deleted legitimately reads as `nil`.
package final class StoreVerifier {
    package typealias Kind = StoreFinding.Kind

    package let view: StoreView
    package let file: StoreFile
    private let progress: ((_ checked: Int, _ total: Int) -> Void)?
    package let maximumKeySize: Int
    package private(set) var findings: [StoreFinding] = []
    package private(set) var objectsChecked = 0
    private var total = 0
    /// The tables the catalog describes soundly, in catalog order.
    package private(set) var tables: [Table] = []
    private(set) var tablesByName: [String: Table] = [:]

    /// How many objects are checked between two calls of the progress callback.
    package static let progressInterval = 1_000

    package init(view: StoreView, file: StoreFile, progress: ((_ checked: Int, _ total: Int) -> Void)?) {
        self.view = view
        self.file = file
        self.progress = progress
        maximumKeySize = file.maximumKeySize
    }

    /// Checks everything; the findings accumulate in ``findings``.
    /// - Parameter openTable: Opens the table of a class the catalog lists, as the realm opens
    ///   it; `nil` if the file has no table for it.
    /// - Throws: The file's error when it cannot be read for a reason other than damage (an
    ///   I/O error, say). Damage LMDB itself detects in a database's pages is a finding.
    package func run(openTable: (String) throws -> Table?) throws {
        // The pages first, as bytes: a cursor on a damaged page could stop the process.
        let pageProblems = try file.environment.checkPages()
        if !pageProblems.isEmpty {
            for problem in pageProblems {
                let className = problem.database.flatMap { $0.hasPrefix("class_") ? String($0.dropFirst(6)) : nil }
                report(.damagedDatabase, className, nil, "The file's pages are damaged: \(problem)")
            }
            return
        }
        let findingsBefore = findings.count
        try checkCatalog(openTable)
        // Without the whole catalog, every link to a class it did not give would be reported
        // as well: the catalog's damage is the finding.
        if findings[findingsBefore...].contains(where: { $0.kind == .damagedDatabase }) { return }
        for table in tables {
            try walking("The table of '\(table.className)'", className: table.className) { total += try view.count(of: table) }
        }
        progress?(0, total)
        for table in tables {
            guard let damaged = try checkRecords(of: table) else { continue }
            for index in indexChecks(of: table) { try checkIndex(index, of: table, damaged: damaged) }
        }
        for table in tables {
            for (column, list) in table.lists.sorted(by: { $0.key < $1.key }) {
                try checkList(list, column: column, of: table)
            }
        }
        for table in tables where table.schema.isEmbedded {
            try checkOwners(of: table)
        }
        progress?(objectsChecked, total)
    }

    /// Reports each object of embedded class `table` that no object owns, or more than one
    /// does: its owners are counted in the backlinks (a to-one link's index, a list's
    /// references) of every column of the file that can hold it.
    private func checkOwners(of table: Table) throws {
        var sources: [(origin: Table, column: Int)] = []
        for origin in tables {
            for (column, property) in origin.schema.properties.enumerated()
            where property.type == .object && property.objectClassName == table.className {
                sources.append((origin, column))
            }
        }
        try walking("The owners of '\(table.className)'", className: table.className) {
            // One cursor on each backlinks database, for the whole class.
            var cursors: [UInt32: OwnedCursor] = [:]
            try UnsafeCursor(transaction: view.transaction, dbi: table.database.dbi).forEach { key, _ in
                var owners = 0
                for (origin, column) in sources {
                    let (database, probe, cut) = view.backlinkProbe(origin, column, key)
                    guard let dbi = database else { continue }
                    // A key cut to the index's length may stand for other objects too.
                    if cut { return true }
                    let owned = try cursors[dbi] ?? OwnedCursor(view, dbi: dbi)
                    cursors[dbi] = owned
                    if try probe.withUnsafeBytes({ try owned.cursor.seek(exactly: $0) }) != nil { owners += try owned.cursor.valueCount() }
                }
                if owners != 1 {
                    let problem = owners == 0 ? "no object owns it" : "\(owners) objects own it, where one may"
                    report(.unownedEmbeddedObject, table.className, printableKey(key, of: table), "An embedded object: \(problem)")
                }
                return true
            }
        }
    }

    /// A cursor an array can hold (a cursor itself cannot be copied).
    private final class OwnedCursor {
        package let cursor: UnsafeCursor
        package init(_ view: StoreView, dbi: UInt32) throws { cursor = try UnsafeCursor(transaction: view.transaction, dbi: dbi) }
    }

    // MARK: - Findings

    package func report(_ kind: Kind, _ className: String?, _ objectKey: String?, _ message: String) {
        findings.append(StoreFinding(kind: kind, className: className, objectKey: objectKey, message: message))
    }

    /// Runs `body`, a walk of one database. If LMDB finds the database's pages damaged, that
    /// is a finding and the check goes on; any other failure is the world's and is thrown.
    package func walking(_ what: String, className: String?, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            guard let failure = StorageFailure(error), failure.kind == .invalidDatabase else { throw error }
            report(.damagedDatabase, className, nil, "\(what) cannot be read: \(failure.reason)")
        }
    }

    /// Whether `error`, met opening a class's table, is the world's (to be thrown) rather than
    /// the file's damage (a finding).
    private func isWorldFailure(_ error: any Error) -> Bool {
        if let error = error as? RealmError { return error.code != .invalidDatabase }
        if let failure = StorageFailure(error) { return failure.kind != .invalidDatabase }
        return true
    }

    /// `key`, an object key of `table`, as people read it: the primary key's value, or the
    /// key's bytes in hex (auto-assigned keys, and keys that do not decode).
    func printableKey(_ key: UnsafeRawBufferPointer, of table: Table?) -> String {
        guard let type = table?.primaryKeyType, !key.isEmpty else { return Self.hex(key) }
        let out = UnsafeMutableRawPointer.allocate(byteCount: key.count, alignment: 8)
        defer { out.deallocate() }
        switch KeyEncoding.field(ofKey: key, type: type, into: out) {
        case .null: return "nil"
        case .damaged: return Self.hex(key)
        case .value(let field):
            switch decodeValue(field, type: type) {
            case let string as String:
                // Bytes that are not text, or hold control characters, are shown as they are.
                guard FieldCheck.isValidUTF8(field), !string.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                    return Self.hex(key)
                }
                return string
            case let uuid as UUID: return uuid.uuidString
            case let id as ObjectId: return id.stringValue
            case let value: return String(describing: value)
            }
        }
    }

    package static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Counts one more object checked, telling the progress callback every
    /// ``progressInterval`` objects.
    @inline(__always)
    private func tick() {
        objectsChecked += 1
        if objectsChecked % Self.progressInterval == 0 { progress?(objectsChecked, total) }
    }

    // MARK: - Catalog

    private func checkCatalog(_ openTable: (String) throws -> Table?) throws {
        var entries: [(name: [UInt8], schema: [UInt8])] = []
        try walking("The catalog", className: nil) {
            try UnsafeCursor(transaction: view.transaction, dbi: file.catalog.dbi).forEach { key, value in
                entries.append((Array(key), Array(value)))
                return true
            }
            // The file's own values (schema and catalog versions, Swift type names).
            try UnsafeCursor(transaction: view.transaction, dbi: file.meta.dbi).forEach { key, value in
                if case .failure(let damage) = SealedValue.open(value, key: key) {
                    let name = String(decoding: key, as: UTF8.self)
                    report(.damagedCatalog, nil, nil, "The file's value '\(name)' is damaged: \(damage)")
                }
                return true
            }
        }
        for (nameBytes, stored) in entries {
            guard nameBytes.withUnsafeBytes(FieldCheck.isValidUTF8) else {
                report(.damagedCatalog, nil, nil, "The catalog holds a class name that is not UTF-8 (\(nameBytes.withUnsafeBytes(Self.hex)))")
                continue
            }
            let name = String(decoding: nameBytes, as: UTF8.self)
            let opened = stored.withUnsafeBytes { s in nameBytes.withUnsafeBytes { SealedValue.open(s, key: $0).map(Array.init) } }
            let json: [UInt8]
            switch opened {
            case .success(let value): json = value
            case .failure(let damage):
                report(.damagedCatalog, name, nil, "The stored schema of '\(name)' is damaged: \(damage)")
                continue
            }
            let schema: ObjectSchema
            do {
                schema = try JSONDecoder().decode(ObjectSchema.self, from: Data(json))
            } catch {
                report(.damagedCatalog, name, nil, "The stored schema of '\(name)' cannot be read")
                continue
            }
            if let problem = schemaProblem(schema, name: name) {
                report(.damagedCatalog, name, nil, problem)
                continue
            }
            let table: Table?
            do {
                table = try openTable(name)
            } catch {
                if isWorldFailure(error) { throw error }
                report(.damagedCatalog, name, nil, "The class '\(name)' cannot be opened: \(error)")
                continue
            }
            guard let table else {
                report(.damagedCatalog, name, nil, "The catalog lists '\(name)', but the file has no table for it")
                continue
            }
            checkDatabases(of: table)
            tables.append(table)
            tablesByName[name] = table
        }
    }

    /// What is wrong with a stored schema, if anything that would make its records unreadable.
    private func schemaProblem(_ schema: ObjectSchema, name: String) -> String? {
        if schema.className != name { return "The stored schema of '\(name)' describes the class '\(schema.className)'" }
        if schema.properties.count > Int(UInt16.max) { return "The stored schema of '\(name)' has \(schema.properties.count) properties" }
        var names = Set<String>()
        for property in schema.properties where !names.insert(property.name).inserted {
            return "The stored schema of '\(name)' has two properties named '\(property.name)'"
        }
        let keys = schema.properties.filter(\.isPrimary)
        if keys.count > 1 { return "The stored schema of '\(name)' has \(keys.count) primary keys" }
        if let key = keys.first, !key.type.canBePrimaryKey || key.isArray {
            return "The stored schema of '\(name)' has a primary key '\(key.name)' of kind \(key.typeName)"
        }
        for property in schema.properties where property.type == .object && property.objectClassName == nil {
            return "The stored schema of '\(name)' has a link '\(property.name)' to no class"
        }
        return nil
    }

    /// Reports each database the schema of `table` implies that the file lacks.
    private func checkDatabases(of table: Table) {
        let name = table.className
        for (column, property) in table.schema.properties.enumerated() {
            if property.hasIndex && table.indexes[column] == nil {
                report(.damagedCatalog, name, nil, "The index of '\(name).\(property.name)' is missing")
            }
            if property.isArray {
                if let list = table.lists[column] {
                    if property.type == .object && list.references == nil {
                        report(.damagedCatalog, name, nil, "The references of '\(name).\(property.name)' are missing")
                    }
                } else {
                    report(.damagedCatalog, name, nil, "The elements of '\(name).\(property.name)' are missing")
                }
            }
        }
        for names in table.schema.compoundIndexes where !table.compoundIndexes.contains(where: { $0.names == names && !$0.covering }) {
            report(.damagedCatalog, name, nil, "The index of '\(name)' on (\(names.joined(separator: ", "))) is missing")
        }
        for names in table.schema.coveringIndexes where !table.compoundIndexes.contains(where: { $0.names == names && $0.covering }) {
            report(.damagedCatalog, name, nil, "The covering index of '\(name)' on (\(names.joined(separator: ", "))) is missing")
        }
    }

    // MARK: - Records

    /// What the record check needs of one stored column, worked out once per table.
    private struct Column {
        package let name: String
        package let type: PropertyType
        package let fixedSize: Int32
        /// Whether the column may be null: optional, a link or mixed value, or a column whose
        /// values are stored elsewhere (a collection's elements, computed backlinks).
        package let nullable: Bool
        /// Whether the record holds the column's value (not a collection's or backlinks').
        let holdsValue: Bool

        package init(_ property: Property, fixedSize: Int32) {
            name = property.name
            type = property.type
            self.fixedSize = fixedSize
            holdsValue = !property.isArray && property.type != .linkingObjects
            nullable = property.isOptional || !holdsValue || property.type == .object || property.type == .mixed
        }
    }

    /// Checks every record of `table` and its to-one links.
    /// - Returns: The keys of the objects whose records are damaged, or `nil` if the table
    ///   could not be walked to its end (its records are then not all known to be sound, and
    ///   its indexes, which read them, are not checked).
    private func checkRecords(of table: Table) throws -> Set<[UInt8]>? {
        let columns = table.schema.properties.enumerated().map { Column($1, fixedSize: table.fixedSizes[$0]) }
        var damaged = Set<[UInt8]>()
        var complete = false
        try walking("The table of '\(table.className)'", className: table.className) {
            let cursor = try UnsafeCursor(transaction: view.transaction, dbi: table.database.dbi)
            try cursor.forEach { key, record in
                tick()
                if let problem = recordProblem(key: key, record: record, of: table, columns: columns) {
                    damaged.insert(Array(key))
                    report(.damagedRecord, table.className, printableKey(key, of: table), problem)
                } else {
                    try checkLinks(key: key, record: record, of: table)
                }
                return true
            }
            complete = true
        }
        return complete ? damaged : nil
    }

    /// What is wrong with the record `record` stored under `key` in `table`, or `nil`.
    private func recordProblem(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer, of table: Table, columns: [Column]) -> String? {
        if let problem = Record.checkHeader(record, columns: table.columnCount) { return "The \(problem)" }
        if let problem = Record.checksumProblem(record) { return "The record is damaged: \(problem)" }
        if table.primaryKeyColumn == nil && key.count != 8 {
            return "Its key has \(key.count) bytes; an object without a primary key has an 8-byte key"
        }
        let base = record.baseAddress!
        for (i, column) in columns.enumerated() {
            // Bounded by the data area, not the record's end: no field reaches into the checksum.
            switch Record.field(base, size: record.count - Record.trailerSize(base), column: i, fixedSize: column.fixedSize) {
            case .damaged(let problem):
                return "Property '\(column.name)': \(problem)"
            case .null:
                if !column.nullable { return "Property '\(column.name)' is null, but it is required" }
            case .value(let field):
                guard column.holdsValue else { continue }
                if let problem = FieldCheck.problem(field, type: column.type, maximumKeySize: maximumKeySize) {
                    return "Property '\(column.name)' \(problem)"
                }
            }
        }
        if let column = table.primaryKeyColumn, let type = table.primaryKeyType {
            let field = table.field(base, size: record.count, column: column, in: file)
            let matches = KeyEncoding.withKey(field, type: type) { ByteOrder.compare($0, key) == 0 }
            if !matches {
                return "Its key is not the encoding of its primary key '\(columns[column].name)' (\(describe(field, type: type)))"
            }
        }
        return nil
    }

    /// Reports each to-one link of a sound record that names no stored object of its class.
    private func checkLinks(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer, of table: Table) throws {
        guard table.hasLinks else { return }
        for (column, property) in table.schema.properties.enumerated() where property.type == .object && !property.isArray {
            guard let target = table.field(record.baseAddress!, size: record.count, column: column, in: file) else { continue }
            if let problem = try missingTarget(target, of: property) {
                report(.danglingLink, table.className, printableKey(key, of: table), "Property '\(property.name)' \(problem)")
            }
        }
    }

    /// Why `target`, a key a link or collection `property` holds, names no stored object of
    /// its class, or `nil` if it names one.
    func missingTarget(_ target: UnsafeRawBufferPointer, of property: Property) throws -> String? {
        let className = property.objectClassName ?? "?"
        guard let table = tablesByName[className] else { return "links to the class '\(className)', which the file does not hold" }
        if let problem = FieldCheck.keyProblem(target, maximumKeySize: maximumKeySize) { return "links by \(problem)" }
        guard try view.transaction.get(table.database.dbi, key: target) == nil else { return nil }
        return "links to the object \(printableKey(target, of: table)) of '\(className)', which is not stored"
    }
}
