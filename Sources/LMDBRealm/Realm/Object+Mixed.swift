import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// The managed side of `AnyRealmValue` properties and elements: a link is read by the class
// name stored with it, and an unmanaged object set is added first.
extension Object {
    /// The mixed value of declared column `column`.
    final func _readMixed(_ column: Int32) -> AnyRealmValue {
        // The key-path recorder reads its marker, a string.
        guard let realm = _realm else { return AnyRealmValue.decodeValue(_readField(column)) }
        return realm.decodeMixed(_readField(column))
    }

    /// Sets declared column `column` to `value`, adding an unmanaged object it holds.
    final func _writeMixed(_ column: Int32, _ value: AnyRealmValue) {
        guard let realm = _realm else { fatalError("a key path recorder cannot be written to") }
        realm.checkWriteThread()
        guard realm.manageMixed(value) else { return }
        _writeField(column, value)
    }
}

extension Realm {
    /// A stored mixed value; a link as its object (`.none` once the object is gone).
    func decodeMixed(_ field: UnsafeRawBufferPointer?) -> AnyRealmValue {
        guard let field, let (kind, payload) = MixedField.split(field), kind == .object else { return AnyRealmValue.decodeValue(field) }
        guard let (className, key) = MixedField.link(payload) else { return .none }
        let object: Object?
        if let type = file.classInfo(named: className)?.type, configuration.objectTypes?.contains(where: { $0 == type }) ?? true {
            object = linkedObject(type, key: key)
        } else {
            object = dynamicBinding(named: className).flatMap { dynamicLinked($0, key: Array(key)) }
        }
        return object.map(AnyRealmValue.object) ?? .none
    }

    /// Makes sure an object `value` holds is stored in this file, adding an unmanaged one.
    /// Returns false if that failed (the write's failure is recorded).
    func manageMixed(_ value: AnyRealmValue) -> Bool {
        guard case .object(let object) = value else { return true }
        if let owner = object._realm {
            require(owner.file === file, "Cannot store an object managed by a Realm of another file in an AnyRealmValue.")
            return true
        }
        require(!(object is EmbeddedObject), "An AnyRealmValue cannot hold an embedded object")
        do {
            try addLinked(object)
            return true
        } catch {
            recordWriteFailure(error, doing: "Cannot add an object of '\(type(of: object).className())' held by an AnyRealmValue to")
            return false
        }
    }
}
