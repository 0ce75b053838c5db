import Dispatch
import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

/// A `Sendable` way for concurrent code (the request handlers of a server, a task group) to
/// read and write one realm file: reads run on a small pool of queues, each lending its realm
/// to the thread that runs the read, at the newest version; writes go through one actor's
/// realm, so writes made at once share a commit (one `fsync`).
///
/// ```swift
/// let store = try await RealmStore(configuration: config)
/// // In any handler, on any thread:
/// let count = try await store.read { realm in realm.objects(Note.self).where { $0.folder == "inbox" }.count }
/// let id = try await store.write { realm in
///     let note = Note(value: ["folder": "inbox", "text": text])
///     realm.add(note)
///     return note.id
/// }
/// let newest = try await store.read { realm in
///     FrozenResults(realm.objects(Note.self).sorted(byKeyPath: "created", ascending: false).limit(50))
/// }
/// ```
///
/// The blocks get a realm that belongs to them for the call: return values, or frozen objects
/// and results (``FrozenObject``, ``FrozenResults``), never live ones. A read sees every write
/// that returned before it began. Reads on the pool run side by side, one per queue; a read
/// costs a hop to a queue and back, with no realm to open (the queues keep theirs) and no
/// version held between reads. A read's realm is lent for the read only: observe with
/// `observe(on:)` on a queue of yours, or iterate `changes`, not inside a read.
public final class RealmStore: Sendable {
    /// The configuration the store's realms are opened with.
    public let configuration: Realm.Configuration
    private let readers: [ReaderQueue]
    private let next = Atomic<Int>(0)
    private let writer: StoreWriter

    /// The reading queues a store starts unless told: one per core, at most eight (each
    /// queue's realm keeps an LMDB reader slot of the 126 a file has).
    public static var defaultReaders: Int { min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8) }

    /// Opens the store: checks the file (and migrates it, as opening a realm does), and starts
    /// `readers` reading queues, whose realms open on first use.
    /// - Throws: As ``Realm/init(configuration:queue:)``.
    public init(configuration: Realm.Configuration, readers: Int = RealmStore.defaultReaders) async throws {
        require(readers > 0, "A RealmStore needs at least one reader")
        self.configuration = configuration
        self.readers = (0..<readers).map { ReaderQueue(index: $0) }
        writer = try await StoreWriter(configuration: configuration)
    }

    /// Runs `body` with a realm of the newest version on one of the reading queues and
    /// returns what it returned.
    /// - Throws: What `body` threw, or a ``Realm/Error`` if the newest version cannot be read
    ///   (such as when every LMDB reader slot is taken).
    public func read<T: Sendable>(_ body: @escaping @Sendable (Realm) throws -> T) async throws -> T {
        let reader = readers[next.add(1, ordering: .relaxed).oldValue % readers.count]
        let configuration = configuration
        return try await withCheckedThrowingContinuation { continuation in
            reader.queue.async {
                continuation.resume(with: Result { try reader.read(configuration, body) })
            }
        }
    }

    /// Runs `body` in a write transaction and returns what it returned, once the write is
    /// durable. Writes begun together share one commit; one that throws rolls back only itself
    /// (its caller gets the error).
    public func write<T: Sendable>(_ body: @escaping @Sendable (Realm) throws -> T) async throws -> T {
        try await writer.write(body)
    }
}

/// A reading queue of a ``RealmStore`` and its realm, lent to the thread that runs each read.
///
/// The realm is confined `.lent`, not to the queue: it checks an atomic thread id on each use
/// (a queue-confined realm asks Dispatch for the current queue's specific), and, having no
/// queue to refresh on, costs nothing when others commit; it takes the newest version as a read
/// begins and lets it go as it ends, so an idle store pins no version.
private final class ReaderQueue: @unchecked Sendable {
    // @unchecked Sendable: `realm` is only touched on `queue` (serial), inside `read`.
    let queue: DispatchQueue
    private let borrower = Realm.Borrower()
    private var realm: Realm?

    init(index: Int) {
        queue = DispatchQueue(label: "LMDBRealm.RealmStore.reader-\(index)")
    }

    /// Runs `body` with the queue's realm at the newest version. Call on `queue`.
    func read<T>(_ configuration: Realm.Configuration, _ body: (Realm) throws -> T) throws -> T {
        borrower.lendToCurrentThread()
        defer { borrower.takeBack() }
        let realm: Realm
        if let held = self.realm {
            realm = held
            do {
                // Frozen results of an earlier read may share the version: moving on then needs
                // a reader slot, and a full table is this read's error.
                try realm.moveToNewestVersionKeepingOnFailure()
            } catch {
                throw Realm.Error(error, url: realm.file.url, doing: "Cannot read the newest version of")
            }
        } else {
            // Opened at the newest version.
            realm = try Realm(configuration: configuration, confinement: .lent(borrower))
            self.realm = realm
        }
        // Released after the block (which also cancels a write the block left open).
        defer { realm.invalidate() }
        return try body(realm)
    }
}

/// The writing side of a ``RealmStore``: an actor's realm, whose `asyncWrite`s made at once
/// join one group commit.
private actor StoreWriter {
    private var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm.open(configuration: configuration, actor: self)
    }

    func write<T: Sendable>(_ body: @Sendable (Realm) throws -> T) async throws -> T {
        let realm = realm!
        return try await realm.asyncWrite { try body(realm) }
    }
}
