import Foundation
import LMDBKit
import TestSupport
import Testing

/// The process-wide registry of open environments, file creation, and facts about a file.
@Suite struct EnvironmentTests {
    @Test func openingAPathTwiceReturnsTheSameEnvironment() throws {
        try withTemporaryDirectory { dir in
            let first = try Environment.open(path: dir.file())
            let second = try Environment.open(path: dir.file())
            #expect(first === second)
            #expect(first.path == dir.file())
        }
    }

    @Test func otherSpellingsOfAPathShareOneEnvironment() throws {
        try withTemporaryDirectory { dir in
            let real = dir.appendingPathComponent("real")
            try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
            let link = dir.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)

            let env = try Environment.open(path: real.file())
            let spellings = [
                dir.path + "/./real/data.mdb",
                dir.path + "/real/../real/data.mdb",
                dir.path + "//real//data.mdb",
                link.file(),
                dir.path + "/link/./data.mdb",
            ]
            for spelling in spellings {
                let other = try Environment.open(path: spelling)
                #expect(other === env, "\(spelling) opened a second environment")
            }
            #expect(env.path == real.file())
            #expect(Environment.isOpen(path: link.file()))
        }
    }

    @Test func aSymbolicLinkToTheDataFileSharesItsEnvironment() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try store(bytes("v"), bytes("k"), in: db, of: env)
            try FileManager.default.createSymbolicLink(atPath: dir.file("alias.mdb"), withDestinationPath: dir.file())

            // One file, one environment: a second MDB_env on the same file would use another
            // lock file (LMDB names it after the path) and lose the first one's locks.
            let alias = try Environment.open(path: dir.file("alias.mdb"))
            #expect(alias === env)
            #expect(!FileManager.default.fileExists(atPath: dir.file("alias.mdb-lock")))
        }
    }

    @Test func aSymbolicLinkToAnEnvironmentDirectorySharesItsEnvironment() throws {
        try withTemporaryDirectory { dir in
            let envDir = dir.appendingPathComponent("env")
            try FileManager.default.createDirectory(at: envDir, withIntermediateDirectories: false)
            let link = dir.appendingPathComponent("env-link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: envDir)
            let env = try openEnvironment(at: envDir.path) { $0.pathIsDirectory = true }
            let viaLink = try openEnvironment(at: link.path) { $0.pathIsDirectory = true }
            #expect(viaLink === env)
        }
    }

    /// One option that a second open of an open file may not change.
    enum Conflict: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case maxReaders, maxDatabases, readOnly, durability, pathIsDirectory, maximumMapSize

        var testDescription: String { rawValue }

        func apply(to options: inout Environment.Options) {
            switch self {
            case .maxReaders: options.maxReaders += 1
            case .maxDatabases: options.maxDatabases += 1
            case .readOnly: options.readOnly.toggle()
            case .durability: options.durability = .noSync
            case .pathIsDirectory: options.pathIsDirectory.toggle()
            case .maximumMapSize: options.maximumMapSize *= 2
            }
        }
    }

    @Test(arguments: Conflict.allCases)
    func reopeningWithConflictingOptionsThrows(_ conflict: Conflict) throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            var options = env.options
            conflict.apply(to: &options)
            #expect(throws: LMDBError.optionsConflict) {
                _ = try Environment.open(path: dir.file(), options: options)
            }
            do {
                _ = try Environment.open(path: dir.file(), options: options)
                Issue.record("a conflicting reopen succeeded")
            } catch LMDBError.optionsConflict {
                // expected
            } catch {
                Issue.record("unexpected error \(error)")
            }
            // The failed open changed nothing: the first environment is still the one.
            #expect(try Environment.open(path: dir.file()) === env)
        }
    }

    @Test func reopeningWithCompatibleOptionsReturnsTheOpenEnvironment() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) { $0.mapSize = 1 << 20 }
            // The starting map size and the file mode only matter when the file is created.
            let other = try openEnvironment(at: dir.file()) {
                $0.mapSize = 1 << 22
                $0.fileMode = 0o644
            }
            #expect(other === env)
            #expect(other.options.mapSize == 1 << 20)
        }
    }

    @Test func theLastReferenceClosesTheFileAndAReopenStartsAfresh() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            weak var weakFirst: Environment?
            do {
                let env = try Environment.open(path: path)
                weakFirst = env
                #expect(Environment.isOpen(path: path))
                let db = try env.createDatabase(named: "t")
                try store(bytes("kept"), bytes("k"), in: db, of: env)
            }
            #expect(weakFirst == nil)
            #expect(!Environment.isOpen(path: path))

            // Options that would have conflicted with the first environment are fine now.
            let env = try openEnvironment(at: path) { $0.maxReaders = 10 }
            #expect(env.options.maxReaders == 10)
            #expect(Environment.isOpen(path: path))
            let db = try #require(try env.database(named: "t"))
            #expect(try value(bytes("k"), in: db, of: env) == bytes("kept"))
        }
    }

    @Test func isOpenIsFalseForPathsNeverOpened() throws {
        try withTemporaryDirectory { dir in
            #expect(!Environment.isOpen(path: dir.file()))
            #expect(!Environment.isOpen(path: dir.file("missing/deeper.mdb")))
        }
    }

    @Test func filesAreCreatedReadableByTheOwnerOnly() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            #expect(env.options.fileMode == 0o600)
            for name in ["data.mdb", "data.mdb-lock"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: dir.file(name))
                let mode = try #require(attributes[.posixPermissions] as? Int)
                #expect(mode == 0o600, "\(name) has mode \(String(mode, radix: 8))")
            }
        }
    }

    @Test func filesAreCreatedWithTheRequestedMode() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) { $0.fileMode = 0o640 }
            let expected = 0o640 & ~processUmask()
            for name in ["data.mdb", "data.mdb-lock"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: dir.file(name))
                #expect(attributes[.posixPermissions] as? Int == expected, "\(name)")
            }
            _ = env
        }
    }

    @Test func aDirectoryEnvironmentHoldsDataAndLockFiles() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.path) { $0.pathIsDirectory = true }
            let db = try env.createDatabase(named: "t")
            try store(bytes("v"), bytes("k"), in: db, of: env)
            #expect(FileManager.default.fileExists(atPath: dir.file("data.mdb")))
            #expect(FileManager.default.fileExists(atPath: dir.file("lock.mdb")))
        }
    }

    @Test func aReadOnlyEnvironmentReadsButCannotWrite() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            do {
                let env = try Environment.open(path: path)
                let db = try env.createDatabase(named: "t")
                try store(bytes("v"), bytes("k"), in: db, of: env)
            }
            let env = try openEnvironment(at: path) { $0.readOnly = true }
            let db = try #require(try env.database(named: "t"))
            #expect(try value(bytes("k"), in: db, of: env) == bytes("v"))
            #expect(throws: LMDBError.permissionDenied) {
                try env.write { txn in try txn.put(bytes("w"), forKey: bytes("k"), in: db) }
            }
            #expect(throws: LMDBError.permissionDenied) {
                _ = try env.createDatabase(named: "new")
            }
            #expect(try env.database(named: "new") == nil)
            #expect(env.activeTransactionCount == 0)
        }
    }

    @Test func readOnlyOpenOfAMissingFileThrowsFileNotFound() throws {
        try withTemporaryDirectory { dir in
            #expect(throws: LMDBError.fileNotFound) {
                _ = try openEnvironment(at: dir.file()) { $0.readOnly = true }
            }
            #expect(!Environment.isOpen(path: dir.file()))
        }
    }

    @Test func namedDatabasesAreCachedAndPersist() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            do {
                let env = try Environment.open(path: path)
                #expect(try env.database(named: "people") == nil)
                let created = try env.createDatabase(named: "people")
                #expect(try env.createDatabase(named: "people") == created)
                #expect(try env.database(named: "people") == created)
                let other = try env.createDatabase(named: "places")
                #expect(other != created)
                #expect(other.name == "places")
            }
            let env = try Environment.open(path: path)
            let people = try #require(try env.database(named: "people"))
            #expect(people.name == "people")
            #expect(try env.database(named: "people") == people)
            #expect(try env.database(named: "places") != nil)
            #expect(try env.database(named: "nobody") == nil)
        }
    }

    @Test func theDatabaseLimitIsEnforced() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) { $0.maxDatabases = 2 }
            _ = try env.createDatabase(named: "a")
            _ = try env.createDatabase(named: "b")
            #expect(throws: LMDBError.databasesFull) {
                _ = try env.createDatabase(named: "c")
            }
            // LMDB refuses a lookup too once every handle slot is taken.
            #expect(throws: LMDBError.databasesFull) {
                _ = try env.database(named: "c")
            }
            #expect(try env.database(named: "a") != nil)
            #expect(env.activeTransactionCount == 0)
        }
    }

    @Test func infoDescribesTheFile() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) { $0.maxReaders = 50 }
            let db = try env.createDatabase(named: "t")
            let before = env.info()
            try store(bytes("v"), bytes("k"), in: db, of: env)
            let after = env.info()
            #expect(after.lastTransactionID == before.lastTransactionID + 1)
            #expect(after.pageSize >= 4096)
            #expect(after.mapSize == env.mapSize)
            #expect(after.maxReaders == 50)
            #expect(after.lastPageNumber > 0)
            #expect(env.maxKeySize == 511)
        }
    }

    @Test func relaxedDurabilityCommitsAndSyncs() throws {
        try withTemporaryDirectory { dir in
            for durability in [Environment.Durability.noMetaSync, .noSync] {
                let path = dir.file("\(durability).mdb")
                do {
                    let env = try openEnvironment(at: path) { $0.durability = durability }
                    let db = try env.createDatabase(named: "t")
                    try store(bytes("v"), bytes("k"), in: db, of: env)
                    try env.sync()
                }
                let env = try Environment.open(path: path)
                let db = try #require(try env.database(named: "t"))
                #expect(try value(bytes("k"), in: db, of: env) == bytes("v"))
            }
        }
    }

    /// LMDB sizes a transaction's table of handles when it begins: a handle opened afterwards
    /// is unknown to it (`EINVAL`). `canUse` says which handles a transaction can use, so that
    /// callers take a new snapshot instead of letting LMDB refuse.
    @Test func aHandleOpenedAfterATransactionBeganIsNotUsableByIt() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            do {
                let env = try Environment.open(path: path)
                let db = try env.createDatabase(named: "old")
                try store(bytes("v"), bytes("k"), in: db, of: env)
            }
            let env = try Environment.open(path: path)
            let early = try env.createDatabase(named: "early")
            try env.read { txn in
                let usable = txn.canUse(early)
                #expect(usable)
                // The file's database, first opened by this process while the read runs.
                let old = try #require(try env.database(named: "old"))
                let usableOld = txn.canUse(old)
                #expect(!usableOld)
            }
            let old = try #require(try env.database(named: "old"))
            #expect(try env.read { txn in try txn.get(bytes("k"), in: old, string) } == "v")
            #expect(try env.read { txn in txn.canUse(old) })
        }
    }
}

/// The process's file mode creation mask, from /proc/self/status.
func processUmask() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("Umask:") {
        return Int(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) ?? 0o022
    }
    return 0o022
}
