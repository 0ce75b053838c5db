import LMDBRealmFormat
import LMDBRealmStorage

/// A type of your own that a `@Persisted` property can hold, stored as a type LMDBRealm knows
/// (its ``PersistedType``) and queried as that type:
///
/// ```swift
/// struct Temperature: CustomPersistable {
///     var celsius: Double
///     init(persistedValue: Double) { celsius = persistedValue }
///     var persistableValue: Double { celsius }
/// }
/// final class Reading: Object {
///     @Persisted var temperature: Temperature     // a new object's: Temperature(persistedValue: 0)
/// }
/// readings.where { $0.temperature == Temperature(persistedValue: 21.5) }
/// ```
public protocol CustomPersistable: _PersistableNonOptional, _Indexable, _ConvertedPersistable {
    /// The stored type.
    associatedtype PersistedType: _PersistableNonOptional
    /// The value a stored value reads as.
    init(persistedValue: PersistedType)
    /// The value stored.
    var persistableValue: PersistedType { get }
}

extension CustomPersistable {
    public static var _rlmType: PropertyType { PersistedType._rlmType }
    public static var _rlmOptional: Bool { false }
    /// A new object's value: the one the stored type's default reads as.
    public static var _rlmDefaultValue: Self { Self(persistedValue: PersistedType._rlmDefaultValue) }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Self { Self(persistedValue: PersistedType._rlmDecode(field)) }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try persistableValue._rlmWithBytes(body)
    }
}

/// As ``CustomPersistable``, for a type that some stored values cannot make (`URL` from a
/// `String`): a stored value that does not read as one stops the process with a message
/// naming the type and the value, and a new object's value is made from the stored type's
/// default (which must read as one).
public protocol FailableCustomPersistable: _PersistableNonOptional, _Indexable, _ConvertedPersistable {
    /// The stored type.
    associatedtype PersistedType: _PersistableNonOptional
    /// The value a stored value reads as, or `nil` if it reads as none.
    init?(persistedValue: PersistedType)
    /// The value stored.
    var persistableValue: PersistedType { get }
}

extension FailableCustomPersistable {
    public static var _rlmType: PropertyType { PersistedType._rlmType }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Self {
        guard let value = Self(persistedValue: PersistedType._rlmDefaultValue) else {
            fatalError("\(Self.self) has no value for \(PersistedType.self)'s default: declare the property optional")
        }
        return value
    }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Self {
        let stored = PersistedType._rlmDecode(field)
        guard let value = Self(persistedValue: stored) else {
            // A key path being resolved reads a marker, which need not make a value.
            if ClassInfo.isRecordingOnThisThread { return _rlmDefaultValue }
            fatalError("The stored value \(stored) does not make a \(Self.self)")
        }
        return value
    }
    /// Reads the property. A stored value that makes none of the type stops the process naming
    /// the file, the class, the property and the value; an optional property reads it as `nil`.
    public static func _rlmGet(_ object: Object, column: Int32) -> Self {
        let stored = PersistedType._rlmDecode(object._readField(column))
        if let value = Self(persistedValue: stored) { return value }
        if ClassInfo.isRecordingOnThisThread { return _rlmDefaultValue }
        object._storedValueCannotBeRead(column: column, "the stored value \(stored) does not make a \(Self.self)")
    }
    /// An optional property holds `nil` where the stored value makes none.
    public static func _rlmGetOptional(_ object: Object, column: Int32) -> Self? {
        guard let field = object._readField(column) else { return nil }
        return Self(persistedValue: PersistedType._rlmDecode(field))
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try persistableValue._rlmWithBytes(body)
    }
}

/// A type stored as another (an enum as its raw value, a custom type as its persisted value):
/// reading a key path on a recorder cannot check its value against the stored marker.
public protocol _ConvertedPersistable {}

extension Optional: _ConvertedPersistable where Wrapped: _ConvertedPersistable {}

/// Makes a custom type's value from a value of its stored type, for `Object(value:)` and
/// setting by name (`Club(value: ["url": "https://akc.org"])` makes the `URL`), as RealmSwift
/// does. `type` may be the custom type or an optional of it.
func customPersistableValue(_ value: Any, as type: Any.Type) -> Any? {
    func make<C: CustomPersistable>(_: C.Type) -> Any? { (value as? C.PersistedType).map { C(persistedValue: $0) } }
    func makeFailable<C: FailableCustomPersistable>(_: C.Type) -> Any? { (value as? C.PersistedType).flatMap { C(persistedValue: $0) } }
    let wrapped = (type as? any _OptionalType.Type)?.wrappedType ?? type
    let made: Any?
    if let custom = wrapped as? any CustomPersistable.Type {
        made = make(custom)
    } else if let custom = wrapped as? any FailableCustomPersistable.Type {
        made = makeFailable(custom)
    } else {
        return nil
    }
    guard let made else { return nil }
    return (type as? any _OptionalType.Type)?.wrapping(made) ?? made
}

/// An optional type, seen through its wrapped type.
protocol _OptionalType {
    static var wrappedType: Any.Type { get }
    static func wrapping(_ value: Any) -> Any?
}

extension Optional: _OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
    static func wrapping(_ value: Any) -> Any? { (value as? Wrapped).map { Optional($0) as Any } }
}

/// Why the stored bytes `field` make no value of `type` — an enum's raw value that is no case of
/// it, a failable custom type's stored value that makes none — or `nil` when they make one, or
/// when `type` takes every stored value of its kind. `type` may be an optional; sync checks
/// another node's values with it before applying any (a newer version of the app may know
/// cases this one does not).
func storedValueProblem(_ field: UnsafeRawBufferPointer, as type: Any.Type) -> String? {
    let wrapped = (type as? any _OptionalType.Type)?.wrappedType ?? type
    if let enumeration = wrapped as? any PersistableEnum.Type { return enumeration._rlmProblem(field) }
    if let custom = wrapped as? any FailableCustomPersistable.Type { return custom._rlmProblem(field) }
    return nil
}

/// Whether some stored values of its kind make no value of `type` (see ``storedValueProblem(_:as:)``).
func storedValuesMayMakeNone(of type: Any.Type) -> Bool {
    let wrapped = (type as? any _OptionalType.Type)?.wrappedType ?? type
    return wrapped is any PersistableEnum.Type || wrapped is any FailableCustomPersistable.Type
}

extension PersistableEnum {
    fileprivate static func _rlmProblem(_ field: UnsafeRawBufferPointer) -> String? {
        let raw = RawValue._rlmDecode(field)
        return Self(rawValue: raw) == nil ? "\(String(reflecting: raw)), which is not a case of \(Self.self)" : nil
    }
}

extension FailableCustomPersistable {
    fileprivate static func _rlmProblem(_ field: UnsafeRawBufferPointer) -> String? {
        let stored = PersistedType._rlmDecode(field)
        return Self(persistedValue: stored) == nil ? "\(String(reflecting: stored)), which makes no \(Self.self)" : nil
    }
}
