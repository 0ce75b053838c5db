import Dispatch
import Foundation
import Synchronization

/// A `Sendable` way for concurrent code (the request handlers of a server, a task group) to
/// read and write one realm file: reads run on a small pool of queues that each keep a
/// confined realm, refreshed to the newest version; writes go through one actor's realm, so
/// writes made at once share a commit (one `fsync`).
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
/// that returned before it began. Reads on the pool run side by side; a read costs a hop to a
/// queue and back, with no realm to open (the queues keep theirs).
public final class RealmStore: Sendable {
    /// The configuration the store's realms are opened with.
    public let configuration: Realm.Configuration
    private let readers: [ReaderQueue]
    private let next = Atomic<Int>(0)
    private let writer: StoreWriter

    /// Opens the store: checks the file (and migrates it, as opening a realm does), and starts
    /// `readers` reading queues.
    /// - Throws: As ``Realm/init(configuration:queue:)``.
    public init(configuration: Realm.Configuration, readers: Int = 2) async throws {
        require(readers > 0, "A RealmStore needs at least one reader")
        self.configuration = configuration
        self.readers = (0..<readers).map { ReaderQueue(index: $0) }
        writer = try await StoreWriter(configuration: configuration)
    }

    /// Runs `body` with a realm of the newest version on one of the reading queues and
    /// returns what it returned.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Realm) throws -> T) async throws -> T {
        let reader = readers[next.add(1, ordering: .relaxed).oldValue % readers.count]
        let configuration = configuration
        return try await withCheckedThrowingContinuation { continuation in
            reader.queue.async {
                continuation.resume(with: Result {
                    let realm = try reader.realm(configuration)
                    realm.refresh()
                    return try body(realm)
                })
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

/// A reading queue of a ``RealmStore`` and the realm confined to it.
private final class ReaderQueue: @unchecked Sendable {
    // @unchecked Sendable: `held` is only touched on `queue`.
    let queue: DispatchQueue
    private var held: Realm?

    init(index: Int) {
        queue = DispatchQueue(label: "LMDBRealm.RealmStore.reader-\(index)")
    }

    /// The queue's realm, opened on first use. Call on `queue`.
    func realm(_ configuration: Realm.Configuration) throws -> Realm {
        if let held { return held }
        let realm = try Realm(configuration: configuration, queue: queue)
        held = realm
        return realm
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
