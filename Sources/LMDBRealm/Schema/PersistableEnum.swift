import LMDBRealmFormat
import LMDBRealmStorage

/// An enum a `@Persisted` property can hold, stored as its raw value (a `String` or an integer):
///
/// ```swift
/// enum Status: String, PersistableEnum {
///     case draft, published
/// }
/// final class Post: Object {
///     @Persisted var status: Status             // a new post's status is the first case
///     @Persisted var previous: Status?
/// }
/// posts.where { $0.status == .published }
/// posts.filter("status == %@", Status.published)   // or the raw value, "published"
/// ```
///
/// A stored raw value that names no case (the enum lost a case the file still holds) stops the
/// process with a message naming the file, the class, the property and the value; an optional
/// property reads it as `nil`. A synced node refuses another node's change set that holds such
/// a value, applying nothing of it (see the Sync article).
public protocol PersistableEnum: _PersistableNonOptional, _Indexable, _ConvertedPersistable, RawRepresentable, CaseIterable
where RawValue: _PersistableNonOptional {}

extension PersistableEnum {
    public static var _rlmType: PropertyType { RawValue._rlmType }
    public static var _rlmOptional: Bool { false }
    /// A new object's value: the first case, as in RealmSwift.
    public static var _rlmDefaultValue: Self {
        guard let first = allCases.first else { fatalError("\(Self.self) has no case to be a property's default") }
        return first
    }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Self {
        let raw = RawValue._rlmDecode(field)
        guard let value = Self(rawValue: raw) else {
            // A key path being resolved reads a marker, which is no case.
            if ClassInfo.isRecordingOnThisThread { return _rlmDefaultValue }
            fatalError("The stored value \(raw) is not a case of \(Self.self)")
        }
        return value
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try rawValue._rlmWithBytes(body)
    }
    /// Reads the property. A stored raw value that is no case (a newer version of the app
    /// wrote it, or a sync node running one) stops the process naming the file, the class, the
    /// property and the value; an optional property reads it as `nil`.
    public static func _rlmGet(_ object: Object, column: Int32) -> Self {
        let raw = RawValue._rlmDecode(object._readField(column))
        if let value = Self(rawValue: raw) { return value }
        if ClassInfo.isRecordingOnThisThread { return _rlmDefaultValue }
        object._storedValueCannotBeRead(column: column, "the stored value \(raw) is not a case of \(Self.self)")
    }
    /// An optional property holds `nil` where the stored raw value is no case.
    public static func _rlmGetOptional(_ object: Object, column: Int32) -> Self? {
        guard let field = object._readField(column) else { return nil }
        return Self(rawValue: RawValue._rlmDecode(field))
    }
}
