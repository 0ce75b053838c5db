import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

extension Realm {
    /// A frozen copy of the realm: the version it reads now, forever. Frozen realms, their
    /// objects and results may be read from any thread at once, never change, and refuse
    /// writes. The version stays pinned (its pages are not reused) until the last of them is
    /// released.
    ///
    /// ```swift
    /// let frozen = realm.freeze()
    /// let snapshot = FrozenResults(frozen.objects(Article.self))  // Sendable
    /// ```
    /// - Precondition: The realm is not in a write transaction.
    public func freeze() -> Realm {
        checkThread()
        if isFrozen { return self }
        require(!isInWriteTransactionUnchecked, "Cannot freeze a Realm in a write transaction")
        let current = currentSnapshot()
        if let cached = reading.frozenCopy, cached.reading.snapshot === current { return cached }
        do {
            try current.warm(allTables() + file.allTables)
        } catch {
            cannotRead("the catalog", error)
        }
        let frozen = Realm(frozen: current, configuration: configuration)
        reading.frozenCopy = frozen
        return frozen
    }

    /// A live realm of the same file, confined to the calling thread, at the newest version.
    public func thaw() -> Realm {
        if !isFrozen {
            checkThread()
            return self
        }
        do {
            return try Realm(configuration: configuration)
        } catch {
            fatalError("Cannot thaw a frozen realm of '\(file.url.path)': \(error)")
        }
    }
}

extension Results {
    /// Whether the results belong to a frozen realm.
    public var isFrozen: Bool { core.realm.isFrozen }

    /// The results as they are now, frozen: they never change, and any thread may read them
    /// (the results themselves if they are frozen). To hand them to another thread, task or
    /// actor in Swift 6, wrap them in ``FrozenResults``, which is `Sendable`:
    ///
    /// ```swift
    /// let frozen = FrozenResults(realm.objects(Article.self))   // freezes
    /// Task.detached { print(frozen.count) }
    /// ```
    public func freeze() -> Results<Element> {
        let realm = core.realm
        realm.checkThread()
        if realm.isFrozen { return self }
        let frozenRealm = realm.freeze()
        if let shared = core.frozen, shared.realm === frozenRealm { return Results(core: shared) }
        let frozen = ResultsCore(realm: frozenRealm, info: core.info, steps: core.steps)
        core.frozen = frozen
        return Results(core: frozen)
    }

    /// Live results of the same query on a realm confined to the calling thread, at the newest
    /// version; the results themselves if they are live. (`nil` is never returned here; the
    /// optional is RealmSwift's.)
    public func thaw() -> Results<Element>? {
        guard core.realm.isFrozen else { return self }
        return Results(core: ResultsCore(realm: core.realm.thaw(), info: core.info, steps: core.steps))
    }
}

/// Results frozen at one version, `Sendable`: readable from any number of threads at once, and
/// never changing. Made by `FrozenResults(results)` (which freezes them), and carried by
/// ``Results/changes``.
///
/// ```swift
/// for await change in articles.changes {
///     if case .update(let frozen, _, let insertions, _) = change {
///         for i in insertions { print(frozen[i].url) }
///     }
/// }
/// ```
/// The objects read from it are frozen too: readable on any thread, refusing writes.
public struct FrozenResults<Element: Object>: RandomAccessCollection, CustomStringConvertible, @unchecked Sendable {
    // @unchecked Sendable: `results` reads a frozen realm, whose version never changes; the
    // realm's lock serialises the caches its realm and results keep, and every read makes its
    // own accessor.

    /// The frozen results, for the rest of the `Results` API (queries, sorting, aggregates).
    public let results: Results<Element>

    init(unchecked results: Results<Element>) {
        self.results = results
    }

    /// Freezes `results` (see ``Results/freeze()``).
    public init(_ results: Results<Element>) {
        self.results = results.freeze()
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { results.count }
    public subscript(position: Int) -> Element { results[position] }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }
    public func makeIterator() -> Results<Element>.Iterator { results.makeIterator() }
    public var count: Int { results.count }
    public var description: String { "Frozen" + results.description }

    /// Always `true`.
    public var isFrozen: Bool { true }

    /// Live results of the same query on a realm confined to the calling thread.
    public func thaw() -> Results<Element>? { results.thaw() }
}

extension _ObjectBehaviors where Self: Object {
    /// Whether the object belongs to a frozen realm.
    public var isFrozen: Bool { _realm?.isFrozen ?? false }

    /// The object as it is now, frozen: readable from any thread, never changing. The object
    /// itself if it is unmanaged or already frozen.
    /// - Precondition: The object is not deleted.
    public func freeze() -> Self {
        guard let realm = _realm, !realm.isFrozen else { return self }
        realm.checkThread()
        require(!isInvalidated, "Object has been deleted or invalidated.")
        let frozen = realm.freeze()
        guard let object = frozen.object(withKey: _key, of: Self.self) else {
            fatalError("Object has been deleted or invalidated.")
        }
        return object
    }

    /// The same object on a live realm confined to the calling thread, at the newest version,
    /// or `nil` if it was deleted since. The object itself if it is live or unmanaged.
    public func thaw() -> Self? {
        guard let realm = _realm, realm.isFrozen else { return self }
        return realm.thaw().object(withKey: _key, of: Self.self)
    }
}

/// A frozen object, `Sendable`: read its properties from any thread.
///
/// ```swift
/// let frozen = FrozenObject(article)
/// Task.detached { print(frozen.url) }
/// ```
@dynamicMemberLookup
public struct FrozenObject<T: Object>: @unchecked Sendable {
    // @unchecked Sendable: `object` is frozen: its realm never changes, and a frozen accessor
    // holds its record from its creation (a frozen realm evaluates with records), so reading
    // it writes nothing; the realm's caches are behind its `frozenLock`.

    /// The frozen object.
    public let object: T

    /// Freezes `object` (see `freeze()` on ``Object``).
    public init(_ object: T) {
        self.object = object.freeze()
    }

    public subscript<Value>(dynamicMember keyPath: KeyPath<T, Value>) -> Value {
        object[keyPath: keyPath]
    }
}

extension Realm {
    /// The object of `type` stored under `key` in this realm's version, or `nil`.
    func object<T: Object>(withKey key: ObjectKey, of type: T.Type) -> T? {
        guard let binding = bindingForReading(type) else { return nil }
        let txn = readView()
        let record = key.withBytes { k -> UnsafeRawBufferPointer? in self.record(of: binding.table, key: k, in: txn) }
        guard let record else { return nil }
        return key.withBytes { unsafeDowncast(makeObject(binding, key: $0, record: record), to: T.self) }
    }
}

// MARK: - Thread-safe references

/// Hands a live object or `Results` to another thread, queue or actor: make it where the
/// object lives, resolve it once on a realm of the same file where it is needed.
///
/// ```swift
/// let reference = ThreadSafeReference(to: article)
/// DispatchQueue.global().async {
///     let realm = try! Realm(configuration: config)
///     guard let article = realm.resolve(reference) else { return }  // nil if deleted
///     …
/// }
/// ```
/// The version the reference was made at stays pinned until it is resolved or released;
/// resolving moves the target realm at least to that version.
public final class ThreadSafeReference<Confined>: Sendable {
    enum Payload: Sendable {
        case object(ClassInfo, ObjectKey)
        case results(ClassInfo, [ResultsStep])
        /// The list of declared column `column` of an object (a `List`, `MutableSet` or `Map`).
        case collection(ClassInfo, ObjectKey, column: Int32)
    }

    let payload: Payload
    let path: String
    let version: Int
    /// The pinned version; taken (once) by ``Realm/resolve(_:)-(ThreadSafeReference<Confined>)``.
    private let pinned: Mutex<Snapshot?>

    init(payload: Payload, realm: Realm) {
        realm.checkThread()
        self.payload = payload
        let snapshot = realm.isInWriteTransactionUnchecked ? nil : realm.currentSnapshot()
        path = realm.file.url.path
        version = snapshot?.version ?? 0
        pinned = Mutex(snapshot)
    }

    /// Whether the reference was resolved already.
    public var isInvalidated: Bool { pinned.withLock { $0 == nil } && version != 0 }

    func take() -> Bool {
        pinned.withLock { snapshot in
            defer { snapshot = nil }
            return snapshot != nil || version == 0
        }
    }
}

extension ThreadSafeReference where Confined: Object {
    /// A reference to the managed object `object`.
    /// - Precondition: `object` is managed and not deleted.
    public convenience init(to object: Confined) {
        guard let realm = object._realm else { fatalError("Cannot construct reference to unmanaged object, which can be passed across threads directly") }
        require(!object.isInvalidated, "Cannot construct reference to invalidated object")
        self.init(payload: .object(ClassInfo.of(type(of: object)), object._key), realm: realm)
    }
}

extension ThreadSafeReference {
    /// A reference to the results `results`.
    public convenience init<Element>(to results: Results<Element>) where Confined == Results<Element> {
        self.init(payload: .results(results.core.info, results.core.steps), realm: results.core.realm)
    }
}

extension ThreadSafeReference {
    /// A reference to the managed list `list`.
    public convenience init<Element>(to list: List<Element>) where Confined == List<Element> {
        guard let owner = list.owner, let realm = owner._realm else {
            fatalError("Cannot construct reference to unmanaged List, which can be passed across threads directly")
        }
        self.init(payload: .collection(ClassInfo.of(type(of: owner)), owner._key, column: list.column), realm: realm)
    }

    /// A reference to the managed set `set`.
    public convenience init<Element>(to set: MutableSet<Element>) where Confined == MutableSet<Element> {
        guard let owner = set.owner, let realm = owner._realm else {
            fatalError("Cannot construct reference to unmanaged MutableSet, which can be passed across threads directly")
        }
        self.init(payload: .collection(ClassInfo.of(type(of: owner)), owner._key, column: set.column), realm: realm)
    }

    /// A reference to the managed map `map`.
    public convenience init<Key, Value>(to map: Map<Key, Value>) where Confined == Map<Key, Value> {
        guard let owner = map.owner, let realm = owner._realm else {
            fatalError("Cannot construct reference to unmanaged Map, which can be passed across threads directly")
        }
        self.init(payload: .collection(ClassInfo.of(type(of: owner)), owner._key, column: map.column), realm: realm)
    }
}

extension Realm {
    /// The list `reference` refers to, in this realm, or `nil` if its object was deleted.
    /// - Precondition: As ``resolve(_:)-(ThreadSafeReference<Confined>)``.
    public func resolve<Element>(_ reference: ThreadSafeReference<List<Element>>) -> List<Element>? {
        prepareToResolve(reference)
        guard case .collection(let info, let key, let column) = reference.payload,
            let owner = object(withKey: key, of: info.type)
        else { return nil }
        return List(owner: owner, column: column)
    }

    /// The set `reference` refers to, in this realm, or `nil` if its object was deleted.
    public func resolve<Element>(_ reference: ThreadSafeReference<MutableSet<Element>>) -> MutableSet<Element>? {
        prepareToResolve(reference)
        guard case .collection(let info, let key, let column) = reference.payload,
            let owner = object(withKey: key, of: info.type)
        else { return nil }
        return MutableSet(owner: owner, column: column)
    }

    /// The map `reference` refers to, in this realm, or `nil` if its object was deleted.
    public func resolve<Key, Value>(_ reference: ThreadSafeReference<Map<Key, Value>>) -> Map<Key, Value>? {
        prepareToResolve(reference)
        guard case .collection(let info, let key, let column) = reference.payload,
            let owner = object(withKey: key, of: info.type)
        else { return nil }
        return Map(owner: owner, column: column)
    }
}

extension Realm {
    /// The object `reference` refers to, in this realm, or `nil` if it was deleted. Moves the
    /// realm to the reference's version first if it reads an older one.
    /// - Precondition: The reference was not resolved before, and belongs to this file.
    public func resolve<Confined: Object>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        prepareToResolve(reference)
        guard case .object(let info, let key) = reference.payload else { return nil }
        return object(withKey: key, of: info.type) as? Confined
    }

    /// The results `reference` refers to, in this realm.
    /// - Precondition: As ``resolve(_:)-(ThreadSafeReference<Confined>)``.
    public func resolve<Element>(_ reference: ThreadSafeReference<Results<Element>>) -> Results<Element>? {
        prepareToResolve(reference)
        guard case .results(let info, let steps) = reference.payload else { return nil }
        return Results(core: ResultsCore(realm: self, info: info, steps: steps))
    }

    func prepareToResolve<C>(_ reference: ThreadSafeReference<C>) {
        checkThread()
        require(reference.path == file.url.path, "Cannot resolve a thread safe reference on a Realm of another file")
        require(reference.take(), "Can only resolve a thread safe reference once.")
        if !isFrozen && !isInWriteTransactionUnchecked && currentSnapshot().version < reference.version { refresh() }
    }
}
