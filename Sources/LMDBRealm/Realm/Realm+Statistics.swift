public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension Realm {
    /// What a server's metrics endpoint reports about a realm's file: its size and how much of
    /// it holds live data, the address space reserved for it, and the versions readers hold.
    public struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// The file's size on disk, in bytes.
        public let fileSize: Int
        /// The bytes of the file's pages in use (the rest are free pages later writes reuse).
        public let usedSize: Int
        /// The address space reserved for the file's memory map, in bytes (not memory in use).
        public let mapSize: Int
        /// The read transactions holding a version of the file now, in every process.
        public let readers: Int
        /// The oldest version a reader holds, in any process: the pages it reads cannot be
        /// reused until it moves on. `nil` when no reader holds one.
        public let oldestPinnedVersion: Int?
        /// The newest committed version.
        public let currentVersion: Int

        public var description: String {
            "fileSize \(fileSize), usedSize \(usedSize), mapSize \(mapSize), readers \(readers), "
                + "oldestPinnedVersion \(oldestPinnedVersion.map(String.init) ?? "none"), currentVersion \(currentVersion)"
        }
    }

    /// The file's figures now (see ``Statistics``), read without this handle's snapshot.
    /// - Throws: ``RealmError`` if the file cannot be read.
    public var statistics: Statistics {
        get throws {
            checkThread()
            do {
                let s = try file.statistics()
                return Statistics(
                    fileSize: s.fileSize, usedSize: s.usedSize, mapSize: s.mapSize, readers: s.readers,
                    oldestPinnedVersion: s.oldestReaderVersion, currentVersion: s.currentVersion)
            } catch {
                throw Realm.Error(error, url: file.url, doing: "Cannot read the statistics of")
            }
        }
    }
}

extension Realm {
    /// Writes a compacted copy of the version this realm reads to a new file at `fileURL`:
    /// every class, index and list, with no free pages. The copy appears whole or not at all.
    /// - Throws: ``RealmError`` if a file is at `fileURL` already, or the copy cannot be
    ///   written; ``RealmError/Code/encryptionNotSupported`` for an `encryptionKey`, with
    ///   nothing written (LMDBRealm does not encrypt files, and does not pretend to).
    /// - Precondition: No write transaction is open on this realm.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        checkThread()
        if encryptionKey != nil { throw Realm.Error.encryptionNotSupported(at: fileURL) }
        require(!isInWriteTransactionUnchecked, "Cannot write a copy of a realm inside a write transaction")
        do {
            try file.writeCopy(of: readView(), to: fileURL)
        } catch let error as Realm.Error {
            throw error
        } catch {
            throw Realm.Error(error, url: fileURL, doing: "Cannot write a copy of the realm to")
        }
    }
}

extension Realm {
    /// The classes the file holds, as stored (property order is the stored one), including
    /// classes this program does not declare.
    public var schema: Schema {
        checkThread()
        do {
            return Schema(try allTables().map(\.schema))
        } catch {
            cannotRead("the catalog", error)
        }
    }
}

extension Realm {
    /// Writes a compacted copy of the version this realm reads to the file of `configuration`
    /// (see ``writeCopy(toFile:encryptionKey:)``).
    /// - Throws: ``RealmError`` as ``writeCopy(toFile:encryptionKey:)`` does; for an in-memory
    ///   configuration, ``RealmError/Code/fail``: a copy needs a file.
    public func writeCopy(configuration: Realm.Configuration) throws {
        guard configuration.inMemoryIdentifier == nil, let fileURL = configuration.fileURL else {
            throw Realm.Error(.fail, "Cannot write a copy of a realm into an in-memory realm: give a configuration with a fileURL")
        }
        try writeCopy(toFile: fileURL, encryptionKey: configuration.encryptionKey)
    }

    /// Whether the file of `configuration` exists (an in-memory realm's, while it is open).
    public static func fileExists(for configuration: Realm.Configuration) -> Bool {
        FileManager.default.fileExists(atPath: configuration.resolvedFileURL.path)
    }

    /// Opens the file of `configuration` and runs its migration if its schema version is older,
    /// then closes it (unless it is open elsewhere in this process).
    /// - Throws: ``RealmError`` as opening does, or what the migration block throws.
    public static func performMigration(for configuration: Realm.Configuration = .defaultConfiguration) throws {
        // The handle is released on return: nothing else holds it (see init(configuration:queue:)).
        _ = try Realm(configuration: configuration)
    }
}
