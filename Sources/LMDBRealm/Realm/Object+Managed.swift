internal import LMDBKit
import Foundation

// The accessor side of a managed Object: reading fields from the realm's snapshot, writing them
// inside a write transaction.
extension Object {
    /// The bytes of declared column `column` in the object's current record (`nil`: null).
    ///
    /// Checks confinement, then reuses the record pointer while the realm's generation is
    /// unchanged; otherwise looks the record up again by key (one B-tree descent).
    @usableFromInline
    final func _readField(_ column: Int32) -> UnsafeRawBufferPointer? {
        guard let realm = _realm else { return ClassInfo.recordAccess(column) }
        realm.checkThread()
        if _generation != realm.generation { rebind(realm) }
        let binding = _binding.unsafelyUnwrapped
        let stored = binding.isIdentity ? Int(column) : binding.storedColumn(column)
        return binding.table.field(_record.unsafelyUnwrapped, size: _recordSize, column: stored, in: realm.file)
    }

    /// Writes `value` into declared column `column` of the object's record.
    @usableFromInline
    final func _writeField<Value: _Persistable>(_ column: Int32, _ value: Value) {
        guard let realm = _realm else {
            fatalError("a key path recorder cannot be written to")
        }
        realm.checkWriteThread()
        // The table may have gained or lost an index since this accessor was made; the
        // realm's current binding maintains the current set.
        if let current = realm.bindingForReading(type(of: self)), current !== _binding { _binding = current }
        let binding = _binding.unsafelyUnwrapped
        let stored = binding.isIdentity ? Int(column) : binding.storedColumn(column)
        if stored == binding.table.primaryKeyColumn {
            fatalError("Primary key can't be changed after an object is inserted.")
        }
        if _generation != realm.generation { rebind(realm) }
        value._rlmWithBytes { realm.replaceField(of: self, storedColumn: stored, with: $0) }
    }

    /// Finds the object's record in the realm's current version, or stops the process if the
    /// object is gone.
    final func rebind(_ realm: Realm) {
        guard let record = lookUpRecord(realm) else {
            fatalError("Object has been deleted or invalidated.")
        }
        _record = record.baseAddress
        _recordSize = record.count
        _generation = realm.generation
    }

    /// The object's record in the realm's current version, checked, or `nil` if deleted.
    final func lookUpRecord(_ realm: Realm) -> UnsafeRawBufferPointer? {
        let binding = _binding.unsafelyUnwrapped
        let txn = realm.readTransaction()
        let record: UnsafeRawBufferPointer?
        do {
            record = try _key.withBytes { try txn.get(binding.table.database.dbi, key: $0) }
        } catch {
            fatalError("Cannot read an object of '\(binding.table.className)' from '\(realm.file.url.path)': \(error)")
        }
        guard let record else { return nil }
        realm.checkRecord(record, of: binding.table)
        return record
    }

    /// Whether the object was deleted, or its realm's write cancelled, so that it can no
    /// longer be read. Unmanaged objects are never invalidated.
    public var isInvalidated: Bool {
        guard let realm = _realm else { return false }
        realm.checkThread()
        if _generation == realm.generation { return false }
        guard let record = lookUpRecord(realm) else { return true }
        _record = record.baseAddress
        _recordSize = record.count
        _generation = realm.generation
        return false
    }
}
