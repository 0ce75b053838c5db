import LMDBRealmFormat
import LMDBRealmStorage

/// An object owned by exactly one parent: stored with it, deleted with it, never on its own.
///
/// ```swift
/// final class Multimedia: EmbeddedObject {
///     @Persisted var url: String
///     @Persisted var width: Int
/// }
/// final class Article: Object {
///     @Persisted(primaryKey: true) var id: String
///     @Persisted var lead: Multimedia?               // to-one embedded
///     @Persisted var multimedia: List<Multimedia>    // a list of embedded objects
/// }
/// ```
///
/// An embedded object has no primary key and is not queried on its own (`realm.objects` of an
/// embedded class stops the process); queries reach it through its parent
/// (`"ANY multimedia.width > 600"`). Deleting the parent deletes it; replacing it (assigning
/// another object to the link, or removing it from the list) deletes the old one. It cannot be
/// added by itself, nor shared: assigning an embedded object that already has a parent stops the
/// process, as in RealmSwift.
open class EmbeddedObject: Object {}

/// What deleting an object does to the objects a link or list of objects points to.
public enum DeleteRule: Sendable, Hashable {
    /// The linked objects stay (Realm's rule).
    case nullify
    /// The linked objects are deleted too, recursively, unless another object still links to
    /// them.
    case cascade
}

extension Persisted {
    /// A to-one link with a delete rule: `@Persisted(deleteRule: .cascade) var draft: Note?`.
    @inlinable
    public init<Target: Object>(deleteRule: DeleteRule) where Value == Target? {
        self.init(value: nil, options: deleteRule == .cascade ? Self.cascadeOption : 0)
    }

    /// A list of objects with a delete rule: `@Persisted(deleteRule: .cascade) var notes: List<Note>`.
    @inlinable
    public init<Target: Object>(deleteRule: DeleteRule) where Value == List<Target> {
        self.init(value: List(), options: deleteRule == .cascade ? Self.cascadeOption : 0)
    }

    /// A set of objects with a delete rule: `@Persisted(deleteRule: .cascade) var tags: MutableSet<Tag>`.
    @inlinable
    public init<Target: Object>(deleteRule: DeleteRule) where Value == MutableSet<Target> {
        self.init(value: MutableSet(), options: deleteRule == .cascade ? Self.cascadeOption : 0)
    }

    /// A map of objects with a delete rule: `@Persisted(deleteRule: .cascade) var pets: Map<String, Pet?>`.
    @inlinable
    public init<Target: Object>(deleteRule: DeleteRule) where Value == Map<String, Target?> {
        self.init(value: Map(), options: deleteRule == .cascade ? Self.cascadeOption : 0)
    }

    @usableFromInline static var cascadeOption: UInt8 { 4 }
}
