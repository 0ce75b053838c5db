import Foundation

/// One object as the shared log's change sets up to some position leave it, with the stamp of
/// every value: what LMDBRealmSync's snapshot keeps in place of the change sets it folds, so that
/// a node that is new, or behind the oldest change set the log still holds, starts from it.
///
/// Folding follows the rules `Realm.applySyncChanges(_:removingOutboxThrough:)` applies by
/// (the DocC article "Sync" states them): a value takes the write with the greater stamp; a
/// delete wins over every update and over a creation older than itself, and drops the values;
/// an update of an object that is not alive is passed over. Links are kept as their targets'
/// keys; a file that loads the snapshot nulls those whose targets it does not have.
package struct SyncSnapshotObject: Equatable, Sendable {
    package var className: String
    /// The object's key: its encoded primary key.
    package var key: [UInt8]
    /// The stamp of its newest creation, if any.
    package var created: SyncStamp?
    /// The stamp of its newest deletion, if any.
    package var deleted: SyncStamp?
    /// The values of the living object, one per property, each with the stamp of the write
    /// that set it (an array: an object has few properties, and a snapshot many objects).
    package var values: [StampedValue]

    package struct StampedValue: Equatable, Sendable {
        package var value: SyncValue
        package var stamp: SyncStamp
    }

    package init(className: String, key: [UInt8]) {
        self.className = className
        self.key = key
        self.values = []
    }

    /// Whether the object exists: created, and not deleted since.
    var isAlive: Bool {
        guard let created else { return false }
        return deleted.map { created > $0 } ?? true
    }

    /// Whether a value links to another object (a link, or a list, set or map of them).
    package var hasLinks: Bool {
        values.contains { $0.value.type == PropertyType.object.rawValue && $0.value.field != .null }
    }

    /// Folds in `change` (of this object), made by the write stamped `stamp`.
    package mutating func fold(_ change: SyncChange, stamp: SyncStamp) {
        switch change.kind {
        case .delete:
            if let created, created > stamp { return }
            if let deleted, deleted > stamp { return }
            deleted = stamp
            values = []
        case .insert:
            if let deleted, deleted > stamp { return }
            if let created, created > stamp {
                guard isAlive else { return }
            } else {
                created = stamp
            }
            setValues(change.values, stamp: stamp)
        case .update:
            guard isAlive else { return }
            setValues(change.values, stamp: stamp)
        }
    }

    private mutating func setValues(_ new: [SyncValue], stamp: SyncStamp) {
        for value in new {
            let index = values.firstIndex { $0.value.property == value.property }
            if case .operations(let operations) = value.field {
                // Merged into the list's named elements, kept as the operations that rebuild
                // them, with the newest stamp among the writes (as a file applying them keeps).
                var list = SyncList()
                if let index {
                    switch values[index].value.field {
                    case .operations(let kept): list = SyncList(operations: kept)
                    case .elements(let elements): list = SyncList(values: elements, stamp: values[index].stamp)
                    case .null, .value: break
                    }
                }
                for operation in operations { list.apply(operation) }
                var merged = value
                merged.field = .operations(list.rebuildingOperations)
                let newest = index.map { max(values[$0].stamp, stamp) } ?? stamp
                let stamped = StampedValue(value: merged, stamp: newest)
                if let index { values[index] = stamped } else { values.append(stamped) }
                continue
            }
            let new = StampedValue(value: value, stamp: stamp)
            if let index {
                if values[index].stamp <= stamp { values[index] = new }
            } else {
                values.append(new)
            }
        }
    }

    /// The changes that make a file hold what this object holds, each to apply with its stamp:
    /// the deletion, the creation with the values it set, then the values set later (in any
    /// order: each wins or loses by its stamp).
    package func changeSets() -> [(stamp: SyncStamp, change: SyncChange)] {
        var out: [(SyncStamp, SyncChange)] = []
        if let deleted { out.append((deleted, SyncChange(kind: .delete, className: className, key: key))) }
        guard let created, isAlive else { return out }
        var own: [SyncValue] = []
        own.reserveCapacity(values.count)
        var later: [SyncStamp: [SyncValue]] = [:]
        for stamped in values {
            if stamped.stamp == created { own.append(stamped.value) } else { later[stamped.stamp, default: []].append(stamped.value) }
        }
        out.append((created, SyncChange(kind: .insert, className: className, key: key, values: own)))
        for (stamp, set) in later { out.append((stamp, SyncChange(kind: .update, className: className, key: key, values: set))) }
        return out
    }
}

extension SyncSnapshotObject {
    /// The first byte of every encoded snapshot object: its format.
    package static let format: UInt8 = 1

    /// The object's bytes (class and key travel beside them).
    package func encoded() -> [UInt8] {
        var out: [UInt8] = [SyncSnapshotObject.format]
        for stamp in [created, deleted] {
            if let stamp {
                out.append(1)
                stamp.append(to: &out)
            } else {
                out.append(0)
            }
        }
        let sorted = values.sorted { $0.value.property < $1.value.property }
        SyncBytes.appendVarint(UInt64(sorted.count), to: &out)
        for stamped in sorted {
            stamped.stamp.append(to: &out)
            stamped.value.append(to: &out)
        }
        return out
    }

    /// The object of class `className` and key `key` that `bytes` encode.
    /// - Throws: ``SyncBytes/Malformed`` saying where the bytes stop making sense.
    package init(className: String, key: [UInt8], decoding bytes: [UInt8]) throws {
        self.init(className: className, key: key)
        var reader = SyncBytes.Reader(bytes)
        let format = try reader.byte("format")
        guard format == SyncSnapshotObject.format else {
            throw SyncBytes.Malformed(description: "snapshot object format \(format) is not \(SyncSnapshotObject.format)")
        }
        func stamp(_ what: String) throws -> SyncStamp { try SyncStamp(reading: &reader, what) }
        created = try reader.byte("creation tag") == 0 ? nil : try stamp("creation")
        deleted = try reader.byte("deletion tag") == 0 ? nil : try stamp("deletion")
        let count = try reader.count("values")
        values.reserveCapacity(count)
        for _ in 0..<count {
            let s = try stamp("value")
            let value = try SyncValue(reading: &reader, of: className)
            values.append(StampedValue(value: value, stamp: s))
        }
        guard reader.isAtEnd else { throw SyncBytes.Malformed(description: "\(reader.remaining) bytes follow the last value") }
    }
}

/// An object as change sets and snapshots name it.
package struct SyncObjectID: Hashable, Sendable {
    package var className: String
    package var key: [UInt8]

    package init(className: String, key: [UInt8]) {
        self.className = className
        self.key = key
    }
}

/// Change sets of the shared log decoded for folding into a snapshot.
package struct SyncFold: Sendable {
    package var sets: [(node: String, set: SyncChangeSet)] = []

    /// Decodes `incoming` (in log order).
    /// - Throws: ``SyncBytes/Malformed`` naming the change set that is.
    package init(_ incoming: [SyncIncoming]) throws {
        for item in incoming {
            do {
                sets.append((item.node, try SyncChangeSet(decoding: item.changes)))
            } catch {
                throw SyncBytes.Malformed(description: "change set \(item.sequence) from node '\(item.node)': \(error)")
            }
        }
    }

    /// The objects the change sets change.
    package var objects: Set<SyncObjectID> {
        Set(sets.flatMap { $0.set.changes.map { SyncObjectID(className: $0.className, key: $0.key) } })
    }

    /// The newest clock and schema version among the change sets.
    package var clock: UInt64 { sets.map(\.set.clock).max() ?? 0 }
    package var schemaVersion: UInt64 { sets.map(\.set.schemaVersion).max() ?? 0 }

    /// Folds the change sets, in order, into `objects` (which holds what the snapshot has of
    /// the objects they change; those it lacks are added).
    package func fold(into objects: inout [SyncObjectID: SyncSnapshotObject]) {
        for (node, set) in sets {
            let stamp = SyncStamp(clock: set.clock, node: node)
            for change in set.changes {
                let id = SyncObjectID(className: change.className, key: change.key)
                objects[id, default: SyncSnapshotObject(className: change.className, key: change.key)].fold(change, stamp: stamp)
            }
        }
    }
}
