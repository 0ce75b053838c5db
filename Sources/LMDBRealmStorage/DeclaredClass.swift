package import LMDBRealmFormat

/// What the storage layer knows of a model class declared above it: its schema and the rules
/// its objects' writes follow. The object layer's `ClassInfo` is the one conforming type, and
/// reads its own facts back through ``TableBinding/declared``.
package protocol DeclaredClass: AnyObject, Sendable {
    /// The class's persisted properties, in declared order.
    var schema: ObjectSchema { get }
    /// The link and list properties whose targets are deleted with their owner.
    var cascading: Set<String> { get }
    /// Whether its objects are embedded: each owned by one parent, deleted with it.
    var isEmbedded: Bool { get }
    /// Whether it was described from a file's stored schema (the dynamic API), not compiled.
    var isDynamic: Bool { get }
}
