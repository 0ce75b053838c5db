internal import LMDBKit
import LMDBRealmFormat

// Backlinks are not stored apart: the index of a to-one link column maps a target's key to the
// objects linking to it, and a list of objects has its `references` database (target → owners).
// Both are `duplicateSort`, so counting the objects that link to one target is one descent and
// `mdb_cursor_count`, and listing them walks one run of duplicates.
extension StoreView {
    /// Calls `body` with the key of each object of `origin` whose link or list column `column`
    /// holds `target`, in key order, each once, until it returns false.
    package func forEachBacklink(
        from origin: Table, column: Int, to target: UnsafeRawBufferPointer, file: StoreFile,
        _ body: (UnsafeRawBufferPointer) -> Bool
    ) throws {
        let (dbi, probe, cut) = backlinkProbe(origin, column, target)
        guard let dbi else { return }
        let cursor = try UnsafeCursor(transaction: transaction, dbi: dbi)
        var entry = try probe.withUnsafeBytes { try cursor.seek(exactly: $0) }
        while let e = entry {
            if verifiesChecksums && !cut {
                try checkBacklink(from: origin, column: column, owner: e.value, target: target, file: file)
                guard body(e.value) else { return }
            } else if try !cut || linksTo(origin, column, owner: e.value, target: target, file: file) {
                guard body(e.value) else { return }
            }
            entry = try cursor.nextValue()
        }
    }

    /// Throws unless the object `owner` of `origin` holds `target` in its link or list column
    /// `column`, as the backlink entry that named it says.
    ///
    /// Backlink entries have no checksum of their own: they repeat what a record or a list
    /// chunk holds, whose checksum is checked. So, when the configuration asks for checksums
    /// to be checked, each entry used is checked against its owner.
    private func checkBacklink(
        from origin: Table, column: Int, owner: UnsafeRawBufferPointer, target: UnsafeRawBufferPointer, file: StoreFile
    ) throws {
        var holds = false
        if let list = origin.list(at: column) {
            guard try transaction.get(origin.database.dbi, key: owner) != nil else {
                throw DamagedValue(description: "a backlink of '\(origin.className)' is damaged: it names an object that is gone")
            }
            try forEachListElement(list, owner: owner) { _, element in
                guard let element else { return true }
                holds = list.isMap ? MapEntry.part(element, keys: false).elementsEqual(target) : element.elementsEqual(target)
                return !holds
            }
        } else {
            holds = try linksTo(origin, column, owner: owner, target: target, file: file)
        }
        guard holds else {
            throw DamagedValue(description: "a backlink of '\(origin.className)' is damaged: it names an object that does not link to its target")
        }
    }

    /// The number of objects of `origin` whose link or list column `column` holds `target`:
    /// one descent and a duplicate count, no record read (unless the target's key is longer
    /// than an index key, when the candidates are checked).
    package func backlinkCount(from origin: Table, column: Int, to target: UnsafeRawBufferPointer, file: StoreFile) throws -> Int {
        let (dbi, probe, cut) = backlinkProbe(origin, column, target)
        guard let dbi else { return 0 }
        // Counting entries trusts them; with checksums checked, each is checked.
        if cut || verifiesChecksums {
            var n = 0
            try forEachBacklink(from: origin, column: column, to: target, file: file) { _ in
                n += 1
                return true
            }
            return n
        }
        let cursor = try UnsafeCursor(transaction: transaction, dbi: dbi)
        guard try probe.withUnsafeBytes({ try cursor.seek(exactly: $0) }) != nil else { return 0 }
        return try cursor.valueCount()
    }

    /// The database holding `column`'s backlinks, the key to look `target` up under, and
    /// whether that key was cut to the index key length (so it may name other targets too).
    func backlinkProbe(_ origin: Table, _ column: Int, _ target: UnsafeRawBufferPointer) -> (UInt32?, [UInt8], Bool) {
        if let references = origin.list(at: column)?.references { return (references.dbi, Array(target), false) }
        guard let index = origin.indexes[column] else { return (nil, [], false) }
        var probe: [UInt8] = []
        origin.appendIndexKey(target, column: column, to: &probe)
        return (index.dbi, probe, probe.count >= Table.maximumIndexKeyLength)
    }

    /// Whether the object `owner` of `origin` links to `target` through to-one column `column`.
    /// - Throws: The file's error when the owner's record cannot be read: a failed read is
    ///   never an answer ("not linked" would be a wrong count).
    private func linksTo(_ origin: Table, _ column: Int, owner: UnsafeRawBufferPointer, target: UnsafeRawBufferPointer, file: StoreFile) throws -> Bool {
        guard let record = try transaction.get(origin.database.dbi, key: owner) else { return false }
        origin.checkRecord(record, in: file, version: checkedVersion)
        guard let field = origin.field(record.baseAddress!, size: record.count, column: column, in: file) else { return false }
        return field.elementsEqual(target)
    }
}
