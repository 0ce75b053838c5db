import Foundation
import LMDBKit
import LMDBRealmFormat

// Delete rules: the links a removed object's deletion cascades through.
extension WriteSession {
    /// The stored link and list columns of `table` whose targets go with a deleted object, and
    /// the class each points to (declared `.cascade`, or of embedded objects).
    func cascadeColumns(of table: Table) -> [(column: Int, target: String)] {
        guard let info = observer.declaredClass(named: table.className), !info.cascading.isEmpty else { return [] }
        return table.schema.properties.enumerated().compactMap { column, property in
            guard info.cascading.contains(property.name), property.type == .object, let target = property.objectClassName else {
                return nil
            }
            return (column, target)
        }
    }

    /// Deletes the targets of cascading links of objects just deleted: each embedded object,
    /// and each other object no link points to any more (one still linked from elsewhere,
    /// through a link that does not cascade, stays).
    func removeCascaded(_ doomed: [(target: String, key: ObjectKey)]) throws {
        try flushIndexEntries()
        var byClass: [String: [ObjectKey]] = [:]
        for (target, key) in doomed { byClass[target, default: []].append(key) }
        for (className, keys) in byClass {
            guard let table = try findTable(named: className) else { continue }
            let embedded = observer.declaredClass(named: className)?.isEmbedded ?? false
            let sources = embedded ? [] : try linkColumns(to: className)
            var unique = Set<ObjectKey>()
            var gone: [ObjectKey] = []
            for key in keys where unique.insert(key).inserted {
                let linked = try key.withBytes { k in
                    try sources.contains { try view.backlinkCount(from: $0.table, column: $0.column, to: k, file: file) > 0 }
                }
                if !linked { gone.append(key) }
            }
            if !gone.isEmpty { try removeObjects(gone, from: table) }
        }
    }

    /// The table of embedded objects the link or list `column` of `table` holds, if it holds
    /// embedded objects.
    func embeddedTargets(of table: Table, column: Int) throws -> Table? {
        let property = table.schema.properties[column]
        guard property.type == .object, let name = property.objectClassName, observer.declaredClass(named: name)?.isEmbedded == true else {
            return nil
        }
        return try findTable(named: name)
    }
}
