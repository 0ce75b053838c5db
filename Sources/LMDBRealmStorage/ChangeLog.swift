import Foundation
package import LMDBRealmFormat

/// What one write transaction changed, class by class: recorded while anything in the process
/// observes the file, so that observers can compute change sets without comparing records.
package final class ChangeLog: @unchecked Sendable {
    // @unchecked Sendable: written only by the write that records it, on its thread; read-only
    // once published to the file's ``CommitHub`` (the hub's lock orders the two).

    /// The changes to one class's table.
    package final class TableChanges {
        /// Keys stored by the write that were not stored before it (or were, and were deleted
        /// first; observers treat a key both deleted and inserted as replaced).
        package var inserted: [ObjectKey] = []
        package var deleted: [ObjectKey] = []
        /// Keys whose records were rewritten, with the stored columns written.
        package var modified: [ObjectKey: UInt64] = [:]
        /// Every object of the class was deleted.
        package var cleared = false
    }

    package private(set) var tables: [String: TableChanges] = [:]
    /// The catalog changed (a class added, an index built or dropped): observers re-read
    /// everything rather than trust the per-class changes.
    package var catalogChanged = false
    private weak var lastTable: Table?
    private var last: TableChanges?

    package init() {}

    /// The changes of `table`'s class, made on first use.
    @inline(__always)
    package func changes(for table: Table) -> TableChanges {
        if lastTable === table, let last { return last }
        return slowChanges(for: table)
    }

    private func slowChanges(for table: Table) -> TableChanges {
        let changes = tables[table.className] ?? TableChanges()
        tables[table.className] = changes
        lastTable = table
        last = changes
        return changes
    }

    package var isEmpty: Bool { tables.isEmpty && !catalogChanged }

    /// Adds what a nested write recorded.
    package func absorb(_ other: ChangeLog) {
        catalogChanged = catalogChanged || other.catalogChanged
        for (name, theirs) in other.tables {
            let mine = tables[name] ?? TableChanges()
            tables[name] = mine
            if theirs.cleared {
                mine.cleared = true
                mine.inserted.removeAll()
                mine.modified.removeAll()
            }
            mine.inserted += theirs.inserted
            mine.deleted += theirs.deleted
            mine.modified.merge(theirs.modified) { $0 | $1 }
        }
        lastTable = nil
        last = nil
    }

    /// The bit of stored column `column` in a column mask; columns past 62 share the top bit.
    @inline(__always)
    package static func bit(_ column: Int) -> UInt64 {
        column < 63 ? 1 << UInt64(column) : 1 << 63
    }

    package static let allColumns = UInt64.max
}

/// What a run of writes changed in one class, merged: enough to decide whether a result must be
/// re-evaluated and which of its objects were modified.
package struct MergedChanges {
    /// Objects were inserted or deleted (or the class emptied).
    package var structural = false
    /// Keys inserted or deleted at some point: if such a key is in both the old and new
    /// results, its record was replaced, and every column counts as modified.
    package var touched = Set<ObjectKey>()
    /// Keys rewritten in place, with the columns written.
    package var modified: [ObjectKey: UInt64] = [:]
    /// The class was emptied: any object found on both sides was replaced.
    package var cleared = false

    /// No change at all.
    package init() {}

    /// The merged changes of class `className` in `logs`, or `nil` if they did not touch it.
    package init?(_ logs: [ChangeLog], className: String) {
        var any = false
        for log in logs {
            guard let changes = log.tables[className] else { continue }
            any = true
            if changes.cleared { cleared = true }
            if changes.cleared || !changes.inserted.isEmpty || !changes.deleted.isEmpty { structural = true }
            touched.formUnion(changes.inserted)
            touched.formUnion(changes.deleted)
            modified.merge(changes.modified) { $0 | $1 }
        }
        if !any { return nil }
    }

    /// The columns of `key` that changed: all of them for a replaced object.
    package func columns(of key: ObjectKey) -> UInt64 {
        if cleared || touched.contains(key) { return ChangeLog.allColumns }
        return modified[key] ?? 0
    }
}
