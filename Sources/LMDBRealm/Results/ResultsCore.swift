import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// One step of a `Results` chain, applied in the order written.
enum ResultsStep: Sendable, Hashable {
    case filter(QueryNode)
    case sort([SortDescriptor])
    case distinct([String])
    case limit(Int)
    /// Groups the objects into sections by the property named (`nil`: by a key function the
    /// sectioned results apply); always the last step.
    case section(String?)
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
    /// The groups of the plan's sections among `entries` (see `sectionGroups()`), worked out
    /// with them.
    private var groups: [[Int]] = []

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

    /// The whole chain as one plan: the leading filters choose the access path (with the sort
    /// and limit that follow them, when a walk in index order serves both), a limit the walk's
    /// order serves stops it early, and every other step becomes a step of the plan.
    private func plan(_ binding: TableBinding) -> QueryPlan {
        let (query, rest) = split()
        let compiler = QueryCompiler(table: binding.table, binding: binding, realm: realm)
        let planner = QueryPlanner(table: binding.table, compiler: compiler, view: realm.queryView())
        // Filters alone (the common query, counted once per section of a screen): the
        // planner's plan as it is.
        if rest.isEmpty { return planner.plan(query, sort: [], limit: nil) }
        var plan: QueryPlan
        var remaining = rest
        if let first = rest.first, case .sort(let sort) = first {
            var limit: Int?
            if rest.count >= 2, case .limit(let n) = rest[rest.startIndex + 1] { limit = n }
            plan = planner.plan(query, sort: sort, limit: limit)
            switch plan.access {
            case .ordered, .compound:
                remaining = rest.dropFirst(limit == nil ? 1 : 2)
                plan.stopAfter = limit
            default: break
            }
        } else {
            plan = planner.plan(query, sort: [], limit: nil)
        }
        // A lone limit stops a full scan early too.
        if case .limit(let n)? = remaining.first, case .fullScan = plan.access, plan.stopAfter == nil {
            plan.stopAfter = n
            remaining = remaining.dropFirst()
        }
        if case .section(let name)? = remaining.last {
            remaining = remaining.dropLast()
            plan.sections = name.flatMap { name in
                binding.table.schema.properties.firstIndex { $0.name == name }.map { .field(column: $0, name: name) }
            } ?? .perObject
        }
        guard !remaining.isEmpty else { return plan }
        plan.steps = remaining.map { step in
            switch step {
            case .filter(let node): .filter(compiler.compile(node), description: node.description)
            case .sort(let descriptors): .sort(descriptors.map { sortKey($0, binding: binding) })
            case .distinct(let names):
                .distinct(columns: names.map { realm.storedColumn($0, of: binding.table, for: "distinct") }, names: names)
            case .limit(let n): .limit(n)
            case .section: preconditionFailure("sections are the last step")
            }
        }
        return plan
    }

    /// Where `descriptor`'s values come from: a column of the table, or a property at the end
    /// of to-one links (whose classes the file may not hold yet).
    private func sortKey(_ descriptor: SortDescriptor, binding: TableBinding) -> SortKey {
        let table = binding.table
        guard descriptor.keyPath.isKeyPath else {
            let column = realm.storedColumn(descriptor.keyPath, of: table, for: "sort")
            return SortKey(.field(FieldOrder(table: table, column: column, file: realm.file)), ascending: descriptor.ascending, name: descriptor.description)
        }
        var names = descriptor.keyPath.split(separator: ".").map(String.init)
        let last = names.removeLast()
        var current = binding
        var steps: [(column: Int, table: Table)] = []
        for name in names {
            let declared = current.classInfo.schema.properties.firstIndex { $0.name == name }!
            let target = current.classInfo.links.first { $0.column == declared }!.target
            let column = realm.storedColumn(name, of: current.table, for: "sort")
            guard let next = realm.bindingForReading(target) else {
                return SortKey(.unreachable, ascending: descriptor.ascending, name: descriptor.description)
            }
            steps.append((column, next.table))
            current = next
        }
        let type = ClassInfo.of(current.classInfo.type).schema[last]!.type
        let column = realm.storedColumn(last, of: current.table, for: "sort")
        return SortKey(.throughLinks(steps: steps, column: column, type: type), ascending: descriptor.ascending, name: descriptor.description)
    }

    /// How the chain is answered, for tests and debugging: the plan — the access path, then
    /// the steps applied after it.
    func explain() -> String {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        guard let binding = resolveBinding() else { return "no objects: \(info.schema.className) is not in the file" }
        return plan(binding).description
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
            if query == nil { return realm.objectCount(of: binding.table, in: txn) }
            let plan = plan(binding)
            if let n = QueryExecutor.indexCount(plan, in: txn, reader: realm) { return n }
            return realm.executor(for: binding.table, view: txn).count(plan)
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
        groups.removeAll()
        entriesHaveRecords = true
        defer { entriesGeneration = realm.generation }
        guard let binding = resolveBinding() else { return entries }
        let executor = realm.executor(for: binding.table, view: txn)
        let plan = plan(binding)
        entriesHaveRecords = executor.evaluate(plan, records: records, at: realm.generation, into: &entries)
        groups = plan.sections == nil ? [] : executor.sections(plan, of: entries, at: realm.generation)
        return entries
    }

    /// The groups of the chain's sections (its last step is `.section`): each the positions of
    /// the objects of one key, in order, the groups in the order of their first object; cached
    /// per realm version with the objects. Objects whose properties hold the same bytes share a
    /// group; sectioned by a key function, each object is a group of its own.
    func sectionGroups() -> [[Int]] {
        let lock = realm.frozenLock
        lock?.lock()
        defer { lock?.unlock() }
        _ = evaluate()
        return groups
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
            realm.checkRecord(found, of: table)
            entries[i].record = BorrowedRecord(found, at: generation)
        }
        entriesHaveRecords = true
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
            let executor = realm.executor(for: table, view: txn)
            executor.forEach(plan(binding)) { _, record in
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
    /// An executor of queries on `table` over `view` (the realm's query view): the last one
    /// made, while the realm's generation has not moved on since (a new snapshot or any change
    /// in a write moves it, and with it the view), else a new one. An executor is an object on
    /// the heap, and a screen counts one query per section.
    func executor(for table: Table, view: StoreView) -> QueryExecutor {
        if let (executor, made) = tables.lastExecutor, made == generation, executor.table === table { return executor }
        let executor = QueryExecutor(reader: self, table: table, view: view)
        tables.lastExecutor = (executor, generation)
        return executor
    }

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
