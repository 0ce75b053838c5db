internal import LMDBKit
import Foundation

/// The objects of one class in a realm: a live, lazily evaluated collection.
///
/// ```swift
/// let articles = realm.objects(Article.self)
/// print(articles.count)              // no object is created to count
/// for article in articles { … }      // a cursor walk over the table
/// let third = articles[2]
/// ```
///
/// Nothing is read until the collection is accessed, and every access reflects the realm's
/// current version: after ``Realm/refresh()`` or a write, the same `Results` shows the new
/// state. Objects come in key order (primary-key order, or insertion order for classes without
/// a primary key).
public struct Results<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    let core: ResultsCore

    init(realm: Realm, info: ClassInfo) {
        core = ResultsCore(realm: realm, info: info)
    }

    /// The realm the objects belong to.
    public var realm: Realm? { core.realm }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

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

        init(core: ResultsCore) {
            self.core = core
        }

        public mutating func next() -> Element? {
            let realm = core.realm
            realm.checkThread()
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

        /// Reads the next batch after `lastKey` from the realm's current version.
        private mutating func refill() {
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
                    if batch.count == Self.batchSize { break }
                    entry = try cursor.next()
                }
            } catch {
                preconditionFailure("Cannot read '\(binding.table.className)' from '\(realm.file.url.path)': \(error)")
            }
            exhausted = batch.count < Self.batchSize
        }
    }
}

/// The shared, mutable part of a `Results`: the realm, the class, and what evaluation
/// cached for the realm's current version.
final class ResultsCore {
    let realm: Realm
    let info: ClassInfo
    private(set) var binding: TableBinding?
    private var keys: [ObjectKey] = []
    private var keysGeneration: UInt64 = 0

    init(realm: Realm, info: ClassInfo) {
        self.realm = realm
        self.info = info
    }

    /// The class's table binding, once the file has the class.
    func resolveBinding() -> TableBinding? {
        if binding == nil { binding = realm.bindingForReading(info.type) }
        return binding
    }

    func count() -> Int {
        guard let binding = resolveBinding() else { return 0 }
        do {
            return try realm.readTransaction().statistics(binding.table.database.dbi).entries
        } catch {
            preconditionFailure("Cannot count '\(binding.table.className)' in '\(realm.file.url.path)': \(error)")
        }
    }

    /// The keys in order, evaluated once per version of the realm.
    private func evaluatedKeys() -> [ObjectKey] {
        let txn = realm.readTransaction()
        if keysGeneration == realm.generation { return keys }
        keys.removeAll(keepingCapacity: true)
        if let binding = resolveBinding() {
            do {
                let cursor = try Cursor(transaction: txn, dbi: binding.table.database.dbi)
                try cursor.forEach { key, _ in
                    keys.append(ObjectKey(key))
                    return true
                }
            } catch {
                preconditionFailure("Cannot read '\(binding.table.className)' from '\(realm.file.url.path)': \(error)")
            }
        }
        keysGeneration = realm.generation
        return keys
    }

    func object(at position: Int) -> Object {
        let keys = evaluatedKeys()
        precondition(position >= 0 && position < keys.count, "Index \(position) is out of bounds (must be less than \(keys.count)).")
        let binding = binding!
        let txn = realm.readTransaction()
        do {
            let record = try keys[position].withBytes { try txn.get(binding.table.database.dbi, key: $0) }
            guard let record else { preconditionFailure("Object has been deleted or invalidated.") }
            return keys[position].withBytes { realm.makeObject(binding, key: $0, record: record) }
        } catch {
            preconditionFailure("Cannot read '\(binding.table.className)' from '\(realm.file.url.path)': \(error)")
        }
    }

    func lastObject() -> Object? {
        guard let binding = resolveBinding() else { return nil }
        do {
            let cursor = try Cursor(transaction: realm.readTransaction(), dbi: binding.table.database.dbi)
            guard let entry = try cursor.last() else { return nil }
            return realm.makeObject(binding, key: entry.key, record: entry.value)
        } catch {
            preconditionFailure("Cannot read '\(binding.table.className)' from '\(realm.file.url.path)': \(error)")
        }
    }
}

@available(*, unavailable, message: "Results are live and belong to their realm's thread; freeze them or pass a ThreadSafeReference")
extension Results: Sendable {}
