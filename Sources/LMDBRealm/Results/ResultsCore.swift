import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// One step of a `Results` chain, applied in the order written.
enum ResultsStep: Sendable, Hashable {
    case filter(QueryNode)
    case sort([SortDescriptor])
    case distinct([String])
    case limit(Int)
}

/// The shared, mutable part of a `Results`: the realm, the class, the chain of steps, and what
/// evaluation cached for the realm's current version.
final class ResultsCore {
    let realm: Realm
    let info: ClassInfo
    let steps: [ResultsStep]
    private(set) var binding: TableBinding?
    /// The same chain on this realm frozen, while anything holds it: the subscribers of one
    /// query share one frozen evaluation of each version (not kept alive here, so a live
    /// `Results` pins no old version).
    weak var frozen: ResultsCore?

    /// An evaluated object: its key, and its record borrowed at the generation of the
    /// evaluation (or only that generation, when the record was left out).
    typealias Entry = (key: ObjectKey, record: BorrowedRecord)

    /// The evaluated objects and their records, valid while `entriesGeneration` is the
    /// realm's generation. Unless `entriesHaveRecords`, some records may be left out.
    private var entries: [Entry] = []
    private var entriesGeneration: UInt64 = 0
    private var entriesHaveRecords = true
    private var keys: [ObjectKey] = []
    private var keysGeneration: UInt64 = 0

    init(realm: Realm, info: ClassInfo, steps: [ResultsStep] = []) {
        self.realm = realm
        self.info = info
        self.steps = steps
    }

    /// A core for this chain with `step` appended.
    func appending(_ step: ResultsStep) -> ResultsCore {
        ResultsCore(realm: realm, info: info, steps: steps + [step])
    }

    /// Whether this is the whole table, unfiltered and unshaped.
    var isWholeTable: Bool { steps.isEmpty }

    /// The class's table binding, once the file has the class.
    func resolveBinding() -> TableBinding? {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        if let binding, binding.table === realm.currentTable(binding) { return binding }
        binding = realm.bindingForReading(info)
        return binding
    }

    // MARK: - Planning

    /// The filters before the first shaping step, as one query; the rest of the chain.
    private func split() -> (query: QueryNode?, rest: ArraySlice<ResultsStep>) {
        var query: QueryNode?
        var index = steps.startIndex
        while index < steps.endIndex, case .filter(let node) = steps[index] {
            query = query.map { $0 && node } ?? node
            index += 1
        }
        return (query, steps[index...])
    }

    /// The plan for the leading filters, with the sort and limit that follow them when a
    /// walk in index order can serve both.
    private func plan(_ binding: TableBinding) -> (plan: QueryPlan, consumed: Int) {
        let (query, rest) = split()
        let compiler = QueryCompiler(table: binding.table, binding: binding, realm: realm)
        let planner = QueryPlanner(table: binding.table, compiler: compiler, view: realm.queryView())
        if let first = rest.first, case .sort(let sort) = first {
            var limit: Int?
            if rest.count >= 2, case .limit(let n) = rest[rest.startIndex + 1] { limit = n }
            let plan = planner.plan(query, sort: sort, limit: limit)
            switch plan.access {
            case .ordered, .compound: return (plan, limit == nil ? 1 : 2)
            default: return (plan, 0)
            }
        }
        return (planner.plan(query, sort: [], limit: nil), 0)
    }

    /// How the chain is answered, for tests and debugging: the access path, then the steps
    /// applied after it.
    func explain() -> String {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        guard let binding = resolveBinding() else { return "no objects: \(info.schema.className) is not in the file" }
        let (plan, consumed) = plan(binding)
        var parts = [plan.description]
        if consumed == 2, case .limit(let n)? = split().rest.dropFirst().first { parts.append("stop after \(n)") }
        for step in split().rest.dropFirst(consumed) {
            switch step {
            case .filter(let node): parts.append("then filter \(node)")
            case .sort(let descriptors): parts.append("then sort by \(descriptors.map(\.description).joined(separator: ", "))")
            case .distinct(let names): parts.append("then distinct by \(names.joined(separator: ", "))")
            case .limit(let n): parts.append("then limit \(n)")
            }
        }
        return parts.joined(separator: "; ")
    }

    // MARK: - Evaluation

    /// The number of objects, without creating any: table statistics for a whole table, an
    /// index count for a lone indexed equality, a filtered walk otherwise.
    func count() -> Int {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        guard let binding = resolveBinding() else { return 0 }
        let txn = realm.queryView()
        if countGeneration == realm.generation { return cachedCount }
        let n = computeCount(binding, txn)
        cachedCount = n
        countGeneration = realm.generation
        return n
    }

    private var cachedCount = 0
    private var countGeneration: UInt64 = 0

    private func computeCount(_ binding: TableBinding, _ txn: StoreView) -> Int {
        let (query, rest) = split()
        if rest.isEmpty {
            let executor = QueryExecutor(reader: realm, table: binding.table, view: txn)
            if query == nil { return realm.objectCount(of: binding.table, in: txn) }
            return executor.count(plan(binding).plan)
        }
        if rest.count == 1, case .limit(let n) = rest.first! {
            return min(max(n, 0), ResultsCore(realm: realm, info: info, steps: Array(steps.dropLast())).count())
        }
        return evaluate(records: false).count
    }

    /// Every object of the chain with its record, in order; cached per realm version.
    ///
    /// With `records` false, objects an index walk found may come without their records (a
    /// record left out), when no step after the walk needs them: for callers that make
    /// accessors, which look a record up on first read.
    func evaluate(records: Bool = true) -> [Entry] {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        let txn = realm.queryView()
        if entriesGeneration == realm.generation {
            if records && !entriesHaveRecords { loadRecords(txn) }
            return entries
        }
        entries.removeAll(keepingCapacity: true)
        entriesHaveRecords = true
        defer { entriesGeneration = realm.generation }
        guard let binding = resolveBinding() else { return entries }
        let table = binding.table
        let (plan, consumed) = plan(binding)
        let executor = QueryExecutor(reader: realm, table: table, view: txn)
        var remaining = split().rest.dropFirst(consumed)
        // A lone limit stops the walk early too.
        var stopAfter: Int?
        if consumed == 2, case .limit(let n)? = split().rest.dropFirst().first { stopAfter = n }
        if case .limit(let n)? = remaining.first, case .fullScan = plan.access {
            stopAfter = n
            remaining = remaining.dropFirst()
        }
        if let n = stopAfter, n <= 0 { return entries }
        // The steps after the walk read records.
        entriesHaveRecords = records || !remaining.isEmpty
        // Collected in a local array: appending to the property would check it for exclusive
        // access every time.
        var found: [Entry] = []
        swap(&found, &entries)
        let limit = stopAfter ?? Int.max
        if let stopAfter { found.reserveCapacity(Swift.min(stopAfter, 4096)) }
        let generation = realm.generation
        executor.forEach(plan, records: entriesHaveRecords) { key, record in
            found.append((ObjectKey(key), BorrowedRecord(record, at: generation)))
            return found.count < limit
        }
        swap(&found, &entries)
        // Index paths visit objects in value order; unsorted results are in key order.
        switch plan.access {
        case .indexKeys(_, let keys) where keys.count > 1: sortByKey()
        case .indexRange, .indexPrefix: sortByKey()
        default: break
        }
        for step in remaining {
            switch step {
            case .filter(let node):
                let matcher = QueryCompiler(table: table, binding: binding, realm: realm).compile(node)
                entries = entries.filter { e in e.key.withBytes { key in e.record.read(at: generation) { matcher(key, $0) } } }
            case .sort(let descriptors):
                sort(by: descriptors, table: table)
            case .distinct(let names):
                distinct(by: names, table: table)
            case .limit(let n):
                if entries.count > max(n, 0) { entries.removeLast(entries.count - max(n, 0)) }
            }
        }
        return entries
    }

    /// Looks up the records an evaluation without them left out.
    private func loadRecords(_ txn: StoreView) {
        let table = binding!.table
        let generation = realm.generation
        for i in entries.indices where !entries[i].record.isCurrent(at: generation) {
            let found: UnsafeRawBufferPointer?
            do {
                found = try entries[i].key.withBytes { try txn.record(of: table, key: $0) }
            } catch {
                realm.cannotRead("objects of '\(table.className)'", error)
            }
            guard let found else {
                fatalError("The realm at '\(realm.file.url.path)' is damaged: an index of '\(table.className)' names a missing object")
            }
            table.checkRecord(found, in: realm.file)
            entries[i].record = BorrowedRecord(found, at: generation)
        }
        entriesHaveRecords = true
    }

    private func sortByKey() {
        entries.sort { a, b in a.key.withBytes { x in b.key.withBytes { y in ByteOrder.compare(x, y) < 0 } } }
    }

    /// A stable sort of `entries` by `descriptors`. Keys through links are read once per
    /// object before sorting; an object whose link is `nil` sorts as a `nil` value (first
    /// when ascending).
    private func sort(by descriptors: [SortDescriptor], table: Table) {
        enum Order {
            case field(FieldOrder)
            case linked(values: [[UInt8]?], type: PropertyType)
        }
        let generation = realm.generation
        let orders: [(Order, Bool)] = descriptors.map { d in
            guard d.keyPath.isKeyPath else {
                return (.field(FieldOrder(table: table, column: realm.storedColumn(d.keyPath, of: table, for: "sort"), file: realm.file)), d.ascending)
            }
            let (values, type) = valuesThroughLinks(d.keyPath, generation: generation)
            return (.linked(values: values, type: type), d.ascending)
        }
        entries = entries.enumerated().sorted { a, b in
            for (order, ascending) in orders {
                let c: Int
                switch order {
                case .field(let order):
                    c = a.element.record.read(at: generation) { x in b.element.record.read(at: generation) { y in order.compare(x, y) } }
                case .linked(let values, let type):
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

    /// For each entry, the bytes of the property `path` reaches through to-one links (`nil`
    /// where a link on the way is `nil` or its target is gone), and the property's kind.
    private func valuesThroughLinks(_ path: String, generation: UInt64) -> (values: [[UInt8]?], type: PropertyType) {
        var names = path.split(separator: ".").map(String.init)
        let last = names.removeLast()
        var binding = self.binding!
        var steps: [(column: Int, table: Table)] = []
        var reachable = true
        for name in names {
            let declared = binding.classInfo.schema.properties.firstIndex { $0.name == name }!
            let target = binding.classInfo.links.first { $0.column == declared }!.target
            let column = realm.storedColumn(name, of: binding.table, for: "sort")
            guard let next = realm.bindingForReading(target) else {
                reachable = false
                break
            }
            steps.append((column, next.table))
            binding = next
        }
        let type = ClassInfo.of(binding.classInfo.type).schema[last]!.type
        guard reachable else { return (Array(repeating: nil, count: entries.count), type) }
        let column = realm.storedColumn(last, of: binding.table, for: "sort")
        let file = realm.file
        let first = self.binding!.table
        let values: [[UInt8]?] = entries.map { entry in
            entry.record.read(at: generation) { record -> [UInt8]? in
                var record = record
                var current = first
                for step in steps {
                    guard let key = current.field(record.baseAddress!, size: record.count, column: step.column, in: file),
                        let next = realm.linkedRecord(of: step.table, key: key)
                    else { return nil }
                    record = next
                    current = step.table
                }
                return current.field(record.baseAddress!, size: record.count, column: column, in: file).map(Array.init)
            }
        }
        return (values, type)
    }

    /// Keeps the first object of each combination of values of `names`.
    private func distinct(by names: [String], table: Table) {
        let columns = names.map { realm.storedColumn($0, of: table, for: "distinct") }
        var seen = Set<[UInt8]>()
        let generation = realm.generation
        entries = entries.filter { e in
            var signature: [UInt8] = []
            for c in columns {
                let f = e.record.read(at: generation) { table.field($0.baseAddress!, size: $0.count, column: c, in: realm.file) }
                var part: [UInt8] = []
                KeyEncoding.append(f, type: table.schema.properties[c].type, to: &part)
                withUnsafeBytes(of: UInt32(part.count)) { signature.append(contentsOf: $0) }
                signature.append(contentsOf: part)
            }
            return seen.insert(signature).inserted
        }
    }

    /// The keys of the chain's objects, in order; cached per realm version.
    func evaluatedKeys() -> [ObjectKey] {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        let txn = realm.readView()
        if keysGeneration == realm.generation { return keys }
        keys.removeAll(keepingCapacity: true)
        if isWholeTable {
            if let binding = resolveBinding() {
                do {
                    try txn.forEachKey(of: binding.table) { keys.append(ObjectKey($0)) }
                } catch {
                    realm.cannotRead("objects of '\(binding.table.className)'", error)
                }
            }
        } else {
            // Only the keys: an index that decides the query alone needs no record read.
            keys = evaluate(records: false).map(\.key)
        }
        keysGeneration = realm.generation
        return keys
    }

    /// The object at `position`.
    func object(at position: Int) -> Object {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        let txn = realm.readView()
        if !isWholeTable {
            let entries = evaluate()
            require(
                position >= 0 && position < entries.count, "Index \(position) is out of bounds (must be less than \(entries.count)).")
            return realm.makeObject(self.binding!, entries[position])
        }
        let keys = evaluatedKeys()
        require(position >= 0 && position < keys.count, "Index \(position) is out of bounds (must be less than \(keys.count)).")
        let tableBinding = self.binding!
        do {
            let record = try keys[position].withBytes { try txn.record(of: tableBinding.table, key: $0) }
            guard let record else { fatalError("Object has been deleted or invalidated.") }
            return keys[position].withBytes { realm.makeObject(tableBinding, key: $0, record: record) }
        } catch {
            realm.cannotRead("objects of '\(tableBinding.table.className)'", error)
        }
    }

    func lastObject() -> Object? {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        guard let binding = resolveBinding() else { return nil }
        if !isWholeTable {
            guard let last = evaluate().last else { return nil }
            return realm.makeObject(binding, last)
        }
        do {
            return try realm.readView().withLastObject(of: binding.table) { realm.makeObject(binding, key: $0, record: $1) }
        } catch {
            realm.cannotRead("objects of '\(binding.table.className)'", error)
        }
    }

    /// The position of `object` in the chain, or `nil`.
    func index(of object: Object) -> Int? {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        guard object._realm === realm, type(of: object) == info.type, !object.isInvalidated else { return nil }
        let key = object._key
        if isWholeTable { return evaluatedKeys().firstIndex(of: key) }
        return evaluate(records: false).firstIndex { $0.key == key }
    }

    /// Calls `body` with the field of stored column `column` of every object of the chain.
    func forEachField(_ column: Int, _ body: (UnsafeRawBufferPointer?) -> Void) {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        guard let binding = resolveBinding() else { return }
        let table = binding.table
        if isWholeTable || split().rest.isEmpty {
            let txn = realm.queryView()
            let executor = QueryExecutor(reader: realm, table: table, view: txn)
            executor.forEach(plan(binding).plan) { _, record in
                body(table.field(record.baseAddress!, size: record.count, column: column, in: realm.file))
                return true
            }
            return
        }
        let generation = realm.generation
        for e in evaluate() {
            body(e.record.read(at: generation) { table.field($0.baseAddress!, size: $0.count, column: column, in: realm.file) })
        }
    }
}

extension Realm {
    /// The stored column of property `name` of `table`, or stops the process naming the
    /// property (Realm's behaviour for a bad key path in `sorted`, `distinct` and aggregates).
    func storedColumn(_ name: String, of table: Table, for purpose: String) -> Int {
        guard let c = table.schema.properties.firstIndex(where: { $0.name == name }) else {
            fatalError("Cannot \(purpose) on key path '\(name)': property '\(table.className).\(name)' not found.")
        }
        return c
    }

    /// The table the file knows now for `binding`'s class (it changes when indexes do).
    func currentTable(_ binding: TableBinding) -> Table? {
        bindingForReading(binding.classInfo)?.table
    }
}
