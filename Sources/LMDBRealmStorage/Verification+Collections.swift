internal import LMDBKit
import LMDBRealmFormat

// MARK: - Indexes

extension StoreVerifier {
    /// One index database of a table and how to compute an object's key in it.
    package struct IndexCheck {
        /// The index as people name it: "Article.section", "Article.(section, pubDate)".
        package let name: String
        package let dbi: UInt32
        /// Whether the index is a to-one link's: it holds the backlinks (target → origins).
        let holdsBacklinks: Bool
        /// Appends the key of a sound record in the index.
        let appendKey: (UnsafeRawBufferPointer, inout [UInt8]) -> Void
        /// A covering index's largest value (its entries hold ``CoveringValue``s); `nil` for
        /// the others, whose values are object keys.
        var coveringMaximum: Int? = nil
    }

    /// The indexes of `table`: declared, compound, and those of its to-one links.
    func indexChecks(of table: Table) -> [IndexCheck] {
        var checks: [IndexCheck] = []
        for column in table.indexedColumns {
            guard let index = table.indexes[column] else { continue }
            let property = table.schema.properties[column]
            checks.append(
                IndexCheck(name: "\(table.className).\(property.name)", dbi: index.dbi, holdsBacklinks: property.type == .object) {
                    [file] record, out in
                    table.appendIndexKey(table.field(record.baseAddress!, size: record.count, column: column, in: file), column: column, to: &out)
                })
        }
        for index in table.compoundIndexes {
            checks.append(
                IndexCheck(
                    name: "\(table.className).(\(index.names.joined(separator: ", ")))", dbi: index.database.dbi, holdsBacklinks: false,
                    appendKey: { [file] record, out in table.appendCompoundKey(index, record: record, in: file, to: &out) },
                    coveringMaximum: index.covering ? file.environment.maxKeySize : nil))
        }
        return checks
    }

    /// Checks that each sound object of `table` has its entry in `index` (one descent each)
    /// and that each entry names a stored object whose values give the entry's key.
    /// - Parameter damaged: The keys of the objects whose records are damaged, reported
    ///   already: their entries are not judged.
    func checkIndex(_ index: IndexCheck, of table: Table, damaged: Set<[UInt8]>) throws {
        let missingKind: Kind = index.holdsBacklinks ? .backlinkMismatch : .missingIndexEntry
        let orphanKind: Kind = index.holdsBacklinks ? .backlinkMismatch : .orphanIndexEntry
        let what = index.holdsBacklinks ? "The backlink index of '\(index.name)'" : "The index '\(index.name)'"
        var key: [UInt8] = []
        var value: [UInt8] = []
        try walking(what, className: table.className) {
            let txn = view.transaction
            let entries = try UnsafeCursor(transaction: txn, dbi: index.dbi)
            try UnsafeCursor(transaction: txn, dbi: table.database.dbi).forEach { objectKey, record in
                if !damaged.isEmpty && damaged.contains(Array(objectKey)) { return true }
                key.removeAll(keepingCapacity: true)
                index.appendKey(record, &key)
                let found: Bool
                if let maximum = index.coveringMaximum {
                    value.removeAll(keepingCapacity: true)
                    CoveringValue.append(key: objectKey, record: record, maximum: maximum, to: &value)
                    // An entry with a copy that differs is reported below, as an entry.
                    found = try key.withUnsafeBytes { k in
                        if try value.withUnsafeBytes({ try entries.seek(exactly: k, value: $0) }) != nil { return true }
                        var entry = try entries.seek(exactly: k)
                        while let e = entry {
                            if let split = CoveringValue.split(e.value), ByteOrder.compare(split.key, objectKey) == 0 { return true }
                            entry = try entries.nextValue()
                        }
                        return false
                    }
                } else {
                    found = try key.withUnsafeBytes({ try entries.seek(exactly: $0, value: objectKey) }) != nil
                }
                if !found {
                    report(missingKind, table.className, printableKey(objectKey, of: table), "\(what) has no entry for this object")
                }
                return true
            }
            try UnsafeCursor(transaction: txn, dbi: index.dbi).forEach { entryKey, entryValue in
                var objectKey = entryValue
                var copy: UnsafeRawBufferPointer?
                if index.coveringMaximum != nil {
                    guard let split = CoveringValue.split(entryValue) else {
                        report(orphanKind, table.className, nil, "\(what) has an entry whose value is not an object key and record")
                        return true
                    }
                    (objectKey, copy) = split
                }
                if let problem = FieldCheck.keyProblem(objectKey, maximumKeySize: maximumKeySize) {
                    report(orphanKind, table.className, nil, "\(what) has an entry naming \(problem)")
                    return true
                }
                guard let record = try txn.get(table.database.dbi, key: objectKey) else {
                    report(
                        orphanKind, table.className, printableKey(objectKey, of: table), "\(what) has an entry for this object, which is not stored")
                    return true
                }
                if !damaged.isEmpty && damaged.contains(Array(objectKey)) { return true }
                key.removeAll(keepingCapacity: true)
                index.appendKey(record, &key)
                if ByteOrder.compare(entryKey, key) != 0 {
                    report(
                        orphanKind, table.className, printableKey(objectKey, of: table),
                        "\(what) has an entry for this object under a value it does not hold")
                } else if let copy, ByteOrder.compare(copy, record) != 0 {
                    report(
                        orphanKind, table.className, printableKey(objectKey, of: table),
                        "\(what) holds a copy of this object that differs from it")
                }
                return true
            }
        }
    }
}

// MARK: - Lists, sets and maps

extension StoreVerifier {
    /// What one walk of a list column knows of the owner whose chunks it is reading.
    private struct OwnerState {
        package var key: [UInt8]
        var isStored: Bool
        /// The position the owner's next chunk must start at.
        var nextPosition = 0
        /// A set's elements or a map's keys seen so far (tagged: 0 null, 1 value).
        package var seen = Set<[UInt8]>()
        /// The distinct objects the owner's elements name.
        package var targets = Set<[UInt8]>()
        /// Whether a finding was made about the owner's elements (its references are then
        /// not judged).
        var isSuspect = false
    }

    /// Checks the list, set or map column `column` of `table`: every chunk, its owner, its
    /// elements, the objects they name, and the references both ways.
    func checkList(_ list: ListDatabases, column: Int, of table: Table) throws {
        let property = table.schema.properties[column]
        let name = property.name
        let target = property.type == .object ? property.objectClassName.flatMap { tablesByName[$0] } : nil
        var suspectOwners = Set<[UInt8]>()
        var found = 0
        var complete = false
        var owner: OwnerState?

        /// Looks each object the finished owner's elements name up in the references.
        func finish(_ owner: OwnerState?) throws {
            guard let owner else { return }
            if owner.isSuspect || !owner.isStored { suspectOwners.insert(owner.key) }
            guard let references = list.references, owner.isStored else { return }
            let cursor = try UnsafeCursor(transaction: view.transaction, dbi: references.dbi)
            for t in owner.targets {
                let present = try t.withUnsafeBytes { t in try owner.key.withUnsafeBytes { try cursor.seek(exactly: t, value: $0) } } != nil
                if present {
                    found += 1
                } else {
                    let shown = t.withUnsafeBytes { printableKey($0, of: target) }
                    let ownerShown = owner.key.withUnsafeBytes { printableKey($0, of: table) }
                    report(
                        .backlinkMismatch, table.className, ownerShown, "The references of '\(name)' miss that this object's elements hold \(shown)")
                }
            }
        }

        try walking("The elements of '\(name)'", className: table.className) {
            try UnsafeCursor(transaction: view.transaction, dbi: list.items.dbi).forEach { key, chunk in
                guard let ownerKey = ListKey.owner(of: key), FieldCheck.keyProblem(ownerKey, maximumKeySize: maximumKeySize) == nil else {
                    report(.damagedList, table.className, nil, "Property '\(name)' has a chunk under a key that names no object (\(Self.hex(key)))")
                    return true
                }
                if owner.map({ !ownerKey.elementsEqual($0.key) }) ?? true {
                    try finish(owner)
                    let stored = try view.transaction.get(table.database.dbi, key: ownerKey) != nil
                    owner = OwnerState(key: Array(ownerKey), isStored: stored)
                    if !stored {
                        report(
                            .damagedList, table.className, printableKey(ownerKey, of: table),
                            "Property '\(name)' has elements of this object, which is not stored")
                    }
                }
                guard owner!.isStored else { return true }
                let first = Int(UInt32(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 4, as: UInt32.self)))
                if let problem = try chunkProblem(chunk, key: key, first: first, property: property, list: list, table: table, owner: &owner!) {
                    owner!.isSuspect = true
                    report(.damagedList, table.className, printableKey(ownerKey, of: table), "Property '\(name)': \(problem)")
                }
                return true
            }
            try finish(owner)
            complete = true
        }
        // References are judged against the elements only when every element was read.
        if let references = list.references, complete {
            try checkReferences(references, of: list, name: name, table: table, target: target, expected: found, suspectOwners: suspectOwners)
        }
    }

    /// What is wrong with the chunk starting at position `first` of `owner`'s elements, or
    /// `nil`. The objects its sound elements name are added to `owner.targets`, and each one
    /// that is not stored is reported.
    private func chunkProblem(
        _ chunk: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, first: Int, property: Property, list: ListDatabases, table: Table,
        owner: inout OwnerState
    ) throws -> String? {
        defer { owner.nextPosition = first + ListChunk.count(chunk) }
        if let problem = ListChunk.checksumProblem(chunk, key: key) { return "the chunk at element \(first) is damaged: \(problem)" }
        if first != owner.nextPosition {
            return "a chunk starts at element \(first), but the elements before it end at \(owner.nextPosition)"
        }
        var elements: [UnsafeRawBufferPointer?] = []
        if let problem = Self.parseChunk(chunk, { elements.append($0) }) { return "the chunk at element \(first) \(problem)" }
        for (i, element) in elements.enumerated() {
            let position = first + i
            if let problem = elementProblem(element, property: property) { return "element \(position) \(problem)" }
            if property.isSet || property.isMap {
                var tagged: [UInt8] = [element == nil ? 0 : 1]
                if let element { tagged.append(contentsOf: property.isMap ? MapEntry.part(element, keys: true) : element) }
                if !owner.seen.insert(tagged).inserted {
                    return property.isMap ? "element \(position) repeats a key of the map" : "element \(position) repeats an element of the set"
                }
            }
            guard property.type == .object, let element else { continue }
            let target = list.isMap ? MapEntry.part(element, keys: false) : element
            guard target.baseAddress != nil, owner.targets.insert(Array(target)).inserted else { continue }
            if let missing = try missingTarget(target, of: property) {
                let shown = owner.key.withUnsafeBytes { printableKey($0, of: table) }
                report(.danglingLink, table.className, shown, "Property '\(property.name)', element \(position), \(missing)")
            }
        }
        return nil
    }

    /// What is wrong with one element of a collection `property`, or `nil`.
    private func elementProblem(_ element: UnsafeRawBufferPointer?, property: Property) -> String? {
        if property.isMap {
            guard let element else { return "is null, not an entry" }
            let nullable = property.isOptional || property.type == .object || property.type == .mixed
            return FieldCheck.mapEntryProblem(element, type: property.type, nullable: nullable, maximumKeySize: maximumKeySize)
        }
        guard let element else {
            return property.isOptional || property.type == .mixed ? nil : "is null, but the elements are required"
        }
        return FieldCheck.problem(element, type: property.type, maximumKeySize: maximumKeySize)
    }

    /// Walks the elements of `chunk` (see ``ListChunk/walk(_:_:)``), handing each to `body`
    /// (`nil` for a null).
    /// - Returns: What is wrong with the chunk, or `nil` if it parses exactly.
    static func parseChunk(_ stored: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> Void) -> String? {
        guard case .malformed(let problem) = ListChunk.walk(stored, { _, element, _ in
            body(element)
            return true
        }) else { return nil }
        return problem.description
    }

    /// Checks that the references of a list column hold no entry its elements do not account
    /// for. The references are counted first: when they hold exactly the `expected` entries
    /// found for the elements, there is none. Otherwise the column's (target, owner) pairs are
    /// collected, and each entry not among them is reported (unless its owner's elements were
    /// reported already).
    private func checkReferences(
        _ references: Database, of list: ListDatabases, name: String, table: Table, target: Table?, expected: Int,
        suspectOwners: Set<[UInt8]>
    ) throws {
        try walking("The references of '\(name)'", className: table.className) {
            let txn = view.transaction
            guard try txn.statistics(references.dbi).entries != expected else { return }
            var pairs = Set<[UInt8]>()
            try UnsafeCursor(transaction: txn, dbi: list.items.dbi).forEach { key, chunk in
                guard let owner = ListKey.owner(of: key) else { return true }
                _ = Self.parseChunk(chunk) { element in
                    guard let element else { return }
                    let target = list.isMap ? MapEntry.part(element, keys: false) : element
                    if target.baseAddress != nil { pairs.insert(Self.pair(target, owner)) }
                }
                return true
            }
            try UnsafeCursor(transaction: txn, dbi: references.dbi).forEach { targetKey, owner in
                guard !suspectOwners.contains(Array(owner)), !pairs.contains(Self.pair(targetKey, owner)) else { return true }
                report(
                    .backlinkMismatch, table.className, printableKey(owner, of: table),
                    "The references of '\(name)' say this object's elements hold \(printableKey(targetKey, of: target)), but they do not")
                return true
            }
        }
    }

    /// A (target, owner) pair as one byte string: the target's length, the target, the owner.
    private static func pair(_ target: UnsafeRawBufferPointer, _ owner: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = [UInt8(truncatingIfNeeded: target.count >> 8), UInt8(truncatingIfNeeded: target.count)]
        out.append(contentsOf: target)
        out.append(contentsOf: owner)
        return out
    }
}
