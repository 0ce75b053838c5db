import Foundation

// The accessor side of to-one links: a link field holds the target's key; reading it looks
// the target up in the realm's current version, writing it stores the key (adding an
// unmanaged target first, as RealmSwift does).
extension Object {
    /// The object declared column `column` links to, or `nil` if the link is unset or its
    /// target is gone.
    final func _readLink(_ column: Int32, to type: Object.Type) -> Object? {
        guard let realm = _realm else {
            // The key-path recorder: the read is what it records.
            _ = ClassInfo.recordAccess(column)
            return nil
        }
        guard let field = _readField(column) else { return nil }
        // The field may sit in a buffer the next key read reuses: the lookup gets a copy.
        let key = Array(field)
        return key.withUnsafeBytes { realm.linkedObject(type, key: $0) }
    }

    /// Links declared column `column` to `target` (`nil` unlinks). An unmanaged target is
    /// added to the realm first; a failure to add it is the write's failure.
    final func _writeLink(_ column: Int32, _ target: Object?) {
        guard let realm = _realm else {
            fatalError("a key path recorder cannot be written to")
        }
        realm.checkWriteThread()
        guard realm.writeFailure == nil else { return }
        if let target {
            if let owner = target._realm {
                require(owner.file === realm.file, "Cannot link to an object managed by a Realm of another file.")
            } else {
                do {
                    try realm.add(target)
                } catch {
                    realm.recordWriteFailure(error, doing: "Cannot add a linked object of '\(type(of: target).className())' to")
                    return
                }
            }
        }
        _writeField(column, target)
    }
}

extension Realm {
    /// The record of the object of `table` stored under `key`, checked, or `nil` (for queries
    /// that follow links).
    func linkedRecord(of table: Table, key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard key.count <= file.maximumKeySize, let record = record(of: table, key: key, in: readView()) else { return nil }
        checkRecord(record, of: table)
        return record
    }

    /// The object of class `type` stored under `key`, or `nil`.
    func linkedObject(_ type: Object.Type, key: UnsafeRawBufferPointer) -> Object? {
        guard let binding = bindingForReading(type) else { return nil }
        return lookUp(binding, key: key)
    }

    /// Adds `object` and every unmanaged object it links to, targets first, under one policy.
    ///
    /// Objects already managed by this file's realms are linked as they are. A link that leads
    /// back to an object whose add is still in progress (a cycle) is stored once both ends are.
    func insertGraph(_ object: Object, binding: TableBinding, update: UpdatePolicy) throws {
        var inProgress = Set<ObjectIdentifier>()
        var cycles: [(source: Object, column: Int32, target: Object)] = []
        try insertLinked(object, binding: binding, update: update, inProgress: &inProgress, cycles: &cycles)
        for link in cycles {
            link.source._writeLink(link.column, link.target)
            if let writeFailure { throw writeFailure }
        }
    }

    private func insertLinked(
        _ object: Object, binding: TableBinding, update: UpdatePolicy,
        inProgress: inout Set<ObjectIdentifier>, cycles: inout [(source: Object, column: Int32, target: Object)]
    ) throws {
        let info = binding.classInfo
        if !info.links.isEmpty {
            inProgress.insert(ObjectIdentifier(object))
            let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
            for link in info.links {
                let field = info.fields[link.column]
                guard let target = withExtendedLifetime(object, { field.accessor.linkedObject(at: base + field.offset) }) else {
                    continue
                }
                if let owner = target._realm {
                    require(owner.file === file, "Cannot link to an object managed by a Realm of another file.")
                    continue
                }
                if inProgress.contains(ObjectIdentifier(target)) {
                    cycles.append((object, Int32(link.column), target))
                    continue
                }
                let targetBinding = try self.binding(for: type(of: target), create: true)!
                try insertLinked(target, binding: targetBinding, update: update, inProgress: &inProgress, cycles: &cycles)
            }
            inProgress.remove(ObjectIdentifier(object))
        }
        try insert(object, binding: binding, update: update)
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        withExtendedLifetime(object) {
            for link in info.links {
                let field = info.fields[link.column]
                field.accessor.releaseLink(at: base + field.offset)
            }
        }
    }
}
