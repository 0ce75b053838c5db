public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// A value of any kind a property can hold, told apart per value, as RealmSwift's
/// `AnyRealmValue`: a property, list element or map value that may be a number one time and a
/// string or an object the next.
///
/// ```swift
/// final class Setting: Object {
///     @Persisted(primaryKey: true) var key = ""
///     @Persisted var value: AnyRealmValue            // .none until set
///     @Persisted var history: List<AnyRealmValue>
/// }
/// setting.value = .int(3)
/// setting.value = .string("dark")
/// setting.value = .object(profile)                    // a link; an unmanaged object is added
/// settings.where { $0.value == .int(3) }
/// settings.filter("value > 2")                      // numbers compare by value across kinds
/// ```
///
/// A value of another kind than a query's compares unequal (and neither less nor greater);
/// sorting puts booleans first, then numbers by value, strings, data, dates, object
/// identifiers, UUIDs and links. A linked object that is deleted reads as `.none`.
public enum AnyRealmValue: Hashable {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case object(Object)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case uuid(UUID)

    /// The integer held, if this is `.int`.
    public var intValue: Int? { if case .int(let v) = self { v } else { nil } }
    /// The boolean held, if this is `.bool`.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The float held, if this is `.float`.
    public var floatValue: Float? { if case .float(let v) = self { v } else { nil } }
    /// The double held, if this is `.double`.
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    /// The string held, if this is `.string`.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The data held, if this is `.data`.
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    /// The date held, if this is `.date`.
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    /// The object identifier held, if this is `.objectId`.
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { v } else { nil } }
    /// The decimal held, if this is `.decimal128`.
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { v } else { nil } }
    /// The UUID held, if this is `.uuid`.
    public var uuidValue: UUID? { if case .uuid(let v) = self { v } else { nil } }

    /// The object held, if this is `.object` and it is a `T`.
    public func object<T: Object>(_ objectType: T.Type) -> T? {
        if case .object(let v) = self { v as? T } else { nil }
    }

    /// The object held, as a ``DynamicObject`` if it is one.
    public var dynamicObject: DynamicObject? {
        if case .object(let v) = self { v as? DynamicObject } else { nil }
    }

    /// A Swift value as the kind it is (`nil` and `NSNull` as `.none`); `nil` for a value no
    /// case holds.
    init?(anyValue value: Any?) {
        switch value {
        case nil, is NSNull: self = .none
        case let v as AnyRealmValue: self = v
        case let v as Bool: self = .bool(v)
        case let v as any BinaryInteger:
            guard let i = Int(exactly: v) else { return nil }
            self = .int(i)
        case let v as Float: self = .float(v)
        case let v as Double: self = .double(v)
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as Data: self = .data(v)
        case let v as Date: self = .date(v)
        case let v as Object: self = .object(v)
        case let v as ObjectId: self = .objectId(v)
        case let v as Decimal128: self = .decimal128(v)
        case let v as Decimal: self = .decimal128(Decimal128(v))
        case let v as UUID: self = .uuid(v)
        default: return nil
        }
    }

    /// The stored bytes of the value held; `nil` for `.none`.
    /// - Precondition: An object held is managed (``Object/realm`` is set).
    var mixedBytes: [UInt8]? {
        func tagged(_ v: some _PersistableNonOptional) -> [UInt8] {
            v._rlmWithBytes { MixedField.encode(type(of: v)._rlmType, $0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
        }
        switch self {
        case .none: return nil
        case .int(let v): return tagged(Int64(v))
        case .bool(let v): return tagged(v)
        case .float(let v): return tagged(v)
        case .double(let v): return tagged(v)
        case .string(let v): return tagged(v)
        case .data(let v): return tagged(v)
        case .date(let v): return tagged(v)
        case .objectId(let v): return tagged(v)
        case .decimal128(let v): return tagged(v)
        case .uuid(let v): return tagged(v)
        case .object(let v):
            require(v._isManaged && v._binding != nil, "An AnyRealmValue can only hold an object that is added to a realm (add it first)")
            return v._key.withBytes { MixedField.encodeLink(className: v._binding.unsafelyUnwrapped.table.className, key: $0) }
        }
    }

    /// The value stored as `field`, for a kind other than a link (which needs its realm: see
    /// ``Object/_readMixed(_:)``).
    static func decodeValue(_ field: UnsafeRawBufferPointer?) -> AnyRealmValue {
        guard let field, let (kind, payload) = MixedField.split(field) else { return .none }
        switch kind {
        case .bool: return .bool(Bool._rlmDecode(payload))
        case .int: return .int(Int(Int64._rlmDecode(payload)))
        case .float: return .float(Float._rlmDecode(payload))
        case .double: return .double(Double._rlmDecode(payload))
        case .decimal: return .decimal128(Decimal128._rlmDecode(payload))
        case .string: return .string(String._rlmDecode(payload))
        case .data: return .data(Data._rlmDecode(payload))
        case .date: return .date(Date._rlmDecode(payload))
        case .objectId: return .objectId(ObjectId._rlmDecode(payload))
        case .uuid: return .uuid(UUID._rlmDecode(payload))
        default: return .none
        }
    }
}

extension AnyRealmValue: _Persistable {
    public static var _rlmType: PropertyType { .mixed }
    public static var _rlmOptional: Bool { true }
    public static var _rlmDefaultValue: AnyRealmValue { .none }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> AnyRealmValue { decodeValue(field) }
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard let bytes = mixedBytes else { return try body(nil) }
        return try bytes.withUnsafeBytes { try body($0) }
    }
    public static func _rlmGet(_ object: Object, column: Int32) -> AnyRealmValue {
        object._readMixed(column)
    }
    public static func _rlmSet(_ object: Object, column: Int32, _ value: AnyRealmValue) {
        object._writeMixed(column, value)
    }
}

extension AnyRealmValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .none: "none"
        case .int(let v): "int(\(v))"
        case .bool(let v): "bool(\(v))"
        case .float(let v): "float(\(v))"
        case .double(let v): "double(\(v))"
        case .string(let v): "string(\(v))"
        case .data(let v): "data(\(v.count) bytes)"
        case .date(let v): "date(\(v))"
        case .object(let v): "object(\(type(of: v)))"
        case .objectId(let v): "objectId(\(v))"
        case .decimal128(let v): "decimal128(\(v))"
        case .uuid(let v): "uuid(\(v))"
        }
    }
}

@available(*, unavailable, message: "an AnyRealmValue may hold a managed object, which belongs to its realm's thread")
extension AnyRealmValue: Sendable {}
