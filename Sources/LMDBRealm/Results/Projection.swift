import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// A view of an object with properties of its own choosing: renamed, read through links,
/// mapped over lists. Subclass it and declare each property with ``Projected``.
///
/// ```swift
/// final class ArticleCard: Projection<Article> {
///     @Projected(\Article.headline) var title
///     @Projected(\Article.byline?.name) var author
///     @Projected(\Article.keywords.projectTo.value) var tags: ProjectedCollection<String>
/// }
///
/// let cards = realm.objects(ArticleCard.self)       // live, like Results
/// cards.first?.title
/// try realm.write { cards[0].title = "Corrected" } // writes the article
/// ```
///
/// A projection holds its root object: it reads what the object reads now, and a property
/// projected from a writable key path writes through to the object inside a write.
open class Projection<Root: Object>: CustomStringConvertible {
    /// The object the projection reads.
    public let rootObject: Root

    /// A projection of `object`.
    public required init(projecting object: Root) {
        rootObject = object
    }

    /// The realm of the root object, or `nil` if it is unmanaged.
    public var realm: Realm? { rootObject.realm }
    /// Whether the root object was deleted.
    public var isInvalidated: Bool { rootObject.isInvalidated }
    /// Whether the root object is frozen.
    public var isFrozen: Bool { rootObject.isFrozen }

    /// A projection of the root object frozen at its realm's current version.
    public func freeze() -> Self { Self(projecting: rootObject.freeze()) }
    /// A projection of the live root object, from a frozen projection.
    public func thaw() -> Self? { rootObject.thaw().map { Self(projecting: $0) } }

    public var description: String {
        let lines = Mirror(reflecting: self).children.compactMap { child -> String? in
            guard let label = child.label, label.hasPrefix("_"), let projected = child.value as? any _AnyProjected else { return nil }
            return "\t\(label.dropFirst()) = \(projected.read(from: rootObject))"
        }
        return "\(type(of: self)) {\n" + lines.joined(separator: "\n") + "\n}"
    }
}

extension Projection: ThreadConfined {}

@available(*, unavailable, message: "a projection reads a live object of its realm's thread; freeze it")
extension Projection: Sendable {}

extension Projection: Equatable {
    /// Two projections are equal when they project the same object.
    public static func == (lhs: Projection, rhs: Projection) -> Bool { lhs.rootObject == rhs.rootObject }
}

/// A projection class, as ``Realm/objects(_:)-(P.Type)`` and ``ProjectionResults`` take it.
/// ``Projection`` is the only conforming type.
public protocol _ProjectionType: AnyObject {
    associatedtype Root: Object
    init(projecting object: Root)
    var rootObject: Root { get }
}

extension Projection: _ProjectionType {}

extension _ProjectionType {
    /// Calls `block` when a projected property of the root object changes (or the object is
    /// deleted). The changes name the projection's properties; a property read through a link
    /// or list is reported when the root's link or list property changes.
    /// - Parameter keyPaths: Names of the projection's properties to watch (`nil`: all).
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        let properties = ProjectionProperties.of(self)
        let rootKeyPaths = keyPaths.map { names in names.compactMap { name in properties.first { $0.name == name }?.rootName } }
        let projection = self
        return rootObject.observe(keyPaths: rootKeyPaths) { change in
            switch change {
            case .error(let error): block(.error(error))
            case .deleted: block(.deleted)
            case .change(_, let changes):
                var projected: [PropertyChange] = []
                for property in properties {
                    guard let change = changes.first(where: { $0.name == property.rootName }) else { continue }
                    if let keyPaths, !keyPaths.contains(property.name) { continue }
                    projected.append(
                        property.isDirect
                            ? PropertyChange(name: property.name, oldValue: change.oldValue, newValue: change.newValue)
                            : PropertyChange(name: property.name, oldValue: nil, newValue: nil))
                }
                if !projected.isEmpty { block(.change(projection, projected)) }
            }
        }
    }
}

/// A property of a ``Projection``: what the key path reads from the root object.
///
/// ```swift
/// @Projected(\Article.headline) var title                   // renamed, writable
/// @Projected(\Article.byline?.name) var author              // through a link, read-only
/// @Projected(\Article.keywords.projectTo.value) var tags    // a list mapped
/// ```
@propertyWrapper
public struct Projected<T: Object, Value>: _AnyProjected {
    let keyPath: KeyPath<T, Value>

    /// Projects what `projectedKeyPath` reads from the root object; writable when the key
    /// path is.
    public init(_ projectedKeyPath: KeyPath<T, Value>) {
        keyPath = projectedKeyPath
    }

    @available(*, unavailable, message: "@Projected can only be used on a Projection")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }  // swift-format-ignore
    }

    public static subscript<EnclosingSelf: Projection<T>>(
        _enclosingInstance observed: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Projected<T, Value>>
    ) -> Value {
        get {
            observed.rootObject[keyPath: observed[keyPath: storageKeyPath].keyPath]
        }
        set {
            guard let writable = observed[keyPath: storageKeyPath].keyPath as? ReferenceWritableKeyPath<T, Value> else {
                fatalError("\(EnclosingSelf.self).\(wrappedKeyPath) projects a key path that cannot be written: \(observed[keyPath: storageKeyPath].keyPath)")
            }
            observed.rootObject[keyPath: writable] = newValue
        }
    }

    var anyKeyPath: AnyKeyPath { keyPath }

    func read(from root: Object) -> Any { (root as! T)[keyPath: keyPath] }
}

/// A ``Projected`` property, whatever its types.
protocol _AnyProjected {
    var anyKeyPath: AnyKeyPath { get }
    func read(from root: Object) -> Any
}

/// The projected properties of a projection class: their names and the root property each
/// reads first.
struct ProjectionProperties {
    struct Property {
        let name: String
        let rootName: String?
        /// Whether the key path reads exactly that root property (so its old and new values
        /// are the projected property's).
        let isDirect: Bool
    }

    nonisolated(unsafe) private static var cache: [ObjectIdentifier: [Property]] = [:]
    // nonisolated(unsafe): read and written only while `lock` is held.
    private static let lock = NSLock()

    static func of<P: _ProjectionType>(_ projection: P) -> [Property] {
        let id = ObjectIdentifier(type(of: projection))
        if let known = lock.withLock({ cache[id] }) { return known }
        let info = ClassInfo.of(P.Root.self)
        let properties = Mirror(reflecting: projection).children.compactMap { child -> Property? in
            guard let label = child.label, label.hasPrefix("_"), let projected = child.value as? any _AnyProjected else { return nil }
            let direct = info.propertyName(for: projected.anyKeyPath)
            return Property(name: String(label.dropFirst()), rootName: direct ?? info.firstPropertyName(for: projected.anyKeyPath), isDirect: direct != nil)
        }
        lock.withLock { cache[id] = properties }
        return properties
    }
}

// MARK: - Collections mapped

extension List where Element: Object {
    /// The list's objects mapped through a key path, for a ``Projected`` property:
    /// `@Projected(\Article.keywords.projectTo.value) var tags`.
    public var projectTo: ElementMapper<Element> { ElementMapper(count: { self.count }, element: { self[$0] }) }
}

extension MutableSet where Element: Object {
    /// The set's objects mapped through a key path, for a ``Projected`` property.
    public var projectTo: ElementMapper<Element> { ElementMapper(count: { self.count }, element: { self[$0] }) }
}

/// Maps a collection's objects through a key path: `list.projectTo.name`.
@dynamicMemberLookup
public struct ElementMapper<Element: Object> {
    let count: () -> Int
    let element: (Int) -> Element

    public subscript<V>(dynamicMember member: KeyPath<Element, V>) -> ProjectedCollection<V> {
        let element = element
        return ProjectedCollection(count: count) { element($0)[keyPath: member] }
    }
}

/// The name earlier RealmSwift versions gave ``ProjectedCollection``.
public typealias ProjectedList<Element> = ProjectedCollection<Element>

/// A collection's objects, each read through a key path; live like the collection.
public struct ProjectedCollection<Element>: RandomAccessCollection, CustomStringConvertible {
    let counter: () -> Int
    let read: (Int) -> Element

    init(count: @escaping () -> Int, read: @escaping (Int) -> Element) {
        counter = count
        self.read = read
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { counter() }
    public subscript(position: Int) -> Element { read(position) }

    public var description: String { "ProjectedCollection<\(Element.self)> \(Array(self))" }
}

@available(*, unavailable, message: "a projected collection reads live objects of its realm's thread")
extension ProjectedCollection: Sendable {}

// MARK: - Results of projections

/// Every object of a class, each seen through a projection: as ``Results``, live and
/// observable. ``Realm/objects(_:)-(P.Type)`` returns them.
public struct ProjectionResults<Element: _ProjectionType>: RandomAccessCollection, CustomStringConvertible {
    /// The root objects, in the same order.
    public let rootResults: Results<Element.Root>

    public var startIndex: Int { 0 }
    public var endIndex: Int { rootResults.count }

    /// The projection of the object at `position`.
    public subscript(position: Int) -> Element { Element(projecting: rootResults[position]) }

    /// The realm of the objects.
    public var realm: Realm? { rootResults.realm }
    /// Whether the results are frozen.
    public var isFrozen: Bool { rootResults.isFrozen }

    /// The projections of the root objects for which `isIncluded` holds (a query on the root
    /// class's properties).
    public func `where`(_ isIncluded: (Query<Element.Root>) -> Query<Bool>) -> ProjectionResults {
        ProjectionResults(rootResults: rootResults.where(isIncluded))
    }

    /// The projections of the root objects matching a predicate string on the root class's
    /// properties.
    public func filter(_ predicateFormat: String, _ args: Any...) -> ProjectionResults {
        ProjectionResults(rootResults: rootResults.filter(predicateFormat, argumentArray: args))
    }

    /// The projections sorted by a property of the root class.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> ProjectionResults {
        ProjectionResults(rootResults: rootResults.sorted(byKeyPath: keyPath, ascending: ascending))
    }

    /// The results frozen at the realm's current version.
    public func freeze() -> ProjectionResults { ProjectionResults(rootResults: rootResults.freeze()) }

    /// Calls `block` with `.initial`, then with the positions deleted, inserted and modified at
    /// each change, as ``Results/observe(keyPaths:_:)-(_,_)`` (key paths name root
    /// properties).
    public func observe(
        keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<ProjectionResults>) -> Void
    ) -> NotificationToken {
        rootResults.observe(keyPaths: keyPaths) { change in
            switch change {
            case .initial(let results): block(.initial(ProjectionResults(rootResults: results)))
            case .update(let results, let deletions, let insertions, let modifications):
                block(.update(ProjectionResults(rootResults: results), deletions: deletions, insertions: insertions, modifications: modifications))
            case .error(let error): block(.error(error))
            }
        }
    }

    public var description: String { "ProjectionResults<\(Element.self)> (\(count) objects)" }
}

@available(*, unavailable, message: "projection results are live and belong to their realm's thread; freeze them")
extension ProjectionResults: Sendable {}

extension Realm {
    /// Every object of the projection's root class, each seen through the projection.
    ///
    /// ```swift
    /// let cards = realm.objects(ArticleCard.self)
    /// ```
    public func objects<P: _ProjectionType>(_ type: P.Type) -> ProjectionResults<P> {
        ProjectionResults(rootResults: objects(P.Root.self))
    }
}
