import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// Equality, hashing and description of objects, as RealmSwift's: a managed object equals
// another accessor of the same stored object (same file, class and key, read at the same kind
// of version); an unmanaged one only itself.

extension Object: Hashable {
    public static func == (lhs: Object, rhs: Object) -> Bool {
        lhs === rhs || lhs.isSameObject(as: rhs)
    }

    public func hash(into hasher: inout Hasher) {
        guard _realm != nil else {
            hasher.combine(ObjectIdentifier(self))
            return
        }
        hasher.combine(ObjectIdentifier(type(of: self)))
        hasher.combine(_key)
    }

    /// Whether `object` is the same stored object as this one: both managed by the same file,
    /// of the same class, with the same key, and both live (or both frozen at one version).
    /// An unmanaged object is the same only as itself.
    public func isSameObject(as object: Object?) -> Bool {
        guard let object else { return false }
        if object === self { return true }
        guard let a = _realm, let b = object._realm, a.file === b.file, _binding?.table.className == object._binding?.table.className,
            _key == object._key, a.isFrozen == b.isFrozen
        else { return false }
        return !a.isFrozen || a.reading.version == b.reading.version
    }

    /// The class and each persisted property's value, as RealmSwift prints them.
    func _describe() -> String {
        let info = _classInfo
        let base = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        var lines: [String] = []
        if _realm != nil && isInvalidated {
            return "[invalid object]"
        }
        for (column, property) in info.schema.properties.enumerated() {
            let shown: String
            if property.isArray {
                shown = property.isMap ? "Map<String, \(property.typeName)>" : property.isSet ? "MutableSet<\(property.typeName)>" : "List<\(property.typeName)>"
            } else if property.type == .linkingObjects {
                shown = "LinkingObjects<\(property.objectClassName ?? "")>"
            } else if property.type == .object {
                if _realm == nil {
                    let linked = info.fields[column].accessor.linkedObject(at: base + info.fields[column].offset)
                    shown = linked.map { "\(type(of: $0).className()) { … }" } ?? "nil"
                } else {
                    shown = _readField(Int32(column)) == nil ? "nil" : "\(property.objectClassName ?? "") { … }"
                }
            } else {
                let describeField: (UnsafeRawBufferPointer?) -> String = { field in
                    guard let field else { return "nil" }
                    return "\(decodeValue(field, type: property.type))"
                }
                shown = _realm == nil
                    ? withExtendedLifetime(self) { info.fields[column].accessor.withValueBytes(at: base + info.fields[column].offset, describeField) }
                    : describeField(_readField(Int32(column)))
            }
            lines.append("\t\(property.name) = \(shown);")
        }
        return "\(info.schema.className) {\n" + lines.joined(separator: "\n") + "\n}"
    }
}

/// Gives an object class `Identifiable` conformance with an identity that works for realm
/// objects, as RealmSwift's protocol of this name does:
///
/// ```swift
/// final class Note: Object, ObjectKeyIdentifiable {
///     @Persisted var title: String
/// }
/// ForEach(notes) { note in … }          // any API that takes Identifiable values
/// ```
///
/// Managed objects that are the same stored object (``Object/isSameObject(as:)``: same class
/// and key) have the same `id`, whichever accessor or handle reads it; an unmanaged object's
/// `id` is its own, and changes when it is added. A class whose own `id` property is not a
/// `UInt64` conforms to `Identifiable` through that property instead.
public protocol ObjectKeyIdentifiable: Identifiable {
    /// The stable identity of the object.
    var id: UInt64 { get }
}

extension ObjectKeyIdentifiable where Self: Object {
    /// The stable identity of the object: for a managed object, a 64-bit hash (FNV-1a) of its
    /// class name and its key, the same for every accessor of it; for an unmanaged one, its
    /// address.
    public var id: UInt64 {
        guard _realm != nil, let binding = _binding else {
            return UInt64(UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()))
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        for byte in binding.table.className.utf8 { mix(byte) }
        mix(0)
        _key.withBytes { for byte in $0 { mix(byte) } }
        return hash
    }
}
