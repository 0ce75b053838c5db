import Foundation
public import LMDBRealmFormat

// MARK: - Persisting

extension ObjectId: _PersistableNonOptional, _PrimaryKey, _Indexable {
    public static var _rlmType: PropertyType { .objectId }
    public static var _rlmOptional: Bool { false }
    /// A new object's value, as in RealmSwift: a generated identifier (an accessor of a stored
    /// object, whose value is read from the file, skips the work).
    public static var _rlmDefaultValue: ObjectId { ColumnCounter.isMakingAccessor ? ObjectId() : generate() }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> ObjectId {
        StoredField.objectId(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: bytes) { try body($0) }
    }
}
