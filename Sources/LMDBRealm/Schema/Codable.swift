import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// Codable models, as in RealmSwift: declare the conformance and Swift writes the coding.
//
// ```swift
// final class Dog: Object, Codable {
//     @Persisted(primaryKey: true) var name: String
//     @Persisted var age = 0
//     @Persisted var owner: Person?          // Person: Object, Codable
//     @Persisted var tags: List<String>
// }
// let dog = try JSONDecoder().decode(Dog.self, from: json)   // an unmanaged object
// try realm.write { realm.add(dog) }
// ```
//
// A decoded wrapper cannot know its column (the synthesised initialiser replaces each
// wrapper after the defaults were made): adding the object writes every wrapper's column,
// before anything reads through them.
//
// Encoding a managed object writes what is stored, as reading its properties would: each
// wrapper of a managed object knows its object (set when the realm adds it or makes it).

extension Persisted: Decodable where Value: Decodable {
    /// Reads the value. A missing optional property decodes as `nil`, as in RealmSwift; a
    /// missing collection as an empty one (RealmSwift throws `keyNotFound` there).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let value: Value
        if Value._rlmOptional && container.decodeNil() {
            value = Value._rlmDefaultValue
        } else {
            value = try container.decode(Value.self)
        }
        self.init(decodedValue: value)
    }

    /// A wrapper for a missing key: the type's default.
    init(decodedDefault: Void) {
        self.init(decodedValue: Value._rlmDefaultValue)
    }

    private init(decodedValue: Value) {
        self.value = decodedValue
        self.column = -1
        self.options = 0
    }
}

extension Persisted: Encodable where Value: Encodable {
    /// Writes the property's value: on a managed object the stored one, read from the realm as
    /// a property read does (on the realm's thread, in its current version); on an unmanaged
    /// object the one it holds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let object = owner?.takeUnretainedValue(), object._isManaged, object._realm != nil {
            try container.encode(Value._rlmGet(object, column: column))
        } else {
            try container.encode(value)
        }
    }
}

extension KeyedDecodingContainer {
    /// An optional property or a collection whose key is missing decodes as `nil` or empty.
    public func decode<V: _Persistable & Decodable>(_ type: Persisted<V>.Type, forKey key: Key) throws -> Persisted<V> {
        if let found = try decodeIfPresent(type, forKey: key) { return found }
        guard V._rlmOptional || V.self is any ListValue.Type else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value for the required property '\(key.stringValue)'"))
        }
        return Persisted(decodedDefault: ())
    }
}

// MARK: - Collections

extension List: Encodable where Element: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(element) }
    }
}

extension List: Decodable where Element: Decodable {
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { storage.append(try container.decode(Element.self)) }
    }
}

extension MutableSet: Encodable where Element: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self { try container.encode(element) }
    }
}

extension MutableSet: Decodable where Element: Decodable & Hashable {
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { insert(try container.decode(Element.self)) }
    }
}

extension Map: Encodable where Key == String, Value: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MapCodingKey.self)
        for (key, value) in entries() { try container.encode(value, forKey: MapCodingKey(stringValue: key)) }
    }
}

extension Map: Decodable where Key == String, Value: Decodable {
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: MapCodingKey.self)
        for key in container.allKeys { storage.append((key.stringValue, try container.decode(Value.self, forKey: key))) }
    }
}

private struct MapCodingKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}
