internal import CLMDB
import Foundation

/// An error from LMDB or from the operating system beneath it.
///
/// `LMDBError` is an open struct over LMDB's return codes and `errno` values, so new codes never
/// break a `switch`. Match the named members in a `catch` clause:
///
/// ```swift
/// do {
///     try env.write { txn in try txn.put(value, forKey: key, in: db) }
/// } catch LMDBError.mapFull {
///     // the map reached Environment.Options.maximumMapSize
/// }
/// ```
///
/// Codes that can only mean a bug in the calling code (a bad transaction or database handle)
/// never arrive here: the checking function stops the process with a message instead.
public struct LMDBError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The LMDB return code (negative) or `errno` value (positive).
    public let code: Int32
    /// What was being done, and on which file, when the error happened.
    public let context: String
    /// What LMDBKit found wrong, when it found the error itself rather than LMDB (a meta page
    /// out of place, say); replaces LMDB's description of the code in ``reason``.
    public let finding: String?

    public init(code: Int32, context: String = "", finding: String? = nil) {
        self.code = code
        self.context = context
        self.finding = finding
    }

    /// LMDB's own description of the code, from `mdb_strerror`, or what LMDBKit found.
    public var reason: String {
        if let finding { return finding }
        if code == LMDBError.optionsConflict.code {
            return "the environment is already open in this process with other options"
        }
        return String(cString: mdb_strerror(code))
    }

    public var description: String {
        context.isEmpty ? "LMDB error \(code): \(reason)" : "\(context): \(reason) (LMDB error \(code))"
    }

    // Two errors are the same error when their codes match; the context is for people.
    public static func == (lhs: LMDBError, rhs: LMDBError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// Lets `catch LMDBError.mapFull` match any error with that code.
    public static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        (value as? LMDBError)?.code == pattern.code
    }

    // MARK: - LMDB's codes

    /// `MDB_KEYEXIST`: the key/data pair already exists.
    public static let keyExists = LMDBError(code: MDB_KEYEXIST)
    /// `MDB_NOTFOUND`: no matching key/data pair.
    public static let notFound = LMDBError(code: MDB_NOTFOUND)
    /// `MDB_PAGE_NOTFOUND`: a requested page was not found; the file is corrupted.
    public static let pageNotFound = LMDBError(code: MDB_PAGE_NOTFOUND)
    /// `MDB_CORRUPTED`: a located page was of the wrong type.
    public static let corrupted = LMDBError(code: MDB_CORRUPTED)
    /// `MDB_PANIC`: an update of meta page failed or the environment had a fatal error.
    public static let panic = LMDBError(code: MDB_PANIC)
    /// `MDB_VERSION_MISMATCH`: the environment was written by another LMDB version.
    public static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    /// `MDB_INVALID`: the file is not an LMDB data file.
    public static let invalid = LMDBError(code: MDB_INVALID)
    /// `MDB_MAP_FULL`: the map reached its maximum size.
    public static let mapFull = LMDBError(code: MDB_MAP_FULL)
    /// `MDB_DBS_FULL`: the environment's `maxDatabases` limit was reached.
    public static let databasesFull = LMDBError(code: MDB_DBS_FULL)
    /// `MDB_READERS_FULL`: every reader slot of the lock file is taken.
    public static let readersFull = LMDBError(code: MDB_READERS_FULL)
    /// `MDB_TXN_FULL`: the transaction has too many dirty pages.
    public static let transactionFull = LMDBError(code: MDB_TXN_FULL)
    /// `MDB_MAP_RESIZED`: another process grew the map beyond this process's size.
    public static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    /// `MDB_INCOMPATIBLE`: the operation does not fit the database's flags.
    public static let incompatible = LMDBError(code: MDB_INCOMPATIBLE)
    /// `MDB_BAD_VALSIZE`: a key is empty or longer than `Environment.maxKeySize`.
    public static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)

    // MARK: - Operating system codes

    /// `ENOENT`: the file or directory does not exist.
    public static let fileNotFound = LMDBError(code: ENOENT)
    /// `EACCES`: permission denied.
    public static let permissionDenied = LMDBError(code: EACCES)
    /// `EROFS`: the file system is read-only.
    public static let readOnlyFileSystem = LMDBError(code: EROFS)
    /// `ENOSPC`: the disk is full.
    public static let noSpace = LMDBError(code: ENOSPC)
    /// `EIO`: an input/output error.
    public static let ioError = LMDBError(code: EIO)

    // MARK: - LMDBKit's own codes

    /// The path is already open in this process with options that conflict with the new ones.
    /// LMDB forbids opening one file twice in a process, so the open cannot proceed.
    public static let optionsConflict = LMDBError(code: -40_001)
}

// MARK: - The one checking function

/// Codes that can only come from a bug in this process: a transaction, cursor or database
/// handle used wrongly. Continuing would risk the data, so they stop the process.
private func isProgrammerError(_ rc: Int32) -> Bool {
    rc == MDB_BAD_TXN || rc == MDB_BAD_RSLOT || rc == MDB_BAD_DBI || rc == EINVAL
}

/// Every LMDB return code goes through here: `MDB_SUCCESS` returns, misuse stops the process
/// with a message, everything else is thrown as an ``LMDBError`` that names the operation.
@inline(__always)
@usableFromInline
func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
    if rc == MDB_SUCCESS { return }
    try fail(rc, operation())
}

@usableFromInline
func fail(_ rc: Int32, _ operation: String) throws(LMDBError) {
    if isProgrammerError(rc) {
        fatalError("LMDB misuse in \(operation): \(String(cString: mdb_strerror(rc))) (\(rc))")
    }
    throw LMDBError(code: rc, context: operation)
}
