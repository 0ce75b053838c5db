package import Foundation
package import LMDBKit
import LMDBRealmFormat

/// What every realm handle of one file in this process shares: the LMDB environment, the
/// catalog of stored classes, and their tables.
///
/// There is one `StoreFile` per file per process (as there is one `Environment`), found through
/// a registry keyed by the file's real path and released when the last handle goes.
@usableFromInline
package final class StoreFile: @unchecked Sendable {
    // @unchecked Sendable: `tables`, `classesByName` and the catalog and sync state below are
    // only touched under `lock`; the rest is a `let` or set once while the file is loaded.

    /// How many named databases an environment of a file may open (`mdb_env_set_maxdbs`): the
    /// meta and catalog databases, each class's table, its indexes and its backlinks. The file,
    /// its compacted copies and its rewrites during a schema change all open it with this.
    static let maximumDatabases = 256

    package let environment: Environment
    /// The time a synced commit's clock starts from (see ``SyncClock``).
    package let syncClock = SyncClock()
    package let url: URL
    package let readOnly: Bool
    package let meta: Database
    package let catalog: Database
    /// The versions this process pins, for the active-versions limit.
    package let versions = PinnedVersions()
    /// Tells the layer above of commits (the observation layer's hub); set once, when the file
    /// is loaded.
    package private(set) var announcer: (any CommitAnnouncer)!
    /// Batches the `asyncWrite`s of this process into shared commits.
    package private(set) var committer: GroupCommitter!
    private let lock = NSLock()
    private var tables: [String: Table] = [:]
    private var knownCatalogVersion: UInt64 = 0
    /// The catalog version whose classes' database handles are all open (see
    /// ``openHandlesOfCatalog(in:)``); `nil` until a snapshot has checked.
    private var handlesCatalogVersion: UInt64?
    /// The catalog version at which a write last found no sync database (see
    /// ``discoverSync(_:)``).
    private var syncAbsentAtCatalogVersion: UInt64?
    private var syncStore: SyncStore?
    /// The model class this process reads and writes each of the file's classes with, by
    /// stored name (see ``declaredClass(named:)``).
    private var classesByName: [String: any DeclaredClass] = [:]

    static let formatKey = Array("format".utf8)
    static let catalogVersionKey = Array("catalogVersion".utf8)
    static let formatVersion = Array("LMDBRealm 1".utf8)
    static let metaName = "__lmdbrealm_meta"
    static let catalogName = "__lmdbrealm_catalog"

    private init(environment: Environment, url: URL, readOnly: Bool, meta: Database, catalog: Database, tables: [Table]) {
        self.environment = environment
        maximumKeySize = environment.maxKeySize
        self.url = url
        self.readOnly = readOnly
        self.meta = meta
        self.catalog = catalog
        for t in tables { self.tables[t.className] = t }
        committer = GroupCommitter(file: self)
    }

    // MARK: - Opening

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [String: Weak] = [:]
    // nonisolated(unsafe): `registry` is only read or written while `registryLock` is held.
    private struct Weak { weak var file: StoreFile? }

    /// The file at `url` if this process has it open, whatever options it was opened with.
    package static func loaded(at url: URL) -> StoreFile? {
        let path = url.resolvingSymlinksInPath().path
        return registryLock.withLock {
            registry.values.lazy.compactMap(\.file).first { $0.url.resolvingSymlinksInPath().path == path }
        }
    }

    /// What opening a file needs: where it is, and how the realm's configuration opens it.
    package struct Options {
        package var url: URL
        package var readOnly = false
        /// The largest the file may grow, in bytes (the map is reserved at this size).
        package var maximumFileSize: Int
        /// How many read transactions may be open on the file at once, in all processes.
        package var maximumNumberOfReaders: Int
        /// The file backs an in-memory realm: commits are not flushed, a file left by an
        /// earlier holder is discarded, and the file is deleted when the last handle closes.
        package var isInMemory = false
        /// Every record read is checked against its checksum.
        package var verifiesChecksums = false

        package init(
            url: URL, readOnly: Bool = false, maximumFileSize: Int, maximumNumberOfReaders: Int,
            isInMemory: Bool = false, verifiesChecksums: Bool = false
        ) {
            self.url = url
            self.readOnly = readOnly
            self.maximumFileSize = maximumFileSize
            self.maximumNumberOfReaders = maximumNumberOfReaders
            self.isInMemory = isInMemory
            self.verifiesChecksums = verifiesChecksums
        }
    }

    /// The reader slots of processes that died, cleared when this process opened the file.
    package var staleReadersClearedAtOpen: Int { environment.staleReadersClearedAtOpen }

    /// Whether the file backs an in-memory realm (deleted with its last handle).
    package private(set) var isInMemory = false
    /// Whether every record read is checked against its checksum; set, like `isInMemory`,
    /// before the file is registered, and never changed after.
    // Exclusivity unchecked: set once while the file is loaded, read on every record read.
    @exclusivity(unchecked) @usableFromInline package private(set) var verifiesChecksums = false

    /// What a realm opening the file last found its schema to match (see
    /// `Realm.migrateIfNeeded`), so that opening it again the same way checks nothing; guarded
    /// by `lock`.
    private var verifiedSchemaSignature: String?

    /// Whether `signature` was verified last.
    package func schemaVerified(_ signature: String) -> Bool { lock.withLock { verifiedSchemaSignature == signature } }

    /// Records `signature` as verified.
    package func noteSchemaVerified(_ signature: String) { lock.withLock { verifiedSchemaSignature = signature } }

    deinit {
        if isInMemory {
            for path in [url.path, url.path + "-lock"] { unlink(path) }
        }
    }

    /// The shared state of the file `options` name, opening the file if this process has not.
    /// `makeAnnouncer` makes the file's ``CommitAnnouncer`` when this call loads the file.
    package static func open(
        _ configuration: Options, announcer makeAnnouncer: (StoreFile) -> any CommitAnnouncer
    ) throws -> StoreFile {
        let url = configuration.url
        return try registryLock.withLock {
            if configuration.isInMemory && !registry.values.contains(where: { $0.file?.url == url }) {
                // Nothing of an earlier in-memory realm under this name is kept.
                for path in [url.path, url.path + "-lock"] { unlink(path) }
            }
            let environment = try openEnvironment(configuration, url: url)
            if let file = registry[environment.path]?.file { return file }
            try checkStructure(of: environment, url: url)
            let file = try load(environment, url: url, readOnly: configuration.readOnly)
            file.isInMemory = configuration.isInMemory
            file.verifiesChecksums = configuration.verifiesChecksums
            file.announcer = makeAnnouncer(file)
            registry[environment.path] = Weak(file: file)
            return file
        }
    }

    private static func openEnvironment(_ configuration: Options, url: URL) throws -> Environment {
        let path = url.path
        // stat, not FileManager.fileExists: a file in a directory this user may not search is
        // not a missing file.
        var status = stat()
        let exists = stat(path, &status) == 0
        if !exists && errno == EACCES {
            throw RealmError(
                .filePermissionDenied, "Unable to open a realm at path '\(path)': this user may not search a directory on its path", fileURL: url)
        }
        if exists && (status.st_mode & S_IFMT) == S_IFDIR {
            throw RealmError(.fileAccess, "Unable to open a realm at path '\(path)': it is a directory", fileURL: url)
        }
        if !exists && configuration.readOnly {
            throw RealmError(
                .fileNotFound, "Unable to open a realm at path '\(path)': the file does not exist and the configuration is read-only",
                fileURL: url)
        }
        if exists, try fileSize(url) == 0 {
            throw RealmError(
                .invalidDatabase, "Unable to open a realm at path '\(path)': the file is empty (0 bytes), not an LMDBRealm file",
                fileURL: url)
        }
        var options = Environment.Options()
        // Live objects keep pointers into the map between calls, so the map is sized once, to
        // the maximum, and never moved: address space is reserved, the file grows as written.
        options.mapSize = configuration.maximumFileSize
        options.maximumMapSize = configuration.maximumFileSize
        options.maxReaders = configuration.maximumNumberOfReaders
        options.maxDatabases = StoreFile.maximumDatabases
        options.readOnly = configuration.readOnly
        options.fileMode = 0o600
        if configuration.isInMemory { options.durability = .noSync }
        if configuration.readOnly && !configuration.isInMemory && !lockFileCanBeMade(url) { options.noLock = true }
        let environment: Environment
        do {
            environment = try Environment.open(path: path, options: options)
        } catch LMDBError.permissionDenied {
            throw permissionDenied(url, readOnly: configuration.readOnly)
        } catch let error as LMDBError {
            throw RealmError(error, url: url, doing: "Unable to open a realm at path")
        }
        // A file cut short after LMDB wrote it would fault when a missing page is touched.
        let info = environment.info()
        let size = try fileSize(url)
        // A damaged meta page can name a last page whose end no integer holds.
        let (pages, pagesOverflow) = info.lastPageNumber.addingReportingOverflow(1)
        let (needed, neededOverflow) = pages.multipliedReportingOverflow(by: info.pageSize)
        if pagesOverflow || neededOverflow || pages <= 0 {
            throw RealmError(
                .invalidDatabase,
                "Unable to open a realm at path '\(path)': its meta page names page \(info.lastPageNumber) as its last, which no file holds",
                fileURL: url)
        }
        if size < needed {
            throw RealmError(
                .invalidDatabase,
                "Unable to open a realm at path '\(path)': the file is truncated (\(size) bytes, its pages need \(needed))",
                fileURL: url)
        }
        return environment
    }

    // MARK: - The lock file

    /// Whether the lock file of the file at `url` is there, or this process may create it.
    ///
    /// LMDB opens (and creates) the lock file `PATH-lock` at every open, a read-only one
    /// included: its readers record there which version they read, so that no writer reuses
    /// those pages. It does without one only on a read-only file system (`mdb_env_setup_locks`:
    /// "Omit lockfile if read-only env on read-only filesystem"). A read-only realm whose file
    /// has no lock file and whose directory this process cannot write (a file shipped in a
    /// read-only directory) is therefore opened with `MDB_NOLOCK` (lmdb.h: "the caller must ...
    /// ensure that no readers are using old transactions while a writer is active"): read as
    /// RealmSwift reads such a file, as immutable. No process has the file open with its lock
    /// file then (LMDB never removes a lock file), and none may write it while it is read.
    private static func lockFileCanBeMade(_ url: URL) -> Bool {
        let lock = url.path + "-lock"
        if FileManager.default.fileExists(atPath: lock) { return true }
        return faccessat(AT_FDCWD, url.deletingLastPathComponent().path, W_OK | X_OK, AT_EACCESS) == 0
    }

    /// The error of an open LMDB refused with `EACCES`: the data file, or its lock file (which
    /// even a read-only open needs to read and write, see ``lockFileCanBeMade(_:)``).
    private static func permissionDenied(_ url: URL, readOnly: Bool) -> RealmError {
        let path = url.path
        let lock = path + "-lock"
        let reason: String
        if !FileManager.default.fileExists(atPath: path) {
            reason = "this user may not create the file in its directory"
        } else if faccessat(AT_FDCWD, path, readOnly ? R_OK : R_OK | W_OK, AT_EACCESS) != 0 {
            reason = "this user may not \(readOnly ? "read" : "read and write") the file"
        } else if FileManager.default.fileExists(atPath: lock) && faccessat(AT_FDCWD, lock, R_OK | W_OK, AT_EACCESS) != 0 {
            reason =
                "this user may not read and write its lock file '\(lock)', where "
                + (readOnly ? "even a read-only realm records the version it reads" : "readers record the versions they read")
        } else if !FileManager.default.fileExists(atPath: lock) {
            reason = "this user may not create its lock file '\(lock)' in the file's directory"
        } else {
            reason = "permission denied"
        }
        return RealmError(.filePermissionDenied, "Unable to open a realm at path '\(path)': \(reason)", fileURL: url)
    }

    /// Checks, as bytes, the pages loading the file reads before any cursor does: the list of
    /// databases, this file's meta and catalog databases, and every other database's root. A
    /// damaged page there would otherwise stop the process inside LMDB (a page past the end of
    /// the file faults). Once per process and file: a few pages.
    private static func checkStructure(of environment: Environment, url: URL) throws {
        let problems: [PageProblem]
        do {
            problems = try environment.checkPages(limit: 1, only: [metaName, catalogName])
        } catch let error as LMDBError {
            throw RealmError(error, url: url, doing: "Unable to open a realm at path")
        }
        if let problem = problems.first {
            throw RealmError(
                .invalidDatabase,
                "Unable to open a realm at path '\(url.path)': its pages are damaged (\(problem)); 'lmdbrealm verify' examines the rest",
                fileURL: url)
        }
    }

    /// The size of the file at `url` in bytes.
    private static func fileSize(_ url: URL) throws -> Int {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            return (attributes[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            throw RealmError(
                .fileAccess, "Unable to open a realm at path '\(url.path)': cannot read its size (\(error.localizedDescription))",
                fileURL: url)
        }
    }

    private static func load(_ environment: Environment, url: URL, readOnly: Bool) throws -> StoreFile {
        let path = url.path
        do {
            var meta = try environment.database(named: metaName)
            var catalog = try environment.database(named: catalogName)
            if meta == nil {
                let foreign = try environment.read { txn in
                    try txn.withCursor(on: Database.main) { try $0.first() }
                }
                if foreign || readOnly {
                    throw RealmError(
                        .invalidDatabase,
                        "Unable to open a realm at path '\(path)': it is \(foreign ? "an LMDB file of another program" : "an empty LMDB file"), not an LMDBRealm file",
                        fileURL: url)
                }
                try environment.write { txn in
                    let m = try txn.createDatabase(named: metaName)
                    try txn.put(formatVersion, forKey: formatKey, in: m)
                    _ = try txn.createDatabase(named: catalogName)
                }
                meta = try environment.database(named: metaName)
                catalog = try environment.database(named: catalogName)
            }
            guard let meta, let catalog else {
                throw RealmError(.invalidDatabase, "Unable to open a realm at path '\(path)': its catalog is missing", fileURL: url)
            }
            let tables = try environment.read { txn -> [Table] in
                let format = try txn.get(formatKey, in: meta) { Array($0) }
                guard let format else {
                    throw RealmError(.invalidDatabase, "Unable to open a realm at path '\(path)': no format version recorded", fileURL: url)
                }
                guard format == formatVersion else {
                    throw RealmError(
                        .incompatibleVersion,
                        "Unable to open a realm at path '\(path)': its format '\(String(decoding: format, as: UTF8.self))' is not '\(String(decoding: formatVersion, as: UTF8.self))'",
                        fileURL: url)
                }
                var schemas: [ObjectSchema] = []
                try txn.forEach(in: catalog) { key, value in
                    schemas.append(try decodeSchema(value, name: String(decoding: key, as: UTF8.self), url: url))
                    return true
                }
                return try schemas.map { schema -> Table in
                    guard let db = try environment.database(named: Table.databaseName(for: schema.className)) else {
                        throw RealmError(
                            .invalidDatabase, "Unable to open a realm at path '\(path)': the table of class '\(schema.className)' is missing",
                            fileURL: url)
                    }
                    let indexes = try Table.openIndexes(of: schema) { name, _ in try environment.database(named: name) }
                    let compound = try Table.openCompoundIndexes(of: schema) { name, _ in try environment.database(named: name) }
                    let lists = try Table.openLists(of: schema) { name, _ in try environment.database(named: name) }
                    return Table(schema: schema, database: db, indexes: indexes, compoundIndexes: compound, lists: lists)
                }
            }
            let file = StoreFile(environment: environment, url: url, readOnly: readOnly, meta: meta, catalog: catalog, tables: tables)
            if let store = try environment.database(named: SyncStore.databaseName) { file.syncStore = SyncStore(database: store) }
            return file
        } catch let error as LMDBError {
            throw RealmError(error, url: url, doing: "Unable to open a realm at path")
        }
    }

    static func decodeSchema(_ stored: UnsafeRawBufferPointer, name: String, url: URL) throws -> ObjectSchema {
        let opened = Array(name.utf8).withUnsafeBytes { SealedValue.open(stored, key: $0) }
        let bytes: UnsafeRawBufferPointer
        switch opened {
        case .success(let value): bytes = value
        case .failure(let damage):
            throw RealmError(
                .invalidDatabase, "Unable to open a realm at path '\(url.path)': the stored schema of class '\(name)' is damaged (\(damage))",
                fileURL: url)
        }
        do {
            return try JSONDecoder().decode(ObjectSchema.self, from: Data(bytes))
        } catch {
            throw RealmError(
                .invalidDatabase, "Unable to open a realm at path '\(url.path)': the stored schema of class '\(name)' is damaged",
                fileURL: url)
        }
    }

    /// Whether the file at `url` is open in this process.
    package static func isOpen(_ url: URL) -> Bool {
        Environment.isOpen(path: url.path)
    }

    // MARK: - Tables

    /// The committed table of `className`, if this process knows it.
    package func table(named className: String) -> Table? {
        lock.withLock { tables[className] }
    }

    /// The file's sync state, if it is synced (found when the file is loaded, or made by
    /// ``publishSync(_:)`` once the write enabling sync commits).
    package var sync: SyncStore? { lock.withLock { syncStore } }

    package func publishSync(_ store: SyncStore) {
        lock.withLock { syncStore = store }
    }

    /// What a write finds of the file's sync database (see ``discoverSync(_:)``).
    package enum SyncDiscovery {
        case synced(SyncStore)
        case notSynced
        /// Another process made the file synced: the write ends, the handle is opened
        /// (``openSyncHandle()``), and the write begins again.
        case needsHandle
    }

    /// The file's sync database for the write `transaction` (top-level): the one this process
    /// knows, or one another process made since the file was loaded here. Making it moves the
    /// catalog version, so it is looked for only when that moved. The caller publishes a
    /// found one (``publishSync(_:)``) once the write commits.
    package func discoverSync(_ transaction: borrowing Transaction) throws -> SyncDiscovery {
        if let sync { return .synced(sync) }
        let version = try catalogVersion(in: StoreView(transaction.unsafe))
        if lock.withLock({ syncAbsentAtCatalogVersion == version }) { return .notSynced }
        let listed = try Array(SyncStore.databaseName.utf8).withUnsafeBytes { try transaction.unsafe.get(Database.main.dbi, key: $0) != nil }
        guard listed else {
            lock.withLock { syncAbsentAtCatalogVersion = version }
            return .notSynced
        }
        // A handle opened while a write of this process is open would be unknown to the write
        // and could take the slot of a database the write makes: it is opened between writes.
        guard let database = environment.openedDatabase(named: SyncStore.databaseName), transaction.canUse(database) else { return .needsHandle }
        return .synced(SyncStore(database: database))
    }

    /// Opens the handle of the sync database another process made (no write of this thread
    /// is open).
    func openSyncHandle() throws {
        _ = try environment.database(named: SyncStore.databaseName)
    }

    /// Every table this process knows of, in no particular order.
    package var allTables: [Table] { lock.withLock { Array(tables.values) } }

    /// Remembers `info` as the model class of its stored class name in this file: the classes
    /// a realm of the file was opened with (`replacing` the class noted before: the file's
    /// schema was just checked against them), or bound to (kept only if none was noted).
    package func noteClass(_ info: any DeclaredClass, replacing: Bool = false) {
        guard !info.isDynamic else { return }
        lock.withLock {
            if replacing || classesByName[info.schema.className] == nil { classesByName[info.schema.className] = info }
        }
    }

    /// The model class noted for the file's class `name`: the one a realm of this file was
    /// opened with or used for it (``noteClass(_:replacing:)``), or `nil`. The object layer's
    /// `classInfo(named:)` falls back to the first class of that name the process described.
    package func declaredClass(named name: String) -> (any DeclaredClass)? {
        lock.withLock { classesByName[name] }
    }

    /// The catalog version recorded in the file, as `txn` sees it. Every change to the catalog
    /// (a class added, an index built or dropped) increments it.
    package func catalogVersion(in view: StoreView) throws -> UInt64 {
        try readVersion(StoreFile.catalogVersionKey, named: "catalog version", in: view) ?? 0
    }

    func storeCatalogVersion(_ version: UInt64, in writer: StoreWriter) throws {
        try storeVersion(version, under: StoreFile.catalogVersionKey, in: writer)
    }

    /// The 8-byte version stored in the meta database under `key`, checked, or `nil`.
    func readVersion(_ key: [UInt8], named what: String, in view: StoreView) throws -> UInt64? {
        try key.withUnsafeBytes { key in
            guard let stored = try view.transaction.get(meta.dbi, key: key) else { return nil }
            switch SealedValue.open(stored, key: key) {
            case .success(let value) where value.count == 8:
                return UInt64(littleEndian: value.loadUnaligned(as: UInt64.self))
            case .success(let value):
                throw RealmError(.invalidDatabase, "The realm at '\(url.path)' records a \(what) of \(value.count) bytes, not 8", fileURL: url)
            case .failure(let damage):
                throw RealmError(.invalidDatabase, "The realm at '\(url.path)' is damaged: its \(what) \(damage)", fileURL: url)
            }
        }
    }

    /// Stores `version` (8 bytes, sealed) in the meta database under `key`.
    func storeVersion(_ version: UInt64, under key: [UInt8], in writer: StoreWriter) throws {
        let bytes = withUnsafeBytes(of: version.littleEndian) { Array($0) }
        try SealedValue.sealed(bytes, key: key).withUnsafeBytes { value in
            try key.withUnsafeBytes { _ = try writer.put(meta.dbi, key: $0, value: value) }
        }
    }

    /// Forgets every cached table if the catalog moved past `version` seen last; they are
    /// found again from the catalog on next use.
    package func noteCatalogVersion(_ version: UInt64) {
        lock.withLock {
            if version != knownCatalogVersion {
                tables.removeAll()
                knownCatalogVersion = version
            }
        }
    }

    /// The catalog version the shared tables describe.
    package var catalogVersionKnown: UInt64 { lock.withLock { knownCatalogVersion } }

    /// Makes a table created by a committed write visible to every handle.
    package func publish(_ table: Table) {
        lock.withLock { tables[table.className] = table }
    }

    /// Looks for `className` in the catalog of `txn` (another process or handle may have
    /// added it since this file was loaded) and opens its table with `openDatabase`. The
    /// caller publishes it (see ``publish(_:)``) once its database handle is shared.
    package func findTable(
        named className: String, in view: StoreView, useShared: Bool = true, openDatabase: (String) throws -> Database?
    ) throws -> Table? {
        if useShared, let table = table(named: className) { return table.isUsable(in: view.transaction) ? table : nil }
        let found = try Array(className.utf8).withUnsafeBytes { try view.transaction.get(catalog.dbi, key: $0) }
        guard let found else { return nil }
        let schema = try StoreFile.decodeSchema(found, name: className, url: url)
        guard let table = try openTable(of: schema, openDatabase: openDatabase) else { return nil }
        // Handles opened after the view's transaction began are unknown to it; snapshots open
        // their catalog's handles first (see ``openHandlesOfCatalog(in:)``), so this is rare.
        return table.isUsable(in: view.transaction) ? table : nil
    }

    private func openTable(of schema: ObjectSchema, openDatabase: (String) throws -> Database?) throws -> Table? {
        guard let db = try openDatabase(Table.databaseName(for: schema.className)) else { return nil }
        let indexes = try Table.openIndexes(of: schema) { name, _ in try openDatabase(name) }
        let compound = try Table.openCompoundIndexes(of: schema) { name, _ in try openDatabase(name) }
        let lists = try Table.openLists(of: schema) { name, _ in try openDatabase(name) }
        return Table(schema: schema, database: db, indexes: indexes, compoundIndexes: compound, lists: lists)
    }

    /// Opens the database handles of every class in `view`'s catalog that this process has not
    /// opened yet (another process added the class or an index), once per catalog version.
    /// - Returns: Whether `view`'s transaction began before some of them were opened: it
    ///   cannot use those (LMDB sizes a transaction's table of handles when it begins), so
    ///   the caller takes its snapshot again.
    func openHandlesOfCatalog(in view: StoreView) throws -> Bool {
        let version = try catalogVersion(in: view)
        if lock.withLock({ handlesCatalogVersion == version }) { return false }
        var unusable = false
        for name in try view.classNames(in: self) {
            let found = try Array(name.utf8).withUnsafeBytes { try view.transaction.get(catalog.dbi, key: $0) }
            // A class whose schema cannot be read fails where it is used, with its own error.
            guard let found, let schema = try? StoreFile.decodeSchema(found, name: name, url: url) else { continue }
            guard let table = try openTable(of: schema, openDatabase: { try environment.database(named: $0) }) else { continue }
            if !table.isUsable(in: view.transaction) { unusable = true }
        }
        if !unusable { lock.withLock { handlesCatalogVersion = version } }
        return unusable
    }

    /// Finds the table of `className` in the catalog `view` sees and opens its databases
    /// outside any write (the environment's shared handles).
    package func findTable(named className: String, in view: StoreView, useShared: Bool) throws -> Table? {
        try findTable(named: className, in: view, useShared: useShared) { try environment.database(named: $0) }
    }

    // MARK: - Facts for the layers above

    /// A reader of the newest version committed to the file, by any process.
    package var lastCommittedVersionReader: @Sendable () -> Int {
        let environment = self.environment
        return { environment.info().lastTransactionID }
    }

    /// The file's largest key, in bytes.
    /// The longest key LMDB stores (`mdb_env_get_maxkeysize`), read once.
    package let maximumKeySize: Int

    /// Reader slots in use in the file's lock table, across processes.
    package var readerSlotsInUse: Int { environment.readerSlotsInUse() }
}
