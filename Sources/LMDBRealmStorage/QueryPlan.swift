import Foundation
package import LMDBRealmFormat

/// A compiled query: decides from an object's key and record, straight from the memory map,
/// whether the object matches. Only `.block` nodes create an accessor.
package typealias Matcher = (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> Bool

/// How a query reaches its candidate objects.
package enum AccessPath {
    /// Every object, in key order.
    case fullScan
    /// The objects with these table keys (primary-key equality or `IN`).
    case primaryKeys([[UInt8]])
    /// Table keys between two encoded bounds, both included (`nil`: open).
    case primaryKeyRange(lower: [UInt8]?, upper: [UInt8]?)
    /// The objects under these keys of the index of `column` (equality or `IN`).
    case indexKeys(column: Int, keys: [[UInt8]])
    /// Index keys of `column` between two bounds, both included (`nil`: open).
    case indexRange(column: Int, lower: [UInt8]?, upper: [UInt8]?)
    /// Index keys of a string `column` that start with `prefix` (`BEGINSWITH`).
    case indexPrefix(column: Int, prefix: [UInt8])
    /// Every object in the order of the index of `column` (`nil`: the primary key), for a sort
    /// with a limit: the walk stops once the limit is reached.
    case ordered(column: Int?, ascending: Bool)
    /// The entries of compound index `index` of the table whose keys start with `prefix` (the
    /// leading columns' values), in the order of its last column: for equality on the leading
    /// columns sorted by the last.
    case compound(index: Int, prefix: [UInt8], ascending: Bool)
    /// The objects whose link or list of objects `column` holds one of the targets: read from
    /// the link's index or the list's references, in key order, each once.
    case backlinks(column: Int, targets: BacklinkTargets)
}

/// The objects a ``AccessPath/backlinks(column:targets:)`` path starts from.
package indirect enum BacklinkTargets {
    /// These keys (`ANY keywords == %@`, backlinks of one object).
    case keys([[UInt8]])
    /// The objects a query on the target class finds through its own index
    /// (`byline.name == 'Ada'` with `Author.name` indexed).
    case query(QueryPlan)
}

/// One key of a plan's sort: where each object's value comes from, and the direction.
package struct SortKey {
    package enum Source {
        /// A column of the plan's table.
        case field(FieldOrder)
        /// A property reached through to-one links: each step is a link column and the table
        /// it leads to; `column` is the property's column in the last one. An object whose link
        /// on the way is `nil`, or whose target is gone, sorts as a `nil` value.
        case throughLinks(steps: [(column: Int, table: Table)], column: Int, type: PropertyType)
        /// A property through links to a class the file does not hold: `nil` for every object.
        case unreachable
    }

    package let source: Source
    package let ascending: Bool
    /// The key as people write it: "wordCount ascending".
    package let name: String

    package init(_ source: Source, ascending: Bool, name: String) {
        self.source = source
        self.ascending = ascending
        self.name = name
    }
}

/// What a plan does, in order, to the objects its walk finds.
package enum PlanStep {
    /// Keeps the objects that pass `matcher`, a filter written after a sort, distinct or limit.
    case filter(Matcher, description: String)
    /// A stable sort.
    case sort([SortKey])
    /// Keeps the first object of each combination of values of `columns`.
    case distinct(columns: [Int], names: [String])
    /// Keeps the first `n` objects.
    case limit(Int)
}

/// How a plan's objects are grouped into sections (see ``QueryExecutor/sections(_:of:at:)``).
package enum SectionKey {
    /// By the value of `column` of the plan's table: objects whose fields hold the same bytes
    /// share a group. Named `name` in the plan's description.
    case field(column: Int, name: String)
    /// By a value the object layer works out for each object (a key function): one group per
    /// object.
    case perObject
}

/// A query's whole plan: where candidates come from, the test each must pass, when the walk
/// may stop, the steps applied to what it found (sort, distinct, limit, later filters) and how
/// they are grouped into sections.
/// ``QueryExecutor`` runs it; its description is what `Results.explain()` prints.
package struct QueryPlan: CustomStringConvertible {
    package let table: Table
    package let access: AccessPath
    /// The whole query, checked on every candidate; `nil` when there is none.
    package let filter: Matcher?
    /// Whether the index alone answers the count (one equality or `IN` on an index, nothing
    /// else, no probe cut to the index's key length).
    package let countFromIndex: Bool
    /// Where, in records of this table, the column the filter reads first lies, so that a
    /// full scan can prefetch it ahead; `nil` when no fixed offset is known.
    package var filterFieldPosition: FieldPosition? = nil
    /// The walk ends once it has found this many objects (a limit the access path's order
    /// serves: an index-ordered walk's, or a lone limit's on a full scan).
    package var stopAfter: Int?
    /// The steps applied, in order, to the objects the walk found.
    package var steps: [PlanStep] = []
    /// How the objects the steps leave are grouped into sections, for sectioned results.
    package var sections: SectionKey?

    package init(table: Table, access: AccessPath, filter: Matcher?, countFromIndex: Bool, filterFieldPosition: FieldPosition? = nil) {
        self.table = table
        self.access = access
        self.filter = filter
        self.countFromIndex = countFromIndex
        self.filterFieldPosition = filterFieldPosition
    }

    /// Whether the walk finds its objects in value order, and they are put back in key order
    /// (the order of unsorted results) before the steps.
    var restoresKeyOrder: Bool {
        switch access {
        case .indexKeys(_, let keys): keys.count > 1
        case .indexRange, .indexPrefix: true
        default: false
        }
    }

    /// The access path, then what follows it: "index equality on Article.section (1 key);
    /// then sort by wordCount descending; then limit 10".
    package var description: String {
        var parts = [accessDescription]
        if let stopAfter { parts.append("stop after \(stopAfter)") }
        for step in steps {
            switch step {
            case .filter(_, let description): parts.append("then filter \(description)")
            case .sort(let keys): parts.append("then sort by \(keys.map(\.name).joined(separator: ", "))")
            case .distinct(_, let names): parts.append("then distinct by \(names.joined(separator: ", "))")
            case .limit(let n): parts.append("then limit \(n)")
            }
        }
        switch sections {
        case .field(_, let name): parts.append("then sections by \(name)")
        case .perObject: parts.append("then sections by a key function")
        case nil: break
        }
        return parts.joined(separator: "; ")
    }

    /// The access path and the filter alone.
    var accessDescription: String {
        let name = table.className
        func prop(_ c: Int) -> String { "\(name).\(table.schema.properties[c].name)" }
        let what: String
        switch access {
        case .fullScan: what = "full scan of \(name)"
        case .primaryKeys(let keys): what = "primary-key lookup of \(keys.count) key\(keys.count == 1 ? "" : "s") in \(name)"
        case .primaryKeyRange: what = "primary-key range of \(name)"
        case .indexKeys(let c, let keys): what = "index equality on \(prop(c)) (\(keys.count) key\(keys.count == 1 ? "" : "s"))"
        case .indexRange(let c, _, _): what = "index range on \(prop(c))"
        case .indexPrefix(let c, _): what = "index prefix range on \(prop(c))"
        case .ordered(let c, let ascending):
            what = "index-ordered scan of \(c.map(prop) ?? "\(name) primary key") \(ascending ? "ascending" : "descending")"
        case .compound(let i, _, let ascending):
            let columns = table.compoundIndexes[i].columns
            what =
                "\(table.compoundIndexes[i].covering ? "covering" : "compound") index (\(columns.map(prop).joined(separator: ", "))) equality on \(columns.dropLast().map(prop).joined(separator: ", ")), "
                + "in order of \(prop(columns.last!)) \(ascending ? "ascending" : "descending")"
        case .backlinks(let c, .keys(let keys)):
            what = "link lookup on \(prop(c)) (\(keys.count) object\(keys.count == 1 ? "" : "s"))"
        case .backlinks(let c, .query(let inner)):
            what = "link lookup on \(prop(c)) from [\(inner.accessDescription)]"
        }
        return what + (filter == nil ? "" : ", filtered") + (countFromIndex ? ", count from index" : "")
    }
}

/// Where one column's bytes lie in every record of a table, when that does not depend on the
/// record: at a fixed offset from its start when every column before it has a fixed size, or
/// from its end when it and every column after it do (nulls, stored empty, shift it; a
/// prefetch of the wrong line costs only the prefetch).
package enum FieldPosition {
    case fromStart(Int)
    case fromEnd(Int)

    package init?(column: Int, in table: Table) {
        let sizes = (0..<table.columnCount).map { Int(table.fixedSizes[$0]) }
        if sizes[..<column].allSatisfy({ $0 > 0 }) {
            self = .fromStart(Record.headerSize(columns: table.columnCount) + sizes[..<column].reduce(0, +))
        } else if sizes[column...].allSatisfy({ $0 > 0 }) {
            self = .fromEnd(sizes[column...].reduce(0, +) + Record.checksumSize)
        } else {
            return nil
        }
    }

    /// The address of the field in `record`, if it lies inside it.
    @inline(__always)
    package func address(in record: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        let offset: Int
        switch self {
        case .fromStart(let n): offset = n
        case .fromEnd(let n): offset = record.count - n
        }
        guard offset >= 0, offset < record.count, let base = record.baseAddress else { return nil }
        return base + offset
    }
}
