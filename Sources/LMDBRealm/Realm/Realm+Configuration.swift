public import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

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
        /// The realm file: `default.realm` in the current directory unless given, and `nil`
        /// with an ``inMemoryIdentifier`` (set to `nil` by hand, it means `default.realm` in the
        /// current directory again). Setting it clears ``inMemoryIdentifier``.
        public var fileURL: URL? {
            didSet { if fileURL != nil { inMemoryIdentifier = nil } }
        }

        /// Names an in-memory realm instead of a file: every handle opened with the same
        /// identifier in this process shares its data until the last one closes, and then the
        /// data is gone. Everything works as with a file, notifications included; nothing is
        /// flushed to disk (the data lives in a private file in `/dev/shm`, or the temporary
        /// directory, deleted with the last handle). Setting it clears ``fileURL``.
        public var inMemoryIdentifier: String? {
            didSet { if inMemoryIdentifier != nil { fileURL = nil } }
        }

        /// The model classes the file must hold, checked against the stored schema when the
        /// realm opens: a class that differs throws ``RealmError/Code/schemaMismatch``, a new
        /// class is added. `nil` (the default) registers each class on first use.
        public var objectTypes: [Object.Type]?

        /// RealmSwift's key for an encrypted file. LMDBRealm does not encrypt (LMDB 0.9 has no
        /// page encryption): opening a realm with a key throws
        /// ``RealmError/Code/encryptionNotSupported`` rather than writing plaintext where
        /// ciphertext was asked for. Encrypt the volume the file lives on instead.
        public var encryptionKey: Data?

        /// Open the file read-only: it must exist, and writing stops the process.
        ///
        /// A read-only realm still records what it reads in the file's lock file (`PATH-lock`),
        /// which it creates if needed. A file with no lock file in a directory this user may
        /// not write (a file shipped read-only) is read without one, as immutable:
        /// - Warning: No process may write such a file while a read-only realm has it open.
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

        /// Asked, on the first open of the file in this process, with the file's size and the
        /// bytes its data uses; returning `true` rewrites the file compacted before it opens —
        /// only when no other process has it open (one opening it meanwhile waits), and
        /// atomically: a crash leaves the file as it was.
        public var shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)?

        /// A realm file to start from: copied to ``fileURL`` when no file is there yet (a
        /// bundled database shipped with the app). The copy appears whole or not at all: two
        /// processes opening at once never see a half-copied file, and the first copy wins.
        public var seedFilePath: URL?

        /// Where realms of this configuration report what they do on their own: opening the file,
        /// migrating it (with progress every 100,000 objects), compacting it, and clearing the
        /// reader slots of processes that died; `nil` (the default) reports nothing. (The map is
        /// reserved at ``maximumFileSize`` once, so it never grows.)
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

        /// Whether every record and list chunk read is checked against its checksum (off by
        /// default). LMDB keeps no checksums of its own: without this, a bit flipped on the
        /// disk reads as another value. A record whose checksum does not match stops the
        /// process with a message naming the file and the class; a damaged chunk of a list,
        /// set or map stops it naming the file. ``Realm/verify(progress:)`` always checks every
        /// checksum, and reports a mismatch instead. (The schemas and versions the file keeps
        /// for itself are checked whatever this says.) Index and backlink entries, which
        /// repeat what records and chunks hold, are checked against the objects they name
        /// when a read uses them; counts through an index then read the objects.
        ///
        /// The check costs a CRC-32C of each record read (three streams at once where the
        /// processor has the instructions), once a version: a scan that checked every record of
        /// a class records it, and later reads of the same version, and writes begun from it,
        /// skip the CRC. On the benchmark suite's articles (callgrind, N = 20,000) a scan costs
        /// 7 % more instructions, a lookup by primary key 7 %, a repeated filter 5 %, a link
        /// followed 4 % — but a walk of an index in order (a sort, the newest 100) checks each
        /// entry it uses against its object, reading objects it would not read otherwise: up to
        /// 4 times the work. Hence off by default. Turn it on where a wrong value costs more
        /// than the time, or run `verify` on a schedule. The first handle of a file in a
        /// process decides for every handle of that file in it.
        public var verifiesChecksums = false

        /// Whether the writes of realms opened with this configuration record what they change
        /// for observers (the default). Without it, observers compare the two versions record
        /// by record, as they do for other processes' commits. For tests of that comparison.
        @_spi(Testing) public var recordsChangeLogs = true

        /// A configuration for the file at `fileURL` (by default `default.realm` in the current
        /// directory), or, with an `inMemoryIdentifier`, for that in-memory realm.
        public init(
            fileURL: URL? = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("default.realm"),
            inMemoryIdentifier: String? = nil, encryptionKey: Data? = nil, readOnly: Bool = false, schemaVersion: UInt64 = 0,
            migrationBlock: MigrationBlock? = nil, deleteRealmIfMigrationNeeded: Bool = false,
            shouldCompactOnLaunch: (@Sendable (_ totalBytes: Int, _ usedBytes: Int) -> Bool)? = nil, objectTypes: [Object.Type]? = nil,
            seedFilePath: URL? = nil
        ) {
            // An identifier names an in-memory realm, whatever the file (as in RealmSwift).
            self.fileURL = inMemoryIdentifier == nil ? fileURL : nil
            self.inMemoryIdentifier = inMemoryIdentifier
            self.encryptionKey = encryptionKey
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.migrationBlock = migrationBlock
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.shouldCompactOnLaunch = shouldCompactOnLaunch
            self.objectTypes = objectTypes
            self.seedFilePath = seedFilePath
        }

        /// The configuration `Realm()` uses: `default.realm` in the current directory unless
        /// set otherwise.
        public static var defaultConfiguration: Configuration {
            get { defaultStorage.withLock { $0 } }
            set { defaultStorage.withLock { $0 = newValue } }
        }

        private static let defaultStorage = Mutex(Configuration())

        /// Throws for what this configuration asks and LMDBRealm cannot do.
        func checkSupported() throws {
            if encryptionKey != nil {
                throw Realm.Error.encryptionNotSupported(at: resolvedFileURL)
            }
        }

        /// The file this configuration opens.
        var resolvedFileURL: URL {
            if let inMemoryIdentifier { return Configuration.inMemoryFile(inMemoryIdentifier) }
            return fileURL ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("default.realm")
        }

        /// The private file of the in-memory realm `identifier`: in a directory of this process
        /// in `/dev/shm` (memory), or in the temporary directory where there is none.
        private static func inMemoryFile(_ identifier: String) -> URL {
            let base =
                FileManager.default.isWritableFile(atPath: "/dev/shm")
                ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory
            let directory = base.appendingPathComponent("lmdbrealm-\(getuid())-\(getpid())")
            // try?: a directory that cannot be made shows as the open's own error, naming the path.
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let name = identifier.utf8.map { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                    ? String(UnicodeScalar(b)) : String(format: "_%02x", b)
            }.joined()
            return directory.appendingPathComponent(name + ".realm")
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
            maximumFileSize: configuration.maximumFileSize, maximumNumberOfReaders: configuration.maximumNumberOfReaders,
            isInMemory: configuration.inMemoryIdentifier != nil, verifiesChecksums: configuration.verifiesChecksums)
    }
}
