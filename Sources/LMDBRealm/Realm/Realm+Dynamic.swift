import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// The dynamic API: classes and objects by name, from the schema stored in the file, with no
// Swift model class needed.
extension Realm {
    /// Every object of the stored class `className`, as ``DynamicObject``s; filter, sort and
    /// count them as any `Results` (queries name the class's own properties).
    /// - Precondition: The file has the class.
    public func dynamicObjects(_ className: String) -> Results<DynamicObject> {
        checkThread()
        guard let binding = dynamicBinding(named: className) else {
            fatalError("Object type '\(className)' is not in the realm at '\(file.url.path)'")
        }
        return Results(realm: self, info: binding.classInfo)
    }

    /// The object of stored class `typeName` whose primary key is `key`, or `nil`.
    /// - Precondition: The class is in the file, has a primary key, and `key` fits it.
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
        checkThread()
        guard let binding = dynamicBinding(named: typeName) else {
            fatalError("Object type '\(typeName)' is not in the realm at '\(file.url.path)'")
        }
        guard let pk = binding.table.primaryKeyColumn else { fatalError("'\(typeName)' does not have a primary key") }
        let property = binding.table.schema.properties[pk]
        guard let field = migrationField(key, for: property) else { return nil }
        let object = field.withUnsafeBytes { bytes in
            KeyEncoding.withKey(bytes, type: property.type) { lookUp(binding, key: $0) }
        }
        return object.map { unsafeDowncast($0, to: DynamicObject.self) }
    }

    /// Creates an object of stored class `typeName` from `value` (a dictionary of values by
    /// property name, or an array of them in stored order) and returns it; properties not given
    /// take their kind's default (`0`, `""`, `nil`, an empty list). Under `.modified` or
    /// `.all`, an object whose primary key is stored is updated with the properties given.
    ///
    /// Call it inside a write: a duplicate primary key under `.error` makes the write throw
    /// ``RealmError/Code/primaryKeyExists`` and changes nothing.
    /// - Precondition: The class is in the file, and each value fits its property.
    @discardableResult
    public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error) -> DynamicObject {
        checkWriteThread()
        guard let binding = dynamicBinding(named: typeName) else {
            fatalError("Object type '\(typeName)' is not in the realm at '\(file.url.path)'")
        }
        let table = binding.table
        let properties = table.schema.properties
        let given = givenValues(value, names: properties.filter { $0.type != .linkingObjects }.map(\.name), className: typeName)
        for name in given.keys where table.schema[name] == nil {
            fatalError("Invalid property name '\(name)' for class '\(typeName)'")
        }
        if update != .error, let pk = table.primaryKeyColumn, let key = given[properties[pk].name] ?? nil,
            let existing = dynamicObject(ofType: typeName, forPrimaryKey: key)
        {
            for (name, v) in given where name != properties[pk].name { existing[name] = v }
            return existing
        }
        let fields = properties.map { property -> [UInt8]? in
            guard !property.isArray, property.type != .linkingObjects else { return nil }
            if let v = given[property.name] {
                let field = migrationField(v, for: property)
                require(field != nil || property.isOptional, "Cannot create a '\(typeName)' with nil for its required property '\(property.name)'")
                return field
            }
            return property.isOptional || property.type == .object ? nil : Self.defaultField(property.type)
        }
        // After a failure the write throws at its end; the caller gets an object that is not
        // stored (an unmanaged one, holding what is set on it).
        guard writing.failure == nil, let session else { return DynamicObject() }
        let object: DynamicObject
        do {
            let key = try explainingRefusals { try session.insert(fields: fields, into: table, update: update) }
            object = key.withBytes { key in
                let record = self.record(of: table, key: key, in: readView())!
                return unsafeDowncast(makeObject(binding, key: key, record: record), to: DynamicObject.self)
            }
        } catch {
            recordWriteFailure(error, doing: "Cannot create an object of '\(typeName)' in")
            return DynamicObject()
        }
        for property in properties where property.isArray {
            if let v = given[property.name] { object[property.name] = v }
        }
        return object
    }

    /// The stored bytes of a kind's default value (`0`, `""`, the epoch, …).
    static func defaultField(_ type: PropertyType) -> [UInt8] {
        func bytes(_ value: some _Persistable) -> [UInt8] { value._rlmWithBytes { $0.map(Array.init) ?? [] } }
        switch type {
        case .int: return bytes(0)
        case .bool: return bytes(false)
        case .float: return bytes(Float(0))
        case .double: return bytes(0.0)
        case .string: return bytes("")
        case .data: return bytes(Data())
        case .date: return bytes(Date(timeIntervalSince1970: 0))
        case .uuid: return bytes(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .objectId: return bytes(ObjectId.generate())
        case .decimal: return bytes(Decimal(0))
        case .object, .mixed, .linkingObjects: return []
        }
    }
}

extension Object {
    /// The description the object's class has in this object's file: its binding's, for a
    /// managed object (a ``DynamicObject``'s is the stored class), else its Swift class's.
    final var _classInfo: ClassInfo {
        _binding?.classInfo ?? ClassInfo.of(type(of: self))
    }

    /// A ``DynamicObject``'s property `name`, read from its record (see ``DynamicObject``).
    func _dynamicValue(_ name: String) -> Any? {
        guard _realm != nil else { return unsafeDowncast(self, to: DynamicObject.self).unmanagedValues[name] ?? nil }
        let (realm, table, column) = dynamicProperty(name)
        let property = table.schema.properties[column]
        realm.checkThread()
        loadRecord(realm)
        if property.type == .linkingObjects {
            guard let originName = property.objectClassName, let origin = realm.dynamicBinding(named: originName),
                let originColumn = origin.table.schema.properties.firstIndex(where: { $0.name == property.linkOriginPropertyName })
            else { return [DynamicObject]() }
            var keys: [[UInt8]] = []
            _key.withBytes { key in
                realm.forEachBacklink(from: origin.table, column: originColumn, to: key) { keys.append(Array($0)); return true }
            }
            return keys.compactMap { realm.dynamicLinked(origin, key: $0) }
        }
        if property.isArray {
            let fields = _listFields(Int32(column))
            if property.isMap {
                var entries: [String: Any?] = [:]
                for field in fields {
                    guard let (key, value) = MapEntry.decode(field) else { continue }
                    entries[key] = realm.dynamicElement(value, property)
                }
                return entries
            }
            return fields.map { realm.dynamicElement($0, property) }
        }
        guard let field = _readField(Int32(column)) else { return nil }
        return realm.dynamicElement(Array(field), property)
    }

    /// Sets a ``DynamicObject``'s property `name` (see ``DynamicObject``).
    func _setDynamicValue(_ name: String, _ newValue: Any?) {
        guard _realm != nil else {
            unsafeDowncast(self, to: DynamicObject.self).unmanagedValues[name] = newValue
            return
        }
        let (realm, table, column) = dynamicProperty(name)
        let property = table.schema.properties[column]
        require(property.type != .linkingObjects, "Cannot set '\(table.className).\(name)': LinkingObjects are computed from the links to an object")
        if property.isArray {
            let fields: [[UInt8]?]
            if property.isMap {
                guard let dictionary = anyDictionary(newValue) ?? (newValue == nil ? [:] : nil) else {
                    fatalError("Cannot set the map '\(table.className).\(name)' to a value of type \(type(of: newValue!)): give a dictionary")
                }
                fields = dictionary.sorted { $0.key < $1.key }.map { key, value in
                    migrationField(value, for: property).withUnsafeBytesIfPresent { MapEntry.encode(key, field: $0) }
                }
            } else {
                guard let array = anyArray(newValue) ?? (newValue == nil ? [] : nil) else {
                    fatalError("Cannot set the list '\(table.className).\(name)' to a value of type \(type(of: newValue!)): give an array")
                }
                fields = array.map { migrationField($0, for: property) }
            }
            _editListFields(Int32(column)) { $0 = fields }
            return
        }
        let field = migrationField(newValue, for: property)
        require(field != nil || property.isOptional || property.type == .object, "Cannot set the required property '\(table.className).\(name)' to nil")
        guard let stored = prepareFieldWrite(Int32(column), in: realm) else { return }
        field.withUnsafeBytesIfPresent { realm.replaceField(of: self, storedColumn: stored, with: $0) }
    }

    private func dynamicProperty(_ name: String) -> (Realm, Table, Int) {
        guard let realm = _realm, let binding = _binding else { fatalError("A DynamicObject is always managed") }
        guard let column = binding.table.schema.properties.firstIndex(where: { $0.name == name }) else {
            fatalError("Invalid property name '\(name)' for class '\(binding.table.className)'")
        }
        return (realm, binding.table, column)
    }
}

extension Realm {
    /// A stored element or value of `property` as a Swift value, or the linked
    /// ``DynamicObject`` (`nil` when it is gone).
    func dynamicElement(_ field: [UInt8]?, _ property: Property) -> Any? {
        guard let field else { return nil }
        if property.type == .mixed, let (kind, payload) = field.withUnsafeBytes({ MixedField.split($0).map { ($0.type, Array($0.payload)) } }),
            kind == .object
        {
            guard let (className, key) = payload.withUnsafeBytes({ MixedField.link($0).map { ($0.className, Array($0.key)) } }),
                let target = dynamicBinding(named: className)
            else { return nil }
            return dynamicLinked(target, key: key)
        }
        guard property.type == .object else {
            let value: any Sendable = field.withUnsafeBytes { decodeValue($0, type: property.type) }
            return value
        }
        guard let target = property.objectClassName.flatMap(dynamicBinding(named:)) else { return nil }
        return dynamicLinked(target, key: field)
    }

    /// The object of `binding`'s class stored under `key`, as a ``DynamicObject``.
    func dynamicLinked(_ binding: TableBinding, key: [UInt8]) -> DynamicObject? {
        let object = key.withUnsafeBytes { key in linkedRecord(of: binding.table, key: key).map { makeObject(binding, key: key, record: $0) } }
        return object.map { unsafeDowncast($0, to: DynamicObject.self) }
    }
}
