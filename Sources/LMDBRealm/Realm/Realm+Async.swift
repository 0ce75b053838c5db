import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension Realm {
    /// Opens a realm confined to the calling actor (or to `actor`).
    ///
    /// ```swift
    /// actor Store {
    ///     var realm: Realm!
    ///     init(configuration: Realm.Configuration) async throws {
    ///         // In an initializer, name the actor once `self` is initialized.
    ///         realm = try await Realm.open(configuration: configuration, actor: self)
    ///     }
    ///     func save(_ article: Article) async throws {
    ///         try await realm.asyncWrite { realm.add(article) }
    ///     }
    /// }
    /// ```
    /// The realm refreshes itself when any thread or process commits (``autorefresh``) and
    /// delivers its notifications on the actor.
    /// - Throws: As ``init(configuration:queue:)``.
    /// - Precondition: Called from an actor-isolated context.
    public static func open(
        configuration: Configuration = .defaultConfiguration, actor: isolated (any Actor)? = #isolation
    ) async throws -> Realm {
        guard let actor else {
            fatalError("Realm.open(configuration:) must be called from an actor (an actor's method, or @MainActor code), or be given one: Realm.open(configuration:actor:)")
        }
        return try cachedHandle(configuration, .actor(ActorReference(actor)))
    }

    /// Runs `block` in a write transaction without blocking the calling thread while waiting
    /// for the file's write lock, and returns once its changes are durable.
    ///
    /// ```swift
    /// try await realm.asyncWrite {
    ///     realm.add(article, update: .modified)
    /// }
    /// ```
    /// The `asyncWrite`s of a process that queue up together share one commit (one fsync):
    /// each block runs in its own nested transaction, so a block that throws rolls back only
    /// itself and only its caller gets the error. Every caller resumes after the shared commit
    /// is durable; the realm then moves to the newest version and delivers its notifications.
    ///
    /// Only a realm that resumes where it is confined can wait without blocking: one opened
    /// with ``open(configuration:actor:)`` (called from its actor), or a main-thread realm
    /// called from the main actor. Any other (a realm of a thread or queue, called from a plain
    /// `async` function or another actor, which could resume on another thread) writes as
    /// ``write(_:)`` does, blocking its thread while it waits for the lock.
    /// - Returns: What `block` returned.
    /// - Throws: What `block` threw, or ``RealmError`` if the shared commit failed (then none
    ///   of the group's blocks were written).
    @discardableResult
    public func asyncWrite<Result>(
        _isolation isolation: isolated (any Actor)? = #isolation, _ block: () throws -> Result
    ) async throws -> Result {
        checkThread()
        guard resumesWhereConfined(isolation) else { return try write(block) }
        require(!isFrozen, "Can't perform transactions on a frozen Realm")
        require(!configuration.readOnly, "Can't perform transactions on read-only Realms.")
        require(!isInWriteTransactionUnchecked, "The Realm is already in a write transaction")
        let turn = try await file.committer.join()
        let outcome = runNested(in: turn, block)
        let log = writing.changeLogOfLastNestedWrite
        writing.changeLogOfLastNestedWrite = nil
        let catalogChanges = writing.catalogChangesOfLastNestedWrite
        writing.catalogChangesOfLastNestedWrite = CatalogChanges()
        do {
            try await withCheckedThrowingContinuation { (durable: CheckedContinuation<Void, any Swift.Error>) in
                turn.member.finish(log: log) { durable.resume(with: $0) }
            }
        } catch {
            drop(catalogChanges)
            throw error
        }
        publish(catalogChanges)
        if !notifier.isDelivering {
            moveToNewestVersionIfIdle()
            deliverNotifications()
        }
        return try outcome.get()
    }

    /// Whether code running in `isolation` resumes after a suspension where this realm is
    /// confined.
    private func resumesWhereConfined(_ isolation: (any Actor)?) -> Bool {
        switch confinement {
        case .actor(let reference): return isolation != nil && reference.actor.map { $0 === isolation! } == true
        case .thread: return isolation.map { $0 === MainActor.shared } == true && Thread.isMainThread
        case .queue, .lent, .frozen: return false
        }
    }

    /// Runs `block` in a transaction nested in the group's, committing it into the group's if
    /// `block` returns, rolling it back if it throws.
    private func runNested<Result>(in turn: GroupCommitter.Turn, _ block: () throws -> Result) -> Swift.Result<Result, any Swift.Error> {
        do {
            try startWrite(.group(turn))
        } catch {
            writing.changeLogOfLastNestedWrite = recordsChangeLogs ? ChangeLog() : nil
            return .failure(Realm.Error(error, url: file.url, doing: "Cannot begin a write to"))
        }
        let result: Result
        do {
            result = try block()
        } catch {
            require(isInWriteTransactionUnchecked, "An asyncWrite block must not end its own transaction")
            cancelWrite()
            writing.changeLogOfLastNestedWrite = recordsChangeLogs ? ChangeLog() : nil
            return .failure(error)
        }
        require(isInWriteTransactionUnchecked, "An asyncWrite block must not end its own transaction")
        do {
            try commitNested()
        } catch {
            return .failure(error)
        }
        return .success(result)
    }

    /// Moves to and takes the newest version, refreshing as the end of a write does.
    func moveToNewestVersionIfIdle() {
        guard !isInWriteTransactionUnchecked else { return }
        _ = refreshWithoutDelivering()
    }

    /// Moves to the newest version without blocking, delivering notifications; the form of
    /// ``refresh()`` for actor-confined realms.
    /// - Returns: Whether the version changed.
    @discardableResult
    public func asyncRefresh(_isolation isolation: isolated (any Actor)? = #isolation) async -> Bool {
        refresh()
    }
}
