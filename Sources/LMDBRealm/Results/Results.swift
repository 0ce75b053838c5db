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
        }

        /// For a filtered or shaped chain: the keys at the start of the walk.
        private var keys: [ObjectKey]?
        private var entries: [(key: ObjectKey, record: UnsafeRawBufferPointer)] = []
        private var entriesGeneration: UInt64 = 0

        public mutating func next() -> Element? {
            let realm = core.realm
            realm.checkThread()
            if !core.isWholeTable { return nextEvaluated() }
            if position == batch.count || batchGeneration != realm.generation {
                if exhausted && batchGeneration == realm.generation { return nil }
                refill()
                if batch.isEmpty { return nil }
            }
            let entry = batch[position]
            position += 1
            let object: Object
            if recycled != nil, isKnownUniquelyReferenced(&recycled!) {
                object = recycled!
                realm.rebind(object, key: entry.key, record: entry.record)
            } else {
                object = realm.makeObject(core.binding!, key: entry.key, record: entry.record)
                recycled = object
            }
            lastKey = object._key
            return unsafeDowncast(object, to: Element.self)
        }

        /// The next object of a filtered or shaped chain, from the objects it held when the walk
        /// began (as Realm's enumeration does); objects deleted since are skipped.
        private mutating func nextEvaluated() -> Element? {
            let realm = core.realm
            if keys == nil {
                entries = core.evaluate()
                entriesGeneration = realm.generation
                keys = entries.map(\.key)
            }
            guard let binding = core.binding else { return nil }
            while position < keys!.count {
                let key = keys![position]
                let index = position
                position += 1
                _ = realm.readTransaction()
                if entriesGeneration == realm.generation {
                    return key.withBytes { unsafeDowncast(realm.makeObject(binding, key: $0, record: entries[index].record), to: Element.self) }
                }
                let txn = realm.readTransaction()
                let record = try? key.withBytes { try txn.get(binding.table.database.dbi, key: $0) }
                if let record = record ?? nil {
                    return key.withBytes { unsafeDowncast(realm.makeObject(binding, key: $0, record: record), to: Element.self) }
                }
            }
            return nil
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

@available(*, unavailable, message: "Results are live and belong to their realm's thread; freeze them or pass a ThreadSafeReference")
extension Results: Sendable {}
