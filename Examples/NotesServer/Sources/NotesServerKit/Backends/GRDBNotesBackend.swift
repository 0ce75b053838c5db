import Dispatch
import Foundation
import GRDB
import LMDBRealm
import Synchronization

/// The notes in an SQLite file, through GRDB's `DatabasePool` (WAL: reads run beside the
/// writer), as an SQLite user would store them: a table `notes` with an index on
/// `(folder, created)`. Folder events come from GRDB's `ValueObservation`.
///
/// Commits are as durable as LMDBRealm's (`synchronous = FULL`; GRDB's default in WAL mode is
/// `NORMAL`, which may lose the last commits on power loss).
public final class GRDBNotesBackend: NotesBackend {
    public var kind: BackendKind { .grdb }
    let pool: DatabasePool
    /// Where folder observations deliver their values.
    private let observationQueue = DispatchQueue(label: "NotesServer.GRDB.observations")

    /// Opens (or creates) the database at `path` and creates its table and index if missing.
    public init(path: String) throws {
        pool = try DatabasePool(path: path)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("notes") { db in
            try db.create(table: "notes") { t in
                t.primaryKey("id", .text)
                t.column("folder", .text).notNull()
                t.column("created", .double).notNull()
                t.column("title", .text).notNull()
                t.column("body", .text).notNull()
            }
            try db.create(index: "notes_on_folder_created", on: "notes", columns: ["folder", "created"])
        }
        try migrator.migrate(pool)
    }

    public func create(_ new: NewNote) async throws -> NoteDTO {
        // The same kind of id as LMDBRealm's notes, as text.
        let note = NoteDTO(
            id: ObjectId.generate().stringValue, folder: new.folder, created: Date(), title: new.title, body: new.body)
        try await pool.write { db in try Self.insert(note, db) }
        return note
    }

    public func note(id: String) async throws -> NoteDTO? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM notes WHERE id = ?", arguments: [id]).map(Self.note)
        }
    }

    public func delete(id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM notes WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func newest(in folder: String, limit: Int) async throws -> [NoteDTO] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM notes WHERE folder = ? ORDER BY created DESC LIMIT ?", arguments: [folder, limit]
            ).map(Self.note)
        }
    }

    public func count(in folder: String) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notes WHERE folder = ?", arguments: [folder]) ?? 0
        }
    }

    /// Observes the ids of the folder's notes: each fresh value is compared with the one
    /// before, giving the notes that came and went. (Modifications are not seen here: a changed
    /// note keeps its id, so the count of modifications is 0, and a change that only modifies
    /// notes sends no event.)
    public func subscribe(to folder: String) async throws -> FolderSubscription {
        let ids = SQLRequest<String>(sql: "SELECT id FROM notes WHERE folder = ?", arguments: [folder])
        // With the region given up front, a DatabasePool fetches fresh values on its readers,
        // side by side, instead of on the writer's queue one after the other (GRDB's advice
        // for pools).
        let observation = ValueObservation.tracking(region: ids) { db in try String.fetchSet(db, ids) }
        return FolderSubscription { continuation in
            let previous = Mutex<Set<String>?>(nil)
            let cancellable = observation.start(
                in: pool, scheduling: .async(onQueue: observationQueue),
                onError: { error in
                    continuation.yield(.failure(String(describing: error)))
                    continuation.finish()
                },
                onChange: { ids in
                    let before = previous.withLock { previous in
                        defer { previous = ids }
                        return previous
                    }
                    guard let before else {
                        continuation.yield(.initial(count: ids.count))
                        return
                    }
                    // The observation runs again after any commit to the table; one that left
                    // this folder's notes as they were is no change of the folder.
                    guard ids != before else { return }
                    continuation.yield(.change(FolderChange(
                        insertions: ids.subtracting(before).count, deletions: before.subtracting(ids).count,
                        modifications: 0, count: ids.count)))
                })
            return { cancellable.cancel() }
        }
    }

    public func statistics() async throws -> StoreStatistics {
        let used = try await pool.read { db in
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            return (pages - free) * pageSize
        }
        let files = [pool.path, pool.path + "-wal", pool.path + "-shm"]
        let size = try files.reduce(0) { total, path in
            guard FileManager.default.fileExists(atPath: path) else { return total }
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            return total + ((attributes[.size] as? NSNumber)?.intValue ?? 0)
        }
        return StoreStatistics(fileSize: size, usedSize: used)
    }

    public func seed(notes: Int, folders: Int, batchSize: Int) async throws {
        let start = Date(timeIntervalSinceNow: -Double(notes))
        for first in stride(from: 0, to: notes, by: batchSize) {
            let end = min(first + batchSize, notes)
            try await pool.write { db in
                for index in first..<end {
                    try Self.insert(
                        NoteDTO(
                            id: ObjectId.generate().stringValue, folder: Self.seedFolder(index, of: folders),
                            created: start.addingTimeInterval(Double(index)), title: "Note \(index)", body: seedBody),
                        db)
                }
            }
        }
    }

    // MARK: - Rows

    /// Inserts `note`, its date stored as seconds since 1970 (a REAL: sub-millisecond order).
    static func insert(_ note: NoteDTO, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO notes (id, folder, created, title, body) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [note.id, note.folder, note.created.timeIntervalSince1970, note.title, note.body])
    }

    static func note(_ row: Row) -> NoteDTO {
        NoteDTO(
            id: row["id"], folder: row["folder"], created: Date(timeIntervalSince1970: row["created"]),
            title: row["title"], body: row["body"])
    }
}
