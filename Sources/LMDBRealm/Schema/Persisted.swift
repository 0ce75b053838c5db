import LMDBRealmFormat
import LMDBRealmStorage

/// Declares a stored property of an ``Object`` subclass.
///
/// ```swift
/// final class Article: Object {
///     @Persisted(primaryKey: true) var id: String
///     @Persisted(indexed: true) var section: String
///     @Persisted var wordCount = 0
///     @Persisted var abstract: String?
/// }
/// ```
///
/// On an unmanaged object the wrapper holds the value like a plain property. Once the object is
/// added to a realm, reads decode the value straight from the record in the realm's snapshot,
/// and writes (inside a write transaction only) update the record.
///
/// Each wrapper learns its column number while its object is initialised: stored properties
/// initialise in declaration order, and a per-thread counter hands out 0, 1, 2 …, which
/// ``Object/init()`` resets. So reading a managed property costs no lookup by name.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline var value: Value
    @usableFromInline let column: Int32
    @usableFromInline let options: UInt8
    /// The object this wrapper is a property of, once it is managed (set by the realm when it
    /// adds the object or makes an accessor; never counted: the object holds its wrappers).
    /// Encoding reads the stored value through it: the synthesized `encode(to:)` of a model
    /// reads the wrappers themselves, not the properties.
    @usableFromInline var owner: Unmanaged<Object>?

    @usableFromInline static var primaryKeyOption: UInt8 { 1 }
    @usableFromInline static var indexedOption: UInt8 { 2 }

    /// A property holding its type's default value (`0`, `""`, `nil`, …) until assigned.
    @inlinable
    public init() {
        self.init(value: Value._rlmDefaultValue, options: 0)
    }

    /// A property holding `wrappedValue` until assigned, as in `@Persisted var count = 0`.
    @inlinable
    public init(wrappedValue: Value) {
        self.init(value: wrappedValue, options: 0)
    }

    // Inlinable so that each model's initialiser is specialised for its property types:
    // creating an accessor then needs no generic metadata lookup (measured: 4% of a scan).
    @inlinable
    init(value: Value, options: UInt8) {
        self.value = value
        self.column = ColumnCounter.next()
        self.options = options
        self.owner = nil
    }

    @available(*, unavailable, message: "@Persisted can only be used on a property of an Object subclass")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Reads and writes the property through its object, managed or not.
    ///
    /// Always inlined into the model's accessors, where the key paths are literals the
    /// optimiser turns into direct field accesses.
    @inlinable
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        @inline(__always) get {
            if object._isManaged {
                return Value._rlmGet(object, column: object[keyPath: storageKeyPath].column)
            }
            return object[keyPath: storageKeyPath].value
        }
        @inline(__always) set {
            if object._isManaged {
                Value._rlmSet(object, column: object[keyPath: storageKeyPath].column, newValue)
            } else {
                object[keyPath: storageKeyPath].value = newValue
            }
        }
    }
}

extension Persisted where Value: _PrimaryKey {
    /// A property that is (when `primaryKey` is true) the class's primary key.
    @inlinable
    public init(primaryKey: Bool) {
        self.init(value: Value._rlmDefaultValue, options: primaryKey ? Self.primaryKeyOption : 0)
    }

    /// A primary-key property with an initial value, as in
    /// `@Persisted(primaryKey: true) var id = ObjectId.generate()`.
    @inlinable
    public init(wrappedValue: Value, primaryKey: Bool) {
        self.init(value: wrappedValue, options: primaryKey ? Self.primaryKeyOption : 0)
    }
}

extension Persisted where Value: _Indexable {
    /// A property with (when `indexed` is true) a secondary index.
    @inlinable
    public init(indexed: Bool) {
        self.init(value: Value._rlmDefaultValue, options: indexed ? Self.indexedOption : 0)
    }

    /// An indexed property with an initial value.
    @inlinable
    public init(wrappedValue: Value, indexed: Bool) {
        self.init(value: wrappedValue, options: indexed ? Self.indexedOption : 0)
    }
}

// MARK: - What the schema needs to know about a wrapper

/// Reads a `Persisted` wrapper inside an object's memory, given the wrapper's offset there
/// (found once per class by ``ClassInfo``). This is how an unmanaged object is encoded
/// without reflection per object.
protocol PersistedField {
    static var valueType: PropertyType { get }
    static var valueIsOptional: Bool { get }
    static func columnAndOptions(at wrapper: UnsafeRawPointer) -> (column: Int32, options: UInt8)
    /// Where the column number sits inside the wrapper.
    static var columnOffset: Int { get }
    /// Where the value sits inside the wrapper.
    static var valueOffset: Int { get }
    /// Where the owning object's reference sits inside the wrapper.
    static var ownerOffset: Int { get }
    /// Lends the record bytes of the value at `value` (a wrapper's address plus
    /// `valueOffset`). Reads the value by its own type, so no wrapper metadata is needed.
    static func withValueBytes<R>(at value: UnsafeRawPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R
    /// Appends the value at `value` to `writer` (the non-generic fast path of `add`).
    static func encodeValue(at value: UnsafeRawPointer, into writer: RecordWriter)
    /// The class a to-one link points to; `nil` for any other property.
    static var linkTarget: Object.Type? { get }
    /// The property's Swift type, as declared.
    static var declaredTypeName: String { get }
    /// What a `List` property holds; `nil` for any other property.
    static var listValue: (any ListValue.Type)? { get }
    /// What reads the collection this wrapper holds on an unmanaged object; `nil` for a
    /// property that is not a `List`, `MutableSet` or `Map`.
    static var unmanagedListReader: (any UnmanagedListReader)? { get }
    /// The object a to-one link at `value` holds (on an unmanaged object), or `nil`.
    static func linkedObject(at value: UnsafeRawPointer) -> Object?
    /// For a `LinkingObjects` property: the class whose property links here, and that
    /// property's name, read from the value at `value`; `nil` for any other property.
    static func linkingOrigin(at value: UnsafeRawPointer) -> (type: Object.Type, property: String)?
    /// Lets go of the object a to-one link at `value` holds, or the elements of a list: once
    /// its object is managed, they live in the file, and a graph with cycles would otherwise
    /// keep itself (and its realm) alive. Only for a link or a collection: any other value
    /// would be reset to its default.
    static func releaseLink(at value: UnsafeMutableRawPointer)
    /// The declared value type.
    static var declaredValueType: Any.Type { get }
    /// The property's value on `object`: read from the file for a managed object, from `value`
    /// (the wrapper's value) for an unmanaged one. A `nil` optional is `nil`.
    static func anyValue(of object: Object, column: Int32, at value: UnsafeRawPointer) -> Any?
    /// Sets the property from `any` as the setter would; false if `any` is not a value of its
    /// type (a number of another width is converted).
    static func setAnyValue(_ any: Any?, of object: Object, column: Int32, at value: UnsafeMutableRawPointer) -> Bool
}

extension Persisted: PersistedField {
    static var valueType: PropertyType { Value._rlmType }
    static var valueIsOptional: Bool { Value._rlmOptional }

    static func columnAndOptions(at wrapper: UnsafeRawPointer) -> (column: Int32, options: UInt8) {
        let p = wrapper.assumingMemoryBound(to: Self.self)
        return (p.pointee.column, p.pointee.options)
    }

    static var valueOffset: Int { MemoryLayout<Self>.offset(of: \Self.value)! }

    static var columnOffset: Int { MemoryLayout<Self>.offset(of: \Self.column)! }

    static var ownerOffset: Int { MemoryLayout<Self>.offset(of: \Self.owner)! }

    static func withValueBytes<R>(at value: UnsafeRawPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try value.assumingMemoryBound(to: Value.self).pointee._rlmWithBytes(body)
    }

    static func encodeValue(at value: UnsafeRawPointer, into writer: RecordWriter) {
        value.assumingMemoryBound(to: Value.self).pointee._rlmWithBytes { writer.append($0) }
    }

    static var linkTarget: Object.Type? { (Value.self as? any LinkValue.Type)?.targetType }
    static var declaredTypeName: String { String(describing: Value.self) }
    static var listValue: (any ListValue.Type)? { Value.self as? any ListValue.Type }

    static var unmanagedListReader: (any UnmanagedListReader)? {
        func reader<Collection: UnmanagedListContents>(_: Collection.Type) -> any UnmanagedListReader {
            TypedListReader<Collection>()
        }
        guard let type = Value.self as? any UnmanagedListContents.Type else { return nil }
        return reader(type)
    }

    static func linkedObject(at value: UnsafeRawPointer) -> Object? {
        let v = value.assumingMemoryBound(to: Value.self).pointee
        return v as? Object ?? (v as? AnyRealmValue)?.object(Object.self)
    }

    static func linkingOrigin(at value: UnsafeRawPointer) -> (type: Object.Type, property: String)? {
        guard let origin = value.assumingMemoryBound(to: Value.self).pointee as? any LinkingObjectsValue else { return nil }
        return (Swift.type(of: origin).originClass, origin.propertyName)
    }

    static var declaredValueType: Any.Type { Value.self }

    static func anyValue(of object: Object, column: Int32, at value: UnsafeRawPointer) -> Any? {
        let v: Value = object._realm == nil ? value.assumingMemoryBound(to: Value.self).pointee : Value._rlmGet(object, column: column)
        if Value._rlmOptional {
            let mirror = Mirror(reflecting: v)
            if mirror.displayStyle == .optional && mirror.children.isEmpty { return nil }
        }
        return v
    }

    static func setAnyValue(_ any: Any?, of object: Object, column: Int32, at value: UnsafeMutableRawPointer) -> Bool {
        let typed: Value
        if let any {
            if let t = any as? Value {
                typed = t
            } else if let integer = any as? any BinaryInteger, let converted = Self.integer(integer) {
                typed = converted
            } else if let decimal = Decimal128.converting(any, to: Value.self) as? Value {
                typed = decimal
            } else if let custom = customPersistableValue(any, as: Value.self) as? Value {
                typed = custom
            } else {
                return false
            }
        } else {
            guard Value._rlmOptional else { return false }
            typed = Value._rlmDefaultValue
        }
        if object._realm == nil {
            value.assumingMemoryBound(to: Value.self).pointee = typed
        } else {
            Value._rlmSet(object, column: column, typed)
        }
        return true
    }

    /// `integer` as the property's integer type, if it is one and holds the value.
    private static func integer(_ integer: any BinaryInteger) -> Value? {
        func convert<T: _PersistableInteger>(_: T.Type) -> Value? { T(exactly: integer) as? Value }
        guard let type = Value.self as? any _PersistableInteger.Type else { return nil }
        return convert(type)
    }

    static func releaseLink(at value: UnsafeMutableRawPointer) {
        value.assumingMemoryBound(to: Value.self).pointee = Value._rlmDefaultValue
    }
}
