import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// A collection property that takes elements of any type by conversion (see ``Object/init(value:)``).
protocol AnyElementAppending {
    /// Appends `value` converted to the element type; false if it is not one (nor an object's
    /// value, for a collection of objects).
    func appendAny(_ value: Any?) -> Bool
    /// The elements, as values.
    var anyElements: [Any?] { get }
}

/// Converts `value` to `type` where it is an object's value (a dictionary or an array) for a
/// class of objects; returns it as it is otherwise.
private func converted(_ value: Any?, to type: Any.Type) -> Any? {
    if let value, Swift.type(of: value) == type { return value }
    if let value, let decimal = Decimal128.converting(value, to: type) { return decimal }
    if let value, let custom = customPersistableValue(value, as: type) { return custom }
    guard let value, let target = type as? Object.Type ?? (type as? any LinkValue.Type)?.targetType else { return value }
    if value is Object { return value }
    return target.init(value: value)
}

extension List: AnyElementAppending {
    var anyElements: [Any?] { map { $0 } }
    func appendAny(_ value: Any?) -> Bool {
        guard let element = converted(value, to: Element.self) as? Element ?? (value == nil ? Element._rlmOptional ? Element._rlmDefaultValue : nil : nil)
        else { return false }
        append(element)
        return true
    }
}

extension MutableSet: AnyElementAppending {
    var anyElements: [Any?] { map { $0 } }
    func appendAny(_ value: Any?) -> Bool {
        guard let element = converted(value, to: Element.self) as? Element ?? (value == nil ? Element._rlmOptional ? Element._rlmDefaultValue : nil : nil)
        else { return false }
        insert(element)
        return true
    }
}

/// `value` as a dictionary of values by name, if it is one.
func anyDictionary(_ value: Any?) -> [String: Any?]? {
    value as? [String: Any?] ?? (value as? [String: Any]).map { $0.mapValues { Optional($0) } }
}

/// `value` as an array of values, if it is one (or a collection of objects: `Results`,
/// `LinkingObjects`, a list).
func anyArray(_ value: Any?) -> [Any?]? {
    if let objects = value as? any RealmCollection { return collectionElements(objects) }
    return value as? [Any?] ?? (value as? [Any]).map { $0.map { Optional($0) } }
}

/// The objects of `collection`, as values.
func collectionElements<C: RealmCollection>(_ collection: C) -> [Any?] {
    collection.map { Optional($0 as Any) }
}

/// The property values `value` gives an object of `className` whose settable properties are
/// `names`, in order: a dictionary of values by name, or an array of them in that order.
/// - Precondition: `value` is one of those, no longer than `names`.
func givenValues(_ value: Any, names: [String], className: String) -> [String: Any?] {
    if let dictionary = anyDictionary(value) { return dictionary }
    guard let array = anyArray(value) else {
        fatalError("Invalid value '\(value)' to create an object of type '\(className)': give a dictionary or an array")
    }
    require(array.count <= names.count, "Invalid array of \(array.count) values for '\(className)': it has \(names.count) properties")
    return Dictionary(uniqueKeysWithValues: zip(names, array).map { ($0, $1) })
}

/// A map that takes its entries from a dictionary of values of any type.
protocol AnyEntrySetting {
    /// Sets each entry of `dictionary`, converting values as a list's elements are; false at
    /// the first value that is not one of the map's.
    func setAnyEntries(_ dictionary: [String: Any?]) -> Bool
}

extension Map: AnyEntrySetting {
    func setAnyEntries(_ dictionary: [String: Any?]) -> Bool {
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            guard let v = converted(value, to: Value.self) as? Value ?? (value == nil && Value._rlmOptional ? Value._rlmDefaultValue : nil)
            else { return false }
            self[Key(_mapKey: key)] = v
        }
        return true
    }
}

extension Object {
    /// Sets the properties `value` gives (see ``init(value:)``).
    func _fill(value: Any) {
        let info = ClassInfo.of(type(of: self))
        let names = info.schema.properties.filter { $0.type != .linkingObjects }.map(\.name)
        var given: [(String, Any?)] = []
        switch value {
        case let dictionary as [String: Any?]:
            given = dictionary.map { ($0.key, $0.value) }
        case let dictionary as [String: Any]:
            given = dictionary.map { ($0.key, Optional($0.value)) }
        case let object as Object:
            given = ClassInfo.of(type(of: object)).schema.properties.filter { $0.type != .linkingObjects && names.contains($0.name) }
                .map { ($0.name, object[$0.name]) }
        case let array as [Any?]:
            require(array.count <= names.count, "Invalid array of \(array.count) values for '\(info.schema.className)': it has \(names.count) properties")
            given = zip(names, array).map { ($0, $1) }
        case let array as [Any]:
            require(array.count <= names.count, "Invalid array of \(array.count) values for '\(info.schema.className)': it has \(names.count) properties")
            given = zip(names, array).map { ($0, Optional($1)) }
        default:
            fatalError("Invalid value '\(value)' to initialize an object of type '\(info.schema.className)': give a dictionary, an array or an object")
        }
        for (name, v) in given {
            guard let column = info.schema.properties.firstIndex(where: { $0.name == name }) else {
                fatalError("Invalid property name '\(name)' for class '\(info.schema.className)'")
            }
            let accessor = info.fields[column].accessor
            if info.schema.properties[column].isArray {
                guard let collection = self[name] as? any AnyElementAppending else {
                    // A map: its entries given as a dictionary, or another object's map.
                    if let map = self[name] as? any AnyEntrySetting, let dictionary = anyDictionary(v) {
                        require(map.setAnyEntries(dictionary), "Invalid value '\(v ?? "nil")' for the map '\(info.schema.className).\(name)'")
                        continue
                    }
                    require(self[name] != nil, "'\(info.schema.className).\(name)' cannot be set from '\(v ?? "nil")'")
                    self[name] = v
                    continue
                }
                let elements: [Any?]
                switch v {
                case let array as [Any?]: elements = array
                case let array as [Any]: elements = array.map { Optional($0) }
                case let other as any AnyElementAppending: elements = other.anyElements  // another object's
                case let objects as any RealmCollection: elements = collectionElements(objects)  // a Results, backlinks
                case nil: elements = []
                default: fatalError("Invalid value '\(v!)' for the collection '\(info.schema.className).\(name)': give an array")
                }
                for element in elements {
                    require(collection.appendAny(element), "Invalid value '\(element ?? "nil")' for an element of '\(info.schema.className).\(name)'")
                }
                continue
            }
            self[name] = converted(v, to: accessor.declaredValueType)
        }
    }
}

extension Realm {
    /// Creates an object of `type` from `value` (as ``Object/init(value:)`` takes it) and adds
    /// it, returning the managed object. Under `.modified` or `.all`, an object whose primary
    /// key is stored already is updated instead — with only the properties `value` names, when
    /// it is a dictionary.
    ///
    /// As ``add(_:update:)``, it does not throw: an error is recorded in the write, which
    /// throws it, and the object returned then stays unmanaged.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        checkWriteThread()
        let info = ClassInfo.of(type)
        if update != .error, let dictionary = anyDictionary(value),
            let key = info.primaryKeyColumn.map({ info.schema.properties[$0].name }), let pk = dictionary[key] ?? nil,
            let existing = object(ofType: type, forPrimaryKey: pk)
        {
            for (name, v) in dictionary where name != key {
                guard let column = info.schema.properties.firstIndex(where: { $0.name == name }) else {
                    fatalError("Invalid property name '\(name)' for class '\(info.schema.className)'")
                }
                let property = info.schema.properties[column]
                if property.isArray {
                    // A list given anew replaces the stored one.
                    let fresh = T(value: [name: v])
                    existing[name] = fresh[name]
                } else {
                    existing[name] = converted(v, to: info.fields[column].accessor.declaredValueType)
                }
            }
            return existing
        }
        let object = type.init(value: value)
        add(object, update: update)
        return object
    }
}
