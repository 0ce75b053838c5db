public import Foundation
import LMDBRealm

/// The notes in an LMDBRealm file, through one `RealmStore`: reads on its pool of reading
/// queues, writes through its writer (writes made at once share a commit), and folder events
/// from `Results.observe(on:)` on one queue.
public final class RealmNotesBackend: NotesBackend {
    public var kind: BackendKind { .lmdbrealm }
    let store: RealmStore
    /// The queue folder events are observed on.
    private let eventQueue = DispatchQueue(label: "notes.events")

    /// Opens the realm at `fileURL` (creating it if missing) with `readers` reading queues (by
    /// default, one per core, at most eight).
    public init(fileURL: URL, readers: Int? = nil) async throws {
        var configuration = Realm.Configuration(fileURL: fileURL)
        configuration.objectTypes = [Note.self]
        if let readers {
            store = try await RealmStore(configuration: configuration, readers: readers)
        } else {
            store = try await RealmStore(configuration: configuration)
        }
    }

    public func create(_ new: NewNote) async throws -> NoteDTO {
        try await store.write { realm in
            let note = Note()
            note.folder = new.folder
            note.title = new.title
            note.body = new.body
            note.created = Date()
            realm.add(note)
            return NoteDTO(note)
        }
    }

    public func note(id: String) async throws -> NoteDTO? {
        guard let key = Self.objectId(id) else { return nil }
        return try await store.read { realm in
            realm.object(ofType: Note.self, forPrimaryKey: key).map(NoteDTO.init)
        }
    }

    public func delete(id: String) async throws -> Bool {
        guard let key = Self.objectId(id) else { return false }
        // Reading first keeps a delete of a missing note from taking the write lock.
        guard try await store.read({ realm in realm.object(ofType: Note.self, forPrimaryKey: key) != nil }) else {
            return false
        }
        return try await store.write { realm in
            guard let note = realm.object(ofType: Note.self, forPrimaryKey: key) else { return false }
            realm.delete(note)
            return true
        }
    }

    public func newest(in folder: String, limit: Int) async throws -> [NoteDTO] {
        try await store.read { realm in
            Self.folder(folder, in: realm).sorted(byKeyPath: "created", ascending: false).limit(limit).map(NoteDTO.init)
        }
    }

    public func count(in folder: String) async throws -> Int {
        try await store.read { realm in Self.folder(folder, in: realm).count }
    }

    public func subscribe(to folder: String) async throws -> FolderSubscription {
        // Observed from `events`, a queue of this backend: every subscriber of the file shares
        // that queue's realm and its one refresh per commit, and each change goes straight from
        // the queue into the subscriber's stream, with no task in between (a relay iterating
        // `Results.changes` would add a hop per event).
        let events = eventQueue
        return try await store.read { realm in
            let notes = Self.folder(folder, in: realm)
            return FolderSubscription { continuation in
                let token = notes.observe(on: events) { change in
                    switch change {
                    case .initial(let notes):
                        continuation.yield(.initial(count: notes.count))
                    case .update(let notes, let deletions, let insertions, let modifications):
                        continuation.yield(.change(FolderChange(
                            insertions: insertions.count, deletions: deletions.count,
                            modifications: modifications.count, count: notes.count)))
                    case .error(let error):
                        // The observation goes on after an error: the next commit is tried again.
                        continuation.yield(.failure(String(describing: error)))
                    }
                }
                // Ending the stream (the client went away, or shutdown) ends the observation.
                return { token.invalidate() }
            }
        }
    }

    public func statistics() async throws -> StoreStatistics {
        let s = try await store.read { realm in try realm.statistics }
        return StoreStatistics(
            fileSize: s.fileSize, usedSize: s.usedSize, mapSize: s.mapSize, readers: s.readers,
            pinnedVersions: s.oldestPinnedVersion.map { s.currentVersion - $0 } ?? 0,
            currentVersion: s.currentVersion)
    }

    public func seed(notes: Int, folders: Int, batchSize: Int) async throws {
        let start = Date(timeIntervalSinceNow: -Double(notes))
        for first in stride(from: 0, to: notes, by: batchSize) {
            let end = min(first + batchSize, notes)
            try await store.write { realm in
                for index in first..<end {
                    let note = Note()
                    note.folder = Self.seedFolder(index, of: folders)
                    note.created = start.addingTimeInterval(Double(index))
                    note.title = "Note \(index)"
                    note.body = seedBody
                    realm.add(note)
                }
            }
        }
    }

    // MARK: - Queries

    /// The notes of `folder`: an equality on the indexed `folder`.
    static func folder(_ folder: String, in realm: Realm) -> Results<Note> {
        realm.objects(Note.self).where { $0.folder == folder }
    }

    /// The `ObjectId` spelled by `id`, or `nil` when it spells none (such an id names no note).
    static func objectId(_ id: String) -> ObjectId? {
        do {
            return try ObjectId(string: id)
        } catch {
            return nil
        }
    }
}
