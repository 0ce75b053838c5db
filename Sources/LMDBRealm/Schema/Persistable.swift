public import Foundation
public import LMDBRealmFormat

/// A type that a `@Persisted` property can hold.
///
/// The conforming types are the property kinds of ``PropertyType`` and their optionals; the
/// protocol is public only so that `Persisted` can name it. Do not conform your own types.
public protocol _Persistable: SendableMetatype {
    /// The stored kind.
    static var _rlmType: PropertyType { get }
    /// Whether `nil` is a value of this type.
    static var _rlmOptional: Bool { get }
    /// The value a property holds before anything is assigned.
    static var _rlmDefaultValue: Self { get }
    /// Reads a value from a record field; `nil` is a stored null. The bytes have already been
    /// checked against `_rlmType`'s fixed size.
    static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Self
    /// Lends the value's record bytes to `body`; `nil` for a null.
    func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R
    /// Reads the value of declared column `column` of a managed `object`.
    static func _rlmGet(_ object: Object, column: Int32) -> Self
    /// Writes `value` into declared column `column` of a managed `object`.
    static func _rlmSet(_ object: Object, column: Int32, _ value: Self)
}

extension _Persistable {
    // Inlined into each model's accessors: a property read is one field decode, as before
    // links existed.
    @inlinable @inline(__always)
    public static func _rlmGet(_ object: Object, column: Int32) -> Self {
        _rlmDecode(object._readField(column))
    }
    @inlinable @inline(__always)
    public static func _rlmSet(_ object: Object, column: Int32, _ value: Self) {
        object._writeField(column, value)
    }
}

/// A non-optional persistable type; `Optional` of one is persistable too.
public protocol _PersistableNonOptional: _Persistable {
    /// Reads the optional value of declared column `column` of a managed `object`.
    static func _rlmGetOptional(_ object: Object, column: Int32) -> Self?
    /// Writes the optional `value` into declared column `column` of a managed `object`.
    static func _rlmSetOptional(_ object: Object, column: Int32, _ value: Self?)
}

extension _PersistableNonOptional {
    @inlinable @inline(__always)
    public static func _rlmGetOptional(_ object: Object, column: Int32) -> Self? {
        guard let field = object._readField(column) else { return nil }
        return _rlmDecode(field)
    }
    @inlinable @inline(__always)
    public static func _rlmSetOptional(_ object: Object, column: Int32, _ value: Self?) {
        object._writeField(column, value)
    }
}

/// A type that can be a primary key: `String`, `Int`, `Int64` (and the other integer widths),
/// `UUID`, `ObjectId`, and their optionals.
public protocol _PrimaryKey: _Persistable {}

/// A type that can have a secondary index.
public protocol _Indexable: _Persistable {}

// MARK: - Fixed-size scalars


/// Integers of every width are stored as 8 little-endian bytes, as `Int64`.
public protocol _PersistableInteger: _PersistableNonOptional, _PrimaryKey, _Indexable, FixedWidthInteger {}

extension _PersistableInteger {
    public static var _rlmType: PropertyType { .int }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Self { 0 }
    @inlinable
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Self {
        Self(truncatingIfNeeded: StoredField.int(field))
    }
}

// Each type states its own `_rlmWithBytes`, so the witness is specialised for it (the shared
// extension method stays generic when called through the protocol: measured 4% of an insert).
extension Int: _PersistableInteger {
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: Int64(self).littleEndian) { try body($0) }
    }
}
extension Int8: _PersistableInteger {
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: Int64(self).littleEndian) { try body($0) }
    }
}
extension Int16: _PersistableInteger {
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: Int64(self).littleEndian) { try body($0) }
    }
}
extension Int32: _PersistableInteger {
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: Int64(self).littleEndian) { try body($0) }
    }
}
extension Int64: _PersistableInteger {
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: self.littleEndian) { try body($0) }
    }
}

extension Bool: _PersistableNonOptional, _Indexable {
    public static var _rlmType: PropertyType { .bool }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Bool { false }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Bool {
        StoredField.bool(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: UInt8(self ? 1 : 0)) { try body($0) }
    }
}

extension Float: _PersistableNonOptional {
    public static var _rlmType: PropertyType { .float }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Float { 0 }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Float {
        StoredField.float(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: bitPattern.littleEndian) { try body($0) }
    }
}

extension Double: _PersistableNonOptional {
    public static var _rlmType: PropertyType { .double }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Double { 0 }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Double {
        StoredField.double(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: bitPattern.littleEndian) { try body($0) }
    }
}

/// Dates are stored as the `Double` of `timeIntervalSinceReferenceDate`, so every bit of
/// sub-second precision survives.
extension Date: _PersistableNonOptional, _Indexable {
    public static var _rlmType: PropertyType { .date }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Date { Date(timeIntervalSince1970: 0) }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Date {
        StoredField.date(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try timeIntervalSinceReferenceDate._rlmWithBytes(body)
    }
}

extension UUID: _PersistableNonOptional, _PrimaryKey, _Indexable {
    public static var _rlmType: PropertyType { .uuid }
    public static var _rlmOptional: Bool { false }
    /// The all-zero UUID: creating an accessor must not draw random numbers.
    /// A new object's value, as in RealmSwift: a random UUID (an accessor of a stored object,
    /// whose value is read from the file, skips the work).
    public static var _rlmDefaultValue: UUID {
        ColumnCounter.isMakingAccessor ? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) : UUID()
    }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> UUID {
        StoredField.uuid(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: uuid) { try body($0) }
    }
}

// MARK: - Variable-size values

extension String: _PersistableNonOptional, _PrimaryKey, _Indexable {
    public static var _rlmType: PropertyType { .string }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: String { "" }
    @inlinable
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> String {
        StoredField.string(field)
    }
    @inlinable
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}

extension Data: _PersistableNonOptional {
    public static var _rlmType: PropertyType { .data }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Data { Data() }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Data {
        StoredField.data(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try withUnsafeBytes { try body($0) }
    }
}

/// Decimals are stored as their exact decimal text (`Decimal.description` round-trips).
extension Decimal: _PersistableNonOptional {
    public static var _rlmType: PropertyType { .decimal }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Decimal { 0 }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Decimal {
        StoredField.decimal(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try (isNaN ? "NaN" : description)._rlmWithBytes(body)
    }
}

// MARK: - Optionals

extension Optional: _Persistable where Wrapped: _PersistableNonOptional {
    public static var _rlmType: PropertyType { Wrapped._rlmType }
    public static var _rlmOptional: Bool { true }
    public static var _rlmDefaultValue: Wrapped? { nil }
    @inlinable @inline(__always)
    public static func _rlmGet(_ object: Object, column: Int32) -> Wrapped? {
        Wrapped._rlmGetOptional(object, column: column)
    }
    @inlinable @inline(__always)
    public static func _rlmSet(_ object: Object, column: Int32, _ value: Wrapped?) {
        Wrapped._rlmSetOptional(object, column: column, value)
    }
    @inlinable
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Wrapped? {
        guard let field else { return nil }
        return Wrapped._rlmDecode(field)
    }
    @inlinable
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        switch self {
        case .none: try body(nil)
        case .some(let value): try value._rlmWithBytes(body)
        }
    }
}

extension Optional: _PrimaryKey where Wrapped: _PrimaryKey & _PersistableNonOptional {}
extension Optional: _Indexable where Wrapped: _Indexable & _PersistableNonOptional {}
