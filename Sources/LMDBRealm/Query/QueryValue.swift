import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// A constant in a query: what a property is compared with.
enum QueryValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case uuid(UUID)
    case objectId(ObjectId)
    /// A decimal, exactly as given (compared by its order key, over any range).
    case decimal(ExactDecimal)

    /// The value of a persistable Swift value.
    init<V: _Persistable>(_ value: V) {
        self = value._rlmWithBytes { bytes in
            guard let bytes else { return .null }
            return QueryValue(field: bytes, type: V._rlmType)
        }
    }

    /// The value of a record field of kind `type`.
    init(field: UnsafeRawBufferPointer, type: PropertyType) {
        switch type {
        case .bool: self = .bool(Bool._rlmDecode(field))
        case .int: self = .int(Int64._rlmDecode(field))
        case .float: self = .double(Double(Float._rlmDecode(field)))
        case .double: self = .double(Double._rlmDecode(field))
        case .string: self = .string(String._rlmDecode(field))
        case .data: self = .data(Data._rlmDecode(field))
        case .date: self = .date(Date._rlmDecode(field))
        case .uuid: self = .uuid(UUID._rlmDecode(field))
        case .objectId: self = .objectId(ObjectId._rlmDecode(field))
        case .decimal: self = .decimal(ExactDecimal(text: String(decoding: field, as: UTF8.self)) ?? ExactDecimal(Decimal128.nan))
        // A link as the target's key.
        case .object, .linkingObjects: self = .data(Data(field))
        case .mixed:
            guard let (kind, payload) = MixedField.split(field) else {
                self = .data(Data(field))
                return
            }
            self = kind == .object ? .data(Data(MixedField.link(payload)?.key ?? payload)) : QueryValue(field: payload, type: kind)
        }
    }

    /// The value of an argument or literal of unknown type, as the string parser sees it;
    /// `nil` for a value of another type (an `Array`, a `Dictionary`, an unsigned integer
    /// beyond `Int64.max`, …).
    init?(any value: Any?) {
        switch value {
        case nil: self = .null
        case let v as Bool: self = .bool(v)
        case let v as Int: self = .int(Int64(v))
        case let v as Int8: self = .int(Int64(v))
        case let v as Int16: self = .int(Int64(v))
        case let v as Int32: self = .int(Int64(v))
        case let v as Int64: self = .int(v)
        case let v as UInt8: self = .int(Int64(v))
        case let v as UInt16: self = .int(Int64(v))
        case let v as UInt32: self = .int(Int64(v))
        case let v as UInt:
            guard let exact = Int64(exactly: v) else { return nil }
            self = .int(exact)
        case let v as UInt64:
            guard let exact = Int64(exactly: v) else { return nil }
            self = .int(exact)
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as Data: self = .data(v)
        case let v as Date: self = .date(v)
        case let v as UUID: self = .uuid(v)
        case let v as ObjectId: self = .objectId(v)
        case let v as AnyRealmValue: self = QueryValue(v)
        case let v as Decimal: self = .decimal(ExactDecimal(v))
        case let v as Decimal128: self = .decimal(ExactDecimal(v))
        case let v as Object:
            // A link's value: the object's key. Only a stored object has one.
            guard v.realm != nil else { return nil }
            self = .data(v._key.withBytes { Data($0) })
        case let v as NSNull:
            _ = v
            self = .null
        case let v as any PersistableEnum:
            // An enum as its stored raw value.
            self.init(any: v.rawValue as Any)
        case let v as any CustomPersistable:
            self.init(any: v.persistableValue as Any)
        case let v as any FailableCustomPersistable:
            self.init(any: v.persistableValue as Any)
        default:
            // Optionals wrapped in Any.
            let mirror = Mirror(reflecting: value!)
            if mirror.displayStyle == .optional {
                if let child = mirror.children.first { self.init(any: child.value) } else { self = .null }
            } else {
                return nil
            }
        }
    }

    /// The property kind this value is of; `nil` for a null.
    var propertyType: PropertyType? {
        switch self {
        case .null: nil
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .string: .string
        case .data: .data
        case .date: .date
        case .uuid: .uuid
        case .objectId: .objectId
        case .decimal: .decimal
        }
    }

    /// The value's kind as a word for messages.
    var typeName: String { propertyType?.swiftName ?? "nil" }

    var description: String {
        switch self {
        case .null: "nil"
        case .bool(let v): String(v)
        case .int(let v): String(v)
        case .double(let v): String(v)
        case .string(let v): "'\(v)'"
        case .data(let v): "<\(v.count) bytes>"
        case .date(let v): String(describing: v)
        case .uuid(let v): v.uuidString
        case .objectId(let v): v.stringValue
        case .decimal(let v): v.description
        }
    }

    /// Whether a property of kind `type` can be compared with this value.
    func isComparable(with type: PropertyType) -> Bool {
        switch (self, type) {
        case (.null, _), (_, .mixed): true
        case (.bool, .bool): true
        case (.int, .int), (.int, .double), (.int, .float), (.int, .decimal): true
        case (.double, .int), (.double, .double), (.double, .float), (.double, .decimal): true
        case (.decimal, .int), (.decimal, .double), (.decimal, .float), (.decimal, .decimal): true
        case (.string, .string): true
        case (.data, .data): true
        case (.data, .object): true  // an object's key (see init(any:))
        case (.date, .date): true
        case (.double, .date), (.int, .date): true  // seconds since the reference date
        case (.uuid, .uuid): true
        case (.objectId, .objectId): true
        case (.string, .objectId), (.string, .uuid): true  // parsed from their text
        default: false
        }
    }
}

/// The Swift name of a property kind, for messages.
extension PropertyType {
    var swiftName: String {
        switch self {
        case .bool: "Bool"
        case .int: "Int"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .data: "Data"
        case .date: "Date"
        case .uuid: "UUID"
        case .objectId: "ObjectId"
        case .decimal: "Decimal"
        case .object: "Object"
        case .mixed: "AnyRealmValue"
        case .linkingObjects: "LinkingObjects"
        }
    }
}
