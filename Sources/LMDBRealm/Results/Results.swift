internal import LMDBKit
import Foundation

/// Objects of one class in a realm, filtered, sorted and shaped: a live, lazily evaluated
/// collection.
///
/// ```swift
/// let articles = realm.objects(Article.self)
/// let recent = articles.where { $0.section == "Sports" && $0.wordCount > 500 }
///                      .sorted(byKeyPath: "pubDate", ascending: false)
/// print(recent.count)                // no object is created to count
/// for article in recent.limit(20) { … }
/// ```
///
/// Chaining costs nothing until the collection is read, and every read reflects the realm's
/// current version: after ``Realm/refresh()`` or a write, the same `Results` shows the new
/// state. Unsorted objects come in key order (primary-key order, or insertion order for
/// classes without a primary key). ``explain()`` says how a query is answered.
public struct Results<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    let core: ResultsCore

    init(realm: Realm, info: ClassInfo) {
        core = ResultsCore(realm: realm, info: info)
    }

    init(core: ResultsCore) {
        self.core = core
    }

    /// The realm the objects belong to.
    public var realm: Realm? { core.realm }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    // Stated so that stepping an index does not ask for `endIndex` (the count) each time.
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }
    public func index(_ i: Int, offsetBy distance: Int) -> Int { i + distance }
    public func distance(from start: Int, to end: Int) -> Int { end - start }

    /// The number of objects, read from the table's statistics without creating any.
    public var count: Int {
        core.realm.checkThread()
        return core.count()
    }

    /// Whether there are no objects.
    public var isEmpty: Bool { count == 0 }

    /// The object at `position`, in key order.
    public subscript(position: Int) -> Element {
        core.realm.checkThread()
        return unsafeDowncast(core.object(at: position), to: Element.self)
    }

    /// The first object, or `nil` if there is none.
    public var first: Element? {
        var iterator = makeIterator()
        return iterator.next()
    }

    /// The last object, or `nil` if there is none.
    public var last: Element? {
        core.realm.checkThread()
        return core.lastObject().map { unsafeDowncast($0, to: Element.self) }
    }

    public func makeIterator() -> Iterator {
        core.realm.checkThread()
        return Iterator(core: core)
    }

    public var description: String {
        "Results<\(core.info.schema.className)> (\(count) objects)"
    }

    /// How the query is answered: the access path (primary-key lookup, index equality, index
    /// range, index-ordered scan or full scan), then the steps applied after it.
    ///
    /// ```swift
    /// articles.where { $0.section == "Sports" }.explain()
    /// // "index equality on Article.section (1 key), count from index"
    /// ```
    public func explain() -> String {
        core.realm.checkThread()
        return core.explain()
    }

    /// Walks the table with a cursor, a batch of records at a time, creating one accessor per
    /// object; no key list is built.
    public struct Iterator: IteratorProtocol {
        let core: ResultsCore
        private var batch = ContiguousArray<(key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer)>()
        private var position = 0
        private var batchGeneration: UInt64 = 0
        private var lastKey: ObjectKey?
        private var exhausted = false
        /// The accessor returned last. When nothing else holds it any more (the usual
        /// `for object in results { … }`), the next step re-points it at the next record
        /// instead of creating a new accessor.
        private var recycled: Object?

        static var batchSize: Int { 512 }
        /// How many records the next refill reads: the full batch, or fewer while each batch is
        /// abandoned early (a loop that writes invalidates it at every step).
        private var batchLimit = Self.batchSize

        init(core: ResultsCore) {
            self.core = core
            wholeTable = core.isWholeTable
        }

        private let wholeTable: Bool

        /// For a filtered or shaped chain: its objects at the start of the walk.
        private var evaluated: EvaluatedObjects?

        public mutating func next() -> Element? {
            core.realm.checkThread()
            if !wholeTable { return nextEvaluated() }
            let realm = core.realm
            if position == batch.count || batchGeneration != realm.generation {
                if exhausted && batchGeneration == realm.generation { return nil }
                refill()
                if batch.isEmpty { return nil }
            }
            let entry = batch[position]
            position += 1
            let object = accessor(core.binding!, key: entry.key, record: entry.record)
            lastKey = object._key
            return unsafeDowncast(object, to: Element.self)
        }

        /// The next object of a filtered or shaped chain, from the objects it held when the walk
        /// began (as Realm's enumeration does); objects deleted since are skipped.
        private mutating func nextEvaluated() -> Element? {
            if evaluated == nil {
                // Index walks leave the records to the accessors: a loop that reads only the
                // primary key (or stops early) never looks them up.
                let entries = core.evaluate(records: false)
                guard let binding = core.binding else { return nil }
                evaluated = EvaluatedObjects(realm: core.realm, binding: binding, entries: entries)
            }
            // Lent uncounted: the iterator holds it, and nothing in the step replaces it.
            let object = Unmanaged.passUnretained(evaluated.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.next() }
            guard let object else { return nil }
            return unsafeDowncast(object, to: Element.self)
        }

        /// An accessor for the object `key`: the one returned last, re-pointed, when nothing
        /// else holds it any more; a new one otherwise.
        @inline(__always)
        private mutating func accessor(_ binding: TableBinding, key: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer) -> Object {
            let realm = core.realm
            if recycled != nil, isKnownUniquelyReferenced(&recycled!), recycled!._binding === binding {
                realm.rebind(recycled!, key: key, record: record)
                return recycled!
            }
            let object = realm.makeObject(binding, key: key, record: record)
            recycled = object
            return object
        }

        /// Reads the next batch after `lastKey` from the realm's current version.
        private mutating func refill() {
            // A batch given up before its end (the realm changed under it) was mostly wasted:
            // read fewer next time; a batch used up earns back the full size.
            batchLimit = position < batch.count ? Swift.max(4, position * 2) : Swift.min(Self.batchSize, batchLimit * 2)
            batch.removeAll(keepingCapacity: true)
            position = 0
            let realm = core.realm
            guard let binding = core.resolveBinding() else {
                exhausted = true
                return
            }
            let txn = realm.readTransaction()
            batchGeneration = realm.generation
            do {
                let cursor = try Cursor(transaction: txn, dbi: binding.table.database.dbi)
                var entry: Cursor.Entry?
                if let lastKey {
                    entry = try lastKey.withBytes { key in
                        let found = try cursor.seek(atLeast: key)
                        if let found, found.key.elementsEqual(key) { return try cursor.next() }
                        return found
                    }
                } else {
                    entry = try cursor.first()
                }
                while let e = entry {
                    batch.append((e.key, e.value))
                    if batch.count == batchLimit { break }
                    entry = try cursor.next()
                }
            } catch {
                fatalError("Cannot read '\(binding.table.className)' from '\(realm.file.url.path)': \(error)")
            }
            exhausted = batch.count < batchLimit
        }
    }
}

/// The objects of a filtered or shaped chain as they stood when an iteration began, handed out
/// one accessor at a time. A class, so that each step reads its fields without reference
/// counting (a struct iterator copies its references in and out of every call).
final class EvaluatedObjects {
    let realm: Realm
    let binding: TableBinding
    /// The objects, with their records when the evaluation read them (else a `nil` base
    /// address: the accessor looks the record up on first read).
    let entries: [(key: ObjectKey, record: UnsafeRawBufferPointer)]
    /// The realm's generation the records belong to.
    let generation: UInt64
    @exclusivity(unchecked) private var position = 0
    /// The accessor returned last, re-pointed at the next object when nothing else holds it.
    @exclusivity(unchecked) private var recycled: Object?

    init(realm: Realm, binding: TableBinding, entries: [(key: ObjectKey, record: UnsafeRawBufferPointer)]) {
        self.realm = realm
        self.binding = binding
        self.entries = entries
        self.generation = realm.generation
    }

    func next() -> Object? {
        while position < entries.count {
            let i = position
            position = i + 1
            if generation == realm.generation {
                let record = entries[i].record
                if record.baseAddress == nil { return accessor(entries[i].key) }
                return entries[i].key.withBytes { accessor($0, record) }
            }
            // The realm changed since the walk began: the record is read again, and an object
            // deleted since is skipped.
            let txn = realm.readTransaction()
            let record: UnsafeRawBufferPointer?
            do {
                record = try entries[i].key.withBytes { try txn.get(binding.table.database.dbi, key: $0) }
            } catch {
                fatalError("Cannot read '\(binding.table.className)' from '\(realm.file.url.path)': \(error)")
            }
            if let record { return entries[i].key.withBytes { accessor($0, record) } }
        }
        return nil
    }

    /// The accessor returned last if nothing else holds it any more, else `nil`.
    @inline(__always)
    private func reusable() -> Object? {
        guard isKnownUniquelyReferenced(&recycled) else { return nil }
        let object = recycled.unsafelyUnwrapped
        return object._binding === binding ? object : nil
    }

    @inline(__always)
    private func accessor(_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> Object {
        if let object = reusable() {
            realm.rebind(object, key: key, record: record)
            return object
        }
        let object = realm.makeObject(binding, key: key, record: record)
        recycled = object
        return object
    }

    @inline(__always)
    private func accessor(_ key: ObjectKey) -> Object {
        if let object = reusable() {
            realm.rebind(object, key: key)
            return object
        }
        let object = realm.makeObject(binding, key: key)
        recycled = object
        return object
    }
}

@available(*, unavailable, message: "Results are live and belong to their realm's thread; freeze them or pass a ThreadSafeReference")
extension Results: Sendable {}
