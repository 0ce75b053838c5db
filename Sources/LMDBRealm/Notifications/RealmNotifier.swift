import LMDBRealmFormat
import LMDBRealmStorage

/// The observers of one realm and the delivery of their notifications: which observers there
/// are, which have not heard a version yet, the version they were last brought to, what one
/// commit did to each observed query (worked out once for all its observers), and the tokens
/// a commit skips. A realm holds one; its thread or queue is the notifier's.
final class RealmNotifier {
    /// The realm's observers: of results, objects, and the realm itself.
    private(set) var observers: [NotificationObserver] = []
    /// Observers registered since the last delivery, which have not seen a version yet.
    private var newObservers: [NotificationObserver] = []
    /// The version every observer in `observers` was last brought to, if none has been added
    /// since: delivering at that version only has new observers to tell.
    private var deliveredVersion: Int?
    /// Whether a delivery is under way (a callback that refreshes or writes asks for another
    /// round instead of delivering inside a callback).
    private(set) var isDelivering = false
    private var needsAnotherRound = false
    /// What the commit being delivered did to each query observed here, for the observers of
    /// one query from one version: computed by the first, reused by the rest.
    var sharedResultsChanges: [SharedResultsChange.Key: SharedResultsChange] = [:]
    /// How many times the realm worked out what a commit did to an observed query.
    var resultsChangesComputed = 0
    /// The keys observers of one query started from at one version (all at
    /// `sharedInitial.version`), kept across delivery rounds: observers registered one by one
    /// at that version start from the first one's evaluation. Keys only: nothing here holds
    /// the realm.
    private var sharedInitial: (version: Int, keys: [SharedResultsChange.Key: [ObjectKey]]) = (0, [:])
    /// How many times the realm evaluated an observed query for its first notification.
    var initialResultsEvaluated = 0
    /// Tokens whose observers skip the changes of the write being committed.
    var skippedTokens: [NotificationToken] = []
    /// The version of the write whose changes `skippedTokens` skip.
    var skipVersion = 0
    /// Wakes a queue- or actor-confined realm when the file changes.
    var listener: RefreshListener?

    var isEmpty: Bool { observers.isEmpty }

    /// Registers `observer` of `realm`, counting it for the file so that writes record change
    /// logs. When its token is invalidated on the realm's thread or queue, it is dropped at once
    /// (with its callback, which often holds the realm).
    func add(_ observer: NotificationObserver, to realm: Realm) {
        if case .lent = realm.confinement {
            fatalError(
                "Cannot observe the realm of a RealmStore's read: it is lent for the read only, and nothing delivers its notifications after it. Observe with observe(on:) and a queue of yours, or iterate changes"
            )
        }
        realm.file.hub.observerAdded()
        observers.append(observer)
        newObservers.append(observer)
        let weakRealm = WeakRealm(realm)
        let id = ObjectIdentifier(observer)
        observer.token?.whenInvalidated {
            guard let realm = weakRealm.realm, realm.isOnOwnContext, !realm.notifier.isDelivering else { return }
            realm.notifier.remove(id, realm.file)
        }
    }

    /// Drops one observer whose token ended (the others are not looked at: with thousands of
    /// observers, each going away must not cost a pass over all).
    /// (`id` names an observer still in the list, so no other object can have it.)
    private func remove(_ id: ObjectIdentifier, _ file: StoreFile) {
        guard let i = observers.lastIndex(where: { ObjectIdentifier($0) == id }) else { return }
        observers[i].detach(file)
        observers.remove(at: i)
        if let j = newObservers.lastIndex(where: { ObjectIdentifier($0) == id }) { newObservers.remove(at: j) }
    }

    /// Drops the observers whose tokens ended.
    func prune(_ file: StoreFile) {
        for observer in observers where !observer.isLive { observer.detach(file) }
        observers.removeAll { !$0.isLive }
        newObservers.removeAll { !$0.isLive }
    }

    /// Delivers every pending notification for the version `realm` reads now.
    ///
    /// Reentrant calls (a callback that refreshes or writes) ask for another round instead of
    /// delivering inside a callback.
    func deliver(in realm: Realm) {
        guard !observers.isEmpty else { return }
        if isDelivering {
            needsAnotherRound = true
            return
        }
        isDelivering = true
        defer { isDelivering = false }
        defer { sharedResultsChanges.removeAll() }
        repeat {
            needsAnotherRound = false
            sharedResultsChanges.removeAll(keepingCapacity: true)
            guard !realm.isInWriteTransactionUnchecked else { return }
            let current = realm.currentSnapshot()
            if current.version == deliveredVersion {
                // No version since the last round: only the observers added since have
                // anything to hear (a round per registration must not visit every observer).
                let added = newObservers
                newObservers.removeAll()
                for observer in added where observer.isLive {
                    if observer.needsInitial {
                        observer.needsInitial = false
                        observer.deliverInitial(realm, at: current)
                    } else if observer.baseline == nil {
                        observer.baseline = current
                    }
                }
                continue
            }
            newObservers.removeAll()
            prune(realm.file)
            sharedInitial = (0, [:])
            var logsAfter: [Int: [ChangeLog]?] = [:]
            for observer in observers where observer.isLive {
                if observer.needsInitial {
                    observer.needsInitial = false
                    observer.deliverInitial(realm, at: current)
                    continue
                }
                guard let base = observer.baseline else {
                    observer.baseline = current
                    continue
                }
                guard base.version != current.version else { continue }
                let logs: [ChangeLog]?
                if let cached = logsAfter[base.version] {
                    logs = cached
                } else {
                    logs = realm.file.hub.logs(after: base.version, through: current.version)
                    logsAfter[base.version] = logs
                }
                let skipped =
                    skipVersion == current.version && base.version == skipVersion - 1
                    && skippedTokens.contains { $0 === observer.token }
                observer.advance(realm, from: base, to: current, logs: logs, notify: !skipped)
            }
            deliveredVersion = current.version
        } while needsAnotherRound
    }

    /// Tells realm observers that the file changed while `realm` does not refresh itself.
    func deliverRefreshRequired(in realm: Realm) {
        for case let observer as RealmObserver in observers where observer.isLive {
            observer.callback(.refreshRequired, realm)
        }
    }

    /// The keys another observer of the query `key` started from at version `key.base`, if
    /// one did.
    func sharedInitialKeys(_ key: SharedResultsChange.Key) -> [ObjectKey]? {
        sharedInitial.version == key.base ? sharedInitial.keys[key] : nil
    }

    /// Keeps `keys` for the next observers of the query `key` at version `key.base`; those
    /// kept for another version go.
    func shareInitialKeys(_ key: SharedResultsChange.Key, _ keys: [ObjectKey]) {
        if sharedInitial.version != key.base { sharedInitial = (key.base, [:]) }
        sharedInitial.keys[key] = keys
    }
}

@available(*, unavailable, message: "a realm's notifier belongs to the realm's thread or queue")
extension RealmNotifier: Sendable {}
