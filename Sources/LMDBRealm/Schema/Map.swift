import LMDBRealmFormat
import LMDBRealmStorage

/// Keys a ``Map`` can have: `String`, as in RealmSwift.
public protocol _MapKey: Hashable, SendableMetatype {
    init(_mapKey: String)
    var _mapKey: String { get }
}

extension String: _MapKey {
    public init(_mapKey: String) { self = _mapKey }
    public var _mapKey: String { self }
}

/// One entry of a ``Map``, as iteration hands it out.
public struct SingleMapEntry<Key: _MapKey, Value> {
    public let key: Key
    public let value: Value
}

/// A dictionary held by a property of a model, from `String` keys to values of any kind:
/// `@Persisted var ratings: Map<String, Int>`, `Map<String, Double?>`.
///
/// ```swift
/// try realm.write {
///     article.ratings["home"] = 4
///     article.ratings["away"] = nil          // setting nil removes the key
/// }
/// article.ratings["home"]                     // Optional(4)
/// articles.filter("ANY ratings.@values > 3")
/// articles.filter("ratings.@keys == 'home'")
/// ```
///
/// Before its object is added, a map lives in memory; on a managed object it is a live view of
/// the stored map, changed only inside a write. Its entries are stored as a list's elements (key
/// and value together), in the order keys were first set; counting is one B-tree descent, and a
/// lookup compares with each key (maps are meant for a handful of entries).
///
/// A map of objects holds optional objects, as in RealmSwift (`Map<String, Dog?>`): setting an
/// unmanaged object on a managed map adds it, and deleting an object leaves its keys in every
/// map that held it, with `nil` values.
public final class Map<Key: _MapKey, Value: _Persistable>: Sequence {
    /// The entries of an unmanaged map, in insertion order.
    var storage: [(key: Key, value: Value)] = []
    let owner: Object?
    let column: Int32

    /// An empty unmanaged map.
    public init() {
        owner = nil
        column = 0
    }

    init(owner: Object, column: Int32) {
        self.owner = owner
        self.column = column
    }

    /// The number of entries; on a managed map, read without reading any entry.
    public var count: Int {
        guard let owner else { return storage.count }
        return owner._listCount(column)
    }

    public var isEmpty: Bool { count == 0 }

    /// The value for `key`, or `nil`; setting `nil` removes the key (inside a write, on a
    /// managed map).
    public subscript(key: Key) -> Value? {
        get {
            guard owner != nil else { return storage.first { $0.key == key }?.value }
            return entries().first { $0.key == key }?.value
        }
        set {
            guard let newValue else {
                removeObject(for: key)
                return
            }
            guard let owner else {
                if let i = storage.firstIndex(where: { $0.key == key }) { storage[i].value = newValue } else { storage.append((key, newValue)) }
                return
            }
            guard let realm = owner._realm, realm.manage(newValue) else { return }
            let entry = MapEntry.encode(key._mapKey, newValue)
            owner._editListFields(column) { fields in
                if let i = fields.firstIndex(where: { MapEntry.key(of: $0) == key._mapKey }) { fields[i] = entry } else { fields.append(entry) }
            }
        }
    }

    /// Removes `key` and its value, if there.
    public func removeObject(for key: Key) {
        guard let owner else {
            storage.removeAll { $0.key == key }
            return
        }
        owner._editListFields(column) { fields in fields.removeAll { MapEntry.key(of: $0) == key._mapKey } }
    }

    /// Removes every entry.
    public func removeAll() {
        guard let owner else {
            storage.removeAll()
            return
        }
        owner._editListFields(column) { $0.removeAll() }
    }

    /// Sets the value for `key` as the subscript does: `nil` removes it (RealmSwift's
    /// key-value coding spelling, `map.setValue("Bush Park", forKey: "Ottawa")`).
    /// - Precondition: `value` is a `Value` or `nil`.
    public func setValue(_ value: Any?, forKey key: Key) {
        guard let value else {
            removeObject(for: key)
            return
        }
        guard let typed = value as? Value else {
            fatalError("Cannot set a value of type \(type(of: value)) in a Map<\(Key.self), \(Value.self)>")
        }
        self[key] = typed
    }

    /// Sets each entry of `sequence`; for a key the map holds already, `combine` gets the
    /// current and the new value and returns the one to keep (RealmSwift's signature).
    public func merge<S: Sequence>(_ sequence: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S.Element == (key: Key, value: Value) {
        for (key, value) in sequence {
            self[key] = try self[key].map { try combine($0, value) } ?? value
        }
    }

    /// Sets `value` for `key`, as the subscript does.
    public func updateValue(_ value: Value, forKey key: Key) {
        self[key] = value
    }

    /// Sets each entry of `other`; for a key this map holds already, `combine` gets the current
    /// and the new value and returns the one to keep.
    public func merge(_ other: Map<Key, Value>, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.entries().map { (key: $0.key, value: $0.value) }, uniquingKeysWith: combine)
    }

    /// Whether an entry satisfies `predicate`.
    public func contains(where predicate: (_ key: Key, _ value: Value) throws -> Bool) rethrows -> Bool {
        try entries().contains { try predicate($0.key, $0.value) }
    }

    /// The keys, in the map's order.
    public var keys: [Key] { entries().map(\.key) }
    /// The values, in the map's order.
    public var values: [Value] { entries().map(\.value) }

    public func makeIterator() -> IndexingIterator<[SingleMapEntry<Key, Value>]> {
        entries().map { SingleMapEntry(key: $0.key, value: $0.value) }.makeIterator()
    }

    /// The entries, read in one walk on a managed map.
    func entries() -> [(key: Key, value: Value)] {
        guard let owner else { return storage }
        return owner._listFields(column).compactMap { field in
            guard let (key, value) = MapEntry.decode(field) else { return nil }
            return (Key(_mapKey: key), owner._mapValue(value, as: Value.self))
        }
    }
}

extension Map: CustomStringConvertible {
    public var description: String {
        "Map<\(Key.self), \(Value.self)>([" + entries().map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "])"
    }
}

@available(*, unavailable, message: "a managed Map belongs to its realm's thread")
extension Map: Sendable {}

extension MapEntry {
    /// An entry of `key` and `value`.
    static func encode<V: _Persistable>(_ key: String, _ value: V) -> [UInt8] {
        value._rlmWithBytes { encode(key, field: $0) }
    }
}

// MARK: - A map as a persisted property

extension Map: _PersistableNonOptional {
    public static var _rlmType: PropertyType { Value._rlmType }
    public static var _rlmOptional: Bool { false }
    public static var _rlmDefaultValue: Map<Key, Value> { Map() }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> Map<Key, Value> {
        fatalError("A map is read through its object")
    }
    /// A map has no bytes in its object's record: its entries are stored apart.
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R { try body(nil) }
    public static func _rlmGet(_ object: Object, column: Int32) -> Map<Key, Value> {
        guard object._realm != nil else {
            _ = ClassInfo.recordAccess(column)
            return Map()
        }
        return Map(owner: object, column: column)
    }
    public static func _rlmSet(_ object: Object, column: Int32, _ value: Map<Key, Value>) {
        if let owner = value.owner, owner === object || (owner._key == object._key && owner._realm === object._realm), value.column == column {
            return
        }
        let entries = value.entries()
        if let realm = object._realm {
            for entry in entries { guard realm.manage(entry.value) else { return } }
        }
        let fields: [[UInt8]?] = entries.map { MapEntry.encode($0.key._mapKey, $0.value) }
        object._editListFields(column) { $0 = fields }
    }
}

extension Map: ListValue, UnmanagedListContents {
    static var elementType: PropertyType { Value._rlmType }
    static var elementValueType: Any.Type { Value.self }
    static var elementIsOptional: Bool { Value._rlmOptional }
    static var elementTarget: Object.Type? {
        require(
            !(Value.self is Object.Type),
            "A map of objects holds optional objects: declare 'Map<\(Key.self), \(Value.self)?>', as in RealmSwift")
        return (Value.self as? any LinkValue.Type)?.targetType
    }
    static var isSet: Bool { false }
    static var isMap: Bool { true }

    var objects: [Object] { storage.compactMap { $0.value as? Object ?? ($0.value as? AnyRealmValue)?.object(Object.self) } }

    func encodedElements() -> [[UInt8]?] { storage.map { MapEntry.encode($0.key._mapKey, $0.value) } }
}
