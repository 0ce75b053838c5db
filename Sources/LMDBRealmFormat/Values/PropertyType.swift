/// The kind of value a persisted property holds, as stored in the file's schema.
///
/// As in RealmSwift, every integer width (`Int`, `Int8` … `Int64`) is stored as `.int`.
public enum PropertyType: String, Sendable, Codable, Hashable, CaseIterable {
    case bool
    case int
    case float
    case double
    case string
    case data
    case date
    case uuid
    case objectId
    case decimal
    /// Any of the kinds above, or a link, told apart per value (``AnyRealmValue``): stored as
    /// a tag byte and the value's own bytes.
    case mixed
    /// A link to an object of another (or the same) class: stored as the target's key.
    case object
    /// The objects that link to this one through a property of theirs
    /// (``LinkingObjects``): computed from the links, nothing of it is stored in the object.
    case linkingObjects

    /// The number of bytes a value of this kind takes in a record, or `nil` if it varies.
    package var fixedSize: Int? {
        switch self {
        case .bool: 1
        case .int, .double, .date: 8
        case .float: 4
        case .uuid: 16
        case .objectId: 12
        case .string, .data, .decimal, .mixed, .object, .linkingObjects: nil
        }
    }

    /// Whether a property of this kind can be a primary key.
    package var canBePrimaryKey: Bool {
        switch self {
        case .int, .string, .uuid, .objectId: true
        default: false
        }
    }
}

/// One persisted property of a model class: its name and what it holds.
public struct Property: Sendable, Codable, Hashable, CustomStringConvertible {
    /// The property's name, as declared in Swift.
    public let name: String
    /// What the property holds.
    public let type: PropertyType
    /// Whether the property can be `nil`.
    public let isOptional: Bool
    /// Whether the property has a secondary index.
    public let isIndexed: Bool
    /// Whether the property is the class's primary key.
    public let isPrimary: Bool
    /// The class a link (``PropertyType/object``) points to; `nil` for every other kind.
    public let objectClassName: String?
    /// Whether the property is a `List` of values of its ``type`` (optional ones if
    /// ``isOptional``).
    public var isArray: Bool { _isArray ?? false }
    private let _isArray: Bool?
    /// For ``PropertyType/linkingObjects``: the property of ``objectClassName`` whose links
    /// this property collects; `nil` for every other kind.
    public let linkOriginPropertyName: String?
    /// Whether the property is a `MutableSet` (a collection of distinct elements, stored as a
    /// list); ``isArray`` is true for it too.
    public var isSet: Bool { _isSet ?? false }
    private let _isSet: Bool?
    /// Whether the property is a `Map` from `String` keys to values of ``type`` (stored as a
    /// list of entries); ``isArray`` is true for it too.
    public var isMap: Bool { _isMap ?? false }
    private let _isMap: Bool?

    package init(
        name: String, type: PropertyType, isOptional: Bool, isIndexed: Bool, isPrimary: Bool, objectClassName: String? = nil,
        isArray: Bool = false, linkOriginPropertyName: String? = nil, isSet: Bool = false, isMap: Bool = false
    ) {
        self.linkOriginPropertyName = linkOriginPropertyName
        self._isSet = isSet ? true : nil
        self._isMap = isMap ? true : nil
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isIndexed = isIndexed
        self.isPrimary = isPrimary
        self.objectClassName = objectClassName
        self._isArray = isArray ? true : nil
    }

    private enum CodingKeys: String, CodingKey {
        case name, type, isOptional, isIndexed, isPrimary, objectClassName, linkOriginPropertyName
        case _isArray = "isArray"
        case _isSet = "isSet"
        case _isMap = "isMap"
    }

    /// Whether the property has an index database: a declared secondary index, or a link,
    /// whose index is its backlinks (the target's key → the keys of the objects linking to it).
    package var hasIndex: Bool { !isArray && ((isIndexed && !isPrimary) || type == .object) }

    /// The kind as a model declares it: the kind's name, or the linked class's.
    package var typeName: String {
        let element = objectClassName ?? type.rawValue
        if type == .linkingObjects { return "LinkingObjects<\(element)>" }
        if isMap { return "Map<string, \(element)\(isOptional ? "?" : "")>" }
        return isArray ? "\(isSet ? "MutableSet" : "List")<\(element)\(isOptional ? "?" : "")>" : element
    }

    public var description: String {
        "\(name): \(typeName)\(isOptional && !isArray ? "?" : "")\(isPrimary ? " (primary key)" : "")\(isIndexed ? " (indexed)" : "")"
    }
}

/// The persisted shape of one model class: its name and its properties in storage order.
public struct ObjectSchema: Sendable, Codable, Hashable, CustomStringConvertible {
    /// The class name stored in the file (the Swift class name without its module).
    public let className: String
    /// The persisted properties, in the order their values are stored.
    public let properties: [Property]
    /// The groups of properties indexed together, each in its order (see
    /// `Object.compoundIndexes()`).
    public var compoundIndexes: [[String]] { _compoundIndexes ?? [] }
    private let _compoundIndexes: [[String]]?
    /// The groups of properties whose index also holds a copy of each object's record (see
    /// `Object.coveringIndexes()`).
    public var coveringIndexes: [[String]] { _coveringIndexes ?? [] }
    private let _coveringIndexes: [[String]]?
    /// Whether the class is an ``EmbeddedObject``: its objects live inside one parent each.
    /// (Files written before this was recorded say `false` for every class.)
    public var isEmbedded: Bool { _isEmbedded ?? false }
    private let _isEmbedded: Bool?

    package init(
        className: String, properties: [Property], compoundIndexes: [[String]] = [], coveringIndexes: [[String]] = [],
        isEmbedded: Bool = false
    ) {
        self.className = className
        self.properties = properties
        self._compoundIndexes = compoundIndexes.isEmpty ? nil : compoundIndexes
        self._coveringIndexes = coveringIndexes.isEmpty ? nil : coveringIndexes
        self._isEmbedded = isEmbedded ? true : nil
    }

    private enum CodingKeys: String, CodingKey {
        case className, properties
        case _compoundIndexes = "compoundIndexes"
        case _coveringIndexes = "coveringIndexes"
        case _isEmbedded = "isEmbedded"
    }

    /// The primary-key property, if the class has one.
    public var primaryKeyProperty: Property? { properties.first { $0.isPrimary } }

    /// The names of the properties with an index database (declared indexes and links), and
    /// each compound index as its property names joined with "+" (a covering one after
    /// "covering:").
    package var indexedNames: Set<String> {
        Set(properties.filter(\.hasIndex).map(\.name)).union(compoundIndexes.map { $0.joined(separator: "+") })
            .union(coveringIndexes.map { "covering:" + $0.joined(separator: "+") })
    }

    /// The property called `name`, if there is one.
    public subscript(name: String) -> Property? { properties.first { $0.name == name } }

    public var description: String {
        "\(className) {\n" + properties.map { "    \($0)" }.joined(separator: "\n") + "\n}"
    }

    /// Every difference between the schema stored in a file (`self`) and `declared`, one
    /// line each, for a schema-mismatch error. Reordered properties and index changes are no
    /// differences.
    package func differences(from declared: ObjectSchema) -> [String] {
        var lines: [String] = []
        let stored = Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0) })
        let now = Dictionary(uniqueKeysWithValues: declared.properties.map { ($0.name, $0) })
        for p in declared.properties where stored[p.name] == nil {
            lines.append("Property '\(className).\(p.name)' has been added.")
        }
        for p in properties where now[p.name] == nil {
            lines.append("Property '\(className).\(p.name)' has been removed.")
        }
        for p in declared.properties {
            guard let old = stored[p.name] else { continue }
            if old.type != p.type || old.objectClassName != p.objectClassName || old.isArray != p.isArray || old.isSet != p.isSet
                || old.isMap != p.isMap
            {
                lines.append("Property '\(className).\(p.name)' has been changed from '\(old.typeName)' to '\(p.typeName)'.")
            }
            if old.isOptional != p.isOptional {
                lines.append(
                    "Property '\(className).\(p.name)' has been made \(p.isOptional ? "optional" : "required").")
            }
        }
        let oldKey = primaryKeyProperty?.name
        let newKey = declared.primaryKeyProperty?.name
        if oldKey != newKey {
            lines.append(
                "Primary key property '\(className).\(oldKey ?? "none")' has been changed to '\(newKey ?? "none")'.")
        }
        return lines
    }
}
