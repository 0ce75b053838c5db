import Foundation
public import LMDBRealmFormat

// MARK: - Persisting

/// Stored in a decimal column as its text, which `Decimal` reads too.
extension Decimal128: _PersistableNonOptional {
    public static var _rlmType: PropertyType { .decimal }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Decimal128 { Decimal128() }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Decimal128 {
        StoredField.decimal128(field)
    }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try stringValue._rlmWithBytes(body)
    }
}

extension Decimal128: _QueryComparable, _Indexable {}

extension Decimal128 {
    /// `value` as a `Decimal128` for a property or element of type `type` (`Decimal128` or
    /// `Decimal128?`), as RealmSwift converts the values of `Object(value:)`: a string that
    /// parses, an integer, a `Double`, a `Float` or a `Decimal`. `nil` for anything else.
    static func converting(_ value: Any, to type: Any.Type) -> Decimal128? {
        guard type == Decimal128.self || type == Decimal128?.self, !(value is Decimal128) else { return nil }
        switch value {
        case let v as String: return parse(v)
        case let v as any BinaryInteger: return Decimal128(v)
        case let v as Double: return Decimal128(v)
        case let v as Float: return Decimal128(Double(v))
        case let v as Decimal: return Decimal128(v)
        default: return nil
        }
    }
}

extension Decimal128: _QueryNumeric {}
extension Decimal128: _ListAddable {
    public var _doubleValue: Double { doubleValue }
}
