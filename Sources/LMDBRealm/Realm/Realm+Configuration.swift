public import Foundation
import Synchronization

extension Realm {
    /// Where a realm lives and how it is opened.
    ///
    /// ```swift
    /// var config = Realm.Configuration(fileURL: URL(fileURLWithPath: "articles.realm"))
    /// config.objectTypes = [Article.self]
    /// let realm = try Realm(configuration: config)
    /// ```
    ///
    /// Configurations are plain `Sendable` values: build one anywhere and open it on the thread,
    /// queue or actor that will use the realm.
    public struct Configuration: Sendable {
        /// The realm file. `nil` means `default.realm` in the current directory.
        public var fileURL: URL?

        /// The model classes the file must hold, checked against the stored schema when the
        /// realm opens: a class that differs throws ``RealmError/Code/schemaMismatch``, a new
        /// class is added. `nil` (the default) registers each class on first use.
        public var objectTypes: [Object.Type]?

        /// Open the file read-only: it must exist, and writing stops the process.
        public var readOnly: Bool = false

        /// The version of the model classes, stored in the file. Opening a file of an older
        /// version migrates it: the model's changes to its classes are applied, then
        /// ``migrationBlock`` runs, all in one write. A changed class at the same version
        /// throws ``RealmError/Code/schemaMismatch``; so does a version older than the file's.
        public var schemaVersion: UInt64 = 0

        /// Runs when a file of an older ``schemaVersion`` opens, after the model's changes are
        /// applied and before the migration commits: it can read every object as it was and
        /// set its new values (see ``Migration``). A throw leaves the file as it was.
        public var migrationBlock: MigrationBlock?

        /// Instead of migrating, delete a file whose schema differs from the model (or whose
        /// version is newer) and start afresh: for caches whose data can be fetched again.
        public var deleteRealmIfMigrationNeeded = false

        /// A realm file to start from: copied to ``fileURL`` when no file is there yet (a
        /// bundled database shipped with the app). The copy appears whole or not at all: two
        /// processes opening at once never see a half-copied file, and the first copy wins.
        public var seedFilePath: URL?

        /// Where realms of this configuration report opening the file and migrating it (with
        /// progress every 100,000 objects); `nil` (the default) reports nothing.
        public var logger: Logger?

        /// How many objects a migration rewrites or enumerates between progress reports.
        @_spi(Testing) public var progressInterval = 100_000

        /// The largest the file may grow, in bytes. Writing past it throws
        /// ``RealmError/Code/mapFull``. LMDBRealm reserves this much address space (not disk)
        /// for the file's memory map when it opens it; the file grows only as data is written.
        public var maximumFileSize: Int = 64 << 30

        /// How many snapshots (realm handles and reading transactions) of this file may be open
        /// at once across all processes; past it, opening throws
        /// ``RealmError/Code/tooManyReaders``.
        public var maximumNumberOfReaders: Int = 256

        /// How many versions of the file this process may keep pinned at once — by realm
        /// handles, frozen realms, objects and results, thread-safe references and observers
        /// waiting for delivery — or `nil` for no limit (the default).
        ///
        /// Every pinned version keeps the pages it reads from being reused, so a forgotten
        /// frozen object makes the file grow with every later write. With a limit, opening a
        /// realm or committing a write that would pass it throws
        /// ``RealmError/Code/tooManyActiveVersions`` instead, and the write is rolled back.
        public var maximumNumberOfActiveVersions: UInt?

        /// Whether the writes of realms opened with this configuration record what they change
        /// for observers (the default). Without it, observers compare the two versions record
        /// by record, as they do for other processes' commits. For tests of that comparison.
        @_spi(Testing) public var recordsChangeLogs = true

        /// A configuration for the file at `fileURL`.
        public init(
            fileURL: URL? = nil, readOnly: Bool = false, schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil,
            deleteRealmIfMigrationNeeded: Bool = false, objectTypes: [Object.Type]? = nil
        ) {
            self.fileURL = fileURL
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.objectTypes = objectTypes
        }

        /// The configuration `Realm()` uses: `default.realm` in the current directory unless
        /// set otherwise.
        public static var defaultConfiguration: Configuration {
            get { defaultStorage.withLock { $0 } }
            set { defaultStorage.withLock { $0 = newValue } }
        }

        private static let defaultStorage = Mutex(Configuration())

        /// The file this configuration opens.
        var resolvedFileURL: URL {
            fileURL ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("default.realm")
        }
    }

    /// Deletes the realm file of `configuration` and its lock file.
    ///
    /// The file must not be open in this process.
    /// - Returns: Whether a file existed.
    /// - Throws: ``RealmError`` if the file is open or cannot be removed.
    @discardableResult
    public static func deleteFiles(for configuration: Configuration) throws -> Bool {
        let url = configuration.resolvedFileURL
        if StoreFile.isOpen(url) {
            throw Realm.Error(
                .fileAccess, "Cannot delete the realm at path '\(url.path)' while it is open in this process",
                fileURL: url)
        }
        var existed = false
        for path in [url.path, url.path + "-lock"] where FileManager.default.fileExists(atPath: path) {
            existed = true
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw Realm.Error(
                    .filePermissionDenied, "Cannot delete '\(path)': \(error.localizedDescription)", fileURL: url)
            }
        }
        return existed
    }
}

extension StoreFile.Options {
    /// How `configuration` opens its file.
    init(_ configuration: Realm.Configuration) {
        self.init(
            url: configuration.resolvedFileURL, readOnly: configuration.readOnly,
            maximumFileSize: configuration.maximumFileSize, maximumNumberOfReaders: configuration.maximumNumberOfReaders)
    }
}
