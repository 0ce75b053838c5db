public import Foundation

/// Where the service keeps its notes: the routes speak only to this, so the same routes serve
/// LMDBRealm and SQLite (GRDB).
///
/// Every method may be called from any task, at once. What it returns is a value: no live
/// object or open transaction leaves a backend.
public protocol NotesBackend: Sendable {
    /// The backend's name, as `--backend` spells it.
    var kind: BackendKind { get }

    /// Stores a new note, made now, and returns it once the write is durable.
    func create(_ note: NewNote) async throws -> NoteDTO

    /// The note whose id is `id`, or `nil` if there is none (a malformed id names no note).
    func note(id: String) async throws -> NoteDTO?

    /// Deletes the note whose id is `id`; `false` if there was none.
    func delete(id: String) async throws -> Bool

    /// The newest `limit` notes of `folder`, newest first.
    func newest(in folder: String, limit: Int) async throws -> [NoteDTO]

    /// The number of notes in `folder`.
    func count(in folder: String) async throws -> Int

    /// The changes of `folder`'s notes: ``FolderEvent/initial(count:)``, then a
    /// ``FolderEvent/change(_:)`` after each commit that changed them. The stream ends when the
    /// subscription is ended or the task iterating it is cancelled; a
    /// ``FolderEvent/failure(_:)`` ends it on GRDB, while LMDBRealm tries again at the next
    /// commit.
    func subscribe(to folder: String) async throws -> FolderSubscription

    /// The store's figures now, for `/metrics`.
    func statistics() async throws -> StoreStatistics

    /// Writes `notes` notes over `folders` folders (`folder-0`, `folder-1`, …), `batchSize` to
    /// a transaction, their creation dates a second apart and ending now.
    func seed(notes: Int, folders: Int, batchSize: Int) async throws
}

/// The backends the service can run on.
public enum BackendKind: String, Sendable, CaseIterable {
    /// LMDBRealm, through a `RealmStore`.
    case lmdbrealm
    /// SQLite in WAL mode, through GRDB's `DatabasePool`.
    case grdb

    /// Opens (or creates) the store at `url`.
    public func open(at url: URL) async throws -> any NotesBackend {
        switch self {
        case .lmdbrealm: try await RealmNotesBackend(fileURL: url)
        case .grdb: try GRDBNotesBackend(path: url.path)
        }
    }

    /// The file name the service uses in a directory when no path is given.
    public var defaultFileName: String {
        switch self {
        case .lmdbrealm: "notes.realm"
        case .grdb: "notes.sqlite"
        }
    }
}

/// What changed in a folder, as a subscriber of its events sees it.
public enum FolderEvent: Sendable, Hashable {
    /// The folder's notes when the subscription started.
    case initial(count: Int)
    /// One or more commits changed the folder's notes.
    case change(FolderChange)
    /// The folder could not be observed (see ``NotesBackend/subscribe(to:)`` for what follows).
    case failure(String)
}

/// The counts of a ``FolderEvent/change(_:)``: notes that came, went or changed, and how many
/// the folder holds after it.
public struct FolderChange: Codable, Sendable, Hashable {
    public var insertions: Int
    public var deletions: Int
    public var modifications: Int
    public var count: Int

    public init(insertions: Int, deletions: Int, modifications: Int, count: Int) {
        self.insertions = insertions
        self.deletions = deletions
        self.modifications = modifications
        self.count = count
    }
}

/// A live subscription to a folder's events: iterate ``events``; ``end()`` finishes it from
/// outside (on graceful shutdown), as cancelling the iterating task does.
public final class FolderSubscription: Sendable {
    /// The folder's events, ``FolderEvent/initial(count:)`` first.
    public let events: AsyncStream<FolderEvent>
    private let continuation: AsyncStream<FolderEvent>.Continuation

    /// A subscription fed by what `start` sets up: it gets the continuation to yield events to
    /// and returns what stops the source, run once when the stream ends for any reason.
    init(start: (AsyncStream<FolderEvent>.Continuation) -> @Sendable () -> Void) {
        (events, continuation) = AsyncStream.makeStream(of: FolderEvent.self)
        let stop = start(continuation)
        continuation.onTermination = { _ in stop() }
    }

    /// Finishes the stream: its iteration ends after the events already yielded.
    public func end() {
        continuation.finish()
    }
}

/// A store's figures for `/metrics`; `nil` where the backend has no such figure.
public struct StoreStatistics: Sendable, Hashable {
    /// The bytes of the store's files on disk.
    public var fileSize: Int
    /// The bytes of those files' pages in use.
    public var usedSize: Int
    /// The address space reserved for the memory map (LMDBRealm).
    public var mapSize: Int?
    /// The read transactions holding a version now, in every process (LMDBRealm).
    public var readers: Int?
    /// How many versions behind the newest the oldest one a reader holds is; 0 when no reader
    /// holds an older one (LMDBRealm).
    public var pinnedVersions: Int?
    /// The newest committed version (LMDBRealm).
    public var currentVersion: Int?

    public init(
        fileSize: Int, usedSize: Int, mapSize: Int? = nil, readers: Int? = nil, pinnedVersions: Int? = nil,
        currentVersion: Int? = nil
    ) {
        self.fileSize = fileSize
        self.usedSize = usedSize
        self.mapSize = mapSize
        self.readers = readers
        self.pinnedVersions = pinnedVersions
        self.currentVersion = currentVersion
    }
}

extension NotesBackend {
    /// The folder the `index`th seeded note goes to.
    static func seedFolder(_ index: Int, of folders: Int) -> String { "folder-\(index % folders)" }
}

/// The text of seeded notes' bodies: a couple of hundred bytes, like a short note.
let seedBody = String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", count: 4)
