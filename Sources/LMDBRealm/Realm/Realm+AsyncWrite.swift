import Dispatch
import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

/// Identifies an asynchronous write's block or completion, for ``Realm/cancelAsyncWrite(_:)``.
public typealias AsyncTransactionId = UInt32

// MARK: - Asynchronous transactions with callbacks

extension Realm {
    /// Runs `block` in a write transaction once the file's write lock is free, without blocking
    /// the calling thread, then commits it without blocking either.
    ///
    /// ```swift
    /// let queue = DispatchQueue(label: "articles")
    /// queue.async {
    ///     let realm = try! Realm(configuration: config, queue: queue)
    ///     realm.writeAsync {
    ///         realm.add(article)
    ///     } onComplete: { error in
    ///         // On `queue`, once the commit is durable (or failed).
    ///     }
    /// }
    /// ```
    /// `block` runs later, where the realm is confined. Calling ``commitWrite()`` or
    /// ``cancelWrite()`` inside it ends the transaction there; returning without either commits
    /// as ``commitAsyncWrite(allowGrouping:_:)`` does.
    ///
    /// The realm must be able to run work later where it is confined: a realm of a serial
    /// queue, of an actor (``init(configuration:actor:)``) or of the main thread.
    /// - Returns: An id that ``cancelAsyncWrite(_:)`` takes until `block` has started.
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        beginAsyncWrite { [self] in
            block()
            if isInWriteTransactionUnchecked { commitAsyncWrite(onComplete) }
        }
    }

    /// Begins a write transaction once the file's write lock is free, without blocking the
    /// calling thread, and runs `asyncWriteBlock` in it where the realm is confined.
    ///
    /// The block should end with ``commitAsyncWrite(allowGrouping:_:)`` or ``commitWrite()``;
    /// returning without one of them cancels the transaction. Blocks run in the order they were
    /// queued; a block may queue another.
    ///
    /// A ``beginWrite()`` (or ``write(_:)``) on the realm while blocks are queued runs them first,
    /// waiting for the lock as a synchronous write does.
    /// - Returns: An id that ``cancelAsyncWrite(_:)`` takes until the block has started.
    @discardableResult
    public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        checkThread()
        require(!isFrozen, "Can't perform transactions on a frozen Realm")
        require(!configuration.readOnly, "Can't perform transactions on read-only Realms.")
        requireLaterWork("beginAsyncWrite")
        let writes = asyncWriteQueue
        let id = writes.makeID()
        writes.blocks.append((id, asyncWriteBlock))
        waitForAsyncTurnIfNeeded()
        return id
    }

    /// Commits the current write transaction without blocking the calling thread: the commit's
    /// I/O happens on a writer thread, and `onComplete` runs where the realm is confined once
    /// it is durable or has failed.
    ///
    /// Inside a block of ``beginAsyncWrite(_:)``, the commit joins the other asynchronous writes
    /// of the file queued with it: they share one durable commit. A transaction begun with
    /// ``beginWrite()`` is committed at once, and only `onComplete` waits.
    ///
    /// - Parameter allowGrouping: Accepted for RealmSwift's signature. Commits that queue up
    ///   together are always grouped, and `onComplete` always waits until the group is durable.
    /// - Parameter onComplete: Called with `nil`, or with the ``RealmError`` that stopped the
    ///   commit (none of the transaction was written then).
    /// - Returns: An id with which ``cancelAsyncWrite(_:)`` cancels `onComplete` (never the commit).
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        checkWriteThread()
        requireLaterWork("commitAsyncWrite")
        let writes = asyncWriteQueue
        let id = writes.makeID()
        writes.completions.insert(id)
        let confined = ConfinedWork(realm: self, onComplete: onComplete)
        guard let turn = writes.turn else {
            let failure = Realm.failure { try commitWrite() }
            confined.schedule { realm, onComplete in
                realm.completeAsyncCommit(id, failure, CatalogChanges(), onComplete)
            }
            return id
        }
        writes.turn = nil
        let failure = Realm.failure { try commitNested() }
        let log = writing.changeLogOfLastNestedWrite
        writing.changeLogOfLastNestedWrite = nil
        let catalog = SendableCatalogChanges(changes: writing.catalogChangesOfLastNestedWrite)
        writing.catalogChangesOfLastNestedWrite = CatalogChanges()
        turn.member.finish(log: log) { result in
            let error = failure ?? result.failure
            confined.schedule { realm, onComplete in
                realm.completeAsyncCommit(id, error, catalog.changes, onComplete)
            }
        }
        return id
    }

    /// Cancels a block queued with ``beginAsyncWrite(_:)`` or ``writeAsync(_:onComplete:)``
    /// that has not started, or the completion handler of a
    /// ``commitAsyncWrite(allowGrouping:_:)`` not called yet (the commit itself goes on). An id
    /// of work done already, or of a block running now, is ignored.
    /// - Throws: Never; declared as RealmSwift declares it.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        checkThread()
        guard let writes = writing.asyncWrites else { return }
        if let index = writes.blocks.firstIndex(where: { $0.id == asyncTransactionId }) {
            writes.blocks.remove(at: index)
        } else if writes.completions.remove(asyncTransactionId) != nil {
            writes.cancelledCompletions.insert(asyncTransactionId)
        }
    }

    /// Whether asynchronous writes of this realm are queued, running, or waiting for their
    /// commit to be durable.
    public var isPerformingAsynchronousWriteOperations: Bool {
        checkThread()
        guard let writes = writing.asyncWrites else { return false }
        return writes.waiting != nil || writes.turn != nil || !writes.blocks.isEmpty || writes.commitsInFlight > 0
    }

    // MARK: Internals

    /// What `body` threw, or `nil`.
    private static func failure(_ body: () throws -> Void) -> (any Swift.Error)? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// The asynchronous writes of one realm: queued blocks, the turn of the one running, the
    /// completions still to call. Touched only where the realm is confined.
    final class AsyncWriteQueue {
        var nextID: AsyncTransactionId = 0
        var blocks: [(id: AsyncTransactionId, block: () -> Void)] = []
        /// The turn being waited for, while one is.
        var waiting: TurnSlot?
        /// The group turn of the block running now, until its write ends.
        var turn: GroupCommitter.Turn?
        /// Completion ids of commits not yet reported.
        var completions: Set<AsyncTransactionId> = []
        var cancelledCompletions: Set<AsyncTransactionId> = []
        var commitsInFlight: Int { completions.count + cancelledCompletions.count }

        func makeID() -> AsyncTransactionId {
            nextID &+= 1
            return nextID
        }
    }

    /// Where a turn in the file's group commit arrives, for the work scheduled on the realm's
    /// context or for a synchronous write that cannot wait for that work.
    final class TurnSlot: Sendable {
        private let state = Mutex<Result<GroupCommitter.Turn, any Swift.Error>?>(nil)
        private let arrived = DispatchSemaphore(value: 0)

        func fill(_ result: Result<GroupCommitter.Turn, any Swift.Error>) {
            state.withLock { $0 = result }
            arrived.signal()
        }

        /// Blocks until the turn has arrived.
        func wait() -> Result<GroupCommitter.Turn, any Swift.Error> {
            arrived.wait()
            arrived.signal()
            return state.withLock { $0! }
        }
    }

    var asyncWriteQueue: AsyncWriteQueue {
        if let writes = writing.asyncWrites { return writes }
        let writes = AsyncWriteQueue()
        writing.asyncWrites = writes
        return writes
    }

    /// Stops the process unless the realm can run work later where it is confined.
    private func requireLaterWork(_ call: String) {
        if case .lent = confinement {
            fatalError("\(call) cannot run on the realm of a RealmStore's read: write with the store's write(_:)")
        }
        if case .thread = confinement, !Thread.isMainThread {
            fatalError(
                "\(call) needs a realm that can run work later where it is confined: a realm of a serial queue (Realm(configuration:queue:)), of an actor (Realm(configuration:actor:)) or of the main thread; this realm belongs to another thread, which has nothing to come back to"
            )
        }
    }

    /// Asks the file's group commit for a turn for the next queued block, unless one is asked
    /// for already or a block is running.
    private func waitForAsyncTurnIfNeeded() {
        let writes = asyncWriteQueue
        guard writes.waiting == nil, writes.turn == nil, !writes.blocks.isEmpty else { return }
        let slot = TurnSlot()
        writes.waiting = slot
        let committer = file.committer!
        let confined = ConfinedWork(realm: self, onComplete: nil)
        committer.join { turn in
            slot.fill(turn)
            confined.schedule { realm, _ in realm.runAsyncWriteBlock(from: slot) }
        }
    }

    /// Runs the next queued block in the turn `slot` holds (unless a synchronous write ran it
    /// already).
    private func runAsyncWriteBlock(from slot: TurnSlot) {
        let writes = asyncWriteQueue
        guard writes.waiting === slot else { return }
        writes.waiting = nil
        let turn = slot.wait()
        guard !writes.blocks.isEmpty else {
            // Every queued block was cancelled while the turn was on its way.
            if case .success(let turn) = turn { turn.member.finish(log: recordsChangeLogs ? ChangeLog() : nil) { _ in } }
            return
        }
        let block = writes.blocks.removeFirst().block
        switch turn {
        case .success(let turn):
            do {
                try startWrite(.group(turn))
                writes.turn = turn
            } catch {
                turn.member.finish(log: recordsChangeLogs ? ChangeLog() : nil) { _ in }
                beginFailedWrite(error)
            }
        case .failure(let error):
            beginFailedWrite(error)
        }
        block()
        if isInWriteTransactionUnchecked { cancelWrite() }
        waitForAsyncTurnIfNeeded()
    }

    /// Runs the queued asynchronous blocks now, on the calling thread: a synchronous write
    /// waits for them, as it would wait for any other writer (and the group commit holds the
    /// file's write lock for them).
    func runQueuedAsyncWrites() {
        while let writes = writing.asyncWrites, let slot = writes.waiting {
            runAsyncWriteBlock(from: slot)
        }
    }

    /// Gives the group commit back the turn of the write that ends now, if an asynchronous block
    /// began it; nothing of the write reaches the group.
    func giveBackAsyncTurn() {
        guard let writes = writing.asyncWrites, let turn = writes.turn else { return }
        writes.turn = nil
        turn.member.finish(log: recordsChangeLogs ? ChangeLog() : nil) { _ in }
    }

    /// Commits the nested write of an asynchronous block synchronously: ``commitWrite()`` inside
    /// the block. Returns `false` when the current write is not such a write.
    func commitAsyncTurnNow() throws -> Bool {
        guard let writes = writing.asyncWrites, let turn = writes.turn else { return false }
        writes.turn = nil
        do {
            try commitNested()
        } catch {
            turn.member.finish(log: recordsChangeLogs ? ChangeLog() : nil) { _ in }
            throw error
        }
        let log = writing.changeLogOfLastNestedWrite
        writing.changeLogOfLastNestedWrite = nil
        let catalog = writing.catalogChangesOfLastNestedWrite
        writing.catalogChangesOfLastNestedWrite = CatalogChanges()
        let slot = Mutex<Result<Void, any Swift.Error>?>(nil)
        let durable = DispatchSemaphore(value: 0)
        turn.member.finish(log: log) { result in
            slot.withLock { $0 = result }
            durable.signal()
        }
        durable.wait()
        if case .failure(let error) = slot.withLock({ $0! }) {
            drop(catalog)
            throw error
        }
        publish(catalog)
        if !notifier.isDelivering {
            moveToNewestVersionIfIdle()
            deliverNotifications()
        }
        return true
    }

    /// Where a commit of ``commitAsyncWrite(allowGrouping:_:)`` ends: on the realm's context,
    /// once it is durable or failed.
    private func completeAsyncCommit(
        _ id: AsyncTransactionId, _ error: (any Swift.Error)?, _ catalog: CatalogChanges, _ onComplete: ((Swift.Error?) -> Void)?
    ) {
        let writes = asyncWriteQueue
        if error == nil { publish(catalog) } else { drop(catalog) }
        if !notifier.isDelivering {
            moveToNewestVersionIfIdle()
            deliverNotifications()
        }
        let cancelled = writes.cancelledCompletions.remove(id) != nil
        writes.completions.remove(id)
        if !cancelled { onComplete?(error) }
    }

    /// Work to run later where a realm is confined: on its serial queue, on its actor, or on the
    /// main queue for the main thread's realm.
    struct ConfinedWork: @unchecked Sendable {
        // @unchecked Sendable: the realm and the handler are only used inside `schedule`'s
        // work, which runs where the realm is confined (its queue, its actor, or the main
        // queue for a realm of the main thread); the realm checks that on every call.
        let realm: Realm
        let onComplete: ((Swift.Error?) -> Void)?

        func schedule(_ work: @escaping (Realm, ((Swift.Error?) -> Void)?) -> Void) {
            let job = Job(run: { work(realm, onComplete) })
            switch realm.confinement {
            case .queue(let token):
                token.queue.async { job.run() }
            case .actor(let reference):
                Task {
                    guard let actor = reference.actor else { return }
                    await Realm.run(job, on: actor)
                }
            case .thread:
                DispatchQueue.main.async { job.run() }
            case .lent, .frozen:
                preconditionFailure("a lent or frozen realm has no asynchronous writes")
            }
        }
    }

    /// A closure carried to where a realm is confined (see ``ConfinedWork``).
    struct Job: @unchecked Sendable {
        // @unchecked Sendable: made by `ConfinedWork.schedule`, run only where its realm is
        // confined.
        let run: () -> Void
    }

    private static func run(_ job: Job, on actor: isolated any Actor) {
        job.run()
    }
}

/// Catalog changes carried to the realm's context with the commit they belong to.
struct SendableCatalogChanges: @unchecked Sendable {
    // @unchecked Sendable: made on the realm's context and used there again; the writer thread
    // only carries it.
    let changes: CatalogChanges
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
