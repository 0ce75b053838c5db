import Foundation
import GRDBSQLite

/// One SQLite connection set up as every SQLite engine of the suite runs: WAL, `synchronous=FULL`
/// (every commit fsyncs the WAL) and a 1 GiB page cache that holds the whole file.
@MainActor final class SQLiteDatabase {
    private(set) var handle: OpaquePointer?
    /// SQLITE_TRANSIENT: SQLite copies bound text.
    let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// Opens (creating) the file at `url` and runs `schema`.
    init(_ url: URL, schema: String) throws {
        guard sqlite3_open(url.path, &handle) == SQLITE_OK else {
            throw SQLiteError(description: "cannot open \(url.path)")
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        try exec("PRAGMA cache_size=-1048576")
        try exec(schema)
    }

    isolated deinit { sqlite3_close(handle) }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw SQLiteError(description: "\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    /// A statement prepared to be run many times; the caller finalizes it.
    func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK else {
            throw SQLiteError(description: "\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return statement
    }

    /// The connection's last error.
    var lastError: SQLiteError { SQLiteError(description: String(cString: sqlite3_errmsg(handle))) }
}
