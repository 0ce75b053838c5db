import Foundation

/// A stored field as a Swift value of its property's kind, for change notifications.
func decodeValue(_ field: UnsafeRawBufferPointer, type: PropertyType) -> any Sendable {
    switch type {
    case .int: Int(Int64._rlmDecode(field))
    case .string: String._rlmDecode(field)
    case .uuid: UUID._rlmDecode(field)
    case .objectId: ObjectId._rlmDecode(field)
    case .bool: Bool._rlmDecode(field)
    case .double: Double._rlmDecode(field)
    case .float: Float._rlmDecode(field)
    case .date: Date._rlmDecode(field)
    case .decimal: Decimal._rlmDecode(field)
    case .data: Data._rlmDecode(field)
    // A link: the target's key, which tells one target from another.
    case .object, .linkingObjects: Data(field)
    // A mixed value as the value it holds (a link as the target's key).
    case .mixed: MixedField.split(field).map { decodeValue($0.payload, type: $0.type == .object ? .data : $0.type) } ?? Data(field)
    }
}

/// A stored field as people read it in an error message: strings quoted, data by its size,
/// `nil` for null.
func describe(_ field: UnsafeRawBufferPointer?, type: PropertyType) -> String {
    guard let field else { return "nil" }
    switch decodeValue(field, type: type) {
    case let string as String: return "'\(string)'"
    case let data as Data: return "<\(data.count) bytes>"
    case let uuid as UUID: return uuid.uuidString
    case let id as ObjectId: return id.stringValue
    case let value: return String(describing: value)
    }
}
