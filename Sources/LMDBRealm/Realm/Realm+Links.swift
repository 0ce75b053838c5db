import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// What link accessors and queries read through the realm: the record a link names, list
// elements and backlinks, in the version the realm reads.
extension Realm {
    /// The record of the object of `table` stored under `key`, checked, or `nil` (for queries
    /// that follow links).
    func linkedRecord(of table: Table, key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        // A null (a map value whose object was deleted) names no object.
        guard key.count > 0, key.count <= file.maximumKeySize, let record = record(of: table, key: key, in: readView()) else { return nil }
        checkRecord(record, of: table)
        return record
    }

    func forEachListElement(of table: Table, column: Int, owner: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> Bool) {
        guard let list = table.list(at: column) else { return }
        do {
            try queryView().forEachListElement(list, owner: owner) { _, element in body(element) }
        } catch {
            cannotRead("a list of '\(table.className)'", error)
        }
    }

    func listCount(of table: Table, column: Int, owner: UnsafeRawBufferPointer) -> Int {
        guard let list = table.lists[column] else { return 0 }
        do {
            return try queryView().listCount(list, owner: owner)
        } catch {
            cannotRead("a list of '\(table.className)'", error)
        }
    }

    func forEachBacklink(from origin: Table, column: Int, to target: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) {
        do {
            try queryView().forEachBacklink(from: origin, column: column, to: target, file: file, body)
        } catch {
            cannotRead("the links of '\(origin.className)'", error)
        }
    }

    func backlinkCount(from origin: Table, column: Int, to target: UnsafeRawBufferPointer) -> Int {
        do {
            return try queryView().backlinkCount(from: origin, column: column, to: target, file: file)
        } catch {
            cannotRead("the links of '\(origin.className)'", error)
        }
    }

    /// The object of class `type` stored under `key`, or `nil`.
    func linkedObject(_ type: Object.Type, key: UnsafeRawBufferPointer) -> Object? {
        guard let binding = bindingForReading(type) else { return nil }
        return lookUp(binding, key: key)
    }
}
