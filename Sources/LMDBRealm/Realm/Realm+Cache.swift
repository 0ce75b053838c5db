public import Dispatch
public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// Lets `Realm`'s initialisers hand back the handle already open where they are called: an
/// initialiser of a protocol extension may return an existing instance, one of the class may
/// not. Nothing else conforms; use `Realm` itself.
public protocol _RealmOpening {}

extension Realm: _RealmOpening {}

extension _RealmOpening where Self: Realm {
    /// Opens the realm `configuration` describes, confined to the calling thread; on a thread
    /// that has it open already, returns that handle, as RealmSwift does.
    ///
    /// ```swift
    /// let realm = try Realm()                   // Realm.Configuration.defaultConfiguration
    /// let same = try Realm()                    // the same handle, on the same thread
    /// ```
    ///
    /// The thread's handle is kept only while something holds it: a realm, its objects, its
    /// results or an observation token.
    /// - Parameter configuration: Which file, which classes, how to open it.
    /// - Throws: ``RealmError`` naming the file: ``RealmError/Code/fileNotFound``,
    ///   ``RealmError/Code/filePermissionDenied``, ``RealmError/Code/invalidDatabase`` (not
    ///   an LMDBRealm file, empty or truncated), ``RealmError/Code/schemaMismatch`` (listing
    ///   every difference), ``RealmError/Code/tooManyReaders``.
    ///
    /// With a `queue`, the realm is confined to that serial queue instead: call it from a block
    /// running on `queue`; the realm, its objects and its results may then be used from any
    /// block on that queue (a queue that has it open already gets that handle).
    public init(configuration: Realm.Configuration = .defaultConfiguration, queue: DispatchQueue? = nil) throws {
        guard let queue else {
            self = try Realm.cachedHandle(configuration, .thread(pthread_self())) as! Self
            return
        }
        dispatchPrecondition(condition: .onQueue(queue))
        self = try Realm.cachedHandle(configuration, .queue(Realm.QueueToken.of(queue))) as! Self
    }

    /// Opens the file at `fileURL` with the default configuration's other settings.
    /// - Throws: As ``init(configuration:queue:)``.
    public init(fileURL: URL) throws {
        var configuration = Realm.Configuration.defaultConfiguration
        configuration.fileURL = fileURL
        try self.init(configuration: configuration)
    }

    /// Opens the realm `configuration` describes, isolated to `actor`; if the actor has it open
    /// already, returns that handle.
    ///
    /// ```swift
    /// actor ArticleStore {
    ///     var realm: Realm!
    ///     func open(_ configuration: Realm.Configuration) async throws {
    ///         realm = try await Realm(configuration: configuration, actor: self)
    ///     }
    ///     func save(_ article: Article) async throws {
    ///         try await realm.asyncWrite { realm.add(article) }
    ///     }
    /// }
    /// ```
    /// The realm may then be used from code isolated to `actor` (a global actor such as
    /// `MainActor` too); it refreshes itself when any thread or process commits and delivers
    /// its notifications on the actor. The call need not be isolated to `actor`, but a realm
    /// returned elsewhere cannot be used there.
    /// - Throws: As ``init(configuration:queue:)``.
    public init<A: Actor>(configuration: Realm.Configuration = .defaultConfiguration, actor: A) async throws {
        self = try await Realm.openIsolated(configuration, actor: actor).realm as! Self
    }
}

extension Realm {
    /// A realm carried out of the actor it was opened on.
    struct IsolatedRealm: @unchecked Sendable {
        // @unchecked Sendable: the realm is confined to its actor and checks, on every call,
        // that it runs there; carrying it elsewhere cannot make it usable there.
        let realm: Realm
    }

    static func openIsolated(_ configuration: Configuration, actor: isolated any Actor) throws -> IsolatedRealm {
        IsolatedRealm(realm: try cachedHandle(configuration, .actor(ActorReference(actor))))
    }

    /// A handle's place in the cache: its file and where it is confined.
    struct HandleKey: Hashable {
        let path: String
        let context: ObjectIdentifier?
        let thread: UInt
    }

    private static let handleLock = NSLock()
    nonisolated(unsafe) private static var handles: [HandleKey: Unmanaged<Realm>] = [:]
    // nonisolated(unsafe): only read or written while `handleLock` is held.
    //
    // Unretained, not weak: a weak reference would move every retain and release of the realm
    // (one per accessor made) to the runtime's slow path (measured: +5% on a lookup by primary
    // key). It is safe because a handle is only handed back in its own confinement (the key
    // says where), which is also where its last reference goes (a realm is not Sendable), so
    // no lookup runs while its deinit removes it.

    private static func handleKey(_ configuration: Configuration, _ confinement: Confinement) -> HandleKey {
        let path = configuration.resolvedFileURL.resolvingSymlinksInPath().path
        switch confinement {
        case .thread(let thread): return HandleKey(path: path, context: nil, thread: UInt(thread))
        case .queue(let token): return HandleKey(path: path, context: ObjectIdentifier(token), thread: 0)
        case .actor(let reference): return HandleKey(path: path, context: reference.actor.map { ObjectIdentifier($0) }, thread: 1)
        case .lent, .frozen: fatalError("lent and frozen realms are not cached")
        }
    }

    /// The handle of `configuration`'s file open in `confinement`, or a new one, kept (without
    /// keeping it alive) for the next open there. A configuration that differs from the cached handle's in
    /// what it opens (access, sizes, schema version, classes) gets a handle of its own, whose
    /// opening checks it against the file as any other.
    static func cachedHandle(_ configuration: Configuration, _ confinement: Confinement) throws -> Realm {
        try configuration.checkSupported()
        let key = handleKey(configuration, confinement)
        let cached = handleLock.withLock { handles[key]?.takeUnretainedValue() }
        if let cached, cached.configuration.opensLike(configuration), !cached.outlivedItsActor { return cached }
        let realm = try Realm(configuration: configuration, confinement: confinement)
        if cached == nil {
            realm.cacheKey = key
            handleLock.withLock { handles[key] = Unmanaged.passUnretained(realm) }
        }
        return realm
    }

    /// Whether the realm is confined to an actor that is gone (a new actor may have its
    /// identity): such a handle is never handed out again.
    private var outlivedItsActor: Bool {
        if case .actor(let reference) = confinement { return reference.actor == nil }
        return false
    }

    /// Takes a closing handle out of the cache.
    func leaveHandleCache() {
        guard let key = cacheKey else { return }
        Realm.handleLock.withLock {
            if Realm.handles[key]?.toOpaque() == Unmanaged.passUnretained(self).toOpaque() { Realm.handles[key] = nil }
        }
    }
}

extension Realm.Configuration {
    /// Whether a handle opened with this configuration serves `other` as well.
    func opensLike(_ other: Realm.Configuration) -> Bool {
        func types(_ list: [Object.Type]?) -> Set<ObjectIdentifier>? { list.map { Set($0.map(ObjectIdentifier.init)) } }
        return readOnly == other.readOnly && schemaVersion == other.schemaVersion && maximumFileSize == other.maximumFileSize
            && maximumNumberOfReaders == other.maximumNumberOfReaders && types(objectTypes) == types(other.objectTypes)
    }
}
