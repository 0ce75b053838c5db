import Foundation
package import LMDBKit
import LMDBRealmFormat

/// Shares one durable LMDB commit among the `asyncWrite`s of a file that queue up together.
///
/// A writer thread of its own takes LMDB's write lock (so no actor's executor ever blocks on
/// it), then gives each waiting caller a turn: the caller, back on its actor, runs its block
/// in a transaction nested in the group's (a block that throws rolls back only itself), and
/// hands the turn back. When nobody else is waiting, the writer commits once — one fsync for
/// the whole group — and resumes every caller with the outcome.
///
/// **Threads and LMDB's rules.** lmdb.h: "A transaction and its cursors must only be used by a
/// single thread, and a thread may only have a single transaction at a time." The writer thread
/// begins the group's transaction (taking LMDB's write mutex) and commits or aborts it
/// (releasing the mutex), so the lock is taken and released by one thread, as it must be. A
/// member's block runs on its actor's thread in a child transaction
/// (`mdb_txn_begin(parent:)`) that the member also ends there. The tree of transactions is
/// still used by one thread at a time: the writer thread does nothing with it between
/// handing out a turn and `waitUntilFinished` returning, and the member's lock orders every
/// access of the member (its child's pages, the parent's dirty list) before the writer's next
/// one. The thread-sanitized tests (`make test-thread-sanitizer`, `ActorTests`) check this
/// ordering.
package final class GroupCommitter: @unchecked Sendable {
    // @unchecked Sendable: `waiting` and `running` are only touched under `condition`'s lock;
    // a member's state under its own lock.

    /// One caller of `asyncWrite`.
    package final class Member: @unchecked Sendable {
        // @unchecked Sendable: every mutable property is touched under `lock`.
        private let lock = NSCondition()
        private var onTurn: (@Sendable (Result<Turn, any Error>) -> Void)?
        private var whenDurable: (@Sendable (Result<Void, any Error>) -> Void)?
        private var finished = false
        /// What the member's block changed, for the group's change log.
        package private(set) var log: ChangeLog?

        package init(onTurn: @escaping @Sendable (Result<Turn, any Error>) -> Void) {
            self.onTurn = onTurn
        }

        /// Called on the writer thread: it is the member's turn.
        package func start(_ turn: Turn) {
            let onTurn = lock.withLock {
                defer { self.onTurn = nil }
                return self.onTurn
            }
            onTurn?(.success(turn))
        }

        /// Called on the writer thread when the group could not begin.
        package func fail(_ error: any Error) {
            let (turn, durable) = lock.withLock {
                defer {
                    onTurn = nil
                    whenDurable = nil
                    finished = true
                }
                return (onTurn, whenDurable)
            }
            turn?(.failure(error))
            durable?(.failure(error))
        }

        /// Called by the member when its block's nested transaction has ended: records what to
        /// call (on the writer thread) once the group is durable, then gives the turn back.
        package func finish(log: ChangeLog?, whenDurable: @escaping @Sendable (Result<Void, any Error>) -> Void) {
            lock.withLock {
                self.log = log
                self.whenDurable = whenDurable
                finished = true
                lock.broadcast()
            }
        }

        /// Called on the writer thread: waits until the member handed its turn back.
        func waitUntilFinished() {
            lock.withLock {
                while !finished { lock.wait() }
            }
        }

        /// Called on the writer thread after the group's commit.
        package func complete(_ result: Result<Void, any Error>) {
            let durable = lock.withLock {
                defer { whenDurable = nil }
                return whenDurable
            }
            durable?(result)
        }
    }

    /// A member's turn: the group's write transaction, in which it nests its own.
    package struct Turn: @unchecked Sendable {
        // @unchecked Sendable: the transaction is used by one member at a time; the writer
        // thread waits (on the member's lock) while a member uses it, and the lock orders the
        // accesses.
        package let parent: UnsafeTransaction
        package let member: Member
        package let file: StoreFile
        /// The file's sync database, if it is synced (see ``StoreFile/discoverSync(_:)``).
        package let sync: SyncStore?
    }

    // Unowned: the file owns its committer. The writer thread holds the file strongly while it
    // runs (see `join`): a caller resumed by the commit may drop its last realm, and with it
    // the last other reference to the file, before the writer is done.
    private unowned let file: StoreFile
    private let condition = NSCondition()
    private var waiting: [Member] = []
    private var running = false
    /// The most members one commit serves, so that a steady stream of writers still commits.
    static let maximumGroupSize = 1024

    package init(file: StoreFile) {
        self.file = file
    }

    /// Waits (without blocking the caller's thread) until it is the caller's turn in a group.
    package func join() async throws -> Turn {
        try await withCheckedThrowingContinuation { continuation in
            join { continuation.resume(with: $0) }
        }
    }

    /// Queues the caller for a turn in a group; `onTurn` is called on the writer thread when it
    /// is the caller's turn (or the group could not begin).
    package func join(_ onTurn: @escaping @Sendable (Result<Turn, any Error>) -> Void) {
        let member = Member(onTurn: onTurn)
        let start = condition.withLock {
            waiting.append(member)
            defer { running = true }
            return !running
        }
        if start {
            // The caller holds a realm, so the file is alive here; the thread keeps it so.
            let file = self.file
            let thread = Thread { [self] in runGroups(file) }
            thread.name = "LMDBRealm group commit"
            thread.start()
        }
    }

    /// The writer thread: one group after another while callers are waiting.
    private func runGroups(_ file: StoreFile) {
        while true {
            let hasWork = condition.withLock {
                if waiting.isEmpty { running = false }
                return !waiting.isEmpty
            }
            guard hasWork else {
                TestHooks.groupCommit?(.writerEnding)
                return
            }
            runGroup(file)
        }
    }

    private func next() -> Member? {
        condition.withLock { waiting.isEmpty ? nil : waiting.removeFirst() }
    }

    /// Begins the group's write, with the file's sync database if it is synced.
    private static func begin(_ file: StoreFile, sync: inout SyncStore?) throws -> Transaction {
        while true {
            let txn = try Transaction(environment: file.environment, readOnly: false)
            switch try file.discoverSync(txn) {
            case .synced(let store):
                sync = store
                return txn
            case .notSynced:
                sync = nil
                return txn
            case .needsHandle:
                txn.abort()
                try file.openSyncHandle()
            }
        }
    }

    private func runGroup(_ file: StoreFile) {
        let txn: Transaction
        var sync: SyncStore?
        do {
            txn = try Self.begin(file, sync: &sync)
        } catch {
            let error = RealmError(error, url: file.url, doing: "Cannot begin a write to")
            while let member = next() { member.fail(error) }
            return
        }
        let version = txn.id
        var members: [Member] = []
        while members.count < Self.maximumGroupSize, let member = next() {
            members.append(member)
            member.start(Turn(parent: txn.unsafe, member: member, file: file, sync: sync))
            member.waitUntilFinished()
        }
        let log = ChangeLog()
        var recorded = true
        for member in members {
            if let memberLog = member.log { log.absorb(memberLog) } else { recorded = false }
        }
        if recorded && !log.isEmpty { file.announcer.stage(log, version: version) }
        let result: Result<Void, any Error>
        do {
            try txn.commit()
            if let sync, file.sync == nil { file.publishSync(sync) }
            result = .success(())
        } catch {
            file.announcer.unstage(version: version)
            result = .failure(RealmError(error, url: file.url, doing: "Cannot commit a write to"))
        }
        for member in members { member.complete(result) }
        TestHooks.groupCommit?(.membersResumed)
        if case .success = result { file.announcer.announceCommitted() }
    }
}
