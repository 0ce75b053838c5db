public import Dispatch
import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

// Smaller parts of RealmSwift's `Realm` API, with its signatures.

extension Realm: Equatable {
    /// Whether both are the same handle: the same file, confined to the same thread, queue or
    /// actor (a thread's `Realm()` calls give the same handle), at the same frozen version.
    public static func == (lhs: Realm, rhs: Realm) -> Bool { lhs === rhs }
}

extension Realm {
    /// The block ``observe(_:)`` takes.
    public typealias NotificationBlock = (_ notification: Realm.Notification, _ realm: Realm) -> Void

    /// The object frozen, as `object.freeze()` gives it.
    public func freeze<T: Object>(_ obj: T) -> T { obj.freeze() }

    /// The frozen object live again on this thread's realm, as `object.thaw()` gives it, or
    /// `nil` if it was deleted since.
    public func thaw<T: Object>(_ obj: T) -> T? { obj.thaw() }

    /// The results frozen, as `results.freeze()` gives them.
    public func freeze<Element>(_ results: Results<Element>) -> Results<Element> { results.freeze() }

    /// Deletes every object the map holds (the entries stay, holding `nil`, as RealmSwift's do).
    public func delete<Key, Value: Object>(_ map: Map<Key, Value?>) {
        delete(map.values.compactMap { $0 })
    }

    /// Opens the realm of `configuration` for `callbackQueue` and calls `callback` there with
    /// it (confined to that queue) or with the error that stopped it.
    ///
    /// ```swift
    /// Realm.asyncOpen(configuration: config, callbackQueue: queue) { result in
    ///     switch result { case .success(let realm): …; case .failure(let error): … }
    /// }
    /// ```
    /// The file is opened, and migrated if it needs to be, on `callbackQueue` (an LMDBRealm file
    /// has nothing to download first). `cancel()` on the task before then stops the callback.
    @discardableResult
    public static func asyncOpen(
        configuration: Realm.Configuration = .defaultConfiguration, callbackQueue: DispatchQueue = .main,
        callback: @escaping @Sendable (Result<Realm, any Swift.Error>) -> Void
    ) -> AsyncOpenTask {
        let task = AsyncOpenTask()
        callbackQueue.async {
            guard !task.isCancelled else { return }
            let result = Result<Realm, any Swift.Error> { try Realm(configuration: configuration, queue: callbackQueue) }
            guard !task.isCancelled else { return }
            callback(result)
        }
        return task
    }

    /// An opening started by ``asyncOpen(configuration:callbackQueue:callback:)``.
    public final class AsyncOpenTask: Sendable {
        private let cancelled = Mutex(false)

        init() {}

        /// Stops the opening: its callback is not called if it has not been yet.
        public func cancel() { cancelled.withLock { $0 = true } }

        var isCancelled: Bool { cancelled.withLock { $0 } }
    }
}

/// The name of the persisted property `keyPath` reads, through to-one links, as a key path
/// string takes it: `_name(for: \Article.byline?.name)` is `"byline.name"` (RealmSwift's
/// helper of this name).
/// - Precondition: `keyPath` reads a persisted property of `T`, or of the objects its to-one
///   links reach.
public func _name<T: Object>(for keyPath: PartialKeyPath<T>) -> String {
    guard let name = ClassInfo.of(T.self).keyPathName(for: keyPath) else {
        fatalError("\(keyPath) is not a persisted property of \(T.className()) or of the objects its links reach")
    }
    return name
}
