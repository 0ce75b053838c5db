import Foundation
import LMDBRealm

/// A value as the inspector prints it: JSON's kinds, with object members in property order.
enum JSONValue {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// The value as JSON text (one line).
    var json: String {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the value as JSON's UTF-8 bytes.
    func append(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let v): out.append(contentsOf: (v ? "true" : "false").utf8)
        case .int(let v): out.append(contentsOf: String(v).utf8)
        case .double(let v):
            // JSON has no NaN or infinities: those print as strings ("nan", "inf", "-inf").
            if v.isFinite { out.append(contentsOf: "\(v)".utf8) } else { JSONValue.string(v.isNaN ? "nan" : v < 0 ? "-inf" : "inf").append(to: &out) }
        case .string(let v): JSONValue.appendQuoted(v, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.append(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.appendQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `string` quoted, escaping quotes, backslashes and control characters; a string
    /// with none of those is copied whole.
    private static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            guard bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
                out.append(contentsOf: bytes)
                return
            }
            let hex = Array("0123456789abcdef".utf8)
            for byte in bytes {
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case ..<0x20: out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The value as one cell of a table or CSV row: strings as they are, `null` as nothing,
    /// arrays and objects as JSON.
    var cell: String {
        switch self {
        case .null: ""
        case .string(let v): v
        case .bool, .int, .double, .array, .object: json
        }
    }
}

/// Turns the values the dynamic API reads into ``JSONValue``s: dates in ISO 8601 (UTC, with
/// milliseconds), data in base64, links as the target's primary key (or the target itself,
/// nested, when its class has none, as embedded objects do), lists and sets as arrays, maps
/// as objects.
struct ValueRenderer {
    let realm: Realm
    private var primaryKeys: [String: String?] = [:]
    private let dates = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    init(realm: Realm) {
        self.realm = realm
    }

    /// The persisted properties a dump shows for `schema` (backlinks are computed, not stored).
    static func shownProperties(_ schema: ObjectSchema) -> [Property] {
        schema.properties.filter { $0.type != .linkingObjects }
    }

    /// Every shown property of `object`, in stored order.
    mutating func render(_ object: DynamicObject, _ schema: ObjectSchema) -> JSONValue {
        .object(ValueRenderer.shownProperties(schema).map { ($0.name, render(object[$0.name], $0)) })
    }

    /// One property's value.
    mutating func render(_ value: Any?, _ property: Property) -> JSONValue {
        if property.isMap, let map = value as? [String: Any?] {
            return .object(map.sorted { $0.key < $1.key }.map { ($0.key, element($0.value)) })
        }
        if property.isArray, let items = value as? [Any?] {
            return .array(items.map { element($0) })
        }
        return element(value)
    }

    /// One value of any kind.
    mutating func element(_ value: Any?) -> JSONValue {
        guard let value else { return .null }
        switch value {
        case let v as String: return .string(v)
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(v)
        case let v as any BinaryInteger: return .int(Int(v))
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as Date: return .string(v.formatted(dates))
        case let v as Data: return .string(v.base64EncodedString())
        case let v as UUID: return .string(v.uuidString)
        case let v as ObjectId: return .string(v.stringValue)
        case let v as Decimal128: return .string(v.stringValue)
        case let v as Decimal: return .string("\(v)")
        case let v as AnyRealmValue: return mixed(v)
        case let v as DynamicObject: return link(v)
        default: return .string("\(value)")
        }
    }

    private mutating func mixed(_ value: AnyRealmValue) -> JSONValue {
        switch value {
        case .none: .null
        case .int(let v): .int(v)
        case .bool(let v): .bool(v)
        case .float(let v): .double(Double(v))
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .data(let v): element(v)
        case .date(let v): element(v)
        case .objectId(let v): element(v)
        case .decimal128(let v): element(v)
        case .uuid(let v): element(v)
        case .object(let v): (v as? DynamicObject).map { link($0) } ?? .null
        }
    }

    /// A linked object: its primary key, or the object nested when its class has none.
    private mutating func link(_ object: DynamicObject) -> JSONValue {
        let schema = object.objectSchema
        let key: String?
        if let known = primaryKeys[schema.className] {
            key = known
        } else {
            key = schema.primaryKeyProperty?.name
            primaryKeys[schema.className] = key
        }
        if let key { return element(object[key]) }
        return render(object, realm.schema[schema.className] ?? schema)
    }
}
