import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// The accessor side of to-one links: a link field holds the target's key; reading it looks
// the target up in the realm's current version, writing it stores the key (adding an
// unmanaged target first, as RealmSwift does).
extension Object {
    /// The object declared column `column` links to, or `nil` if the link is unset or its
    /// target is gone.
    final func _readLink(_ column: Int32, to type: Object.Type) -> Object? {
        guard let realm = _realm else {
            // The key-path recorder: the read is what it records.
            return ClassInfo.recordLink(column, to: type)
        }
        // The target's binding first: finding it may write (a table's indexes brought up to
        // date inside a write). After it, the link's field is lent to the lookup as it lies in
        // the record, in the memory map, where nothing moves it during a read; only a primary
        // key's field sits in a buffer the next key read reuses, and a link is never one.
        guard let binding = realm.bindingForReading(type), let key = _readField(column) else { return nil }
        return realm.lookUp(binding, key: key)
    }

    /// Links declared column `column` to `target` (`nil` unlinks). An unmanaged target is
    /// added to the realm first; a failure to add it is the write's failure.
    final func _writeLink(_ column: Int32, _ target: Object?) {
        guard let realm = _realm else {
            fatalError("a key path recorder cannot be written to")
        }
        realm.checkWriteThread()
        guard realm.writing.failure == nil else { return }
        if let target {
            if let owner = target._realm {
                require(owner.file === realm.file, "Cannot link to an object managed by a Realm of another file.")
                require(
                    !(target is EmbeddedObject) || (_readField(column).map { $0.elementsEqual(target._key.withBytes { Array($0) }) } ?? false),
                    "Cannot set a link to an existing managed embedded object")
            } else {
                do {
                    try realm.addLinked(target)
                } catch {
                    realm.recordWriteFailure(error, doing: "Cannot add a linked object of '\(type(of: target).className())' to")
                    return
                }
            }
        }
        _writeField(column, target)
    }
}
