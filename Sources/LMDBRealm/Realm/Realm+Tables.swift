import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - Tables and their bindings

extension Realm {
    /// The binding of `info`'s class to its table in this file; with `create`, inside a write,
    /// the table is made if the file has none.
    /// - Throws: ``RealmError/Code/schemaMismatch`` if the stored class differs.
    func binding(for info: ClassInfo, create: Bool) throws -> TableBinding? {
        try binding(for: info.type, info: info, create: create)
    }

    /// As ``binding(for:create:)``, looking in this realm's caches before asking for the
    /// class's description.
    @inline(__always)
    func binding(for type: Object.Type, info: ClassInfo? = nil, create: Bool) throws -> TableBinding? {
        if let frozenLock {
            frozenLock.lock()
            defer { frozenLock.unlock() }
            return try cachedBinding(for: type, info: info, create: create)
        }
        return try cachedBinding(for: type, info: info, create: create)
    }

    /// The binding of the Swift class called `className` if it is among the recent ones.
    func recentBinding(named className: String) -> TableBinding? {
        if let frozenLock {
            frozenLock.lock()
            defer { frozenLock.unlock() }
            return tables.recent.binding(named: className)
        }
        return tables.recent.binding(named: className)
    }

    @inline(__always)
    private func cachedBinding(for type: Object.Type, info: ClassInfo?, create: Bool) throws -> TableBinding? {
        if let recent = tables.recent.binding(of: type) { return recent }
        if let b = tables.byClass[ObjectIdentifier(type)] {
            tables.recent.insert(b)
            return b
        }
        return try resolveBinding(info ?? ClassInfo.of(type), create: create)
    }

    private func resolveBinding(_ info: ClassInfo, create: Bool) throws -> TableBinding? {
        if let types = configuration.objectTypes, !types.contains(where: { $0 == info.type }) {
            fatalError(
                "Object type '\(info.schema.className)' is not managed by the Realm. If using a custom `objectTypes` array, make sure all model classes are included.")
        }
        let name = info.schema.className
        var table = try discoverTable(named: name)
        if table == nil {
            guard create else { return nil }
            guard let session else { fatalError("not in a write transaction") }
            do {
                table = try session.createTable(info.schema)
                try session.storeSwiftTypeName(of: info)
            } catch {
                throw Realm.Error(error, url: file.url, doing: "Cannot add class '\(name)' to")
            }
        } else if let session, table!.schema.indexedNames != info.schema.indexedNames {
            do {
                table = try session.reindex(table!, declared: info.schema)
            } catch {
                throw Realm.Error(error, url: file.url, doing: "Cannot change the indexes of '\(name)' in")
            }
        }
        do {
            let b = try TableBinding(table: table!, declared: info)
            tables.byClass[ObjectIdentifier(info.type)] = b
            file.noteClass(info)
            return b
        } catch {
            throw Realm.Error(
                .schemaMismatch,
                "Migration is required due to the following errors:\n- " + error.lines.joined(separator: "\n- "),
                fileURL: file.url)
        }
    }

    /// The binding of a class for reading by its description: a model class's, or a stored
    /// class's seen through ``DynamicObject``; `nil` if the file has no such class yet.
    func bindingForReading(_ info: ClassInfo) -> TableBinding? {
        info.isDynamic ? dynamicBinding(named: info.schema.className) : bindingForReading(info.type)
    }

    /// The binding `object`'s class has now (it changes when indexes do).
    @inline(__always)
    func currentBinding(of object: Object) -> TableBinding? {
        let binding = object._binding.unsafelyUnwrapped
        return binding.classInfo.isDynamic ? dynamicBinding(named: binding.table.className) : bindingForReading(Swift.type(of: object))
    }

    /// The binding of stored class `className` for ``DynamicObject``s, made from the schema
    /// stored in the file; `nil` if the file has no such class.
    func dynamicBinding(named className: String) -> TableBinding? {
        frozenLock?.lock()
        defer { frozenLock?.unlock() }
        let found: Table?
        do {
            found = try discoverTable(named: className)
        } catch {
            cannotRead("the class '\(className)'", error)
        }
        guard let table = found else { return nil }
        let info = ClassInfo.dynamic(table.schema)
        if let binding = tables.byClass[ObjectIdentifier(info)], binding.table === table { return binding }
        // A stored schema always binds to itself.
        let binding = try! TableBinding(table: table, declared: info)
        tables.byClass[ObjectIdentifier(info)] = binding
        return binding
    }

    /// The table of `className`: known to the file, created or found by this write, or found
    /// in the catalog (added by another handle or process since the file was loaded).
    func discoverTable(named className: String) throws -> Table? {
        do {
            if let session { return try session.findTable(named: className) }
            // A frozen realm uses the file's tables only while they describe its own catalog
            // version, and keeps those it finds otherwise to itself.
            let shared = !isFrozen || file.catalogVersionKnown == tables.catalogVersion
            let view = readView()
            if let table = tables.privateTables[className] ?? (shared ? file.table(named: className) : nil) {
                // Made by another handle after this version was read: not part of it yet.
                return table.isUsable(in: view.transaction) ? table : nil
            }
            let table = try file.findTable(named: className, in: view, useShared: shared)
            if let table {
                if !shared { tables.privateTables[className] = table } else if !isFrozen { file.publish(table) }
            }
            return table
        } catch {
            throw Realm.Error(error, url: file.url, doing: "Cannot read the schema of '\(className)' in")
        }
    }

    /// Every table in the file, including those other handles or processes added.
    func allTables() throws -> [Table] {
        let lock = frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        let names: [String]
        do {
            names = try readView().classNames(in: file)
        } catch {
            throw Realm.Error(error, url: file.url, doing: "Cannot read the catalog of")
        }
        return try names.compactMap { try discoverTable(named: $0) }
    }

    /// Drops cached tables and bindings if another handle or process changed the catalog
    /// (a class added, an index built or dropped) since they were made.
    func syncCatalog(_ view: StoreView) {
        let version: UInt64
        do {
            version = try file.catalogVersion(in: view)
        } catch {
            cannotRead("the catalog", error)
        }
        // A frozen realm may read an older catalog: it leaves the file's shared one alone.
        if !isFrozen { file.noteCatalogVersion(version) }
        if tables.catalogVersion != version {
            tables.removeBindings()
            tables.catalogVersion = version
        }
    }

    /// Whether the realm holds no objects at all.
    public var isEmpty: Bool {
        checkThread()
        let tables: [Table]
        do {
            tables = try allTables()
        } catch {
            cannotRead("the catalog", error)
        }
        let view = readView()
        return tables.allSatisfy { objectCount(of: $0, in: view) == 0 }
    }

    /// Every way the file disagrees with itself, as ``verify(progress:)`` finds them (an index
    /// entry with no object, an object missing from an index, a list element naming an object
    /// that is gone, ...), one message each. Empty when the file is consistent. Inside a write,
    /// the write's own changes are checked.
    @_spi(Testing) public func indexProblems() -> [String] {
        checkThread()
        let verifier = StoreVerifier(view: queryView(), file: file, progress: nil)
        do {
            try verifier.run { className in
                frozenLock?.lock()
                defer { frozenLock?.unlock() }
                return try discoverTable(named: className)
            }
        } catch {
            return ["reading failed: \(error)"]
        }
        return verifier.findings.map { finding in
            [finding.className, finding.objectKey].compactMap { $0 }.joined(separator: " ") + ": " + finding.message
        }
    }
}

/// The tables a realm reads and writes and the bindings of its classes to them, in one value:
/// made as classes are first used, and dropped when the catalog moves to another version (a
/// class added, an index built or dropped) or a write that made them does not commit.
struct TableBindings {
    /// The catalog version the bindings were made against.
    var catalogVersion: UInt64 = 0
    /// Tables a frozen realm found in its own version's catalog when the file's shared ones
    /// describe another version.
    var privateTables: [String: Table] = [:]
    /// The binding of each class (a model class's, or a stored schema's for dynamic objects).
    var byClass: [ObjectIdentifier: TableBinding] = [:]
    /// The bindings used last, checked before the dictionary.
    var recent = RecentBindings()
    /// The executor of the last query and the generation it was made at, reused for the next
    /// query of the same table at that generation (see `Realm.executor(for:view:)`).
    var lastExecutor: (executor: QueryExecutor, generation: UInt64)?

    /// Forgets every binding.
    mutating func removeBindings() {
        byClass.removeAll()
        recent.removeAll()
    }

    /// Forgets the binding of `type` (its indexes changed).
    mutating func forget(_ type: Object.Type) {
        byClass[ObjectIdentifier(type)] = nil
        recent.removeAll()
    }

    /// Forgets the bindings to `table` (made by a write that did not commit).
    mutating func forgetBindings(to table: Table) {
        byClass = byClass.filter { $0.value.table !== table }
        recent.removeAll()
    }
}

/// The last few bindings a realm used, checked before its dictionary of bindings: reading a
/// graph goes from class to class (an article, its author, its keywords), so a single entry
/// would miss every time.
struct RecentBindings {
    private var entries: (TableBinding?, TableBinding?, TableBinding?, TableBinding?) = (nil, nil, nil, nil)
    private var next = 0

    @inline(__always)
    func binding(of type: Object.Type) -> TableBinding? {
        if let b = entries.0, b.classInfo.type == type { return b }
        if let b = entries.1, b.classInfo.type == type { return b }
        if let b = entries.2, b.classInfo.type == type { return b }
        if let b = entries.3, b.classInfo.type == type { return b }
        return nil
    }

    /// The recent binding of the class called `className`, if there is one.
    func binding(named className: String) -> TableBinding? {
        if let b = entries.0, b.table.className == className { return b }
        if let b = entries.1, b.table.className == className { return b }
        if let b = entries.2, b.table.className == className { return b }
        if let b = entries.3, b.table.className == className { return b }
        return nil
    }

    /// Keeps `binding` in place of the oldest entry.
    mutating func insert(_ binding: TableBinding) {
        switch next {
        case 0: entries.0 = binding
        case 1: entries.1 = binding
        case 2: entries.2 = binding
        default: entries.3 = binding
        }
        next = (next + 1) & 3
    }

    mutating func removeAll() { self = RecentBindings() }
}
