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
    let options: UInt8

    static var primaryKeyOption: UInt8 { 1 }
    static var indexedOption: UInt8 { 2 }

    /// A property holding its type's default value (`0`, `""`, `nil`, …) until assigned.
    public init() {
        self.init(value: Value._rlmDefaultValue, options: 0)
    }

    /// A property holding `wrappedValue` until assigned, as in `@Persisted var count = 0`.
    public init(wrappedValue: Value) {
        self.init(value: wrappedValue, options: 0)
    }

    init(value: Value, options: UInt8) {
        self.value = value
        self.column = ColumnCounter.next()
        self.options = options
    }

    @available(*, unavailable, message: "@Persisted can only be used on a property of an Object subclass")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Reads and writes the property through its object, managed or not.
    @inlinable
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            if object._isManaged {
                return Value._rlmDecode(object._readField(object[keyPath: storageKeyPath].column))
            }
            return object[keyPath: storageKeyPath].value
        }
        set {
            if object._isManaged {
                object._writeField(object[keyPath: storageKeyPath].column, newValue)
            } else {
                object[keyPath: storageKeyPath].value = newValue
            }
        }
    }
}

extension Persisted where Value: _PrimaryKey {
    /// A property that is (when `primaryKey` is true) the class's primary key.
    public init(primaryKey: Bool) {
        self.init(value: Value._rlmDefaultValue, options: primaryKey ? Self.primaryKeyOption : 0)
    }

    /// A primary-key property with an initial value, as in
    /// `@Persisted(primaryKey: true) var id = ObjectId.generate()`.
    public init(wrappedValue: Value, primaryKey: Bool) {
        self.init(value: wrappedValue, options: primaryKey ? Self.primaryKeyOption : 0)
    }
}

extension Persisted where Value: _Indexable {
    /// A property with (when `indexed` is true) a secondary index.
    public init(indexed: Bool) {
        self.init(value: Value._rlmDefaultValue, options: indexed ? Self.indexedOption : 0)
    }

    /// An indexed property with an initial value.
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
    static func withValueBytes<R>(at wrapper: UnsafeRawPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R
}

extension Persisted: PersistedField {
    static var valueType: PropertyType { Value._rlmType }
    static var valueIsOptional: Bool { Value._rlmOptional }

    static func columnAndOptions(at wrapper: UnsafeRawPointer) -> (column: Int32, options: UInt8) {
        let p = wrapper.assumingMemoryBound(to: Persisted<Value>.self)
        return (p.pointee.column, p.pointee.options)
    }

    static func withValueBytes<R>(at wrapper: UnsafeRawPointer, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try wrapper.assumingMemoryBound(to: Persisted<Value>.self).pointee.value._rlmWithBytes(body)
    }
}
