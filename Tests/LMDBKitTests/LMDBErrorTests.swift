import Foundation
import LMDBKit
import TestSupport
import Testing

/// What `LMDBError` says, how it matches, and the failures that produce it.
@Suite struct LMDBErrorTests {
    @Test func openingInAMissingDirectoryThrowsFileNotFound() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("missing/data.mdb")
            do {
                _ = try Environment.open(path: path)
                Issue.record("opened a file in a directory that does not exist")
            } catch let error as LMDBError where LMDBError.fileNotFound ~= error {
                #expect(error.description.contains(path), "\(error)")
                #expect(error.description.contains("No such file"), "\(error)")
            }
            #expect(!Environment.isOpen(path: path))
        }
    }

    /// Bytes that are not an LMDB file.
    enum Garbage: String, CaseIterable, Sendable {
        case text, random, short
        var bytes: [UInt8] {
            switch self {
            case .text: Array(String(repeating: "This is not an LMDB file.\n", count: 2600).utf8.prefix(65_536))
            case .random: pattern(0xBAD, count: 65_536)
            case .short: Array("tiny".utf8)
            }
        }
    }

    @Test(arguments: Garbage.allCases)
    func openingAFileThatIsNotLMDBThrowsInvalid(_ garbage: Garbage) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("not-lmdb.bin")
            try Data(garbage.bytes).write(to: URL(fileURLWithPath: path))
            do {
                _ = try Environment.open(path: path)
                Issue.record("opened a file that is not an LMDB file")
            } catch let error as LMDBError where error == .invalid {
                #expect(error.context == "opening \(path)")
                #expect(error.description.contains(path), "\(error)")
            }
            #expect(!Environment.isOpen(path: path))
            // The failed open closed what it opened and left the file alone.
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(garbage.bytes))
            #expect(descriptors(under: dir) == 0)
        }
    }

    @Test func anEmptyFileBecomesANewEnvironment() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            let env = try Environment.open(path: path)
            let db = try env.createDatabase(named: "t")
            try store(bytes("v"), bytes("k"), in: db, of: env)
            #expect(try value(bytes("k"), in: db, of: env) == bytes("v"))
        }
    }

    @Test func descriptionsNameTheOperationAndTheReason() {
        let bare = LMDBError(code: LMDBError.mapFull.code)
        #expect(bare.description.hasPrefix("LMDB error \(LMDBError.mapFull.code): "))
        #expect(bare.description.contains("MDB_MAP_FULL"))
        #expect(bare.reason.contains("MDB_MAP_FULL"))

        let withContext = LMDBError(code: LMDBError.keyExists.code, context: "mdb_put in database 'people'")
        #expect(withContext.description.hasPrefix("mdb_put in database 'people': "))
        #expect(withContext.description.contains("MDB_KEYEXIST"))
        #expect(withContext.description.hasSuffix("(LMDB error \(LMDBError.keyExists.code))"))

        #expect(LMDBError.optionsConflict.reason.contains("already open"))
        #expect(LMDBError.permissionDenied.reason.contains("Permission denied"))
        // Every named code has a reason of its own.
        let named: [LMDBError] = [
            .keyExists, .notFound, .pageNotFound, .corrupted, .panic, .versionMismatch, .invalid, .mapFull,
            .databasesFull, .readersFull, .transactionFull, .mapResized, .incompatible, .badValueSize,
            .fileNotFound, .permissionDenied, .readOnlyFileSystem, .noSpace, .ioError, .optionsConflict,
        ]
        #expect(Set(named.map(\.reason)).count == named.count)
        #expect(Set(named.map(\.code)).count == named.count)
    }

    @Test func errorsAreEqualWhenTheirCodesAre() {
        let a = LMDBError(code: LMDBError.mapFull.code, context: "writing to /a")
        let b = LMDBError(code: LMDBError.mapFull.code, context: "writing to /b")
        #expect(a == b)
        #expect(a == .mapFull)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b, .keyExists]).count == 2)
        #expect(a != .keyExists)
    }

    @Test func patternMatchingComparesCodes() {
        let error: any Error = LMDBError(code: LMDBError.readersFull.code, context: "somewhere")
        #expect(LMDBError.readersFull ~= error)
        #expect(!(LMDBError.mapFull ~= error))
        #expect(!(LMDBError.readersFull ~= TestError(id: 1)))
        let matched: String
        switch error {
        case LMDBError.mapFull: matched = "mapFull"
        case LMDBError.readersFull: matched = "readersFull"
        default: matched = "other"
        }
        #expect(matched == "readersFull")
    }

    @Test func aCatchClauseMatchesTheNamedError() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            try store(bytes("v"), bytes("k"), in: db, of: env)
            var caught = ""
            do {
                try env.write { txn in try txn.put(bytes("w"), forKey: bytes("k"), in: db, flags: .noOverwrite) }
            } catch LMDBError.mapFull {
                caught = "mapFull"
            } catch LMDBError.keyExists {
                caught = "keyExists"
            } catch {
                caught = "other: \(error)"
            }
            #expect(caught == "keyExists")
        }
    }

    @Test func keysMustBeNonEmptyAndNoLongerThanTheMaximum() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "t")
            let longest = [UInt8](repeating: 0x61, count: env.maxKeySize)
            let tooLong = longest + [0x61]
            try env.write { txn in
                #expect(throws: LMDBError.badValueSize) { try txn.put(bytes("v"), forKey: tooLong, in: db) }
                #expect(throws: LMDBError.badValueSize) { try txn.put(bytes("v"), forKey: [UInt8](), in: db) }
                #expect(throws: LMDBError.badValueSize) { _ = try txn.get([UInt8](), in: db) { _ in true } }
                #expect(throws: LMDBError.badValueSize) { _ = try txn.delete([UInt8](), in: db) }
                // None of these spoil the transaction.
                try txn.put(bytes("longest"), forKey: longest, in: db)
            }
            #expect(try value(longest, in: db, of: env) == bytes("longest"))
            #expect(try entryCount(of: db, in: env) == 1)
            do {
                try env.write { txn in try txn.put(bytes("v"), forKey: tooLong, in: db) }
                Issue.record("a key longer than maxKeySize was stored")
            } catch let error as LMDBError {
                #expect(error == .badValueSize)
                #expect(error.context.contains("mdb_put"), "\(error)")
            }
        }
    }

    @Test func duplicateValuesAreLimitedLikeKeys() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            let db = try env.createDatabase(named: "dups", flags: .duplicateSort)
            let tooLong = [UInt8](repeating: 1, count: env.maxKeySize + 1)
            #expect(throws: LMDBError.badValueSize) {
                try env.write { txn in try txn.put(tooLong, forKey: bytes("k"), in: db) }
            }
            #expect(try entryCount(of: db, in: env) == 0)
        }
    }

    @Test func readerSlotsRunOut() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) { $0.maxReaders = 2 }
            let first = try Transaction(environment: env, readOnly: true)
            let second = try Transaction(environment: env, readOnly: true)
            #expect(env.readerSlotsInUse() == 2)
            #expect(throws: LMDBError.readersFull) { try env.read { _ in } }
            #expect(env.activeTransactionCount == 2)
            first.abort()
            #expect(try env.read { _ in 1 } == 1)
            second.abort()
            #expect(env.readerSlotsInUse() == 0)
            #expect(env.activeTransactionCount == 0)
        }
    }

    @Test func aNameHoldingPlainDataIsNotADatabase() throws {
        try withTemporaryDirectory { dir in
            let env = try Environment.open(path: dir.file())
            try env.write { txn in try txn.put(bytes("plain value"), forKey: bytes("plain"), in: .main) }
            #expect(throws: LMDBError.incompatible) { _ = try env.database(named: "plain") }
            #expect(throws: LMDBError.incompatible) { _ = try env.createDatabase(named: "plain") }
            #expect(throws: LMDBError.incompatible) {
                try env.write { txn in _ = try txn.createDatabase(named: "plain") }
            }
            #expect(try value(bytes("plain"), in: .main, of: env) == bytes("plain value"))
        }
    }
}

/// The number of this process's file descriptors open on files under `directory`.
func descriptors(under directory: URL) -> Int {
    let prefix = directory.resolvingSymlinksInPath().path + "/"
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return fds.filter { fd in
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)
        return target?.hasPrefix(prefix) == true
    }.count
}
