public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// The schema version stored in the realm file at `fileURL`, read without opening a realm.
/// - Throws: ``RealmError/Code/fileNotFound`` if there is no file, or what opening it throws;
///   ``RealmError/Code/encryptionNotSupported`` for an `encryptionKey`.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    if encryptionKey != nil { throw Realm.Error.encryptionNotSupported(at: fileURL) }
    guard FileManager.default.fileExists(atPath: fileURL.path) else {
        throw Realm.Error(.fileNotFound, "No realm file at path '\(fileURL.path)'", fileURL: fileURL)
    }
    // A file this process has open is read through its open environment (LMDB opens a file
    // once per process); another is opened read-only for the moment.
    let file =
        try StoreFile.loaded(at: fileURL)
        ?? StoreFile.open(StoreFile.Options(Realm.Configuration(fileURL: fileURL, readOnly: true))) { CommitHub(file: $0) }
    do {
        let snapshot = try Snapshot(file: file)
        return try file.schemaVersion(in: snapshot.view) ?? 0
    } catch {
        throw Realm.Error(error, url: fileURL, doing: "Cannot read the schema version of the realm at path")
    }
}

extension Realm {
    /// Where the file's schema and the model's differ, and what the file's version is.
    struct SchemaComparison {
        let storedVersion: UInt64?
        let tables: [String: Table]
        /// The model's classes the file has, or will have.
        let declared: [ClassInfo]
        /// The classes whose stored layout differs from the model's, with the differences.
        let changed: [(info: ClassInfo, table: Table, lines: [String])]

        var lines: [String] { changed.flatMap(\.lines) }
        var version: UInt64 { storedVersion ?? 0 }
    }

    /// Compares the stored schema with the model: `objectTypes` if the configuration lists
    /// them, else each stored class this process can name (recorded in the file by its Swift
    /// type, or used already).
    static func compareSchema(_ file: StoreFile, _ view: StoreView, _ configuration: Configuration) throws -> SchemaComparison {
        do {
            let storedVersion = try file.schemaVersion(in: view)
            var tables: [String: Table] = [:]
            for name in try view.classNames(in: file) {
                if let table = try file.findTable(named: name, in: view, useShared: true) { tables[name] = table }
            }
            let declared: [ClassInfo]
            if let types = configuration.objectTypes {
                declared = types.map(ClassInfo.of)
            } else {
                declared = try tables.keys.sorted().compactMap { name in
                    // The class that stored it first: two modules may each declare a class of
                    // this name, and the one this process described first need not be it.
                    if let mangled = try file.swiftTypeName(of: name, in: view), let type = _typeByName(mangled) as? Object.Type {
                        return ClassInfo.of(type)
                    }
                    return ClassInfo.named(name)
                }
            }
            var changed: [(info: ClassInfo, table: Table, lines: [String])] = []
            for info in declared {
                guard let table = tables[info.schema.className] else { continue }
                let lines = table.schema.differences(from: info.schema)
                if !lines.isEmpty { changed.append((info, table, lines)) }
            }
            return SchemaComparison(storedVersion: storedVersion, tables: tables, declared: declared, changed: changed)
        } catch {
            throw Realm.Error(error, url: file.url, doing: "Cannot read the schema of the realm at path")
        }
    }

    /// Opens the file of `configuration`; with `deleteRealmIfMigrationNeeded`, a file whose
    /// schema differs from the model's (or whose version is newer) is deleted first and a new
    /// one made.
    static func openFile(_ configuration: Configuration) throws -> StoreFile {
        let url = configuration.resolvedFileURL
        if let seed = configuration.seedFilePath, !configuration.readOnly, !FileManager.default.fileExists(atPath: url.path) {
            try copySeed(seed, to: url)
        }
        if let shouldCompact = configuration.shouldCompactOnLaunch, !configuration.readOnly, configuration.inMemoryIdentifier == nil,
            StoreFile.loaded(at: url) == nil, FileManager.default.fileExists(atPath: url.path)
        {
            switch try StoreFile.compactIfAsked(StoreFile.Options(configuration), shouldCompact) {
            case .inUse:
                configuration.logger?.log(.info, "Not compacting the realm at '\(url.path)': another process has it open")
            case .declined:
                break
            case .compacted(let before, let after):
                configuration.logger?.log(.info, "Compacted the realm at '\(url.path)' from \(before) to \(after) bytes")
            }
        }
        if configuration.deleteRealmIfMigrationNeeded, !configuration.readOnly, !StoreFile.isOpen(url),
            FileManager.default.fileExists(atPath: url.path)
        {
            let needed: Bool = try {
                let file = try StoreFile.open(StoreFile.Options(configuration)) { CommitHub(file: $0) }
                let snapshot = try Snapshot(file: file)
                let comparison = try compareSchema(file, snapshot.view, configuration)
                return !comparison.changed.isEmpty || comparison.version > configuration.schemaVersion
            }()
            if needed { try deleteFiles(for: configuration) }
        }
        let loaded = StoreFile.loaded(at: url) != nil
        let file = try StoreFile.open(StoreFile.Options(configuration)) { CommitHub(file: $0) }
        if !loaded, file.staleReadersClearedAtOpen > 0 {
            configuration.logger?.log(
                .warn,
                "Cleared \(file.staleReadersClearedAtOpen) reader slot(s) of the realm at '\(url.path)' left by processes that died")
        }
        return file
    }

    /// Copies `seed` to `url` if nothing is there: into a file of its own in the same directory,
    /// then linked in place (`link` never replaces a file, so the first copy wins and a reader
    /// sees a whole file or none).
    private static func copySeed(_ seed: URL, to url: URL) throws {
        try FilePlacement.place(at: url, purpose: "the seed file", mode: .firstWins) { temporary in
            do {
                try FileManager.default.copyItem(at: seed, to: temporary)
            } catch {
                throw Realm.Error(
                    .fileNotFound, "Cannot copy the seed file '\(seed.path)' to '\(url.path)': \(error.localizedDescription)", fileURL: url)
            }
        }
    }

    /// Brings the file to the configuration's schema version: checks the version, applies the
    /// model's changes to the stored classes and runs the migration block, all in one write.
    func migrateIfNeeded() throws {
        // Opened again as before (the same catalog, version and classes): nothing to check.
        let signature = try schemaSignature()
        if file.schemaVerified(signature) { return }
        try checkAndMigrate()
        file.noteSchemaVerified(try schemaSignature())
    }

    /// What the schema check depends on: the catalog's version, the stored and the
    /// configuration's schema version, and the classes compared (the configuration's, or as
    /// many as the process knows).
    private func schemaSignature() throws -> String {
        let catalog: UInt64
        let stored: UInt64?
        do {
            catalog = try file.catalogVersion(in: readView())
            stored = try file.schemaVersion(in: readView())
        } catch {
            throw Realm.Error(error, url: file.url, doing: "Cannot read the catalog of")
        }
        let classes =
            configuration.objectTypes.map { types in types.map { "\(ObjectIdentifier($0).hashValue)" }.joined(separator: ",") }
            ?? "described \(ClassInfo.describedCount)"
        return "\(catalog)|\(stored.map(String.init) ?? "-")|\(configuration.schemaVersion)|\(configuration.readOnly)|\(classes)"
    }

    private func checkAndMigrate() throws {
        let comparison = try Realm.compareSchema(file, readView(), configuration)
        let target = configuration.schemaVersion
        let version = comparison.version
        let isNew = comparison.tables.isEmpty && comparison.storedVersion == nil
        if !isNew && target < version {
            throw Realm.Error(
                .schemaMismatch, "Provided schema version \(target) is less than last set version \(version).", fileURL: file.url)
        }
        if isNew || target == version {
            if !comparison.changed.isEmpty {
                throw Realm.Error(
                    .schemaMismatch,
                    "Migration is required due to the following errors:\n- " + comparison.lines.joined(separator: "\n- ")
                        + "\nIncrease the configuration's schemaVersion (the file is at \(version)) to migrate.",
                    fileURL: file.url)
            }
            if isNew && target != 0 && !configuration.readOnly { try storeVersionOnly(target) }
            noteClasses(comparison)
            return
        }
        guard !configuration.readOnly else {
            throw Realm.Error(
                .readOnly, "Cannot migrate the read-only realm at path '\(file.url.path)' from schema version \(version) to \(target)",
                fileURL: file.url)
        }
        try migrate(comparison, from: version, to: target)
        noteClasses(comparison)
    }

    /// Tells the file which model classes this realm opened it with: the configuration's
    /// `objectTypes`, or the classes that stored the file's classes (see ``StoreFile/classInfo(named:)``).
    private func noteClasses(_ comparison: SchemaComparison) {
        for info in comparison.declared { file.noteClass(info, replacing: true) }
    }

    /// Records `version` in a new file.
    private func storeVersionOnly(_ version: UInt64) throws {
        let session = try beginOwnWrite()
        do {
            try session.storeSchemaVersion(version)
            try commitWrite()
        } catch {
            if isInWriteTransactionUnchecked { cancelWrite() }
            throw Realm.Error(error, url: file.url, doing: "Cannot record the schema version of")
        }
    }

    private func migrate(_ comparison: SchemaComparison, from version: UInt64, to target: UInt64) throws {
        let old: Snapshot
        do {
            old = try Snapshot(file: file)
        } catch {
            throw Realm.Error(error, url: file.url, doing: "Cannot read the realm to migrate at path")
        }
        // Classes whose primary key changes: their objects are re-keyed once the block has set
        // the new keys.
        let rekeyed = comparison.changed.filter { change in
            let stored = change.table.schema.primaryKeyProperty
            let declared = change.info.schema.primaryKeyProperty
            return stored?.name != declared?.name || stored?.type != declared?.type
        }.map(\.info.schema.className)
        let started = ContinuousClock.now
        let path = file.url.path
        log(
            .info,
            "Migrating the realm at '\(path)' from schema version \(version) to \(target)"
                + (comparison.changed.isEmpty ? "" : "; changed classes: " + comparison.changed.map(\.info.schema.className).joined(separator: ", ")))
        let session = try beginOwnWrite()
        do {
            var newTables = comparison.tables
            for change in comparison.changed {
                let defaults = Realm.defaultRecord(change.info)
                let name = change.info.schema.className
                let total = objectCount(of: change.table, in: session.view)
                newTables[name] = try defaults.withUnsafeBytes {
                    try session.relayout(change.table, to: change.info.schema, defaults: $0, interval: configuration.progressInterval) { done in
                        self.log(.info, "Migrating '\(name)': \(done) of \(total) objects rewritten")
                    }
                }
                try session.storeSwiftTypeName(of: change.info)
            }
            // Classes the model adds are made in the same write.
            for info in comparison.declared where comparison.tables[info.schema.className] == nil {
                newTables[info.schema.className] = try binding(for: info, create: true)?.table
            }
            let migration = Migration(
                realm: self, session: session, old: old, oldTables: comparison.tables, newTables: newTables,
                declared: comparison.declared)
            do {
                try configuration.migrationBlock?(migration, version)
            } catch {
                throw Realm.Error(
                    error, url: file.url, doing: "The migration block from schema version \(version) to \(target) failed; nothing changed in")
            }
            if let failure = migration.failure { throw failure }
            for name in migration.touched {
                if let table = migration.newTables[name] { try session.rebuildIndexes(of: table) }
            }
            for name in rekeyed {
                guard let table = migration.newTables[name] else { continue }
                try session.rekey(table, in: Array(migration.newTables.values))
            }
            try session.storeSchemaVersion(target)
            try commitWrite()
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            log(.info, "Migrated the realm at '\(path)' to schema version \(target) in \(String(format: "%.2f", seconds)) s")
        } catch {
            if isInWriteTransactionUnchecked { cancelWrite() }
            log(.error, "The migration of the realm at '\(path)' to schema version \(target) failed, and changed nothing: \(error)")
            if let error = error as? Realm.Error { throw error }
            throw Realm.Error(error, url: file.url, doing: "Cannot migrate from schema version \(version) to \(target)")
        }
        tables.removeBindings()
    }

    /// A record of `info`'s class holding what a new object of it holds.
    static func defaultRecord(_ info: ClassInfo) -> [UInt8] {
        let object = info.type.init()
        let writer = RecordWriter()
        writer.begin(columns: info.fields.count)
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for field in info.fields { field.accessor.encodeValue(at: base + field.offset, into: writer) }
        return withExtendedLifetime(object) { writer.withRecord { Array($0) } }
    }
}

extension WriteSession {
    /// Records the Swift class of `info` for its stored class.
    func storeSwiftTypeName(of info: ClassInfo) throws {
        guard let mangled = _mangledTypeName(info.type) else { return }
        try storeSwiftTypeName(mangled, of: info.schema.className)
    }
}
