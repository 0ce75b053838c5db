import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

/// What belongs to the realm that read it: managed objects, `Results`, `List`, `MutableSet`,
/// `Map` and `LinkingObjects`. ``ThreadSafeReference`` and ``ThreadSafe`` carry them to other
/// threads.
public protocol ThreadConfined {
    /// The realm this value belongs to, or `nil` if it is unmanaged.
    var realm: Realm? { get }
    /// Whether the value can no longer be read (its object, or the object owning it, was
    /// deleted).
    var isInvalidated: Bool { get }
    /// Whether the value is frozen: pinned to one version, readable from any thread.
    var isFrozen: Bool { get }
}

extension Object: ThreadConfined {}
extension Results: ThreadConfined {
    /// Always `false`: results stay readable while their realm is open.
    public var isInvalidated: Bool { false }
}
extension List: ThreadConfined {
    /// Whether the object owning the list was deleted.
    public var isInvalidated: Bool { owner?.isInvalidated ?? false }
}
extension MutableSet: ThreadConfined {
    /// Whether the object owning the set was deleted.
    public var isInvalidated: Bool { owner?.isInvalidated ?? false }
}
extension Map: ThreadConfined {
    /// Whether the object owning the map was deleted.
    public var isInvalidated: Bool { owner?.isInvalidated ?? false }
    /// The realm of the object owning the map, or `nil` if it is unmanaged.
    public var realm: Realm? { owner?.realm }
}

/// Keeps a managed object (or `Results`, `List`, `MutableSet`, `Map`) where any thread may
/// read it: each read gives the value as the reading thread's realm of the same file sees it.
///
/// ```swift
/// @ThreadSafe var author = realm.objects(Author.self).first
/// DispatchQueue(label: "background").async {
///     let realm = try! Realm(configuration: config)
///     try! realm.write {
///         author?.name = "Jane"           // the background thread's own Author
///     }
/// }
/// ```
///
/// A read opens (or reuses) the calling thread's realm with the configuration of the realm
/// the value was set from, and moves it to at least the version the value was set at. It is
/// `nil` once the object was deleted. The wrapper holds no snapshot: setting it costs an
/// allocation, reading it a lookup by key (or, for `Results`, running the query when read).
@propertyWrapper
public final class ThreadSafe<T: ThreadConfined>: Sendable {
    private struct Stored: Sendable {
        let configuration: Realm.Configuration
        let payload: ThreadSafeReference<T>.Payload
        let version: Int
    }

    private let stored: Mutex<Stored?>

    /// Keeps `wrappedValue`, a managed value or `nil`.
    /// - Precondition: `wrappedValue` is managed and not frozen (an unmanaged object, or a
    ///   frozen one, can be passed to another thread as it is).
    public init(wrappedValue: T?) {
        stored = Mutex(Self.store(wrappedValue))
    }

    /// The value as the calling thread's realm sees it, or `nil` (none was set, or its object
    /// was deleted).
    public var wrappedValue: T? {
        get {
            guard let stored = stored.withLock({ $0 }) else { return nil }
            let realm: Realm
            do {
                realm = try Realm(configuration: stored.configuration)
            } catch {
                fatalError("@ThreadSafe could not open the realm at '\(stored.configuration.resolvedFileURL.path)' on this thread: \(error)")
            }
            if !realm.isInWriteTransactionUnchecked && realm.currentSnapshot().version < stored.version { realm.refresh() }
            guard let type = T.self as? any ThreadSafeResolvable.Type else { return nil }
            return type.resolve(stored.payload.erased, in: realm) as? T
        }
        set {
            let new = Self.store(newValue)
            stored.withLock { $0 = new }
        }
    }

    private static func store(_ value: T?) -> Stored? {
        guard let value else { return nil }
        guard let realm = value.realm, let resolvable = value as? any ThreadSafeResolvable, let payload = resolvable.threadSafePayload
        else {
            fatalError("@ThreadSafe holds managed values; pass an unmanaged \(T.self) to another thread as it is")
        }
        require(!realm.isFrozen, "@ThreadSafe holds live values; a frozen \(T.self) can be passed to another thread as it is")
        require(!value.isInvalidated, "Cannot construct reference to invalidated object")
        realm.checkThread()
        let version = realm.isInWriteTransactionUnchecked ? 0 : realm.currentSnapshot().version
        return Stored(configuration: realm.configuration, payload: .init(payload), version: version)
    }
}

extension ThreadSafeReference.Payload {
    /// The same payload, for a reference of another type.
    init<Other>(_ other: ThreadSafeReference<Other>.Payload) {
        switch other {
        case .object(let info, let key): self = .object(info, key)
        case .results(let info, let steps): self = .results(info, steps)
        case .collection(let info, let key, let column): self = .collection(info, key, column: column)
        }
    }

    var erased: ThreadSafeReference<Any>.Payload { .init(self) }
}

/// A value `ThreadSafe` can find again in another realm.
protocol ThreadSafeResolvable {
    /// What finds the value again, or `nil` if it is unmanaged.
    var threadSafePayload: ThreadSafeReference<Any>.Payload? { get }
    /// The value `payload` finds in `realm`, or `nil` if it was deleted.
    static func resolve(_ payload: ThreadSafeReference<Any>.Payload, in realm: Realm) -> Self?
}

extension Object: ThreadSafeResolvable {
    var threadSafePayload: ThreadSafeReference<Any>.Payload? {
        _realm == nil ? nil : .object(ClassInfo.of(type(of: self)), _key)
    }

    static func resolve(_ payload: ThreadSafeReference<Any>.Payload, in realm: Realm) -> Self? {
        guard case .object(let info, let key) = payload else { return nil }
        return realm.object(withKey: key, of: info.type) as? Self
    }
}

extension Results: ThreadSafeResolvable {
    var threadSafePayload: ThreadSafeReference<Any>.Payload? { .results(core.info, core.steps) }

    static func resolve(_ payload: ThreadSafeReference<Any>.Payload, in realm: Realm) -> Results<Element>? {
        guard case .results(let info, let steps) = payload else { return nil }
        return Results(core: ResultsCore(realm: realm, info: info, steps: steps))
    }
}

/// A `List`, `MutableSet` or `Map`: found again by its owner and its column.
protocol OwnedCollection: ThreadSafeResolvable {
    var owner: Object? { get }
    var column: Int32 { get }
    init(owner: Object, column: Int32)
}

extension OwnedCollection {
    var threadSafePayload: ThreadSafeReference<Any>.Payload? {
        guard let owner, owner._realm != nil else { return nil }
        return .collection(ClassInfo.of(type(of: owner)), owner._key, column: column)
    }

    static func resolve(_ payload: ThreadSafeReference<Any>.Payload, in realm: Realm) -> Self? {
        guard case .collection(let info, let key, let column) = payload, let owner = realm.object(withKey: key, of: info.type) else { return nil }
        return Self(owner: owner, column: column)
    }
}

extension List: OwnedCollection {}
extension MutableSet: OwnedCollection {}
extension Map: OwnedCollection {}

extension ThreadSafeReference where Confined: ThreadConfined {
    /// A reference to any managed thread-confined value (for generic code:
    /// `func pass<T: ThreadConfined>(_ value: T) { let ref = ThreadSafeReference(to: value) … }`).
    /// - Precondition: `threadConfined` is managed, not frozen and not invalidated.
    public convenience init(to threadConfined: Confined) {
        guard let realm = threadConfined.realm, let resolvable = threadConfined as? any ThreadSafeResolvable,
            let payload = resolvable.threadSafePayload
        else {
            fatalError("Cannot construct reference to unmanaged \(Confined.self), which can be passed across threads directly")
        }
        require(!threadConfined.isInvalidated, "Cannot construct reference to invalidated object")
        self.init(payload: .init(payload), realm: realm)
    }
}

extension Realm {
    /// The value `reference` refers to, in this realm, or `nil` if it was deleted (for generic
    /// code over ``ThreadConfined``).
    /// - Precondition: The reference was not resolved before, and belongs to this file.
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        prepareToResolve(reference)
        guard let type = Confined.self as? any ThreadSafeResolvable.Type else { return nil }
        return type.resolve(ThreadSafeReference<Any>.Payload(reference.payload), in: self) as? Confined
    }
}
