public import Foundation

/// The stored form of each scalar kind, read back: the one decoder of each, which the
/// persistable types' `_rlmDecode`, the change notifications' values and the key encoding share.
///
/// A field's size has been checked against its kind's fixed size when its record was read; a
/// field of another size (or a null, `nil`) reads as the kind's zero value. Inlinable: these are
/// the property reads' decoders.
@usableFromInline
package enum StoredField {
    @inlinable @inline(__always)
    package static func int(_ field: UnsafeRawBufferPointer?) -> Int64 {
        guard let field, field.count == 8 else { return 0 }
        return Int64(littleEndian: field.loadUnaligned(as: Int64.self))
    }

    @inlinable @inline(__always)
    package static func bool(_ field: UnsafeRawBufferPointer?) -> Bool {
        guard let field, field.count == 1 else { return false }
        return field[0] != 0
    }

    @inlinable @inline(__always)
    package static func float(_ field: UnsafeRawBufferPointer?) -> Float {
        guard let field, field.count == 4 else { return 0 }
        return Float(bitPattern: UInt32(littleEndian: field.loadUnaligned(as: UInt32.self)))
    }

    @inlinable @inline(__always)
    package static func double(_ field: UnsafeRawBufferPointer?) -> Double {
        guard let field, field.count == 8 else { return 0 }
        return Double(bitPattern: UInt64(littleEndian: field.loadUnaligned(as: UInt64.self)))
    }

    /// Dates are stored as the `Double` of `timeIntervalSinceReferenceDate`.
    @inlinable @inline(__always)
    package static func date(_ field: UnsafeRawBufferPointer?) -> Date {
        Date(timeIntervalSinceReferenceDate: double(field))
    }

    @inlinable @inline(__always)
    package static func uuid(_ field: UnsafeRawBufferPointer?) -> UUID {
        guard let field, field.count == 16 else { return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
        return UUID(uuid: field.loadUnaligned(as: uuid_t.self))
    }

    @inlinable @inline(__always)
    package static func string(_ field: UnsafeRawBufferPointer?) -> String {
        guard let field, !field.isEmpty else { return "" }
        // Validates UTF-8: bad bytes become U+FFFD, never undefined behaviour.
        return String(decoding: field, as: UTF8.self)
    }

    @inlinable @inline(__always)
    package static func data(_ field: UnsafeRawBufferPointer?) -> Data {
        guard let field, !field.isEmpty else { return Data() }
        return Data(field)
    }

    /// Decimals are stored as their exact decimal text (`Decimal.description` round-trips).
    @inlinable
    package static func decimal(_ field: UnsafeRawBufferPointer?) -> Decimal {
        guard let field, !field.isEmpty else { return 0 }
        let text = String(decoding: field, as: UTF8.self)
        if text == "NaN" { return .nan }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) ?? .nan
    }

    @inlinable
    package static func objectId(_ field: UnsafeRawBufferPointer?) -> ObjectId {
        guard let field, field.count == 12 else { return ObjectId() }
        return ObjectId(bytes: field)!
    }

    /// A `Decimal128` is stored as its text, which `Decimal` reads too.
    package static func decimal128(_ field: UnsafeRawBufferPointer?) -> Decimal128 {
        guard let field, !field.isEmpty else { return Decimal128() }
        return Decimal128.parse(bytes: field) ?? Decimal128.parseRounding(String(decoding: field, as: UTF8.self))
    }
}

/// A numeric field as a Double.
@inlinable @inline(__always)
package func decodeDouble(_ field: UnsafeRawBufferPointer, _ type: PropertyType) -> Double {
    switch type {
    case .int: Double(StoredField.int(field))
    case .float: Double(StoredField.float(field))
    default: StoredField.double(field)  // double, date
    }
}

/// A numeric field as a Decimal.
package func decodeDecimal(_ field: UnsafeRawBufferPointer, _ type: PropertyType) -> Decimal {
    switch type {
    case .int:
        return Decimal(StoredField.int(field))
    case .decimal:
        return StoredField.decimal(field)
    default:
        let d = decodeDouble(field, type)
        return d.isNaN ? .nan : Decimal(d)
    }
}

/// A stored field as a Swift value of its property's kind, for change notifications.
package func decodeValue(_ field: UnsafeRawBufferPointer, type: PropertyType) -> any Sendable {
    switch type {
    case .int: Int(StoredField.int(field))
    case .string: StoredField.string(field)
    case .uuid: StoredField.uuid(field)
    case .objectId: StoredField.objectId(field)
    case .bool: StoredField.bool(field)
    case .double: StoredField.double(field)
    case .float: StoredField.float(field)
    case .date: StoredField.date(field)
    case .decimal: StoredField.decimal(field)
    case .data: StoredField.data(field)
    // A link: the target's key, which tells one target from another.
    case .object, .linkingObjects: Data(field)
    // A mixed value as the value it holds (a link as the target's key).
    case .mixed: MixedField.split(field).map { decodeValue($0.payload, type: $0.type == .object ? .data : $0.type) } ?? Data(field)
    }
}

/// A stored field as people read it in an error message: strings quoted, data by its size,
/// `nil` for null.
package func describe(_ field: UnsafeRawBufferPointer?, type: PropertyType) -> String {
    guard let field else { return "nil" }
    switch decodeValue(field, type: type) {
    case let string as String: return "'\(string)'"
    case let data as Data: return "<\(data.count) bytes>"
    case let uuid as UUID: return uuid.uuidString
    case let id as ObjectId: return id.stringValue
    case let value: return String(describing: value)
    }
}
