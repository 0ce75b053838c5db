public import Dispatch
public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - Sectioning

extension RealmCollection {
    /// The objects sorted by the property `keyPath` reads and grouped into one section per
    /// value of it.
    ///
    /// ```swift
    /// let bySection = realm.objects(Article.self).sectioned(by: \.section)
    /// for section in bySection {
    ///     print(section.key, section.count)
    /// }
    /// ```
    public func sectioned<Key: _Persistable & Hashable>(
        by keyPath: KeyPath<Element, Key>, ascending: Bool = true
    ) -> SectionedResults<Key, Element> {
        let info = ClassInfo.of(Element.self)
        if let name = info.keyPathName(for: keyPath) {
            return sectioned(by: keyPath, sortDescriptors: [SortDescriptor(keyPath: name, ascending: ascending)])
        }
        // A computed key path (`\.initial` for `String(name.prefix(1))`) sorts by the persisted
        // property it reads, as RealmSwift's does, and sections by its value.
        guard let read = info.firstPropertyName(for: keyPath) else {
            fatalError("\(keyPath) reads no persisted property of \(Element.className()) to sort by: use sectioned(sortDescriptors:_:)")
        }
        return sectioned(sortDescriptors: [SortDescriptor(keyPath: read, ascending: ascending)]) { $0[keyPath: keyPath] }
    }

    /// The objects sorted by `sortDescriptors` and grouped into one section per value of the
    /// property `keyPath` reads.
    /// - Precondition: The first sort descriptor sorts by `keyPath`.
    public func sectioned<Key: _Persistable & Hashable>(
        by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor]
    ) -> SectionedResults<Key, Element> {
        guard let first = sortDescriptors.first else { fatalError("Can not section Results with empty sortDescriptor parameter.") }
        let info = ClassInfo.of(Element.self)
        // A computed key path matches the sort by the persisted property it reads.
        let name = info.keyPathName(for: keyPath)
        require(first.keyPath == name ?? info.firstPropertyName(for: keyPath), "The section key path must match the primary sort descriptor.")
        guard let results = asResults else { fatalError("Only a managed collection can be sectioned") }
        return SectionedResults(results: results.sorted(by: sortDescriptors), property: name) { $0[keyPath: keyPath] }
    }

    /// The objects sorted by `sortDescriptors` and grouped into one section per value `block`
    /// returns for them.
    ///
    /// ```swift
    /// let byLetter = realm.objects(Author.self)
    ///     .sectioned(by: { String($0.name.prefix(1)) }, sortDescriptors: [SortDescriptor(keyPath: "name")])
    /// ```
    /// The first sort descriptor should decide the section (objects with one key are then next
    /// to each other); objects of one key are gathered into one section in any case, in their
    /// sorted order, and sections come in the order of their first object.
    public func sectioned<Key: _Persistable & Hashable>(
        by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor]
    ) -> SectionedResults<Key, Element> {
        sectioned(sortDescriptors: sortDescriptors, block)
    }

    /// As ``sectioned(by:sortDescriptors:)-(_,_)``, with the key function last.
    public func sectioned<Key: _Persistable & Hashable>(
        sortDescriptors: [SortDescriptor], _ keyBlock: @escaping (Element) -> Key
    ) -> SectionedResults<Key, Element> {
        guard !sortDescriptors.isEmpty else { fatalError("There must be at least one SortDescriptor when using SectionedResults.") }
        guard let results = asResults else { fatalError("Only a managed collection can be sectioned") }
        return SectionedResults(results: results.sorted(by: sortDescriptors), property: nil, keyOf: keyBlock)
    }
}

/// A sorted collection of objects grouped into sections of one key each: live, like the
/// ``Results`` it groups, and observable with section-level and row-level changes.
///
/// ```swift
/// let sections = articles.sectioned(by: \.section)
/// sections.allKeys                              // ["Arts", "Business", …]
/// sections[0].key                               // "Arts"
/// sections[IndexPath(item: 2, section: 0)]      // the third article of "Arts"
/// ```
/// Sections are worked out when first read at a version of the realm and kept until the
/// realm moves on: reading them calls the key function once per object.
public struct SectionedResults<Key: _Persistable & Hashable, SectionElement: Object>: RandomAccessCollection {
    /// The sorted objects the sections group.
    let results: Results<SectionElement>
    let keyOf: (SectionElement) -> Key
    let cache: SectionCache<Key>

    /// Sections of `results` by the property named `property` (`nil`: by `keyOf` alone), whose
    /// value `keyOf` reads.
    init(results: Results<SectionElement>, property: String?, keyOf: @escaping (SectionElement) -> Key) {
        self.init(results: Results(core: results.core.appending(.section(property))), keyOf: keyOf)
    }

    /// Sections of `results`, whose chain ends in its `.section` step.
    init(results: Results<SectionElement>, keyOf: @escaping (SectionElement) -> Key) {
        self.results = results
        self.keyOf = keyOf
        cache = SectionCache()
    }

    /// The layout at the realm's current version.
    var layout: SectionLayout<Key> {
        let realm = results.core.realm
        realm.checkThread()
        if let layout = cache.layout, cache.generation == realm.generation { return layout }
        let layout = SectionLayout(results, keyOf)
        cache.layout = layout
        cache.generation = realm.generation
        return layout
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { layout.keys.count }

    /// The section at `position`.
    public subscript(position: Int) -> ResultsSection<Key, SectionElement> {
        ResultsSection(parent: self, key: layout.keys[position])
    }

    /// The object at `indexPath`: its section, then its position in the section.
    public subscript(indexPath: IndexPath) -> SectionElement {
        let layout = layout
        return results[layout.rows[indexPath.section][indexPath.item]]
    }

    /// The key of every section, in order.
    public var allKeys: [Key] { layout.keys }

    /// The realm of the objects.
    public var realm: Realm? { results.realm }
    /// Whether the sections are frozen (their realm is).
    public var isFrozen: Bool { results.isFrozen }
    /// Always `false`: sections stay readable while their realm is open.
    public var isInvalidated: Bool { false }

    /// How the sections are worked out — the plan that runs, as ``Results/explain()`` prints
    /// it, ending in how its objects are grouped:
    ///
    /// ```swift
    /// articles.sectioned(by: \.wordCount).explain()
    /// // "full scan of Article; then sort by wordCount ascending; then sections by wordCount"
    /// ```
    public func explain() -> String { results.explain() }

    /// The sections as they are now, frozen: readable from any thread, never changing.
    public func freeze() -> SectionedResults {
        SectionedResults(results: results.freeze(), keyOf: keyOf)
    }

    /// Live sections of the same query, from frozen ones; `nil` if the realm cannot be opened.
    public func thaw() -> SectionedResults? {
        results.thaw().map { SectionedResults(results: $0, keyOf: keyOf) }
    }

    /// Calls `block` with `.initial`, then with each change: the sections inserted and deleted,
    /// and the objects deleted, inserted and modified in the sections that stay.
    ///
    /// ```swift
    /// let token = sections.observe { change in
    ///     switch change {
    ///     case .initial(let sections):
    ///         show(sections)
    ///     case .update(let sections, let deletions, let insertions, let modifications,
    ///                  let sectionsToInsert, let sectionsToDelete):
    ///         apply(sections, ...)
    ///     }
    /// }
    /// ```
    /// `sectionsToDelete` and `deletions` are positions in the sections as the previous
    /// notification showed them, `sectionsToInsert` and `insertions` positions in the new ones;
    /// `modifications` are previous positions of objects whose observed properties changed.
    /// The objects of a section inserted or deleted whole are not listed again row by row; an
    /// object whose key changed is deleted from its old section and inserted into its new one.
    /// - Parameters:
    ///   - keyPaths: The properties whose changes count as modifications (`nil`: all).
    ///   - queue: A serial queue to observe from, as ``Results/observe(keyPaths:on:_:)``; `nil`
    ///     observes here, on the realm's thread, queue or actor.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (RealmSectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        if let queue {
            let carried = SectionObservation(keyOf: keyOf, block: block)
            return results.observe(keyPaths: keyPaths, on: queue) { change in
                carried.deliver(change)
            }
        }
        let observation = SectionObservation(keyOf: keyOf, block: block)
        return results.observe(keyPaths: keyPaths) { change in observation.deliver(change) }
    }
}

@available(*, unavailable, message: "sectioned results are live and belong to their realm's thread; freeze them")
extension SectionedResults: Sendable {}

/// The objects of one key in ``SectionedResults``, in their sorted order.
public struct ResultsSection<Key: _Persistable & Hashable, T: Object>: RandomAccessCollection, Identifiable {
    let parent: SectionedResults<Key, T>
    /// The key of the section's objects.
    public let key: Key

    /// The section's key.
    public var id: Key { key }

    private var rows: [Int] {
        let layout = parent.layout
        guard let section = layout.sectionOfKey[key] else { return [] }
        return layout.rows[section]
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { rows.count }

    /// The object at `position` in the section.
    public subscript(position: Int) -> T {
        parent.results[rows[position]]
    }

    /// The realm of the objects.
    public var realm: Realm? { parent.realm }
    /// Whether the section is frozen (its realm is).
    public var isFrozen: Bool { parent.isFrozen }

    /// Calls `block` with `.initial`, then with each change to this section's objects
    /// (positions as ``SectionedResults/observe(keyPaths:on:_:)`` gives them, all in section 0;
    /// `sectionsToInsert` and `sectionsToDelete` are empty).
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
        _ block: @escaping (RealmSectionedResultsChange<ResultsSection>) -> Void
    ) -> NotificationToken {
        let key = key
        return parent.observe(keyPaths: keyPaths, on: queue) { change in
            switch change {
            case .initial(let sections):
                block(.initial(ResultsSection(parent: sections, key: key)))
            case .update(let sections, let deletions, let insertions, let modifications, _, _):
                let old = change.previousSection(of: key)
                let new = sections.layout.sectionOfKey[key]
                func inSection(_ paths: [IndexPath], _ section: Int?) -> [IndexPath] {
                    guard let section else { return [] }
                    return paths.filter { $0.section == section }.map { IndexPath(item: $0.item, section: 0) }
                }
                let d = inSection(deletions, old), i = inSection(insertions, new), m = inSection(modifications, old)
                if d.isEmpty && i.isEmpty && m.isEmpty { return }
                block(.update(ResultsSection(parent: sections, key: key), deletions: d, insertions: i, modifications: m, sectionsToInsert: [], sectionsToDelete: []))
            }
        }
    }
}

@available(*, unavailable, message: "a section is live and belongs to its realm's thread; freeze its sectioned results")
extension ResultsSection: Sendable {}

/// A change to ``SectionedResults`` or a ``ResultsSection``.
public enum RealmSectionedResultsChange<Collection> {
    /// The sections as first worked out; always delivered first.
    case initial(Collection)
    /// The sections after one or more commits changed them: positions deleted, inserted and
    /// modified (as index paths), and sections inserted and deleted.
    case update(
        Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath], sectionsToInsert: IndexSet,
        sectionsToDelete: IndexSet)
}

extension RealmSectionedResultsChange {
    /// The previous position of the section of `key`, worked out again from the change (used
    /// by a section's observer).
    fileprivate func previousSection<K: _Persistable & Hashable, T: Object>(of key: K) -> Int? where Collection == SectionedResults<K, T> {
        guard case .update(let sections, _, _, _, _, _) = self else { return nil }
        return sections.cache.previousKeys.flatMap { keys in keys.firstIndex(of: key) }
    }
}

// MARK: - Layout

/// Which objects (positions in the sorted results) each section holds.
struct SectionLayout<Key: Hashable> {
    var keys: [Key] = []
    var sectionOfKey: [Key: Int] = [:]
    var rows: [[Int]] = []
    /// For each position in the results: its section and its place there.
    var sectionOfRow: [Int32] = []
    var rowInSection: [Int32] = []

    init() {}

    /// The layout of `results`, whose chain ends in sections: the query's groups (see
    /// `ResultsCore.sectionGroups()`), each given the key of its first object, and groups of
    /// equal keys merged.
    init<T: Object>(_ results: Results<T>, _ keyOf: (T) -> Key) {
        let groups = results.core.sectionGroups()
        let count = groups.reduce(0) { $0 + $1.count }
        var lastKey: Key?
        var lastSection = 0
        var merged = false
        for group in groups {
            let key = keyOf(results[group[0]])
            let section: Int
            if key == lastKey {
                // By a key function, the next object is most often in the section of the one
                // before: one comparison instead of a hash.
                section = lastSection
                merged = merged || rows[section].last! > group[0]
            } else if let known = sectionOfKey[key] {
                section = known
                merged = true
            } else {
                section = keys.count
                keys.append(key)
                sectionOfKey[key] = section
                rows.append([])
            }
            lastKey = key
            lastSection = section
            rows[section].append(contentsOf: group)
        }
        // Groups of one key that were apart: their objects back in the query's order.
        if merged {
            for s in rows.indices { rows[s].sort() }
        }
        sectionOfRow = Array(repeating: 0, count: count)
        rowInSection = Array(repeating: 0, count: count)
        for (s, section) in rows.enumerated() {
            for (i, row) in section.enumerated() {
                sectionOfRow[row] = Int32(s)
                rowInSection[row] = Int32(i)
            }
        }
    }

    func path(ofRow row: Int) -> IndexPath {
        IndexPath(item: Int(rowInSection[row]), section: Int(sectionOfRow[row]))
    }

    /// The change from `old` to `self`, given what happened to the sorted results.
    func changes(
        from old: SectionLayout, deletions: [Int], insertions: [Int], modifications: [Int]
    ) -> (deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath], sectionsToInsert: IndexSet, sectionsToDelete: IndexSet) {
        var sectionsToDelete = IndexSet()
        for (index, key) in old.keys.enumerated() where sectionOfKey[key] == nil { sectionsToDelete.insert(index) }
        var sectionsToInsert = IndexSet()
        for (index, key) in keys.enumerated() where old.sectionOfKey[key] == nil { sectionsToInsert.insert(index) }

        var deleted: [IndexPath] = []
        var inserted: [IndexPath] = []
        for row in deletions where !sectionsToDelete.contains(Int(old.sectionOfRow[row])) {
            deleted.append(old.path(ofRow: row))
        }
        for row in insertions where !sectionsToInsert.contains(Int(sectionOfRow[row])) {
            inserted.append(path(ofRow: row))
        }
        // Objects that stayed in the results but changed section.
        let deletedRows = Set(deletions)
        let insertedRows = Set(insertions)
        var movedOldRows = Set<Int>()
        var newRow = 0
        for oldRow in 0..<old.sectionOfRow.count where !deletedRows.contains(oldRow) {
            while insertedRows.contains(newRow) { newRow += 1 }
            guard newRow < sectionOfRow.count else { break }
            let oldKey = old.keys[Int(old.sectionOfRow[oldRow])]
            let newKey = keys[Int(sectionOfRow[newRow])]
            if oldKey != newKey {
                movedOldRows.insert(oldRow)
                if !sectionsToDelete.contains(Int(old.sectionOfRow[oldRow])) { deleted.append(old.path(ofRow: oldRow)) }
                if !sectionsToInsert.contains(Int(sectionOfRow[newRow])) { inserted.append(path(ofRow: newRow)) }
            }
            newRow += 1
        }
        var modified: [IndexPath] = []
        for row in modifications where !deletedRows.contains(row) && !movedOldRows.contains(row) {
            modified.append(old.path(ofRow: row))
        }
        func ordered(_ paths: [IndexPath]) -> [IndexPath] { paths.sorted { ($0.section, $0.item) < ($1.section, $1.item) } }
        return (ordered(deleted), ordered(inserted), ordered(modified), sectionsToInsert, sectionsToDelete)
    }
}

/// The layout of one ``SectionedResults`` at one version of its realm.
final class SectionCache<Key: Hashable> {
    var layout: SectionLayout<Key>?
    var generation: UInt64 = 0
    /// In a change delivered to an observer: the keys of the sections before it.
    var previousKeys: [Key]?
}

/// An observer's state: the layout it last delivered.
final class SectionObservation<Key: _Persistable & Hashable, T: Object>: @unchecked Sendable {
    // @unchecked Sendable: made where the observation starts and, for an observation from a
    // queue, used only on that queue afterwards (the results' observer calls it there, one
    // change at a time); the key function and block are the caller's, run where RealmSwift runs
    // them.
    let keyOf: (T) -> Key
    let block: (RealmSectionedResultsChange<SectionedResults<Key, T>>) -> Void
    var previous: SectionLayout<Key>?

    init(keyOf: @escaping (T) -> Key, block: @escaping (RealmSectionedResultsChange<SectionedResults<Key, T>>) -> Void) {
        self.keyOf = keyOf
        self.block = block
    }

    func deliver(_ change: RealmCollectionChange<Results<T>>) {
        switch change {
        case .initial(let results):
            let sections = SectionedResults(results: results, keyOf: keyOf)
            previous = sections.layout
            block(.initial(sections))
        case .update(let results, let deletions, let insertions, let modifications):
            let sections = SectionedResults(results: results, keyOf: keyOf)
            let layout = sections.layout
            let old = previous ?? SectionLayout()
            let c = layout.changes(from: old, deletions: deletions, insertions: insertions, modifications: modifications)
            previous = layout
            sections.cache.previousKeys = old.keys
            block(
                .update(
                    sections, deletions: c.deletions, insertions: c.insertions, modifications: c.modifications,
                    sectionsToInsert: c.sectionsToInsert, sectionsToDelete: c.sectionsToDelete))
        case .error:
            // The results keep their version and notifications go on after a later commit.
            break
        }
    }
}

#if !canImport(UIKit) && !canImport(AppKit)
/// The section and item of an index path, as UIKit and AppKit give them on Apple platforms, so
/// that code using ``SectionedResults`` ports as it is.
extension IndexPath {
    /// An index path of `item` in `section`.
    public init(item: Int, section: Int) {
        self.init(indexes: [section, item])
    }

    /// The section (the first index).
    public var section: Int { self[0] }
    /// The item in the section (the second index).
    public var item: Int { self[1] }
}
#endif
