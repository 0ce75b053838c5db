import LMDBRealmFormat
import LMDBRealmStorage

// To-one links: `@Persisted var byline: Author?` stores the target's key in the record, and
// reads it back as the target's live accessor.

extension Object: _PersistableNonOptional {
    public static var _rlmType: PropertyType { .object }
    public static var _rlmOptional: Bool { false }
    /// A to-one link has no default object: it is always optional, as in RealmSwift.
    public static var _rlmDefaultValue: Self {
        fatalError("A to-one link must be optional: declare it as '\(className())?'")
    }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Self {
        fatalError("A to-one link must be optional: declare it as '\(className())?'")
    }
    /// Lends the target's key; an object not added yet is stored as no link (`add` links it
    /// once it is stored).
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard _realm != nil else { return try body(nil) }
        return try _key.withBytes { try body($0) }
    }
    public static func _rlmGetOptional(_ object: Object, column: Int32) -> Self? {
        object._readLink(column, to: self).map { $0 as! Self }
    }
    public static func _rlmSetOptional(_ object: Object, column: Int32, _ value: Object?) {
        object._writeLink(column, value)
    }
}

/// What a to-one link property holds: an optional model object.
protocol LinkValue {
    /// The class the link points to.
    static var targetType: Object.Type { get }
}

extension Optional: LinkValue where Wrapped: Object {
    static var targetType: Object.Type { Wrapped.self }
}
