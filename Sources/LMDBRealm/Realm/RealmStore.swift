import Foundation
import Synchronization

/// A `Sendable` way for concurrent code (the request handlers of a server, a task group) to
/// read and write one realm file: a read borrows one of a few realms the store keeps and runs
/// on the calling task's thread, at the newest version; writes go through one actor's realm,
/// so writes made at once share a commit (one `fsync`).
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
/// that returned before it began. Reads run side by side, up to `readers` at once; one more
/// waits (without blocking its thread) for a realm to come back. A read's block runs on a
/// thread of Swift's global concurrent pool, never on the caller's actor, as any synchronous
/// code of a `@concurrent` function: keep blocks short, and scan a large file from a task of
/// its own.
public final class RealmStore: Sendable {
    /// The configuration the store's realms are opened with.
    public let configuration: Realm.Configuration
    private let readers: Int
    private let pool = Mutex(ReaderPool())
    private let writer: StoreWriter

    /// Opens the store: checks the file (and migrates it, as opening a realm does). The realms
    /// for reading open as reads need them, up to `readers` (one per core by default).
    /// - Throws: As ``Realm/init(configuration:queue:)``.
    public init(configuration: Realm.Configuration, readers: Int = ProcessInfo.processInfo.activeProcessorCount) async throws {
        require(readers > 0, "A RealmStore needs at least one reader")
        self.configuration = configuration
        self.readers = readers
        writer = try await StoreWriter(configuration: configuration)
    }

    /// Runs `body` with a realm of the newest version and returns what it returned.
    ///
    /// The realm is lent to the calling thread for the call, then released (it pins no
    /// version while no read runs).
    /// - Throws: What `body` threw, or a ``Realm/Error`` if the newest version cannot be read
    ///   (such as when every LMDB reader slot is taken).
    @concurrent
    public func read<T: Sendable>(_ body: @escaping @Sendable (Realm) throws -> T) async throws -> T {
        let reader = await borrow()
        defer { giveBack(reader) }
        return try reader.read(configuration, body)
    }

    /// Runs `body` in a write transaction and returns what it returned, once the write is
    /// durable. Writes begun together share one commit; one that throws rolls back only itself
    /// (its caller gets the error).
    public func write<T: Sendable>(_ body: @escaping @Sendable (Realm) throws -> T) async throws -> T {
        try await writer.write(body)
    }

    /// An idle reader, a new one while fewer than `readers` exist, or the next one given back.
    private func borrow() async -> Reader {
        enum Turn { case idle(Reader), new, wait }
        let turn: Turn = pool.withLock { pool in
            if let reader = pool.idle.popLast() { return .idle(reader) }
            if pool.opened < readers {
                pool.opened += 1
                return .new
            }
            return .wait
        }
        switch turn {
        case .idle(let reader): return reader
        case .new: return Reader()
        case .wait:
            return await withCheckedContinuation { waiter in
                let reader: Reader? = pool.withLock { pool in
                    // One may have come back since the first look.
                    if let reader = pool.idle.popLast() { return reader }
                    pool.waiters.append(waiter)
                    return nil
                }
                if let reader { waiter.resume(returning: reader) }
            }
        }
    }

    /// Hands `reader` to the longest waiting read, or back to the idle ones.
    private func giveBack(_ reader: Reader) {
        let waiter: CheckedContinuation<Reader, Never>? = pool.withLock { pool in
            if !pool.waiters.isEmpty { return pool.waiters.removeFirst() }
            pool.idle.append(reader)
            return nil
        }
        waiter?.resume(returning: reader)
    }
}

/// The store's readers: those idle, how many exist, and the reads waiting for one.
private struct ReaderPool {
    var idle: [Reader] = []
    var opened = 0
    var waiters: [CheckedContinuation<Reader, Never>] = []
}

/// A realm of a ``RealmStore`` for reading, lent to one read's thread at a time.
private final class Reader: @unchecked Sendable {
    // @unchecked Sendable: `realm` is touched only by the thread it is lent to, between
    // `lendToCurrentThread` and `takeBack` in `read`; the store's mutex orders one loan before
    // the next, and the realm itself stops any other thread (its confinement is `.lent`).
    private let borrower = Realm.Borrower()
    private var realm: Realm?

    func read<T>(_ configuration: Realm.Configuration, _ body: (Realm) throws -> T) throws -> T {
        borrower.lendToCurrentThread()
        defer { borrower.takeBack() }
        let realm: Realm
        if let held = self.realm {
            realm = held
            do {
                try realm.takeNewestSnapshot()
            } catch {
                throw Realm.Error(error, url: realm.file.url, doing: "Cannot read the newest version of")
            }
        } else {
            // Opened at the newest version.
            realm = try Realm(configuration: configuration, confinement: .lent(borrower))
            self.realm = realm
        }
        // Released after the block: an idle reader pins no version (and cancels a write the
        // block left open).
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
