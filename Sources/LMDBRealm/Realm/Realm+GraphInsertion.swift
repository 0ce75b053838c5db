import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// Adding a graph of unmanaged objects in one `add`: every object reachable through links and
// lists, targets first, cycles closed once both ends are stored.
extension Realm {
    /// Adds `object` and every unmanaged object it links to, targets first, under one policy.
    ///
    /// Objects already managed by this file's realms are linked as they are. A link that leads
    /// back to an object whose add is still in progress (a cycle) is stored once both ends are.
    func insertGraph(_ object: Object, binding: TableBinding, update: UpdatePolicy) throws {
        // The realm's collections, emptied, so that an add allocates none (an add made while
        // another is in progress starts empty ones).
        var graph = GraphInsertion()
        swap(&graph, &writing.graphScratch)
        defer {
            graph.removeAll()
            swap(&graph, &writing.graphScratch)
        }
        try insertLinked(object, binding: binding, update: update, graph: &graph)
        for link in graph.cycles {
            link.source._writeLink(link.column, link.target)
            if let failure = writing.failure { throw failure }
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
                throw writing.failure!
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
