import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// The accessor side of a managed Object: reading fields from the realm's snapshot, writing them
// inside a write transaction. The accessors reach the store only through `ObjectStore`
// (LMDBRealmStorage); they are generic over it, and specialized for `Realm`.
extension Object {
    /// The bytes of declared column `column` in the object's current record (`nil`: null).
    ///
    /// Checks confinement, then reuses the record pointer while the realm's generation is
    /// unchanged; otherwise looks the record up again by key (one B-tree descent).
    ///
    /// An accessor made without its record (see ``Realm/makeObject(_:key:)``) reads its primary
    /// key from its key, and looks the record up on the first read of anything else.
    @usableFromInline
    final func _readField(_ column: Int32) -> UnsafeRawBufferPointer? {
        guard _realm != nil else { return ClassInfo.recordAccess(column) }
        // The realm and binding are lent to the read uncounted: the object holds both for the
        // whole call and nothing in it replaces them. (Loaded as usual, each is retained and
        // released around the calls inside: two atomic pairs per property read.)
        return Unmanaged.passUnretained(_realm.unsafelyUnwrapped)._withUnsafeGuaranteedRef { realm in
            Unmanaged.passUnretained(_binding.unsafelyUnwrapped)._withUnsafeGuaranteedRef { binding in
                readField(column, realm: realm, binding: binding)
            }
        }
    }

    @inline(__always)
    private final func readField<Store: ObjectStore>(_ column: Int32, realm: Store, binding: TableBinding) -> UnsafeRawBufferPointer? {
        realm.checkThread()
        let stored = binding.isIdentity ? Int(column) : binding.storedColumn(column)
        if !_record.isCurrent(at: realm.generation) {
            if _record.generation == realm.generation && stored == binding.primaryKeyColumn {
                return primaryKeyField(realm, type: binding.primaryKeyType.unsafelyUnwrapped)
            }
            rebind(realm)
        }
        return _record.read(at: realm.generation) { binding.table.field($0.baseAddress!, size: $0.count, column: stored, in: realm.file) }
    }

    /// The primary key's field, decoded from the object's key into the realm's buffer (valid
    /// until the next such read).
    private final func primaryKeyField<Store: ObjectStore>(_ realm: Store, type: PropertyType) -> UnsafeRawBufferPointer? {
        if type == .int, let value = _key.intPrimaryKey {
            let out = realm.keyFieldBuffer.reserve(8)
            out.storeBytes(of: value.littleEndian, as: Int64.self)
            return UnsafeRawBufferPointer(start: out, count: 8)
        }
        return _key.withBytes { key in
            switch KeyEncoding.field(ofKey: key, type: type, into: realm.keyFieldBuffer.reserve(key.count)) {
            case .value(let field): return field
            case .null: return nil
            case .damaged(let problem):
                fatalError(
                    "The realm at '\(realm.file.url.path)' is damaged: an object of '\(_binding.unsafelyUnwrapped.table.className)' has a bad key (\(problem))")
            }
        }
    }

    /// Makes sure the accessor holds its record in the realm's current version, looking it up
    /// if it was made without one or the realm has changed since; stops the process if the
    /// object is gone.
    @inline(__always)
    final func loadRecord<Store: ObjectStore>(_ realm: Store) {
        if !_record.isCurrent(at: realm.generation) { rebind(realm) }
    }

    /// Writes `value` into declared column `column` of the object's record.
    @usableFromInline
    final func _writeField<Value: _Persistable>(_ column: Int32, _ value: Value) {
        guard let realm = _realm else { fatalError("a key path recorder cannot be written to") }
        guard let stored = prepareFieldWrite(column, in: realm) else { return }
        value._rlmWithBytes { realm.replaceField(of: self, storedColumn: stored, with: $0) }
    }

    /// Checks that declared column `column` may be written now in `realm` (the object's) and
    /// loads the record; returns the stored column, or `nil` once the write has failed (its
    /// commit throws the failure, and nothing more changes).
    @inline(__always)
    final func prepareFieldWrite<Store: ObjectStore>(_ column: Int32, in realm: Store) -> Int? where Store.Accessor == Object {
        realm.checkWriteThread()
        guard !realm.writeHasFailed else { return nil }
        // The table may have gained or lost an index since this accessor was made; the
        // realm's current binding maintains the current set.
        if let current = realm.currentBinding(of: self), current !== _binding { _binding = current }
        let binding = _binding.unsafelyUnwrapped
        let stored = binding.isIdentity ? Int(column) : binding.storedColumn(column)
        if stored == binding.table.primaryKeyColumn {
            fatalError("Primary key can't be changed after an object is inserted.")
        }
        loadRecord(realm)
        return stored
    }

    /// Finds the object's record in the realm's current version, or stops the process if the
    /// object is gone.
    final func rebind<Store: ObjectStore>(_ realm: Store) {
        guard let record = lookUpRecord(realm) else {
            fatalError("Object has been deleted or invalidated.")
        }
        _record = BorrowedRecord(record, at: realm.generation)
    }

    /// The object's record in the realm's current version, checked, or `nil` if deleted.
    final func lookUpRecord<Store: ObjectStore>(_ realm: Store) -> UnsafeRawBufferPointer? {
        let binding = _binding.unsafelyUnwrapped
        let view = realm.readView()
        let record: UnsafeRawBufferPointer?
        do {
            record = try _key.withBytes { try view.record(of: binding.table, key: $0) }
        } catch {
            realm.cannotRead("an object of '\(binding.table.className)'", error)
        }
        guard let record else { return nil }
        realm.checkRecord(record, of: binding.table)
        return record
    }

    /// Stops the process: the value stored in declared column `column` is not one the
    /// property's type can hold (`problem` says why). The message names the file, the class and
    /// the property, so that whoever reads it knows which data an older app met.
    @usableFromInline
    final func _storedValueCannotBeRead(column: Int32, _ problem: String) -> Never {
        guard let realm = _realm, let binding = _binding else { fatalError("An unmanaged object cannot hold \(problem)") }
        let stored = binding.isIdentity ? Int(column) : binding.storedColumn(column)
        let table = binding.table
        let name = stored < table.schema.properties.count ? table.schema.properties[stored].name : "column \(stored)"
        fatalError("The realm at '\(realm.file.url.path)' holds a value of '\(table.className).\(name)' this app cannot read: \(problem)")
    }

    /// Whether the object was deleted, or its realm's write cancelled, so that it can no
    /// longer be read. Unmanaged objects are never invalidated.
    public var isInvalidated: Bool {
        guard let realm = _realm else { return false }
        realm.checkThread()
        if _record.generation == realm.generation { return false }
        guard let record = lookUpRecord(realm) else { return true }
        _record = BorrowedRecord(record, at: realm.generation)
        return false
    }
}
