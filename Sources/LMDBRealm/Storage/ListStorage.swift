internal import LMDBKit

/// The databases of one list property (`List<T>`).
///
/// Layout: `items` maps *(owner, position)* to one element — the key is the owner's object key
/// prefixed by its length (two bytes, big-endian) and followed by the position (four bytes,
/// big-endian), so an owner's elements are contiguous and in order; the value is a tag byte (0
/// for `nil`, 1 for a value) and the element's field bytes (an object's key for a list of
/// objects). Count, read by index and append are one B-tree descent each; inserting or
/// removing in the middle moves the elements after it.
///
/// A list of objects also has `references`, a `duplicateSort` database mapping a target's key
/// to the keys of the owners whose lists hold it, so deleting a target finds the lists to
/// remove it from without scanning. A map's elements are its entries (``MapEntry``): for a map
/// of objects, the references name the targets of their values.
struct ListDatabases {
    let items: Database
    let references: Database?
    /// Whether the elements are a map's entries.
    var isMap = false

    /// The object a stored element of a collection of objects names: the element itself, or
    /// a map entry's value (`nil` for a null).
    @inline(__always)
    func target(of element: [UInt8]?) -> [UInt8]? {
        guard isMap else { return element }
        guard let element else { return nil }
        return element.withUnsafeBytes { entry in
            let value = MapEntry.part(entry, keys: false)
            return value.baseAddress == nil ? nil : Array(value)
        }
    }

    /// The objects stored elements name, in their order (nulls left out).
    func targets(of elements: [[UInt8]?]) -> [[UInt8]] {
        elements.compactMap { target(of: $0) }
    }
}

extension Table {
    /// The LMDB database names of the list `property` of `className`.
    static func listDatabaseNames(className: String, property: String) -> (items: String, references: String) {
        ("list_" + className + "_" + property, "listrefs_" + className + "_" + property)
    }

    /// Opens (or, through `open`, creates) the databases of every list property of `schema`;
    /// `open` is told whether a database sorts duplicates.
    static func openLists(
        of schema: ObjectSchema, _ open: (_ name: String, _ duplicateSort: Bool) throws -> Database?
    ) throws -> [Int: ListDatabases] {
        var lists: [Int: ListDatabases] = [:]
        for (column, property) in schema.properties.enumerated() where property.isArray {
            let names = listDatabaseNames(className: schema.className, property: property.name)
            guard let items = try open(names.items, false) else { continue }
            let references = property.type == .object ? try open(names.references, true) : nil
            lists[column] = ListDatabases(items: items, references: references, isMap: property.isMap)
        }
        return lists
    }
}

/// Keys of list elements.
enum ListKey {
    /// The prefix every element of `owner`'s list has.
    static func prefix(_ owner: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = [UInt8(truncatingIfNeeded: owner.count >> 8), UInt8(truncatingIfNeeded: owner.count)]
        out.append(contentsOf: owner)
        return out
    }

    /// The key of element `position` of the list whose prefix is `prefix`.
    static func key(_ prefix: [UInt8], _ position: Int) -> [UInt8] {
        var out = prefix
        withUnsafeBytes(of: UInt32(position).bigEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// The position a key of the list with prefix `prefix` holds, or `nil` for another list.
    static func position(_ key: UnsafeRawBufferPointer, prefix: [UInt8]) -> Int? {
        guard key.count == prefix.count + 4, key.starts(with: prefix) else { return nil }
        return Int(UInt32(bigEndian: key.loadUnaligned(fromByteOffset: prefix.count, as: UInt32.self)))
    }

    /// The stored form of an element: a tag byte, then its field bytes.
    static func value(_ element: UnsafeRawBufferPointer?) -> [UInt8] {
        guard let element else { return [0] }
        return [1] + Array(element)
    }

    /// The field bytes of a stored element (`nil` for a null).
    static func element(_ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard value.first == 1 else { return nil }
        return UnsafeRawBufferPointer(rebasing: value[1...])
    }
}

extension StoreView {
    /// The number of elements of `owner`'s list: one descent to its last element.
    func listCount(_ list: ListDatabases, owner: UnsafeRawBufferPointer) throws -> Int {
        let prefix = ListKey.prefix(owner)
        let cursor = try UnsafeCursor(transaction: transaction, dbi: list.items.dbi)
        let beyond = ListKey.key(prefix, Int(UInt32.max))
        let last = try beyond.withUnsafeBytes { try cursor.seek(atLeast: $0) } != nil ? try cursor.previous() : try cursor.last()
        guard let last, let position = ListKey.position(last.key, prefix: prefix) else { return 0 }
        return position + 1
    }

    /// Lends `body` element `index` of `owner`'s list (`nil` for a null element).
    /// - Returns: What `body` returned, or `nil` if there is no such element.
    func withListElement<R>(
        _ list: ListDatabases, owner: UnsafeRawBufferPointer, at index: Int, _ body: (UnsafeRawBufferPointer?) -> R
    ) throws -> R? {
        let key = ListKey.key(ListKey.prefix(owner), index)
        guard let value = try key.withUnsafeBytes({ try transaction.get(list.items.dbi, key: $0) }) else { return nil }
        return body(ListKey.element(value))
    }

    /// Calls `body` with each element of `owner`'s list, in order, until it returns false.
    func forEachListElement(
        _ list: ListDatabases, owner: UnsafeRawBufferPointer, _ body: (_ position: Int, _ element: UnsafeRawBufferPointer?) -> Bool
    ) throws {
        let prefix = ListKey.prefix(owner)
        let cursor = try UnsafeCursor(transaction: transaction, dbi: list.items.dbi)
        var entry = try ListKey.key(prefix, 0).withUnsafeBytes { try cursor.seek(atLeast: $0) }
        while let e = entry, let position = ListKey.position(e.key, prefix: prefix) {
            guard body(position, ListKey.element(e.value)) else { return }
            entry = try cursor.next()
        }
    }

    /// The elements of `owner`'s list, copied.
    func listElements(_ list: ListDatabases, owner: UnsafeRawBufferPointer) throws -> [[UInt8]?] {
        var elements: [[UInt8]?] = []
        try forEachListElement(list, owner: owner) { _, element in
            elements.append(element.map(Array.init))
            return true
        }
        return elements
    }
}

extension WriteSession {
    /// Replaces `owner`'s list in `table`'s list `column` with `elements`; `old`, if the caller
    /// has read them, are the elements stored now. Only the positions from the first that
    /// differs are rewritten.
    func setList(_ elements: [[UInt8]?], old: [[UInt8]?]? = nil, of owner: ObjectKey, in table: Table, column: Int) throws {
        let list = table.lists[column]!
        try owner.withBytes { owner in
            let old = try old ?? view.listElements(list, owner: owner)
            let kept = zip(old, elements).prefix { $0 == $1 }.count
            guard kept < max(old.count, elements.count) else { return }
            let txn = view.transaction
            // One key buffer, its position rewritten in place; one value buffer.
            var key = ListKey.key(ListKey.prefix(owner), 0)
            let positionAt = key.count - 4
            func setPosition(_ position: Int) {
                withUnsafeBytes(of: UInt32(position).bigEndian) { p in
                    for i in 0..<4 { key[positionAt + i] = p[i] }
                }
            }
            for position in stride(from: old.count - 1, through: kept, by: -1) {
                setPosition(position)
                try key.withUnsafeBytes { _ = try txn.delete(list.items.dbi, key: $0) }
            }
            var value: [UInt8] = []
            // A list written after every other (a new object's, in key order) is appended:
            // no search, and full pages. The first refusal ends the attempt.
            var appending = true
            for position in kept..<elements.count {
                setPosition(position)
                value.removeAll(keepingCapacity: true)
                if let element = elements[position] {
                    value.append(1)
                    value.append(contentsOf: element)
                } else {
                    value.append(0)
                }
                try key.withUnsafeBytes { k in
                    try value.withUnsafeBytes { v in
                        if appending { appending = try txn.put(list.items.dbi, key: k, value: v, flags: PutFlags.append.rawValue) }
                        if !appending { _ = try txn.put(list.items.dbi, key: k, value: v) }
                    }
                }
            }
            if let references = list.references {
                if old.isEmpty {
                    // A new list (the usual case of `add`): every target is new. A target held
                    // twice is buffered twice; the flush writes it once.
                    for target in list.targets(of: elements) {
                        try target.withUnsafeBytes { try bufferReference(references, target: $0, owner: owner) }
                    }
                } else {
                    let before = Set(list.targets(of: old))
                    let after = Set(list.targets(of: elements))
                    let gone = before.subtracting(after)
                    // A buffered entry must be written before one is removed.
                    if !gone.isEmpty { try flushIndexEntries() }
                    for target in gone {
                        try target.withUnsafeBytes { t in _ = try txn.delete(references.dbi, key: t, value: owner) }
                    }
                    for added in after.subtracting(before) {
                        try added.withUnsafeBytes { try bufferReference(references, target: $0, owner: owner) }
                    }
                    // Embedded objects taken out of their list are deleted.
                    if !gone.isEmpty, let embedded = try embeddedTargets(of: table, column: column) {
                        try removeObjects(gone.map { target in target.withUnsafeBytes { ObjectKey($0) } }, from: embedded)
                    }
                }
            }
            listChanged(owner: ObjectKey(owner), table: table, column: column)
        }
    }

    /// Appends `element` to `owner`'s list: one descent to find its end, one to store it.
    func appendToList(_ element: UnsafeRawBufferPointer?, of owner: ObjectKey, in table: Table, column: Int) throws {
        let list = table.lists[column]!
        try owner.withBytes { owner in
            let count = try view.listCount(list, owner: owner)
            let txn = view.transaction
            try ListKey.key(ListKey.prefix(owner), count).withUnsafeBytes { k in
                try ListKey.value(element).withUnsafeBytes { v in
                    if try !txn.put(list.items.dbi, key: k, value: v, flags: PutFlags.append.rawValue) {
                        _ = try txn.put(list.items.dbi, key: k, value: v)
                    }
                }
            }
            if let references = list.references, let target = list.target(of: element.map(Array.init)) {
                try target.withUnsafeBytes { try bufferReference(references, target: $0, owner: owner) }
            }
            listChanged(owner: ObjectKey(owner), table: table, column: column)
        }
    }

    /// Removes every list element of the objects `owners` of `table` (being deleted), with
    /// their references.
    func removeLists(of owners: [ObjectKey], in table: Table) throws {
        for (column, _) in table.lists {
            for owner in owners { try setList([], of: owner, in: table, column: column) }
        }
    }

    /// Removes `targets` (objects of `target`, being deleted) from every list of objects that
    /// holds them: `nil` removes every element of those lists. In a map the entries stay, their
    /// values set to `nil`, as in RealmSwift.
    func removeFromLists(_ targets: [ObjectKey]?, of target: Table, sources: [(table: Table, column: Int)]) throws {
        try flushIndexEntries()  // the references are read whole
        let txn = view.transaction
        for (source, column) in sources {
            guard let list = source.lists[column], let references = list.references else { continue }
            guard let targets else {
                // Every element goes: the owners that had any are told their list changed.
                var owners = Set<ObjectKey>()
                try UnsafeCursor(transaction: txn, dbi: references.dbi).forEach { _, owner in
                    owners.insert(ObjectKey(owner))
                    return true
                }
                if list.isMap {
                    for owner in owners {
                        let entries = try owner.withBytes { try view.listElements(list, owner: $0) }
                        try setList(entries.map { MapEntry.withNullValue($0) }, old: entries, of: owner, in: source, column: column)
                    }
                    continue
                }
                try txn.empty(list.items.dbi)
                try txn.empty(references.dbi)
                for owner in owners { listChanged(owner: owner, table: source, column: column) }
                continue
            }
            let removed = Set(targets.map { $0.withBytes { Array($0) } })
            var owners = Set<ObjectKey>()
            let cursor = try UnsafeCursor(transaction: txn, dbi: references.dbi)
            for key in removed {
                var entry = try key.withUnsafeBytes { try cursor.seek(exactly: $0) }
                while let e = entry {
                    owners.insert(ObjectKey(e.value))
                    entry = try cursor.nextValue()
                }
            }
            for owner in owners {
                let elements = try owner.withBytes { try view.listElements(list, owner: $0) }
                let kept: [[UInt8]?]
                if list.isMap {
                    kept = elements.map { entry in list.target(of: entry).map(removed.contains) == true ? MapEntry.withNullValue(entry) : entry }
                } else {
                    kept = elements.filter { $0.map { !removed.contains($0) } ?? true }
                }
                try setList(kept, old: elements, of: owner, in: source, column: column)
            }
        }
    }

    private func listChanged(owner: ObjectKey, table: Table, column: Int) {
        changeLog?.changes(for: table).modified[owner, default: 0] |= ChangeLog.bit(column)
        observer.writeSessionChanged()
    }
}
