import Dispatch
import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - Confinement

extension Realm {
    enum Confinement {
        case thread(pthread_t)
        case queue(QueueToken)
        case actor(ActorReference)
        /// The realm of a ``RealmStore``'s reading queue: confined, for each read, to the
        /// thread that runs it.
        case lent(Borrower)
        case frozen
    }

    /// The thread that holds a lent realm, or none.
    final class Borrower: Sendable {
        /// The holder's `pthread_t`, 0 while the realm is not lent.
        private let holder = Atomic<UInt>(0)

        init() {}

        /// Lends the realm to the calling thread. Call only while nobody holds it.
        func lendToCurrentThread() { holder.store(UInt(pthread_self()), ordering: .relaxed) }

        /// Takes the realm back: no thread may use it until it is lent again.
        func takeBack() { holder.store(0, ordering: .relaxed) }

        /// Whether the calling thread holds the realm.
        @inline(__always)
        var isCurrent: Bool { holder.load(ordering: .relaxed) == UInt(pthread_self()) }
    }

    /// The actor a realm is confined to, held weakly: the actor usually holds the realm.
    final class ActorReference: @unchecked Sendable {
        // @unchecked Sendable: a weak reference set in init, loaded atomically by the runtime.
        weak var actor: (any Actor)?
        init(_ actor: any Actor) { self.actor = actor }
    }

    /// Identifies a serial queue through its queue-specific storage.
    final class QueueToken: @unchecked Sendable {
        // @unchecked Sendable: its only state is a weak reference to the queue, set in init;
        // otherwise only its identity is compared.
        static let key = DispatchSpecificKey<QueueToken>()
        static let lock = NSLock()
        private weak var weakQueue: DispatchQueue?

        private init(_ queue: DispatchQueue) {
            weakQueue = queue
        }

        /// The queue; the realm confined to it keeps it alive.
        var queue: DispatchQueue { weakQueue! }

        static func of(_ queue: DispatchQueue) -> QueueToken {
            lock.withLock {
                if let token = queue.getSpecific(key: key) { return token }
                let token = QueueToken(queue)
                queue.setSpecific(key: key, value: token)
                return token
            }
        }

        /// Whether the calling code runs on the queue.
        var isCurrent: Bool { DispatchQueue.getSpecific(key: QueueToken.key) === self }
    }

    /// Whether the calling code runs where the realm is confined (never for an actor, which
    /// cannot be asked without stopping the process).
    var isOnOwnContext: Bool {
        switch confinement {
        case .thread(let owner): pthread_equal(owner, pthread_self()) != 0
        case .queue(let token): token.isCurrent
        case .lent(let borrower): borrower.isCurrent
        case .actor, .frozen: false
        }
    }

    /// Stops the process unless called from the realm's thread or queue.
    ///
    /// The common case, a thread-confined realm on its thread, is checked inline (small enough
    /// to inline into every accessor through `ObjectStore`); the rest calls out.
    @inline(__always)
    func checkThread() {
        // pthread_t is an integer (Linux) or a pointer (Darwin): compared directly, not
        // through pthread_equal, a call saved on every property read.
        if case .thread(let owner) = confinement, owner == pthread_self() { return }
        checkConfinement()
    }

    @inline(never)
    private func checkConfinement() {
        switch confinement {
        case .thread(let owner):
            if owner != pthread_self() { wrongThread() }
        case .queue(let token):
            if DispatchQueue.getSpecific(key: QueueToken.key) !== token { wrongThread() }
        case .lent(let borrower):
            if !borrower.isCurrent { wrongThread() }
        case .actor(let reference):
            guard let actor = reference.actor else { wrongThread() }
            actor.preconditionIsolated("Realm accessed from incorrect thread.")
        case .frozen:
            return
        }
    }

    private func wrongThread() -> Never {
        fatalError("Realm accessed from incorrect thread.")
    }
}
