import Foundation

/// A map entry as a list element's bytes: the key's length (two bytes, big-endian), the key's
/// UTF-8, a tag (0 for `nil`, 1 for a value) and the value's field bytes.
package enum MapEntry {
    /// An entry of `key` and a value's stored bytes (`nil`: a null).
    package static func encode(_ key: String, field: UnsafeRawBufferPointer?) -> [UInt8] {
        let k = Array(key.utf8)
        var out: [UInt8] = [UInt8(truncatingIfNeeded: k.count >> 8), UInt8(truncatingIfNeeded: k.count)]
        out.append(contentsOf: k)
        if let field {
            out.append(1)
            out.append(contentsOf: field)
        } else {
            out.append(0)
        }
        return out
    }

    /// The key of a stored entry, or `nil` for bytes that are not one.
    package static func key(of field: [UInt8]?) -> String? {
        guard let field, field.count >= 3 else { return nil }
        let n = Int(field[0]) << 8 | Int(field[1])
        guard field.count >= 3 + n else { return nil }
        return String(decoding: field[2..<(2 + n)], as: UTF8.self)
    }

    /// The key and the value's bytes (`nil` for a null) of a stored entry.
    package static func decode(_ field: [UInt8]?) -> (String, [UInt8]?)? {
        guard let field, let key = key(of: field) else { return nil }
        let tagAt = 2 + (Int(field[0]) << 8 | Int(field[1]))
        // Bytes read from the file are checked, not trusted: a short entry reads as none.
        guard field.count > tagAt else { return nil }
        return (key, field[tagAt] == 0 ? nil : Array(field[(tagAt + 1)...]))
    }

    /// `entry` with its value set to `nil` (an entry whose object was deleted).
    package static func withNullValue(_ entry: [UInt8]?) -> [UInt8]? {
        guard let entry, key(of: entry) != nil else { return entry }
        var out = Array(entry[0..<(2 + (Int(entry[0]) << 8 | Int(entry[1])))])
        out.append(0)
        return out
    }

    /// The key (`keys` true) or the value of an entry lent as bytes; a null value has no base
    /// address, as the query layer's `ElementField` reads it.
    package static func part(_ entry: UnsafeRawBufferPointer, keys: Bool) -> UnsafeRawBufferPointer {
        guard entry.count >= 3 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let n = Int(entry[0]) << 8 | Int(entry[1])
        guard entry.count >= 3 + n else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        if keys { return UnsafeRawBufferPointer(rebasing: entry[2..<(2 + n)]) }
        guard entry[2 + n] == 1 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: entry[(3 + n)...])
    }
}
