@_spi(Reflection) import Swift
import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

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
        /// For a `List`, `MutableSet` or `Map`: reads it on an unmanaged object.
        var listReader: (any UnmanagedListReader)? = nil
    }

    let type: Object.Type
    /// The declared schema, properties in column (declaration) order.
    let schema: ObjectSchema
    /// Indexed by column.
    let fields: [Field]
    /// Indexed by column: where each wrapper's column number sits in the object.
    let columnOffsets: [Int]
    /// Where each wrapper's owner reference sits in the object (see ``adopt(_:)``).
    let ownerOffsets: [Int]
    let primaryKeyColumn: Int?
    /// Whether a new object makes a value (an `ObjectId` or `UUID` property generates one) that
    /// an accessor of a stored object must not spend time on.
    let hasGeneratedDefaults: Bool
    /// The declared columns that are to-one links, with the class each points to.
    let links: [(column: Int, target: Object.Type)]
    /// The declared columns that are lists.
    let lists: [Int]
    /// The declared columns that hold one ``AnyRealmValue`` (which may hold an object).
    let mixed: [Int]
    /// The declared columns that are `LinkingObjects`, with the class whose links they collect.
    let backlinks: [(column: Int, origin: Object.Type)]
    /// The links and lists of objects whose targets are deleted with the object: declared
    /// `.cascade`, or holding embedded objects.
    let cascading: Set<String>
    /// Whether the class is an ``EmbeddedObject``.
    let isEmbedded: Bool
    /// Whether this describes a stored class read without its Swift class: its objects are
    /// ``DynamicObject``s, read and written by property name.
    let isDynamic: Bool

    /// A stored class seen through ``DynamicObject``: no Swift fields, no link targets (links
    /// are followed by class name).
    private init(dynamic schema: ObjectSchema) {
        type = DynamicObject.self
        self.schema = schema
        fields = []
        columnOffsets = []
        ownerOffsets = []
        primaryKeyColumn = schema.properties.firstIndex { $0.isPrimary }
        hasGeneratedDefaults = false
        links = []
        lists = schema.properties.indices.filter { schema.properties[$0].isArray }
        mixed = []
        backlinks = []
        cascading = []
        isEmbedded = schema.isEmbedded
        isDynamic = true
    }

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
        ColumnCounter.begin()
        let prototype = type.init()
        let base = UnsafeRawPointer(Unmanaged.passUnretained(prototype).toOpaque())
        var columns = [(column: Int, property: Property, field: Field)]()
        var backlinks: [(column: Int, origin: Object.Type)] = []
        var cascading = Set<String>()
        for f in found {
            let (column, options) = f.accessor.columnAndOptions(at: base + f.offset)
            let target = f.accessor.linkTarget
            require(
                f.accessor.valueType != .object || target != nil || f.accessor.listValue != nil,
                "The to-one link '\(className).\(f.name)' must be optional: declare it as '\(f.accessor.declaredTypeName)?'")
            let list = f.accessor.listValue
            if let list {
                require(
                    list.elementTarget == nil || !list.elementIsOptional || list.isMap,
                    "The list '\(className).\(f.name)' holds optional objects; a list of objects is declared 'List<\(list.elementTarget!.className())>'")
            }
            let origin = f.accessor.linkingOrigin(at: base + f.offset + f.accessor.valueOffset)
            let property = Property(
                name: f.name, type: f.accessor.valueType, isOptional: list?.elementIsOptional ?? f.accessor.valueIsOptional,
                isIndexed: options & 2 != 0 && list == nil, isPrimary: options & 1 != 0,
                objectClassName: (target ?? list?.elementTarget ?? origin?.type)?.className(), isArray: list != nil,
                linkOriginPropertyName: origin?.property, isSet: list?.isSet ?? false, isMap: list?.isMap ?? false)
            if origin != nil { backlinks.append((Int(column), origin!.type)) }
            let objectTarget = target ?? list?.elementTarget
            if let objectTarget, options & 4 != 0 || objectTarget is EmbeddedObject.Type { cascading.insert(f.name) }
            columns.append((Int(column), property, Field(offset: f.offset + f.accessor.valueOffset, accessor: f.accessor, listReader: f.accessor.unmanagedListReader)))
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
        let groups = type.compoundIndexes()
        let covering = type.coveringIndexes()
        for (group, kind) in groups.map({ ($0, "compound index") }) + covering.map({ ($0, "covering index") }) {
            require(group.count >= 2 && Set(group).count == group.count,
                "The \(kind) \(group) of \(className) must name two or more distinct properties")
            for name in group {
                guard let property = properties.first(where: { $0.name == name }) else {
                    fatalError("The \(kind) \(group) of \(className) names '\(name)', which is not a persisted property of it")
                }
                require(!property.isArray && [.bool, .int, .string, .date, .objectId, .uuid].contains(property.type),
                    "The \(kind) \(group) of \(className) names '\(name)', a \(property.typeName): "
                        + "\(kind)es hold bool, int, string, date, ObjectId and UUID properties")
            }
        }
        require(Set(groups).count == groups.count, "\(className) declares one compound index twice")
        require(Set(covering).count == covering.count, "\(className) declares one covering index twice")
        for group in covering where groups.contains(group) {
            fatalError("\(className) declares \(group) as both a compound and a covering index: the covering index answers every query the compound one would")
        }
        self.schema = ObjectSchema(
            className: className, properties: properties, compoundIndexes: groups, coveringIndexes: covering,
            isEmbedded: type is EmbeddedObject.Type)
        self.fields = columns.map(\.field)
        self.columnOffsets = columns.map { $0.field.offset - $0.field.accessor.valueOffset + $0.field.accessor.columnOffset }
        self.ownerOffsets = columns.map { $0.field.offset - $0.field.accessor.valueOffset + $0.field.accessor.ownerOffset }
        self.primaryKeyColumn = keys.first
        self.hasGeneratedDefaults = properties.contains { ($0.type == .objectId || $0.type == .uuid) && !$0.isOptional && !$0.isArray }
        self.links = columns.compactMap { c in c.field.accessor.linkTarget.map { (c.column, $0) } }
        self.lists = columns.filter { $0.field.accessor.listValue != nil }.map(\.column)
        self.mixed = columns.filter { $0.property.type == .mixed && !$0.property.isArray }.map(\.column)
        self.backlinks = backlinks
        self.cascading = cascading
        self.isEmbedded = type is EmbeddedObject.Type
        self.isDynamic = false
        require(
            !isEmbedded || primaryKeyColumn == nil,
            "\(className) is an EmbeddedObject and declares a primary key: embedded objects have none")
    }

    // MARK: - Key paths

    /// The persisted property `keyPath` reads, or `nil` if it is not exactly one `@Persisted`
    /// property (a computed property, even one that reads a single persisted property, is not).
    ///
    /// Found by reading the key path on a recorder object: its property reads report their
    /// column and return a marker value of the column's kind; the key path names the property
    /// only if exactly one read happened and the marker came back unchanged. Cached per key
    /// path.
    /// The persisted property `keyPath` reads first (`byline` for `\.byline?.name`), or `nil`
    /// if it reads none.
    func firstPropertyName(for keyPath: AnyKeyPath) -> String? {
        ClassInfo.lock.withLock { () -> String? in
            ClassInfo.recording = (self, [])
            _ = recorder[keyPath: keyPath]
            let reads = ClassInfo.recording?.reads ?? []
            ClassInfo.recording = nil
            return reads.first.map { schema.properties[Int($0)].name }
        }
    }

    func propertyName(for keyPath: AnyKeyPath) -> String? {
        ClassInfo.lock.withLock { () -> String? in
            // Literal key paths are one object per call site: found by identity first (the
            // cache holds the key path, so its identity is not reused), then by value.
            if let known = keyPathsByIdentity[ObjectIdentifier(keyPath)], known.keyPath === keyPath { return known.name }
            if let name = keyPathNames[keyPath] {
                keyPathsByIdentity[ObjectIdentifier(keyPath)] = (keyPath, name)
                return name
            }
            ClassInfo.recording = (self, [])
            let value = recorder[keyPath: keyPath]
            let reads = ClassInfo.recording?.reads ?? []
            ClassInfo.recording = nil
            var name: String?
            // A failable custom type's optional reads the marker as nil: no value to check.
            let declared = reads.count == 1 ? fields[Int(reads[0])].accessor.declaredValueType : nil
            if reads.count == 1, declared is any _ConvertedPersistable.Type, value is any _Persistable {
                name = schema.properties[Int(reads[0])].name
            } else if reads.count == 1, let persistable = value as? any _Persistable {
                let column = Int(reads[0])
                let marker = markers[column]
                // A link's read returns no object (none can be made without a realm): its one
                // read, of a link column, names it.
                let property = schema.properties[column]
                let isLink = property.type == .object || property.isArray || property.type == .linkingObjects
                // An enum or a custom type need not hold the marker (it is no case, or makes
                // no value): its one read of a column of its stored kind names it.
                let converted = Swift.type(of: persistable) is any _ConvertedPersistable.Type
                let same = converted || persistable._rlmWithBytes { $0.map { $0.elementsEqual(marker) } ?? isLink }
                if same && Swift.type(of: persistable)._rlmType == schema.properties[column].type {
                    name = schema.properties[column].name
                }
            }
            keyPathNames[keyPath] = name
            keyPathsByIdentity[ObjectIdentifier(keyPath)] = (keyPath, name)
            return name
        }
    }

    /// The key path `keyPath` names, through to-one links (`author.name` for
    /// `\.author?.name`), or `nil` if it reads no persisted property or reads it through
    /// something else.
    func keyPathName(for keyPath: AnyKeyPath) -> String? {
        // One property (the cached answer), else a path through links (not cached).
        if let name = propertyName(for: keyPath) { return name }
        return ClassInfo.lock.withLock { () -> String? in
            ClassInfo.recording = (self, [])
            ClassInfo.followedLinks = []
            defer {
                ClassInfo.recording = nil
                ClassInfo.followedLinks = nil
            }
            let value = recorder[keyPath: keyPath]
            guard let (last, reads) = ClassInfo.recording, let links = ClassInfo.followedLinks else { return nil }
            if reads.isEmpty {
                // The path ends at a link: its value is the target's recorder.
                guard !links.isEmpty, let object = value as? Object, object === last.recorder else { return nil }
                return links.joined(separator: ".")
            }
            guard !links.isEmpty, reads.count == 1 else { return nil }
            return last.checkedName(reads[0], value as Any).map { (links + [$0]).joined(separator: ".") }
        }
    }

    /// The name of column `column` if `value` is what a recorder's read of it returns (its
    /// marker, or an enum or custom value of its stored kind).
    private func checkedName(_ column: Int32, _ value: Any) -> String? {
        let property = schema.properties[Int(column)]
        guard let persistable = value as? any _Persistable else { return nil }
        if fields[Int(column)].accessor.declaredValueType is any _ConvertedPersistable.Type { return property.name }
        let isLink = property.type == .object || property.isArray || property.type == .linkingObjects
        let same = persistable._rlmWithBytes { $0.map { $0.elementsEqual(markers[Int(column)]) } ?? isLink }
        return same && Swift.type(of: persistable)._rlmType == property.type ? property.name : nil
    }

    /// Points each wrapper of `object`, of this class, at `object`, so that encoding it reads
    /// its stored values (see `Persisted.encode(to:)`). Called as it becomes managed.
    @inline(__always)
    func adopt(_ object: Object) {
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        let owner = Unmanaged.passUnretained(object)
        ownerOffsets.withUnsafeBufferPointer { offsets in
            for offset in offsets { (base + offset).storeBytes(of: Optional(owner), as: Unmanaged<Object>?.self) }
        }
    }

    /// A managed-looking object with no realm: its property reads report their column.
    private lazy var recorder: Object = {
        ColumnCounter.begin()
        let object = type.init()
        object._isManaged = true
        return object
    }()

    /// Key paths resolved so far; guarded by `lock`.
    private var keyPathNames: [AnyKeyPath: String?] = [:]
    private var keyPathsByIdentity: [ObjectIdentifier: (keyPath: AnyKeyPath, name: String?)] = [:]

    /// Per column, a value of its kind unlikely to be produced by a computed property, as
    /// record bytes; allocated once, for the life of the process (as the class's description).
    private lazy var markers: [UnsafeMutableRawBufferPointer] = schema.properties.enumerated().map { column, property in
        let bytes: [UInt8]
        switch property.type {
        case .bool: bytes = [1]
        case .int: bytes = withUnsafeBytes(of: Int64(97).littleEndian) { Array($0) }  // fits every width
        case .float: bytes = withUnsafeBytes(of: Float(8191.5 + Float(column)).bitPattern.littleEndian) { Array($0) }
        case .double, .date: bytes = withUnsafeBytes(of: (123_456_789.125 + Double(column)).bitPattern.littleEndian) { Array($0) }
        case .string: bytes = Array("mArKeR\u{2603}\(column)".utf8)
        case .decimal: bytes = Array("\(7_000_000_000 + column).25".utf8)
        case .data, .object, .linkingObjects: bytes = Array("marker \(column)".utf8)
        case .mixed: bytes = MixedField.encode(.string, UnsafeRawBufferPointer(start: nil, count: 0)) + Array("mIxEd \(column)".utf8)
        case .uuid: bytes = (0..<16).map { UInt8(truncatingIfNeeded: 0xA5 &+ $0 &+ column) }
        case .objectId: bytes = (0..<12).map { UInt8(truncatingIfNeeded: 0x5A &+ $0 &+ column) }
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        buffer.copyBytes(from: bytes)
        return UnsafeMutableRawBufferPointer(rebasing: buffer[..<bytes.count])
    }

    /// The class being recorded and the columns read so far; guarded by `lock` (the recorder
    /// runs under it).
    nonisolated(unsafe) private static var recording: (info: ClassInfo, reads: [Int32])?
    /// While ``keyPathName(for:)`` records: the links followed so far, by name (a link's read
    /// then returns the recorder of its target, whose reads are recorded in its turn).
    nonisolated(unsafe) private static var followedLinks: [String]?

    /// Whether this thread is reading a key path on a recorder (whose values are markers).
    static var isRecordingOnThisThread: Bool {
        // The recorder runs under `lock`: another thread's recording holds it.
        guard lock.try() else { return false }
        defer { lock.unlock() }
        return recording != nil
    }

    /// Called by a recorder's read of a to-one link: notes the column; while
    /// ``keyPathName(for:)`` records, goes on in the target's class and returns its recorder.
    static func recordLink(_ column: Int32, to target: Object.Type) -> Object? {
        guard let info = recording?.info else { fatalError("an object with no realm was read as if managed") }
        recording!.reads.append(column)
        guard followedLinks != nil else { return nil }
        followedLinks!.append(info.schema.properties[Int(column)].name)
        let next = ClassInfo.of(target)
        recording = (next, [])
        return next.recorder
    }

    /// Called by a recorder's property read: notes the column and returns its marker.
    static func recordAccess(_ column: Int32) -> UnsafeRawBufferPointer? {
        guard let info = recording?.info else { fatalError("an object with no realm was read as if managed") }
        recording!.reads.append(column)
        return UnsafeRawBufferPointer(info.markers[Int(column)])
    }

    private static let lock = NSRecursiveLock()
    nonisolated(unsafe) private static var cache: [ObjectIdentifier: ClassInfo] = [:]
    nonisolated(unsafe) private static var byName: [String: ClassInfo] = [:]
    // nonisolated(unsafe): `cache` and `byName` are only read or written while `lock` is held.

    /// How many classes this process has described so far.
    static var describedCount: Int { lock.withLock { cache.count } }

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
        let cached = lock.withLock {
            if let existing = cache[id] { return existing }
            cache[id] = info
            if byName[info.schema.className] == nil { byName[info.schema.className] = info }
            return info
        }
        // The classes it links to are known too, so that queries can follow its links.
        for link in cached.links where link.target != type { _ = of(link.target) }
        for backlink in cached.backlinks where backlink.origin != type { _ = of(backlink.origin) }
        for column in cached.lists {
            if let target = cached.fields[column].accessor.listValue?.elementTarget, target != type { _ = of(target) }
        }
        return cached
    }

    /// The property a key path names: one of the class's, or one reached through to-one links
    /// (`byline.name`); `nil` if a name on the way is unknown or not a link.
    func property(atKeyPath path: String) -> Property? {
        if !path.isKeyPath { return schema[path] }
        var names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let last = names.removeLast()
        var info = self
        for name in names {
            guard let declared = info.schema.properties.firstIndex(where: { $0.name == name }),
                let target = info.links.first(where: { $0.column == declared })?.target
            else { return nil }
            info = ClassInfo.of(target)
        }
        return info.schema[last]
    }

    nonisolated(unsafe) private static var dynamicCache: [ObjectSchema: ClassInfo] = [:]
    // nonisolated(unsafe): only read or written while `lock` is held.

    /// The description of a stored class read without its Swift class (one per stored schema,
    /// for the life of the process).
    static func dynamic(_ schema: ObjectSchema) -> ClassInfo {
        lock.withLock {
            if let info = dynamicCache[schema] { return info }
            let info = ClassInfo(dynamic: schema)
            dynamicCache[schema] = info
            return info
        }
    }

    /// The discovered class stored under `className`, if any.
    static func named(_ className: String) -> ClassInfo? {
        lock.withLock { byName[className] }
    }
}

extension String {
    /// Whether this names a key path through links (`byline.name`) rather than one property.
    /// (Checked on the UTF-8 bytes: `contains(".")` goes through Foundation's string search,
    /// which costs a microsecond on every query built.)
    var isKeyPath: Bool {
        // Property names are native strings: their bytes are searched in place with memchr.
        if let found = utf8.withContiguousStorageIfAvailable({ $0.isEmpty ? false : memchr($0.baseAddress!, 0x2E, $0.count) != nil }) {
            return found
        }
        return utf8.contains(UInt8(ascii: "."))
    }
}

// MARK: - The class as the storage layer knows it

extension ClassInfo: DeclaredClass {}

extension TableBinding {
    /// The model class bound: the one kind of ``DeclaredClass`` there is.
    @inline(__always)
    var classInfo: ClassInfo { unsafeDowncast(declared, to: ClassInfo.self) }
}

extension StoreFile {
    /// The model class of the file's class `name` (a link's target, a mixed value's class): the
    /// one a realm of this file was opened with or used for it, else the first class of that name
    /// the process described. Two modules may each declare a class of one name; the process-wide
    /// name alone could pick the other module's.
    func classInfo(named name: String) -> ClassInfo? {
        declaredClass(named: name).map { unsafeDowncast($0, to: ClassInfo.self) } ?? ClassInfo.named(name)
    }
}
