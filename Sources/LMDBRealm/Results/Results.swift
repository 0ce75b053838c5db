import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

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

    /// Hands out the objects one accessor at a time. A whole table is walked with a cursor, a
    /// batch of records at a time, and no key list is built; a filtered or shaped chain is
    /// evaluated when the walk begins.
    ///
    /// While nothing else holds the accessors it returned (the usual `for object in results`),
    /// the iterator re-points them at the next objects instead of creating new ones.
    public struct Iterator: IteratorProtocol {
        let core: ResultsCore
        private let wholeTable: Bool
        // The walk's state lives in a class: a step then reads it without counting references
        // (a struct's references are retained and released around every call).
        private var table: TableWalk?
        private var evaluated: EvaluatedObjects?

        init(core: ResultsCore) {
            self.core = core
            wholeTable = core.isWholeTable
        }

        public mutating func next() -> Element? {
            core.realm.checkThread()
            let object: Object?
            if wholeTable {
                if table == nil { table = TableWalk(core: core) }
                // Lent uncounted: the iterator holds it, and nothing in the step replaces it.
                object = Unmanaged.passUnretained(table.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.next() }
            } else {
                if evaluated == nil {
                    // Index walks leave the records to the accessors: a loop that reads only
                    // the primary key (or stops early) never looks them up. Not so for a
                    // frozen realm, whose objects any thread may read at once: a first read
                    // must not write to the accessor.
                    let entries = core.evaluate(records: core.realm.isFrozen)
                    guard let binding = core.binding else { return nil }
                    evaluated = EvaluatedObjects(realm: core.realm, binding: binding, entries: entries)
                }
                object = Unmanaged.passUnretained(evaluated.unsafelyUnwrapped)._withUnsafeGuaranteedRef { $0.next() }
            }
            guard let object else { return nil }
            return unsafeDowncast(object, to: Element.self)
        }
    }

    public var description: String {
        "Results<\(core.info.schema.className)> (\(count) objects)"
    }

    /// How the query is answered — the plan that runs: the access path (primary-key lookup,
    /// index equality, index range, index-ordered scan or full scan), where the walk stops,
    /// then the steps applied to what it found.
    ///
    /// ```swift
    /// articles.where { $0.section == "Sports" }.explain()
    /// // "index equality on Article.section (1 key), count from index"
    /// articles.sorted(byKeyPath: "pubDate", ascending: false).limit(10).explain()   // pubDate indexed
    /// // "index-ordered scan of Article.pubDate descending; stop after 10"
    /// ```
    public func explain() -> String {
        core.realm.checkThread()
        return core.explain()
    }
}

@available(*, unavailable, message: "Results are live and belong to their realm's thread; freeze them or pass a ThreadSafeReference")
extension Results: Sendable {}
