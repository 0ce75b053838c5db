import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// Chooses a plan for a query and the sort and limit that follow it.
struct QueryPlanner {
    let table: Table
    let compiler: QueryCompiler
    /// The version the plan runs on, to estimate from index counts; `nil`: no estimates.
    var view: StoreView? = nil

    /// A plan for `query`, then `sort` (the first sort key decides an ordered walk) and
    /// `limit`.
    func plan(_ query: QueryNode?, sort: [SortDescriptor], limit: Int?) -> QueryPlan {
        // Compiled once an access path is chosen: one that answers exactly needs no filter.
        let compiler = compiler
        var filter: Matcher? { query.map(compiler.compile) }
        let conjuncts: [QueryNode]
        switch query {
        case .and(let children): conjuncts = children
        case .some(let node): conjuncts = [node]
        case .none: conjuncts = []
        }

        var best: (rank: Int, access: AccessPath, exact: Bool)?
        for node in conjuncts {
            guard let candidate = access(for: node) else { continue }
            if best == nil || candidate.rank < best!.rank {
                best = (candidate.rank, candidate.access, candidate.exact && conjuncts.count == 1)
            }
        }
        // Equality on the leading columns of a compound index and a sort by its last: the
        // index holds the matching objects in order (a primary-key lookup finds one at most).
        if best?.rank != 0, let (access, exact) = compoundAccess(conjuncts, sort: sort) {
            return QueryPlan(table: table, access: access, filter: exact ? nil : filter, countFromIndex: false)
        }
        // A sort with a limit and no selective lookup walks the sort key's order and stops early;
        // so does one whose equality matches so many objects that the walk meets its limit
        // sooner than the lookup would read them all.
        // Without a limit, a sort with no index lookup to start from walks the sort key's
        // index too: every object is read either way, and the walk spares the comparisons.
        let walksInOrder: Bool
        if let limit {
            walksInOrder = limit >= 0 && (best == nil || best!.rank >= 3 || orderedWalkIsCheaper(best!.access, limit: limit))
        } else {
            walksInOrder = best == nil
        }
        if walksInOrder, let first = sort.first,
            let column = table.schema.properties.firstIndex(where: { $0.name == first.keyPath })
        {
            let isKey = column == table.primaryKeyColumn
            if isKey || table.indexes[column] != nil, sort.count == 1 || isKey {
                return QueryPlan(
                    table: table, access: .ordered(column: isKey ? nil : column, ascending: first.ascending),
                    filter: filter, countFromIndex: false)
            }
        }
        guard let best else {
            return QueryPlan(
                table: table, access: .fullScan, filter: filter, countFromIndex: false,
                filterFieldPosition: query.flatMap(firstColumn).flatMap { FieldPosition(column: $0, in: table) })
        }
        // Links read from their indexes, a primary-key equality and an index equality on keys
        // the index holds whole answer exactly: no record needs testing (nor reading, when
        // only the objects' keys are wanted, as by observers and counts).
        if best.exact {
            switch best.access {
            case .backlinks, .primaryKeys, .indexKeys:
                return QueryPlan(table: table, access: best.access, filter: nil, countFromIndex: true)
            default: break
            }
        }
        return QueryPlan(table: table, access: best.access, filter: filter, countFromIndex: best.exact)
    }

    /// Whether walking the whole table in a sort index's order, testing each object, meets
    /// `limit` matches before reading as many objects as the index lookup `access` finds (which
    /// would then all be sorted). Objects matching the lookup are assumed spread evenly over
    /// the sort order: the walk reads about `limit × total / matches` of them.
    private func orderedWalkIsCheaper(_ access: AccessPath, limit: Int) -> Bool {
        guard let view, case .indexKeys(let column, let keys) = access,
            let matches = try? view.indexCount(of: table, column: column, keys: keys), matches > 0,
            let total = try? view.count(of: table)
        else { return false }
        return Double(max(limit, 1)) * Double(total) / Double(matches) < Double(matches)
    }

    /// A walk of a compound index for `sort` (one key, the index's last column) after
    /// equalities on every other column of the index among `conjuncts`, and whether it
    /// answers them exactly (they are all there is, and no index key can be cut).
    private func compoundAccess(_ conjuncts: [QueryNode], sort: [SortDescriptor]) -> (AccessPath, exact: Bool)? {
        guard sort.count == 1, !table.compoundIndexes.isEmpty else { return nil }
        let sortName = sort[0].keyPath
        // The index with the most leading columns the query fixes.
        var found: (AccessPath, exact: Bool, columns: Int)?
        search: for (i, index) in table.compoundIndexes.enumerated() where index.names.last == sortName {
            if let found, found.columns >= index.columns.count { continue }
            var prefix: [UInt8] = []
            for position in 0..<(index.columns.count - 1) {
                var key: [UInt8]?
                for node in conjuncts {
                    if case .comparison(index.names[position], .equal, let value, let options) = node, options.isEmpty {
                        key = probe(value, index.columns[position])
                        break
                    }
                }
                guard let key, key.count < Table.maximumIndexKeyLength else { continue search }
                KeyEncoding.appendPrefixFree(key: key, type: index.types[position], to: &prefix)
            }
            guard prefix.count < Table.maximumIndexKeyLength else { continue }
            let last = index.types[index.types.count - 1].fixedSize.map { prefix.count + 1 + $0 <= Table.maximumIndexKeyLength }
            let exact = conjuncts.count == index.columns.count - 1 && last == true
            found = (.compound(index: i, prefix: prefix, ascending: sort[0].ascending), exact, index.columns.count)
        }
        return found.map { ($0.0, $0.exact) }
    }

    /// The stored column a matcher for `node` reads first, if any.
    private func firstColumn(_ node: QueryNode) -> Int? {
        switch node {
        case .comparison(let property, _, _, _), .between(let property, _, _), .membership(let property, _),
            .stringMatch(let property, _, _, _):
            // Through a link, the link's own column is read first.
            return compiler.column(String(property.prefix { $0 != "." }))
        case .and(let children), .or(let children):
            return children.first.flatMap(firstColumn)
        case .not(let child):
            return firstColumn(child)
        case .constant, .block, .collection, .aggregate, .elementOf:
            return nil
        }
    }

    /// An index or primary-key path for one conjunct, ranked (lower is better), and whether
    /// the index alone decides it.
    private func access(for node: QueryNode) -> (rank: Int, access: AccessPath, exact: Bool)? {
        switch node {
        case .comparison(let name, _, _, _) where name.isKeyPath, .between(let name, _, _) where name.isKeyPath,
            .membership(let name, _) where name.isKeyPath, .stringMatch(let name, _, _, _) where name.isKeyPath:
            // Through a to-one link: the targets that match, found through their own index, then
            // the objects linking to them (never those whose link is null: the test must fail there).
            let dot = name.firstIndex(of: ".")!
            let rest = node.withProperty(String(name[name.index(after: dot)...]))
            guard !rest.outcomeForNull, let (column, target) = linkTarget(String(name[..<dot])), table.indexes[column] != nil,
                let inner = selectivePlan(rest, on: target)
            else { return nil }
            // Each object links to one target: the targets' backlink counts add up to the count.
            return (inner.rank + 1, .backlinks(column: column, targets: .query(inner.plan)), inner.plan.countFromIndex)
        case .elementOf(let owner, let property, let key):
            // The list's own elements, in its order.
            return (0, .primaryKeys(compiler.listElementKeys(owner: owner, property: property, key: key)), false)
        case .collection(let path, .any, let element) where !path.isKeyPath:
            guard let column = table.schema.properties.firstIndex(where: { $0.name == path }),
                table.lists[column]?.references != nil
            else { return nil }
            switch element {
            case .comparison("self", .equal, .data(let key), _):
                return (1, .backlinks(column: column, targets: .keys([Array(key)])), true)
            case .membership("self", let values):
                var keys: [[UInt8]] = []
                for case .data(let key) in values { keys.append(Array(key)) }
                guard keys.count == values.count else { return nil }
                return (1, .backlinks(column: column, targets: .keys(keys)), false)
            default:
                guard let (_, target) = linkTarget(path), let inner = selectivePlan(element, on: target) else { return nil }
                // One target at most (a primary-key equality): its owners are the answer, each once.
                var single = false
                if case .primaryKeys(let keys) = inner.plan.access, keys.count == 1 { single = inner.plan.countFromIndex }
                return (inner.rank + 1, .backlinks(column: column, targets: .query(inner.plan)), single)
            }
        case .comparison(let name, let op, let value, let options):
            guard options.isEmpty, let column = indexedColumn(name), let key = probe(value, column) else { return nil }
            let isKey = column == table.primaryKeyColumn
            let full = key.count < Table.maximumIndexKeyLength
            switch op {
            case .equal:
                return isKey ? (0, .primaryKeys([key]), true) : (1, .indexKeys(column: column, keys: [key]), full)
            case .notEqual:
                return nil
            case .less, .lessOrEqual, .greater, .greaterOrEqual:
                if case .null = value { return nil }
                // Nulls (tag 0) are never less or greater than a value: start after them.
                let lower: [UInt8]? = (op == .greater || op == .greaterOrEqual) ? key : [KeyEncoding.valueTag]
                let upper: [UInt8]? = (op == .less || op == .lessOrEqual) ? key : nil
                return isKey
                    ? (2, .primaryKeyRange(lower: lower, upper: upper), false)
                    : (3, .indexRange(column: column, lower: lower, upper: upper), false)
            }
        case .membership(let name, let values):
            guard let column = indexedColumn(name), !values.isEmpty else { return nil }
            var keys: [[UInt8]] = []
            for v in values {
                guard let key = probe(v, column) else { return nil }
                keys.append(key)
            }
            keys = Array(Set(keys)).sorted { $0.lexicographicallyPrecedes($1) }
            let full = keys.allSatisfy { $0.count < Table.maximumIndexKeyLength }
            return column == table.primaryKeyColumn
                ? (0, .primaryKeys(keys), true) : (1, .indexKeys(column: column, keys: keys), full)
        case .between(let name, let lower, let upper):
            guard let column = indexedColumn(name), let lo = probe(lower, column), let hi = probe(upper, column),
                lower != .null, upper != .null
            else { return nil }
            return column == table.primaryKeyColumn
                ? (2, .primaryKeyRange(lower: lo, upper: hi), false) : (3, .indexRange(column: column, lower: lo, upper: hi), false)
        case .stringMatch(let name, .beginsWith, let pattern, let options):
            guard options.isEmpty, let column = indexedColumn(name), column != table.primaryKeyColumn,
                table.schema.properties[column].type == .string
            else { return nil }
            var prefix: [UInt8] = [KeyEncoding.valueTag]
            prefix.append(contentsOf: pattern.utf8)
            guard prefix.count < Table.maximumIndexKeyLength else { return nil }
            return (3, .indexPrefix(column: column, prefix: prefix), false)
        default:
            return nil
        }
    }

    /// The stored column of the link or list of objects `name`, and the binding of the class it
    /// points to (when that class has a table).
    private func linkTarget(_ name: String) -> (Int, TableBinding)? {
        guard let column = table.schema.properties.firstIndex(where: { $0.name == name }),
            table.schema.properties[column].type == .object,
            let target = table.schema.properties[column].objectClassName.flatMap(compiler.realm.bindingForReading(className:))
        else { return nil }
        return (column, target)
    }

    /// A plan for `node` on `target` that reads an index or the primary key (not the whole
    /// table), with its rank; `nil` if there is none.
    private func selectivePlan(_ node: QueryNode, on target: TableBinding) -> (plan: QueryPlan, rank: Int)? {
        let planner = QueryPlanner(table: target.table, compiler: QueryCompiler(table: target.table, binding: target, realm: compiler.realm))
        let plan = planner.plan(node, sort: [], limit: nil)
        let rank: Int
        switch plan.access {
        case .primaryKeys: rank = 1
        case .indexKeys, .backlinks(_, .keys): rank = 2
        case .primaryKeyRange: rank = 3
        case .indexRange, .indexPrefix: rank = 4
        case .backlinks(_, .query): rank = 5
        case .fullScan, .ordered, .compound: return nil
        }
        return (plan, rank)
    }

    /// The stored column of `name` if it is the primary key or has an index.
    private func indexedColumn(_ name: String) -> Int? {
        guard let c = table.schema.properties.firstIndex(where: { $0.name == name }) else { return nil }
        return c == table.primaryKeyColumn || table.indexes[c] != nil ? c : nil
    }

    /// The encoded key of `value` for `column`, or `nil` if the value is not of the column's
    /// own kind (then the index's order does not apply, and the query scans).
    private func probe(_ value: QueryValue, _ column: Int) -> [UInt8]? {
        // The kind alone: copying the whole property would count references to its strings.
        let type = table.schema.properties[column].type
        guard let bytes = value.fieldBytes(for: type) else {
            if case .null = value, table.schema.properties[column].isOptional { return [KeyEncoding.nullTag] }
            return nil
        }
        var key: [UInt8] = []
        key.reserveCapacity(bytes.count + 9)  // the tag and the key in one allocation (a decimal's may be longer)
        bytes.withUnsafeBytes { KeyEncoding.append($0, type: type, to: &key) }
        if column != table.primaryKeyColumn, key.count > Table.maximumIndexKeyLength {
            key.removeLast(key.count - Table.maximumIndexKeyLength)
        }
        return key
    }
}

extension QueryValue {
    /// The record bytes of this value in a column of kind `type`, when it is exactly of that
    /// kind (an `Int` for an int column, and so on).
    func fieldBytes(for type: PropertyType) -> [UInt8]? {
        switch (self, type) {
        case (.int(let v), .int): withUnsafeBytes(of: v.littleEndian) { Array($0) }
        case (.bool(let v), .bool): [v ? 1 : 0]
        case (.string(let v), .string): Array(v.utf8)
        case (.date(let v), .date): withUnsafeBytes(of: v.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { Array($0) }
        case (.uuid, .uuid), (.objectId, .objectId): rawBytes
        // Through the index only when the index holds the value exactly (its keys are
        // Decimal128's); longer `Decimal`s scan, compared exactly.
        case (.decimal(let v), .decimal): v.isNaN || Decimal128.parse(v.text) == nil ? nil : Array(v.text.utf8)
        case (.int(let v), .decimal): Array(String(v).utf8)
        case (.data(let key), .object): Array(key)
        case (.string(let s), .uuid): UUID(uuidString: s).map { u in withUnsafeBytes(of: u.uuid) { Array($0) } }
        case (.string(let s), .objectId): ObjectId(parsing: s).map { o in withUnsafeBytes(of: o.bytes) { Array($0) } }
        default: nil
        }
    }
}
