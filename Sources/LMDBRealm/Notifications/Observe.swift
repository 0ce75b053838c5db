public import Dispatch
import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension Results {
    /// Calls `block` with the results now (`.initial`), then after every change to them.
    ///
    /// ```swift
    /// let token = articles.where { $0.section == "Sports" }.observe { change in
    ///     if case .update(_, let deletions, let insertions, let modifications) = change {
    ///         print("-\(deletions) +\(insertions) ~\(modifications)")
    ///     }
    /// }
    /// ```
    ///
    /// Delivery follows the realm's confinement:
    /// - a realm confined to a serial queue (or an actor) refreshes itself when any thread or
    ///   process commits, and calls `block` on its queue (or actor); `.initial` comes
    ///   asynchronously;
    /// - a thread-confined realm has no queue to run on between calls: `.initial` is delivered
    ///   before `observe` returns, and later changes on ``Realm/refresh()``, at the start of a
    ///   write (changes of others), and after each of its own commits.
    ///
    /// - Parameters:
    ///   - keyPaths: The properties whose changes count as modifications (`nil`: all).
    ///     Inserts and deletes are always reported.
    ///   - block: Receives each change, on the realm's thread, queue or actor.
    /// - Returns: A token; notifications stop when it is invalidated or released.
    /// - Precondition: The realm is not frozen and not in a write transaction.
    public func observe(
        keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void
    ) -> NotificationToken {
        let realm = core.realm
        realm.prepareToObserve(keyPaths: keyPaths, of: core.info)
        let token = NotificationToken()
        token.keep(core)
        realm.addNotifier(
            ResultsObserver<Element>(token: token, info: core.info, steps: core.steps, keyPaths: keyPaths, callback: block))
        realm.scheduleDelivery()
        return token
    }

    /// As ``observe(keyPaths:_:)-(_,_)``, naming the observed properties by key path.
    public func observe(
        keyPaths: [PartialKeyPath<Element>], _ block: @escaping (RealmCollectionChange<Results<Element>>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: core.info.propertyNames(for: keyPaths), block)
    }

    /// Observes the results from `queue`: the chain is evaluated again on a realm of the same
    /// file confined to `queue`, which refreshes itself when any thread or process commits, and
    /// `block` is called there with results belonging to that realm.
    ///
    /// ```swift
    /// let queue = DispatchQueue(label: "feed")
    /// let token = articles.observe(on: queue) { change in … }   // runs on `queue`
    /// ```
    /// - Parameters:
    ///   - keyPaths: The properties whose changes count as modifications (`nil`: all).
    ///   - queue: A serial queue.
    ///   - block: Receives each change on `queue`; `.error` if the realm cannot be opened there.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue,
        _ block: @escaping @Sendable (RealmCollectionChange<Results<Element>>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: keyPaths, on: queue, releaseSynchronously: false, block)
    }

    /// As ``observe(keyPaths:on:_:)-(_,_,_)``, naming the observed properties by key path.
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue,
        _ block: @escaping @Sendable (RealmCollectionChange<Results<Element>>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: core.info.propertyNames(for: keyPaths), on: queue, releaseSynchronously: false, block)
    }

    func observe(
        keyPaths: [String]?, on queue: DispatchQueue, releaseSynchronously: Bool,
        _ block: @escaping @Sendable (RealmCollectionChange<Results<Element>>) -> Void
    ) -> NotificationToken {
        let realm = core.realm
        realm.checkThread()
        let handover = ResultsHandover(configuration: realm.configuration, info: core.info, steps: core.steps)
        return observeFromQueue(
            queue, configuration: handover.configuration, info: handover.info, keyPaths: keyPaths,
            releaseSynchronously: releaseSynchronously,
            observer: { token in
                ResultsObserver<Element>(token: token, info: handover.info, steps: handover.steps, keyPaths: keyPaths, callback: block)
            },
            failed: { block(.error($0)) })
    }
}

/// Observes from `queue`: opens a realm of the file confined to it, registers the observer
/// `observer` makes there, and keeps that realm until the returned token ends; `failed` hears
/// why the realm could not be opened.
func observeFromQueue(
    _ queue: DispatchQueue, configuration: Realm.Configuration, info: ClassInfo, keyPaths: [String]?,
    releaseSynchronously: Bool, observer: @escaping @Sendable (NotificationToken) -> NotificationObserver,
    failed: @escaping @Sendable (any Error) -> Void
) -> NotificationToken {
    let token = NotificationToken()
    let holder = RealmHolder()
    queue.async { [weak token] in
        guard let token, !token.isInvalidated else { return }
        do {
            // The queue's handle of the file, shared by every observation there (one reader
            // slot and one refresh per commit for all of them).
            let local = try Realm.cachedHandle(configuration, .queue(.of(queue)))
            local.prepareToObserve(keyPaths: keyPaths, of: info)
            holder.realm = local
            local.addNotifier(observer(token))
            local.deliverNotifications()
        } catch {
            failed(error)
        }
    }
    token.whenInvalidated { holder.release(on: queue, wait: releaseSynchronously) }
    return token
}

/// What a `Results` is, without its realm: enough to evaluate it again on another one.
struct ResultsHandover: Sendable {
    let configuration: Realm.Configuration
    let info: ClassInfo
    let steps: [ResultsStep]
}

/// A realm kept alive for an observation on a queue.
final class RealmHolder: @unchecked Sendable {
    // @unchecked Sendable: `realm` is set and released only on the queue the realm is
    // confined to.
    var realm: Realm?

    /// Releases the realm on its queue (at once if already there); with `wait`, returns only
    /// once it is released.
    func release(on queue: DispatchQueue, wait: Bool = false) {
        if Realm.QueueToken.of(queue).isCurrent {
            realm = nil
        } else if wait {
            queue.sync { self.realm = nil }
        } else {
            queue.async { self.realm = nil }
        }
    }
}

extension Realm {
    /// Checks that observing is allowed now and that `keyPaths` name properties.
    func prepareToObserve(keyPaths: [String]?, of info: ClassInfo) {
        checkThread()
        require(!isFrozen, "Frozen Realms do not change and do not have change notifications.")
        require(!isInWriteTransactionUnchecked, "Cannot register notification blocks from within write transactions.")
        if let keyPaths, let table = bindingForReading(info.type)?.table { _ = columnMask(keyPaths, of: table) }
        if let keyPaths {
            for name in keyPaths where !info.schema.properties.contains(where: { $0.name == name.split(separator: ".").first.map(String.init) }) {
                fatalError("Property '\(name)' not found in object of type '\(info.schema.className)'")
            }
        }
    }

    /// Delivers pending notifications (such as `.initial`) now on a thread-confined realm,
    /// soon on the realm's queue or actor otherwise.
    func scheduleDelivery() {
        switch confinement {
        case .thread, .lent:
            deliverNotifications()
        case .queue(let token):
            let holder = WeakRealm(self)
            token.queue.async { holder.realm?.deliverNotifications() }
        case .actor(let reference):
            let holder = WeakRealm(self)
            Task {
                guard let actor = reference.actor else { return }
                await Realm.deliver(holder, on: actor)
            }
        case .frozen:
            break
        }
    }

    private static func deliver(_ holder: WeakRealm, on actor: isolated any Actor) {
        holder.realm?.deliverNotifications()
    }

    /// Calls `block` after every change to the realm: each refresh to a newer version and each
    /// commit of its own (`.didChange`); `.refreshRequired` when another thread or process
    /// committed and ``autorefresh`` is off on a queue- or actor-confined realm.
    ///
    /// ```swift
    /// let token = realm.observe { notification, realm in print(notification) }
    /// ```
    public func observe(_ block: @escaping (Realm.Notification, Realm) -> Void) -> NotificationToken {
        checkThread()
        require(!isFrozen, "Frozen Realms do not change and do not have change notifications.")
        let token = NotificationToken()
        let observer = RealmObserver(token: token, callback: block)
        observer.baseline = currentSnapshot()
        addNotifier(observer)
        return token
    }

    /// Runs `block` in a write transaction and commits it, without telling the observers of
    /// `tokens` about its changes (they still hear of other commits).
    ///
    /// ```swift
    /// try realm.write(withoutNotifying: [tableToken]) {
    ///     article.wordCount += 1      // the view already shows it
    /// }
    /// ```
    /// - Throws: As ``write(_:)``.
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken], _ block: () throws -> Result) throws -> Result {
        beginWrite()
        let result: Result
        do {
            result = try block()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite(withoutNotifying: tokens) }
        return result
    }
}

/// A weak reference to a realm, handed to its own queue or actor.
final class WeakRealm: @unchecked Sendable {
    // @unchecked Sendable: the reference is weak (loaded atomically) and the realm is used only
    // on its own queue or actor.
    weak var realm: Realm?
    init(_ realm: Realm) { self.realm = realm }
}

/// Objects that can be observed and frozen, typed as themselves.
public protocol _ObjectBehaviors: AnyObject {}
extension Object: _ObjectBehaviors {}

extension _ObjectBehaviors where Self: Object {
    /// Calls `block` after every change to the object's observed properties, and once with
    /// `.deleted` when it is deleted. Delivery follows the realm's confinement, as for
    /// ``Results/observe(keyPaths:_:)-(_,_)``; there is no initial call.
    ///
    /// ```swift
    /// let token = article.observe(keyPaths: ["wordCount"]) { change in
    ///     if case .change(_, let properties) = change {
    ///         for p in properties { print(p.name, p.oldValue ?? "nil", "→", p.newValue ?? "nil") }
    ///     }
    /// }
    /// ```
    /// - Precondition: The object is managed, not frozen, and not deleted.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        guard let realm = _realm else { fatalError("Only objects which are managed by a Realm support change notifications") }
        let info = ClassInfo.of(Self.self)
        realm.prepareToObserve(keyPaths: keyPaths, of: info)
        require(!isInvalidated, "Object has been deleted or invalidated.")
        let token = NotificationToken()
        token.keep(self)
        realm.addNotifier(ObjectObserver<Self>(token: token, info: info, key: _key, keyPaths: keyPaths, callback: block))
        realm.scheduleDelivery()
        return token
    }

    /// As ``observe(keyPaths:_:)-(_,_)``, naming the observed properties by key path.
    public func observe(keyPaths: [PartialKeyPath<Self>], _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: ClassInfo.of(Self.self).propertyNames(for: keyPaths), block)
    }

    /// Observes the object from `queue`, through a realm of the same file confined to it; the
    /// objects passed to `block` belong to that realm.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue, _ block: @escaping @Sendable (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: keyPaths, on: queue, releaseSynchronously: false, block)
    }

    /// As ``observe(keyPaths:on:_:)-(_,_,_)``, naming the observed properties by key path.
    public func observe(
        keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue, _ block: @escaping @Sendable (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: ClassInfo.of(Self.self).propertyNames(for: keyPaths), on: queue, releaseSynchronously: false, block)
    }

    func observe(
        keyPaths: [String]?, on queue: DispatchQueue, releaseSynchronously: Bool,
        _ block: @escaping @Sendable (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        let handover = observationHandover()
        return observeFromQueue(
            queue, configuration: handover.configuration, info: handover.info, keyPaths: keyPaths,
            releaseSynchronously: releaseSynchronously,
            observer: { token in
                ObjectObserver<Self>(
                    token: token, info: handover.info, key: handover.key, keyPaths: keyPaths, baseline: handover.baseline,
                    callback: block)
            },
            failed: { block(.error($0)) })
    }
}

extension _ObjectBehaviors where Self: Object {
    /// What finds this managed object again in a realm of another thread, queue or actor, with
    /// the version changes are reported from: the one it is read at now, however late that
    /// realm opens.
    /// - Precondition: The object is managed, read on its realm's thread, and not deleted.
    func observationHandover() -> ObjectHandover {
        guard let realm = _realm else { fatalError("Only objects which are managed by a Realm support change notifications") }
        realm.checkThread()
        require(!isInvalidated, "Object has been deleted or invalidated.")
        return ObjectHandover(
            configuration: realm.configuration, info: ClassInfo.of(Self.self), key: _key,
            baseline: realm.isInWriteTransactionUnchecked ? nil : realm.currentSnapshot())
    }
}

/// What identifies a stored object, without its realm.
struct ObjectHandover: Sendable {
    let configuration: Realm.Configuration
    let info: ClassInfo
    let key: ObjectKey
    /// The version changes are reported from, pinned until the observation starts.
    let baseline: Snapshot?
}

extension ClassInfo {
    /// The property names of persisted key paths, stopping the process for any other.
    func propertyNames<Root>(for keyPaths: [PartialKeyPath<Root>]) -> [String] {
        keyPaths.map { keyPath in
            guard let name = propertyName(for: keyPath) else {
                fatalError("Key path '\(keyPath)' of '\(schema.className)' is not a persisted property")
            }
            return name
        }
    }
}

// MARK: - Asynchronous sequences

extension Results {
    /// The changes of the results as an asynchronous sequence: `.initial`, then an `.update`
    /// after every change, each carrying the results frozen at that version.
    ///
    /// ```swift
    /// for await change in articles.where { $0.section == "Sports" }.changes {
    ///     if case .update(let frozen, let deletions, let insertions, _) = change { … }
    /// }
    /// ```
    /// Every stream of a file is observed on one realm of its own, on one queue, which
    /// refreshes itself once per commit by any thread or process: no run loop is needed, and a
    /// subscriber costs no thread or reader slot of its own (a server can hold thousands).
    /// Cancelling the iterating task (or dropping the sequence) ends the observation and
    /// releases what it pinned. Unconsumed changes queue up, each pinning its version.
    public var changes: AsyncStream<RealmCollectionChange<FrozenResults<Element>>> {
        changes(keyPaths: nil)
    }

    /// As ``changes``, counting only changes to `keyPaths` as modifications.
    public func changes(keyPaths: [String]?) -> AsyncStream<RealmCollectionChange<FrozenResults<Element>>> {
        changes(keyPaths: keyPaths, bufferingPolicy: .unbounded)
    }

    /// As ``changes``, keeping unconsumed changes as `bufferingPolicy` says: for a slow
    /// consumer that only shows the newest state, `.bufferingNewest(1)` keeps one change
    /// (then the index changes of the one delivered no longer follow from the one before).
    ///
    /// An `.error` element (the stream's realm could not move to a new version, for instance
    /// when every reader slot is taken) does not end the stream: the next commit is tried
    /// again, and the following element tells the changes since the last one delivered.
    public func changes(
        keyPaths: [String]? = nil, bufferingPolicy: AsyncStream<RealmCollectionChange<FrozenResults<Element>>>.Continuation.BufferingPolicy
    ) -> AsyncStream<RealmCollectionChange<FrozenResults<Element>>> {
        changeStream(core.realm.configuration, bufferingPolicy) { queue, releaseSynchronously, deliver in
            observe(keyPaths: keyPaths, on: queue, releaseSynchronously: releaseSynchronously) { change in
                switch change {
                case .initial(let results):
                    deliver(.initial(FrozenResults(results)), false)
                case .update(let results, let deletions, let insertions, let modifications):
                    deliver(.update(FrozenResults(results), deletions: deletions, insertions: insertions, modifications: modifications), false)
                case .error(let error):
                    deliver(.error(error), false)
                }
            }
        }
    }
}

/// An observation as an `AsyncStream`: `observe` registers it on the file's stream queue
/// (see ``StreamQueues``; its hold on the realm there released synchronously when the stream
/// ends) and calls `deliver` with each element and whether it is the last. Cancelling the
/// iterating task or dropping the stream ends the observation.
func changeStream<Element: Sendable>(
    _ configuration: Realm.Configuration,
    _ bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded,
    _ observe: (DispatchQueue, _ releaseSynchronously: Bool, _ deliver: @escaping @Sendable (Element, _ isLast: Bool) -> Void)
        -> NotificationToken
) -> AsyncStream<Element> {
    let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
    let queue = StreamQueues.queue(for: configuration)
    // Cancelling the stream releases its realm before onTermination returns.
    let token = observe(queue, true) { element, isLast in
        continuation.yield(element)
        // Finished from a block of its own, once the delivery that yielded the last element
        // has returned: ending the stream releases the realm on this queue.
        if isLast { queue.async { continuation.finish() } }
    }
    continuation.onTermination = { _ in token.invalidate() }
    return stream
}

/// The queue every `changes` stream of one file is observed on: all of them share that
/// queue's realm, so a subscriber costs no thread, no reader slot and no refresh of its own
/// (one refresh per commit serves them all, each computing its own changes).
enum StreamQueues {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var queues: [String: DispatchQueue] = [:]
    // nonisolated(unsafe): only read or written while `lock` is held. A queue per file is
    // kept for the life of the process: an idle one costs a few hundred bytes and no thread.

    static func queue(for configuration: Realm.Configuration) -> DispatchQueue {
        let path = configuration.resolvedFileURL.resolvingSymlinksInPath().path
        return lock.withLock {
            if let queue = queues[path] { return queue }
            let queue = DispatchQueue(label: "LMDBRealm.changes")
            queues[path] = queue
            return queue
        }
    }
}

extension _ObjectBehaviors where Self: Object {
    /// The changes of the object as an asynchronous sequence of ``ObjectChange``s carrying the
    /// object frozen at each version; it ends after `.deleted`. See ``Results/changes``.
    public var changes: AsyncStream<ObjectChange<FrozenObject<Self>>> {
        changes(keyPaths: nil)
    }

    /// As ``changes``, for changes of `keyPaths` only.
    public func changes(keyPaths: [String]?) -> AsyncStream<ObjectChange<FrozenObject<Self>>> {
        guard let realm else { fatalError("Only objects which are managed by a Realm support change notifications") }
        return changeStream(realm.configuration) { queue, releaseSynchronously, deliver in
            observe(keyPaths: keyPaths, on: queue, releaseSynchronously: releaseSynchronously) { change in
                switch change {
                case .change(let object, let properties): deliver(.change(FrozenObject(object), properties), false)
                case .deleted: deliver(.deleted, true)
                case .error(let error): deliver(.error(error), false)
                }
            }
        }
    }
}
