import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension Object {
    /// The value of the persisted property called `key` (RealmSwift's key-value coding, as
    /// the subscript reads it).
    public func value(forKey key: String) -> Any? { key == "self" ? self : self[key] }

    /// The value at the end of `keyPath`, a property name or names through to-one links
    /// (`"byline.name"`): `nil` where a link on the way is `nil`. `"self"` is the object.
    /// - Precondition: Each name is a persisted property of the class reached there.
    public func value(forKeyPath keyPath: String) -> Any? {
        var current: Any? = self
        for name in keyPath.split(separator: ".", omittingEmptySubsequences: false) {
            guard let object = current as? Object else { return nil }
            current = object.value(forKey: String(name))
        }
        return current
    }

    /// Sets the persisted property called `key`, as the subscript does:
    /// `dog.setValue("Sparky", forKey: "name")` inside a write.
    public func setValue(_ value: Any?, forKey key: String) { self[key] = value }

    /// The value of the persisted property called `key`, by name (RealmSwift's key-value
    /// access): a `nil` optional is `nil`, a link its object, a list its `List`. Setting it
    /// needs a write transaction on a managed object, as the property's setter does.
    /// - Precondition: The class has a persisted property `key`, and a value set is of its
    ///   type (an integer of another width is converted when it fits).
    public subscript(key: String) -> Any? {
        get {
            if self is DynamicObject { return _dynamicValue(key) }
            let (info, column) = Self.persistedProperty(key, of: self)
            let base = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
            let field = info.fields[column]
            return withExtendedLifetime(self) { field.accessor.anyValue(of: self, column: Int32(column), at: base + field.offset) }
        }
        set {
            if self is DynamicObject { return _setDynamicValue(key, newValue) }
            let (info, column) = Self.persistedProperty(key, of: self)
            let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
            let field = info.fields[column]
            let stored = withExtendedLifetime(self) {
                field.accessor.setAnyValue(newValue, of: self, column: Int32(column), at: base + field.offset)
            }
            require(
                stored,
                "Invalid value '\(newValue.map { "\($0)" } ?? "nil")' of type '\(newValue.map { "\(type(of: $0))" } ?? "nil")' for '\(info.schema.className).\(key)' (\(field.accessor.declaredTypeName))")
        }
    }

    private static func persistedProperty(_ key: String, of object: Object) -> (ClassInfo, Int) {
        let info = ClassInfo.of(type(of: object))
        guard let column = info.schema.properties.firstIndex(where: { $0.name == key }) else {
            fatalError("Invalid property name '\(key)' for class '\(info.schema.className)'")
        }
        return (info, column)
    }
}
