@_spi(Reflection) import Swift
import Foundation

/// What the store knows about one Swift model class, discovered once and cached.
///
/// Discovery walks the class's stored fields once (names, offsets and types, from the
/// runtime's field metadata) and creates one prototype to read each wrapper's column number
/// and options. After that, nothing is reflective: encoding an unmanaged object reads each
/// wrapper at its known offset.
final class ClassInfo: @unchecked Sendable {
    // @unchecked Sendable: the stored `let`s are set in init and never mutated; `recorder` and
    // `keyPathNames` are only touched while `ClassInfo.lock` is held.

    /// One persisted property's place in the Swift object.
    struct Field {
        /// Where the wrapper's value sits in the object.
        let offset: Int
        let accessor: any PersistedField.Type
    }

    let type: Object.Type
    /// The declared schema, properties in column (declaration) order.
    let schema: ObjectSchema
    /// Indexed by column.
    let fields: [Field]
    let primaryKeyColumn: Int?

    private init(type: Object.Type) {
        self.type = type
        let className = type.className()
        var found: [(name: String, offset: Int, accessor: any PersistedField.Type)] = []
        let ok = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { name, offset, fieldType, _ in
            if let accessor = fieldType as? any PersistedField.Type {
                var label = String(cString: name)
                if label.hasPrefix("_") { label.removeFirst() }
                found.append((label, offset, accessor))
            }
            return true
        }
        require(ok, "Cannot read the stored properties of \(type); model classes must be non-generic Object subclasses")

        // One prototype tells each wrapper's column and options.
        let prototype = type.init()
        let base = UnsafeRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
        var columns = [(column: Int, property: Property, field: Field)]()
        for f in found {
            let (column, options) = f.accessor.columnAndOptions(at: base + f.offset)
            let property = Property(
                name: f.name, type: f.accessor.valueType, isOptional: f.accessor.valueIsOptional,
                isIndexed: options & 2 != 0, isPrimary: options & 1 != 0)
            columns.append((Int(column), property, Field(offset: f.offset + f.accessor.valueOffset, accessor: f.accessor)))
        }
        withExtendedLifetime(prototype) {}
        columns.sort { $0.column < $1.column }
        require(
            columns.map(\.column) == Array(0..<columns.count),
            "The @Persisted properties of \(className) did not initialise in declaration order; "
                + "do not create other Objects or @Persisted wrappers in its initialisers")

        let properties = columns.map(\.property)
        let keys = properties.indices.filter { properties[$0].isPrimary }
        require(keys.count <= 1, "\(className) declares more than one primary key: \(keys.map { properties[$0].name })")
        self.schema = ObjectSchema(className: className, properties: properties)
        self.fields = columns.map(\.field)
        self.primaryKeyColumn = keys.first
    }

    // MARK: - Key paths

    /// The persisted property `keyPath` reads, or `nil` if it reads none (a computed property
    /// that is not a `@Persisted` wrapper).
    ///
    /// Found by reading the key path on a recorder object whose property reads report their
    /// column instead of returning data; cached per key path.
    func propertyName(for keyPath: AnyKeyPath) -> String? {
        ClassInfo.lock.withLock {
            if let name = keyPathNames[keyPath] { return name }
            ClassInfo.recorded = nil
            _ = recorder[keyPath: keyPath]
            let name = ClassInfo.recorded.map { schema.properties[Int($0)].name }
            ClassInfo.recorded = nil
            keyPathNames[keyPath] = name
            return name
        }
    }

    /// A managed-looking object with no realm: its property reads report their column.
    private lazy var recorder: Object = {
        let object = type.init()
        object._isManaged = true
        return object
    }()

    /// Key paths resolved so far; guarded by `lock`.
    private var keyPathNames: [AnyKeyPath: String?] = [:]

    /// The column the recorder read last; guarded by `lock` (the recorder runs under it).
    nonisolated(unsafe) private static var recorded: Int32?

    /// Called by a recorder's property read.
    static func recordAccess(_ column: Int32) {
        if recorded == nil { recorded = column }
    }

    private static let lock = NSRecursiveLock()
    nonisolated(unsafe) private static var cache: [ObjectIdentifier: ClassInfo] = [:]
    // nonisolated(unsafe): `cache` is only read or written while `lock` is held.

    /// The cached description of `type`, discovered on first use.
    static func of(_ type: Object.Type) -> ClassInfo {
        let id = ObjectIdentifier(type)
        lock.lock()
        if let info = cache[id] {
            lock.unlock()
            return info
        }
        lock.unlock()
        // Discovered outside the lock: the prototype's initialiser is user code.
        let info = ClassInfo(type: type)
        return lock.withLock {
            if let existing = cache[id] { return existing }
            cache[id] = info
            return info
        }
    }
}
