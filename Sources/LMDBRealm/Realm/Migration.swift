import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// The block a configuration runs when it opens a file of an older schema version: it gets the
/// migration and the version the file was at.
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) throws -> Void

/// The classes of a realm, as stored or as declared.
public struct Schema: Sendable, Hashable, CustomStringConvertible {
    /// Every class, in name order.
    public let objectSchema: [ObjectSchema]

    init(_ objectSchema: [ObjectSchema]) {
        self.objectSchema = objectSchema.sorted { $0.className < $1.className }
    }

    /// The class called `className`, if there is one.
    public subscript(className: String) -> ObjectSchema? {
        objectSchema.first { $0.className == className }
    }

    public var description: String { "Schema {\n" + objectSchema.map(\.description).joined(separator: "\n") + "\n}" }
}

/// What a migration block works with: the objects as they were (read-only) and as they are
/// becoming (writable), in one write transaction with the schema change itself.
///
/// ```swift
/// var config = Realm.Configuration(fileURL: url, schemaVersion: 2, migrationBlock: { migration, oldSchemaVersion in
///     if oldSchemaVersion < 1 {
///         migration.renameProperty(onType: "Article", from: "words", to: "wordCount")
///     }
///     if oldSchemaVersion < 2 {
///         migration.enumerateObjects(ofType: "Article") { old, new in
///             new!["headline"] = (old!["title"] as? String ?? "").uppercased()
///         }
///     }
/// })
/// ```
///
/// Whatever the block throws, and any failure of the world while it runs, leaves the file as it
/// was before the migration: the realm does not open, and the error says what failed.
public final class Migration {
    /// The classes as the file stored them before the migration.
    public let oldSchema: Schema
    /// The classes as the model declares them.
    public let newSchema: Schema

    let realm: Realm
    let session: WriteSession
    /// The version before the migration, read alongside the write.
    let old: Snapshot
    let oldTables: [String: Table]
    /// The tables of the write, in their new layout.
    var newTables: [String: Table]
    /// The classes whose records the block changed: their indexes are rebuilt after it.
    var touched = Set<String>()
    /// The first failure of the world inside a method that cannot throw.
    var failure: (any Swift.Error)?
    /// The classes the model declares.
    let declaredNames: Set<String>
    let declaredInfos: [String: ClassInfo]

    init(realm: Realm, session: WriteSession, old: Snapshot, oldTables: [String: Table], newTables: [String: Table], declared: [ClassInfo]) {
        self.realm = realm
        self.session = session
        self.old = old
        self.oldTables = oldTables
        self.newTables = newTables
        declaredNames = Set(declared.map(\.schema.className))
        declaredInfos = Dictionary(declared.map { ($0.schema.className, $0) }, uniquingKeysWith: { a, _ in a })
        oldSchema = Schema(oldTables.values.map(\.schema))
        var newSchemas = Dictionary(uniqueKeysWithValues: oldTables.map { ($0.key, $0.value.schema) })
        for info in declared { newSchemas[info.schema.className] = info.schema }
        newSchema = Schema(Array(newSchemas.values))
    }

    /// Calls `block` with each object of `typeName` as it was (`oldObject`, read-only) and as it
    /// is now (`newObject`, writable; `nil` once deleted, or if the class left the model).
    public func enumerateObjects(
        ofType typeName: String, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) throws -> Void
    ) rethrows {
        guard let oldTable = oldTables[typeName] else { return }
        var keys: [[UInt8]] = []
        guard attempt({
            try old.view.forEachObject(of: oldTable, in: realm.file) { key, _ in
                keys.append(Array(key))
                return true
            }
        }) else { return }
        let newTable = newTables[typeName]
        for (n, key) in keys.enumerated() {
            if n > 0 && n % realm.configuration.progressInterval == 0 { realm.log(.info, "Migrating '\(typeName)': \(n) of \(keys.count) objects enumerated") }
            let oldObject = MigrationObject(migration: self, className: typeName, key: key, isOld: true)
            let exists = newTable.map { table in key.withUnsafeBytes { realm.record(of: table, key: $0, in: session.view) != nil } } ?? false
            let newObject = exists ? MigrationObject(migration: self, className: typeName, key: key, isOld: false) : nil
            try block(oldObject, newObject)
        }
    }

    /// Moves the values of `oldName` (a property the file had) into `newName` (one the model
    /// declares instead) for every object of `typeName`.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        guard let oldTable = oldTables[typeName], let newTable = newTables[typeName] else {
            fatalError("Cannot rename a property of '\(typeName)': the class is not in both the old and the new schema")
        }
        guard let from = oldTable.schema.properties.firstIndex(where: { $0.name == oldName }) else {
            fatalError("Cannot rename property '\(typeName).\(oldName)': the old schema has no such property")
        }
        guard let to = newTable.schema.properties.firstIndex(where: { $0.name == newName }) else {
            fatalError("Cannot rename property '\(typeName).\(oldName)' to '\(newName)': the new schema has no such property")
        }
        let a = oldTable.schema.properties[from]
        let b = newTable.schema.properties[to]
        require(
            a.type == b.type && a.objectClassName == b.objectClassName && a.isArray == b.isArray && a.isSet == b.isSet
                && a.isMap == b.isMap,
            "Cannot rename property '\(typeName).\(oldName)' (\(a.typeName)) to '\(newName)' (\(b.typeName)): their types differ")
        touched.insert(typeName)
        _ = attempt {
            let file = realm.file
            if let oldList = oldTable.lists[from] {
                try old.view.forEachObject(of: oldTable, in: realm.file) { key, _ in
                    let elements = try old.view.listElements(oldList, owner: key)
                    try session.setList(elements, old: [], of: ObjectKey(key), in: newTable, column: to)
                    return true
                }
                return
            }
            try old.view.forEachObject(of: oldTable, in: realm.file) { key, record in
                let field = oldTable.field(record.baseAddress!, size: record.count, column: from, in: file)
                if field == nil && !b.isOptional { return true }
                try session.setField(newTable, key: key, column: to, to: field)
                return true
            }
        }
    }

    /// Adds an object of `typeName` (a class of the new schema) with `value`: a dictionary of
    /// property values by name, or an array of them in property order; properties not given
    /// take the model's defaults. Set its lists afterwards through the returned object.
    @discardableResult
    public func create(_ typeName: String, value: Any = [Any]()) -> MigrationObject {
        guard let table = newTables[typeName], let info = declaredInfos[typeName] else {
            fatalError("Cannot create an object of '\(typeName)' in a migration: the class is not in the new schema")
        }
        let declaredOrder = info.schema.properties.map(\.name)
        let given = givenValues(value, names: declaredOrder, className: typeName)
        let defaults = Realm.defaultRecord(info)
        let defaultsTable = Table(schema: info.schema, database: table.database)
        let writer = RecordWriter()
        writer.begin(columns: table.columnCount)
        let file = realm.file
        for property in table.schema.properties {
            if let v = given[property.name], table.lists[table.schema.properties.firstIndex(of: property)!] == nil {
                let field = migrationField(v, for: property)
                require(field != nil || property.isOptional, "Cannot create a '\(typeName)' with nil for its required property '\(property.name)'")
                field.withUnsafeBytesIfPresent { writer.append($0) }
            } else {
                let column = declaredOrder.firstIndex(of: property.name)!
                defaults.withUnsafeBytes { d in writer.append(defaultsTable.field(d.baseAddress!, size: d.count, column: column, in: file)) }
            }
        }
        touched.insert(typeName)
        var key: [UInt8] = []
        attempt { key = try writer.withRecord { try session.insertRecord($0, into: table) } }
        let object = MigrationObject(migration: self, className: typeName, key: key, isOld: false)
        for (name, v) in given {
            guard let column = table.schema.properties.firstIndex(where: { $0.name == name }), table.lists[column] != nil else { continue }
            object[name] = v
        }
        return object
    }

    /// Deletes every object of `typeName`; a class the model no longer declares leaves the
    /// file. Returns whether the file had the class.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        guard let table = newTables[typeName] ?? oldTables[typeName] else { return false }
        let declared = declaredNames.contains(typeName)
        _ = attempt { try session.deleteAllData(of: table, removingClass: !declared) }
        if !declared { newTables[typeName] = nil }
        return true
    }

    /// Deletes `object` (a new object of ``enumerateObjects(ofType:_:)``) and unlinks it, as
    /// `Realm.delete` does.
    public func delete(_ object: MigrationObject) {
        require(!object.isOld, "Cannot delete an old object in a migration: delete its new object")
        guard let table = newTables[object.className] else { return }
        touched.insert(object.className)
        _ = attempt { try session.removeObjects([object.key.withUnsafeBytes { ObjectKey($0) }], from: table) }
    }

    /// Runs `body`, keeping its first failure for the end of the migration.
    /// - Returns: Whether it succeeded.
    @discardableResult
    func attempt(_ body: () throws -> Void) -> Bool {
        guard failure == nil else { return false }
        do {
            try body()
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// The table a migration object reads.
    func table(of object: MigrationObject) -> Table? {
        object.isOld ? oldTables[object.className] : newTables[object.className]
    }
}

@available(*, unavailable, message: "a migration runs on the thread that opens the realm")
extension Migration: Sendable {}

/// An object in a migration, read and written by property name: `old["title"]`,
/// `new["headline"] = "…"`. Values are returned as their Swift types (`Int`, `String`,
/// `Double`, `Date`, …), a link as the linked `MigrationObject`, a list as an array.
/// Properties read and write as members too: `new?.headline = "…"`.
@dynamicMemberLookup
public final class MigrationObject: CustomStringConvertible {
    unowned let migration: Migration
    /// The class's name.
    public let className: String
    let key: [UInt8]
    let isOld: Bool

    init(migration: Migration, className: String, key: [UInt8], isOld: Bool) {
        self.migration = migration
        self.className = className
        self.key = key
        self.isOld = isOld
    }

    /// The class's properties, in the schema this object belongs to (old or new).
    public var objectSchema: ObjectSchema {
        guard let table = migration.table(of: self) else { fatalError("'\(className)' is no longer in the file") }
        return table.schema
    }

    private var view: StoreView { isOld ? migration.old.view : migration.session.view }

    /// The value of property `member`, as ``subscript(_:)`` reads and sets it.
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }

    /// The value of property `name`; setting it needs a new object (an old one is read-only).
    /// - Precondition: The class has the property, and a value set is of its kind.
    public subscript(name: String) -> Any? {
        get {
            guard let table = migration.table(of: self) else { fatalError("'\(className)' is no longer in the file") }
            guard let column = table.schema.properties.firstIndex(where: { $0.name == name }) else {
                fatalError("Invalid property name '\(name)' for class '\(className)'")
            }
            let property = table.schema.properties[column]
            let realm = migration.realm
            let view = view
            if let list = table.lists[column] {
                let elements: [[UInt8]?]
                do {
                    elements = try key.withUnsafeBytes { try view.listElements(list, owner: $0) }
                } catch {
                    realm.cannotRead("a list of '\(className)'", error)
                }
                return elements.map { element -> Any? in
                    guard let element else { return nil }
                    return value(element, property)
                }
            }
            guard property.type != .linkingObjects else { return nil }
            guard let record = key.withUnsafeBytes({ realm.record(of: table, key: $0, in: view) }) else { return nil }
            guard let field = table.field(record.baseAddress!, size: record.count, column: column, in: realm.file) else { return nil }
            return value(Array(field), property)
        }
        set {
            require(!isOld, "Cannot change an old object in a migration: set the value on its new object")
            guard let table = migration.newTables[className] else { fatalError("'\(className)' is no longer in the file") }
            guard let column = table.schema.properties.firstIndex(where: { $0.name == name }) else {
                fatalError("Invalid property name '\(name)' for class '\(className)'")
            }
            let property = table.schema.properties[column]
            migration.touched.insert(className)
            if table.lists[column] != nil {
                let values = newValue.map { value -> [Any?] in
                    guard let array = anyArray(value) else {
                        fatalError("Cannot set the list '\(className).\(name)' to a value of type \(type(of: value)): give an array")
                    }
                    return array
                } ?? []
                let elements = values.map { migrationField($0, for: property) }
                migration.attempt {
                    try migration.session.setList(elements, of: key.withUnsafeBytes { ObjectKey($0) }, in: table, column: column)
                }
                return
            }
            let field = migrationField(newValue, for: property)
            require(field != nil || property.isOptional, "Cannot set the required property '\(className).\(name)' to nil")
            migration.attempt {
                try key.withUnsafeBytes { k in
                    try field.withUnsafeBytesIfPresent { try migration.session.setField(table, key: k, column: column, to: $0) }
                }
            }
        }
    }

    /// A stored field as a Swift value, or a linked object.
    private func value(_ field: [UInt8], _ property: Property) -> Any? {
        guard property.type == .object else {
            let decoded: any Sendable = field.withUnsafeBytes { decodeValue($0, type: property.type) }
            return decoded as Any
        }
        guard let target = property.objectClassName else { return nil }
        return MigrationObject(migration: migration, className: target, key: field, isOld: isOld)
    }

    public var description: String {
        let properties = objectSchema.properties.filter { $0.type != .linkingObjects }
        return "\(className) {\n" + properties.map { "    \($0.name) = \(self[$0.name].map { "\($0)" } ?? "nil");" }.joined(separator: "\n") + "\n}"
    }
}

@available(*, unavailable, message: "a migration runs on the thread that opens the realm")
extension MigrationObject: Sendable {}

/// The stored bytes of `value` for `property` in a migration: a number converted to the
/// property's kind, a string, date, data or identifier as it is, a link's target (a new
/// `MigrationObject` or a managed object) by key.
/// - Precondition: `value` fits the property.
func migrationField(_ value: Any?, for property: Property) -> [UInt8]? {
    guard let value, !(value is NSNull) else { return nil }
    func bytes(_ persistable: some _Persistable) -> [UInt8]? { persistable._rlmWithBytes { $0.map(Array.init) } }
    let wrong: () -> Never = {
        fatalError("Cannot set '\(property.name)' (\(property.typeName)) to '\(value)' of type \(type(of: value))")
    }
    switch property.type {
    case .int:
        if let v = value as? any BinaryInteger { return bytes(Int64(v)) }
        if let v = value as? Double, v == v.rounded() { return bytes(Int64(v)) }
    case .double:
        if let v = value as? Double { return bytes(v) }
        if let v = value as? Float { return bytes(Double(v)) }
        if let v = value as? any BinaryInteger { return bytes(Double(Int64(v))) }
    case .float:
        if let v = value as? Float { return bytes(v) }
        if let v = value as? Double { return bytes(Float(v)) }
        if let v = value as? any BinaryInteger { return bytes(Float(Int64(v))) }
    case .bool:
        if let v = value as? Bool { return bytes(v) }
    case .string:
        if let v = value as? String { return bytes(v) }
        if let v = value as? Substring { return bytes(String(v)) }
    case .date:
        if let v = value as? Date { return bytes(v) }
    case .data:
        if let v = value as? Data { return bytes(v) }
    case .uuid:
        if let v = value as? UUID { return bytes(v) }
    case .objectId:
        if let v = value as? ObjectId { return bytes(v) }
    case .decimal:
        if let v = value as? Decimal { return bytes(v) }
    case .object:
        if let v = value as? MigrationObject {
            require(v.className == property.objectClassName, "Cannot link '\(property.name)' (\(property.typeName)) to a '\(v.className)'")
            return v.key
        }
        if let v = value as? Object, v.realm != nil {
            let className = v._binding?.table.className ?? type(of: v).className()
            require(className == property.objectClassName, "Cannot link '\(property.name)' (\(property.typeName)) to a '\(className)'")
            return v._key.withBytes { Array($0) }
        }
    case .mixed:
        guard let mixed = AnyRealmValue(anyValue: value) else { break }
        return bytes(mixed)
    case .linkingObjects:
        fatalError("Cannot set '\(property.name)': LinkingObjects are computed from the links to an object")
    }
    wrong()
}
