import Foundation
package import LMDBRealmFormat

// The whole of a plan: the walk, then its steps (sort, distinct, limit, later filters).
extension QueryExecutor {
    /// An object a plan found: its key, and its record borrowed at the evaluation's generation
    /// (or only that generation, when the record was left out).
    package typealias Entry = (key: ObjectKey, record: BorrowedRecord)

    /// Runs the whole of `plan` into `found`: walks its access path (stopping where the plan
    /// says), puts what an index walk found in value order back in key order, and applies the
    /// plan's steps in order. Each object comes with its record borrowed at `generation`, unless
    /// `records` is false and no step reads records: an object an index walk found may then
    /// come without it (see ``forEach(_:records:_:)``).
    /// - Returns: Whether every object came with its record.
    package func evaluate(_ plan: QueryPlan, records: Bool, at generation: UInt64, into found: inout [Entry]) -> Bool {
        found.removeAll(keepingCapacity: true)
        if let n = plan.stopAfter, n <= 0 { return true }
        let withRecords = records || !plan.steps.isEmpty || plan.sections != nil
        let limit = plan.stopAfter ?? Int.max
        if let n = plan.stopAfter { found.reserveCapacity(Swift.min(n, 4096)) }
        forEach(plan, records: withRecords) { key, record in
            found.append((ObjectKey(key), BorrowedRecord(record, at: generation)))
            return found.count < limit
        }
        if plan.restoresKeyOrder {
            found.sort { a, b in a.key.withBytes { x in b.key.withBytes { y in ByteOrder.compare(x, y) < 0 } } }
        }
        for step in plan.steps {
            switch step {
            case .filter(let matcher, _):
                found = found.filter { e in e.key.withBytes { key in e.record.read(at: generation) { matcher(key, $0) } } }
            case .sort(let keys):
                sort(&found, by: keys, at: generation)
            case .distinct(let columns, _):
                distinct(&found, by: columns, at: generation)
            case .limit(let n):
                if found.count > Swift.max(n, 0) { found.removeLast(found.count - Swift.max(n, 0)) }
            }
        }
        return withRecords
    }

    /// The groups of `plan`'s sections among `found` (what ``evaluate(_:records:at:into:)``
    /// gave for it, with records): each group the positions in `found` of objects of one key,
    /// in order, and the groups in the order of their first object. By a field, objects whose
    /// fields hold the same bytes share a group (the object layer still merges groups whose
    /// values are equal though their bytes differ, as canonically equivalent strings are); by
    /// a key function, each object is a group of its own. Empty when the plan has no sections.
    package func sections(_ plan: QueryPlan, of found: [Entry], at generation: UInt64) -> [[Int]] {
        switch plan.sections {
        case nil: return []
        case .perObject: return found.indices.map { [$0] }
        case .field(let column, _):
            var groups: [[Int]] = []
            var groupOfBytes: [[UInt8]?: Int] = [:]
            // Sorted by the key, the next object is most often in the group of the one before:
            // its bytes are compared with those, and hashed only when they differ.
            var last: (field: UnsafeRawBufferPointer?, group: Int)?
            for (position, entry) in found.enumerated() {
                let field = entry.record.read(at: generation) { table.field($0.baseAddress!, size: $0.count, column: column, in: file) }
                if let previous = last, Self.sameBytes(previous.field, field) {
                    groups[previous.group].append(position)
                    continue
                }
                let bytes = field.map(Array.init)
                let group: Int
                if let known = groupOfBytes[bytes] {
                    group = known
                    groups[group].append(position)
                } else {
                    group = groups.count
                    groupOfBytes[bytes] = group
                    groups.append([position])
                }
                last = (field, group)
            }
            return groups
        }
    }

    private static func sameBytes(_ a: UnsafeRawBufferPointer?, _ b: UnsafeRawBufferPointer?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
        default: false
        }
    }

    /// A stable sort of `found` by `keys`. Values through links are read once per object
    /// before sorting; an object whose link is `nil` sorts as a `nil` value (first when
    /// ascending).
    private func sort(_ found: inout [Entry], by keys: [SortKey], at generation: UInt64) {
        enum Order {
            case field(FieldOrder)
            case values([[UInt8]?], PropertyType)
        }
        let orders: [(Order, Bool)] = keys.map { key in
            switch key.source {
            case .field(let order): (.field(order), key.ascending)
            case .throughLinks(let steps, let column, let type):
                (.values(valuesThroughLinks(found, steps: steps, column: column, at: generation), type), key.ascending)
            case .unreachable: (.values(Array(repeating: nil, count: found.count), .int), key.ascending)
            }
        }
        found = found.enumerated().sorted { a, b in
            for (order, ascending) in orders {
                let c: Int
                switch order {
                case .field(let order):
                    c = a.element.record.read(at: generation) { x in b.element.record.read(at: generation) { y in order.compare(x, y) } }
                case .values(let values, let type):
                    switch (values[a.offset], values[b.offset]) {
                    case (nil, nil): c = 0
                    case (nil, _): c = -1
                    case (_, nil): c = 1
                    case (let x?, let y?): c = x.withUnsafeBytes { x in y.withUnsafeBytes { y in FieldOrder.compare(x, y, type) } }
                    }
                }
                if c != 0 { return ascending ? c < 0 : c > 0 }
            }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// For each object of `found`, the bytes of column `column` of the object its to-one links
    /// `steps` lead to (`nil` where a link on the way is `nil` or its target is gone).
    private func valuesThroughLinks(_ found: [Entry], steps: [(column: Int, table: Table)], column: Int, at generation: UInt64) -> [[UInt8]?] {
        found.map { entry in
            entry.record.read(at: generation) { record -> [UInt8]? in
                var record = record
                var current = table
                for step in steps {
                    guard let key = current.field(record.baseAddress!, size: record.count, column: step.column, in: file),
                        let next = linkedRecord(of: step.table, key: key)
                    else { return nil }
                    record = next
                    current = step.table
                }
                return current.field(record.baseAddress!, size: record.count, column: column, in: file).map(Array.init)
            }
        }
    }

    /// The record of the object of `table` a link field `key` names, checked, or `nil` (a null
    /// key names no object; a key too long for the file names none either).
    private func linkedRecord(of table: Table, key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard key.count > 0, key.count <= file.maximumKeySize else { return nil }
        let record: UnsafeRawBufferPointer?
        do {
            record = try view.record(of: table, key: key)
        } catch {
            reader.cannotRead("objects of '\(table.className)'", error)
        }
        guard let record else { return nil }
        table.checkRecord(record, in: file, version: checkedVersion)
        return record
    }

    /// Keeps the first object of each combination of values of `columns`.
    private func distinct(_ found: inout [Entry], by columns: [Int], at generation: UInt64) {
        var seen = Set<[UInt8]>()
        found = found.filter { e in
            var signature: [UInt8] = []
            for c in columns {
                let f = e.record.read(at: generation) { table.field($0.baseAddress!, size: $0.count, column: c, in: file) }
                var part: [UInt8] = []
                KeyEncoding.append(f, type: table.schema.properties[c].type, to: &part)
                withUnsafeBytes(of: UInt32(part.count)) { signature.append(contentsOf: $0) }
                signature.append(contentsOf: part)
            }
            return seen.insert(signature).inserted
        }
    }
}
