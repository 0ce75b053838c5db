import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// Observation isolated to an actor, as RealmSwift spells it:
//
//     let token = await dogs.observe(on: BackgroundActor.shared) { actor, changes in … }
//
// The chain (or the object) is found again in the actor's realm of the same file, which
// refreshes itself when any thread or process commits; `block` runs isolated to the actor with
// results and objects of that realm.

extension Results {
    /// Observes the results isolated to `actor`: `block` gets the actor and each change, with
    /// results belonging to the actor's realm of this file.
    ///
    /// Returns once the observation is registered on the actor; `.initial` follows there.
    /// - Parameters:
    ///   - keyPaths: The properties whose changes count as modifications (`nil`: all).
    ///   - actor: Where `block` runs.
    ///   - block: Receives the actor and each change; `.error` if the realm cannot be opened
    ///     there.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, RealmCollectionChange<Results<Element>>) -> Void
    ) async -> NotificationToken {
        let realm = core.realm
        realm.checkThread()
        let handover = ResultsHandover(configuration: realm.configuration, info: core.info, steps: core.steps)
        let deliver: @Sendable (RealmCollectionChange<Results<Element>>) -> Void = { change in
            let delivered = OnActor(change)
            actor.assumeIsolated { block($0, delivered.value) }
        }
        return await observeFromActor(
            actor, configuration: handover.configuration, info: handover.info, keyPaths: keyPaths,
            observer: { token in
                ResultsObserver<Element>(token: token, info: handover.info, steps: handover.steps, keyPaths: keyPaths, callback: deliver)
            },
            failed: { error in deliver(.error(error)) })
    }
}

extension _ObjectBehaviors where Self: Object {
    /// Observes the object isolated to `actor`: `block` gets the actor and each change, with
    /// the object as the actor's realm of this file reads it.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @escaping @Sendable (isolated A, ObjectChange<Self>) -> Void
    ) async -> NotificationToken {
        let handover = observationHandover()
        let deliver: @Sendable (ObjectChange<Self>) -> Void = { change in
            let delivered = OnActor(change)
            actor.assumeIsolated { block($0, delivered.value) }
        }
        return await observeFromActor(
            actor, configuration: handover.configuration, info: handover.info, keyPaths: keyPaths,
            observer: { token in
                ObjectObserver<Self>(
                    token: token, info: handover.info, key: handover.key, keyPaths: keyPaths, baseline: handover.baseline,
                    callback: deliver)
            },
            failed: { error in deliver(.error(error)) })
    }
}

/// Observes from `actor`: registers the observer `observer` makes on the actor's realm of the
/// file, kept until the returned token ends; `failed` hears why that realm could not be opened.
func observeFromActor(
    _ actor: any Actor, configuration: Realm.Configuration, info: ClassInfo, keyPaths: [String]?,
    observer: @escaping @Sendable (NotificationToken) -> NotificationObserver, failed: @escaping @Sendable (any Error) -> Void
) async -> NotificationToken {
    let token = NotificationToken()
    let holder = RealmHolder()
    await registerObserver(
        on: actor, configuration: configuration, info: info, keyPaths: keyPaths, token: token, holder: holder, observer: observer,
        failed: failed)
    token.whenInvalidated {
        // The realm is released on its actor, where it is confined.
        Task { await holder.release(isolatedTo: actor) }
    }
    return token
}

private func registerObserver(
    on actor: isolated any Actor, configuration: Realm.Configuration, info: ClassInfo, keyPaths: [String]?, token: NotificationToken,
    holder: RealmHolder, observer: @Sendable (NotificationToken) -> NotificationObserver, failed: @Sendable (any Error) -> Void
) {
    do {
        // The actor's handle of the file, shared by every observation there.
        let local = try Realm.cachedHandle(configuration, .actor(Realm.ActorReference(actor)))
        local.prepareToObserve(keyPaths: keyPaths, of: info)
        holder.realm = local
        local.addNotifier(observer(token))
        local.scheduleDelivery()
    } catch {
        failed(error)
    }
}

extension RealmHolder {
    /// Releases the realm on `actor`, where it is confined.
    func release(isolatedTo actor: isolated any Actor) {
        realm = nil
    }
}

/// A change made by the actor's realm, handed to the block on that same actor.
private struct OnActor<Value>: @unchecked Sendable {
    // @unchecked Sendable: made and used within one call on the actor's executor (the realm
    // delivering the change is confined to the actor), never carried elsewhere.
    let value: Value
    init(_ value: Value) { self.value = value }
}
