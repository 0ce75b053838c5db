import Foundation

/// How a value of any kind (``PropertyType/mixed``, Swift's `AnyRealmValue`) is stored: one tag
/// byte naming its kind, then the kind's own field bytes. A link stores the target's class
/// name (its length in one byte, then its UTF-8) before the target's key. A null is a null
/// field, as for any optional.
package enum MixedField {
    /// The tag of each kind a mixed value can hold.
    package static func tag(_ type: PropertyType) -> UInt8 {
        switch type {
        case .bool: 1
        case .int: 2
        case .float: 3
        case .double: 4
        case .decimal: 5
        case .string: 6
        case .data: 7
        case .date: 8
        case .objectId: 9
        case .uuid: 10
        case .object: 11
        case .mixed, .linkingObjects: fatalError("a mixed value cannot hold a \(type.rawValue)")
        }
    }

    private static let kinds: [PropertyType?] = [nil, .bool, .int, .float, .double, .decimal, .string, .data, .date, .objectId, .uuid, .object]

    /// The stored bytes of a value of kind `type` whose own field bytes are `payload`.
    package static func encode(_ type: PropertyType, _ payload: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = [tag(type)]
        out.append(contentsOf: payload)
        return out
    }

    /// The stored bytes of a link to the object of `className` stored under `key`.
    package static func encodeLink(className: String, key: UnsafeRawBufferPointer) -> [UInt8] {
        let name = Array(className.utf8.prefix(255))
        var out: [UInt8] = [tag(.object), UInt8(name.count)]
        out.append(contentsOf: name)
        out.append(contentsOf: key)
        return out
    }

    /// The kind of a stored mixed value and its own field bytes; `nil` for bytes that are not
    /// one (checked, never trusted).
    package static func split(_ field: UnsafeRawBufferPointer) -> (type: PropertyType, payload: UnsafeRawBufferPointer)? {
        guard let first = field.first, Int(first) < kinds.count, let type = kinds[Int(first)] else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: field[1...])
        if let size = type.fixedSize, payload.count != size { return nil }
        return (type, payload)
    }

    /// The class name and key of a stored link's payload; `nil` if damaged.
    package static func link(_ payload: UnsafeRawBufferPointer) -> (className: String, key: UnsafeRawBufferPointer)? {
        guard let n = payload.first.map(Int.init), payload.count > 1 + n else { return nil }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: payload[1..<(1 + n)]), as: UTF8.self)
        return (name, UnsafeRawBufferPointer(rebasing: payload[(1 + n)...]))
    }

    /// The rank of a kind in the order of mixed values: booleans, then numbers (compared by
    /// value across kinds), strings, data, dates, object identifiers, UUIDs, links.
    package static func rank(_ type: PropertyType) -> Int {
        switch type {
        case .bool: 0
        case .int, .float, .double, .decimal: 1
        case .string: 2
        case .data: 3
        case .date: 4
        case .objectId: 5
        case .uuid: 6
        default: 7
        }
    }
}
