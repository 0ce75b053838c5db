import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// The accessor side of to-one links: a link field holds the target's key; reading it looks
// the target up in the realm's current version, writing it stores the key (adding an
// unmanaged target first, as RealmSwift does).
extension Object {
    /// The object declared column `column` links to, or `nil` if the link is unset or its
    /// target is gone.
    final func _readLink(_ column: Int32, to type: Object.Type) -> Object? {
        guard let realm = _realm else {
            // The key-path recorder: the read is what it records.
            _ = ClassInfo.recordAccess(column)
            return nil
        }
        // The target's binding first: finding it may write (a table's indexes brought up to
        // date inside a write). After it, the link's field is lent to the lookup as it lies in
        // the record, in the memory map, where nothing moves it during a read; only a primary
        // key's field sits in a buffer the next key read reuses, and a link is never one.
        guard let binding = realm.bindingForReading(type), let key = _readField(column) else { return nil }
        return realm.lookUp(binding, key: key)
    }

    /// Links declared column `column` to `target` (`nil` unlinks). An unmanaged target is
    /// added to the realm first; a failure to add it is the write's failure.
    final func _writeLink(_ column: Int32, _ target: Object?) {
        guard let realm = _realm else {
            fatalError("a key path recorder cannot be written to")
        }
        realm.checkWriteThread()
        guard realm.writeFailure == nil else { return }
        if let target {
            if let owner = target._realm {
                require(owner.file === realm.file, "Cannot link to an object managed by a Realm of another file.")
                require(
                    !(target is EmbeddedObject) || (_readField(column).map { $0.elementsEqual(target._key.withBytes { Array($0) }) } ?? false),
                    "Cannot set a link to an existing managed embedded object")
            } else {
                do {
                    try realm.addLinked(target)
                } catch {
                    realm.recordWriteFailure(error, doing: "Cannot add a linked object of '\(type(of: target).className())' to")
                    return
                }
            }
        }
        _writeField(column, target)
    }
}

extension Realm {
    /// The record of the object of `table` stored under `key`, checked, or `nil` (for queries
    /// that follow links).
    func linkedRecord(of table: Table, key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        // A null (a map value whose object was deleted) names no object.
        guard key.count > 0, key.count <= file.maximumKeySize, let record = record(of: table, key: key, in: readView()) else { return nil }
        checkRecord(record, of: table)
        return record
    }

    func forEachListElement(of table: Table, column: Int, owner: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> Bool) {
        guard let list = table.list(at: column) else { return }
        do {
            try queryView().forEachListElement(list, owner: owner) { _, element in body(element) }
        } catch {
            cannotRead("a list of '\(table.className)'", error)
        }
    }

    func listCount(of table: Table, column: Int, owner: UnsafeRawBufferPointer) -> Int {
        guard let list = table.lists[column] else { return 0 }
        do {
            return try queryView().listCount(list, owner: owner)
        } catch {
            cannotRead("a list of '\(table.className)'", error)
        }
    }

    func forEachBacklink(from origin: Table, column: Int, to target: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) {
        do {
            try queryView().forEachBacklink(from: origin, column: column, to: target, file: file, body)
        } catch {
            cannotRead("the links of '\(origin.className)'", error)
        }
    }

    func backlinkCount(from origin: Table, column: Int, to target: UnsafeRawBufferPointer) -> Int {
        do {
            return try queryView().backlinkCount(from: origin, column: column, to: target, file: file)
        } catch {
            cannotRead("the links of '\(origin.className)'", error)
        }
    }

    /// The object of class `type` stored under `key`, or `nil`.
    func linkedObject(_ type: Object.Type, key: UnsafeRawBufferPointer) -> Object? {
        guard let binding = bindingForReading(type) else { return nil }
        return lookUp(binding, key: key)
    }

    /// Adds `object` and every unmanaged object it links to, targets first, under one policy.
    ///
    /// Objects already managed by this file's realms are linked as they are. A link that leads
    /// back to an object whose add is still in progress (a cycle) is stored once both ends are.
    func insertGraph(_ object: Object, binding: TableBinding, update: UpdatePolicy) throws {
        // The realm's collections, emptied, so that an add allocates none (an add made while
        // another is in progress starts empty ones).
        var graph = GraphInsertion()
        swap(&graph, &graphScratch)
        defer {
            graph.removeAll()
            swap(&graph, &graphScratch)
        }
        try insertLinked(object, binding: binding, update: update, graph: &graph)
        for link in graph.cycles {
            link.source._writeLink(link.column, link.target)
            if let writeFailure { throw writeFailure }
        }
        // Lists are written once every object they hold is stored; an object stored again
        // under `.modified` or `.all` gets the new list in place of the old.
        for list in graph.lists {
            let binding = list.owner._binding.unsafelyUnwrapped
            let stored = binding.isIdentity ? list.column : binding.storedColumn(Int32(list.column))
            do {
                // Under `.error` every object was stored new: its lists are empty, nothing to read.
                if update == .error && list.contents.isListOfObjects {
                    try session!.setNewList(of: list.contents.objects, owner: list.owner._key, in: binding.table, column: stored)
                } else {
                    try session!.setList(
                        list.contents.encodedElements(), old: update == .error ? [] : nil, of: list.owner._key, in: binding.table,
                        column: stored)
                }
            } catch {
                recordWriteFailure(error, doing: "Cannot store a list of '\(binding.table.className)' in")
                throw writeFailure!
            }
        }
    }

    /// What adding a graph collects on the way.
    struct GraphInsertion {
        /// The objects whose add is in progress (a link back to one is a cycle).
        var inProgress = Set<ObjectIdentifier>()
        /// Links stored once both ends are.
        var cycles: [(source: Object, column: Int32, target: Object)] = []
        /// Lists stored once everything is.
        var lists: [(owner: Object, column: Int, contents: any UnmanagedListContents)] = []

        /// Empties it, keeping its storage for the next add.
        mutating func removeAll() {
            // Emptying a set costs its capacity: one left large by a big graph is dropped.
            if inProgress.capacity > 64 { inProgress = [] } else { inProgress.removeAll(keepingCapacity: true) }
            cycles.removeAll(keepingCapacity: true)
            lists.removeAll(keepingCapacity: true)
        }
    }

    private func insertLinked(_ object: Object, binding: TableBinding, update: UpdatePolicy, graph: inout GraphInsertion) throws {
        let info = binding.classInfo
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        graph.inProgress.insert(ObjectIdentifier(object))
        for column in info.lists {
            let field = info.fields[column]
            guard let reader = field.listReader else { continue }
            let contents = withExtendedLifetime(object) { reader.contents(at: base + field.offset) }
            for target in contents.objects {
                if let owner = target._realm {
                    require(owner.file === file, "Cannot add an object managed by a Realm of another file to a list.")
                    require(!(target is EmbeddedObject), "Cannot add an existing managed embedded object to a List.")
                    continue
                }
                if graph.inProgress.contains(ObjectIdentifier(target)) { continue }
                let targetBinding = try self.binding(for: type(of: target), create: true)!
                try insertLinked(target, binding: targetBinding, update: update, graph: &graph)
            }
            graph.lists.append((object, column, contents))
        }
        if !info.links.isEmpty {
            for link in info.links {
                // A to-one link is an `Optional` of an `Object` subclass: one nullable reference,
                // read as such (no dynamic cast).
                let field = info.fields[link.column]
                guard let target = withExtendedLifetime(object, { (base + field.offset).load(as: Object?.self) }) else {
                    continue
                }
                if let owner = target._realm {
                    require(owner.file === file, "Cannot link to an object managed by a Realm of another file.")
                    require(!(target is EmbeddedObject), "Cannot set a link to an existing managed embedded object")
                    continue
                }
                if graph.inProgress.contains(ObjectIdentifier(target)) {
                    graph.cycles.append((object, Int32(link.column), target))
                    continue
                }
                let targetBinding = try self.binding(for: type(of: target), create: true)!
                try insertLinked(target, binding: targetBinding, update: update, graph: &graph)
            }
        }
        for column in info.mixed {
            let field = info.fields[column]
            guard let target = withExtendedLifetime(object, { field.accessor.linkedObject(at: base + field.offset) }) else { continue }
            if let owner = target._realm {
                require(owner.file === file, "Cannot store an object managed by a Realm of another file in an AnyRealmValue.")
                continue
            }
            require(!(target is EmbeddedObject), "An AnyRealmValue cannot hold an embedded object")
            require(
                !graph.inProgress.contains(ObjectIdentifier(target)),
                "An AnyRealmValue of '\(info.schema.className)' holds an object that links back to it: add that object first")
            let targetBinding = try self.binding(for: type(of: target), create: true)!
            try insertLinked(target, binding: targetBinding, update: update, graph: &graph)
        }
        graph.inProgress.remove(ObjectIdentifier(object))
        try insert(object, binding: binding, update: update)
        let mutableBase = UnsafeMutableRawPointer(mutating: base)
        withExtendedLifetime(object) {
            // Column by column, without an array of them made for each object added.
            for link in info.links {
                let field = info.fields[link.column]
                field.accessor.releaseLink(at: mutableBase + field.offset)
            }
            for column in info.lists {
                let field = info.fields[column]
                field.accessor.releaseLink(at: mutableBase + field.offset)
            }
        }
    }
}
