package import Foundation
import Synchronization
package import LMDBKit
package import LMDBRealmFormat

/// The sync state of a file that LMDBRealmSync keeps in step with other nodes' files: one
/// named database, made when sync is enabled, whose keys begin with a byte saying what they
/// hold:
///
/// - `0x01` + a name: the node's state — `node` (this file's node name), `clock` (the newest
///   hybrid logical clock it has seen or made), `cursor` (the global sequence of the last change
///   set applied from others), `next` (the local sequence of the next outbox entry), `epoch` (the
///   identity of the shared log the file syncs with), `cursorNode` and `cursorLocal` (the node
///   and local sequence of the change set at the cursor; none after a snapshot moved it).
/// - `0x02` + a local sequence (8 bytes, big-endian): the outbox, one ``SyncChangeSet`` per
///   local commit, written in that commit's own transaction and removed once the shared log has
///   it.
/// - `0x03` + class + key + property: the clock stamp of the write that set a property's value
///   last (or created or deleted the object), by which concurrent writes are ordered.
/// - `0x04` + class + key + property: a list's elements with their names (``SyncList``), by
///   which writes to the list made concurrently on several nodes merge.
///
/// Every value is sealed (``SealedValue``): its checksum is read with it.
package final class SyncStore: Sendable {
    package let database: Database

    static let databaseName = "__lmdbrealm_sync"

    package init(database: Database) {
        self.database = database
    }

    package static func stateKey(_ name: String) -> [UInt8] { [1] + Array(name.utf8) }

    static func outboxKey(_ sequence: UInt64) -> [UInt8] {
        var key: [UInt8] = [2]
        SyncBytes.appendWord(sequence, to: &key)
        return key
    }

    /// The clock key of `property` of the object `key` of `className`; the property names
    /// ``created`` and ``deleted`` (no property has them) stamp the object's life.
    static func clockKey(className: String, key: [UInt8], property: String) -> [UInt8] {
        propertyKey(3, className: className, key: key, property: property)
    }

    /// The key of the named elements (``SyncList``) of the list `property` of the object `key`
    /// of `className`.
    static func listKey(className: String, key: [UInt8], property: String) -> [UInt8] {
        propertyKey(4, className: className, key: key, property: property)
    }

    private static func propertyKey(_ kind: UInt8, className: String, key: [UInt8], property: String) -> [UInt8] {
        var out: [UInt8] = [kind]
        SyncBytes.appendBytes(Array(className.utf8), to: &out)
        SyncBytes.appendBytes(key, to: &out)
        out.append(contentsOf: property.utf8)
        return out
    }

    package static let created = "\u{1}created"
    package static let deleted = "\u{1}deleted"
}

/// The state a synced file keeps about itself (``SyncStore``'s `0x01` keys).
package struct SyncState: Sendable {
    /// This file's node name.
    package var node: String
    /// The newest clock this file has made or seen.
    package var clock: UInt64
    /// The global sequence of the last change set applied from the shared log (0: none).
    package var cursor: Int64
    /// The local sequence the next outbox entry takes.
    package var nextSequence: UInt64
    /// The identity of the shared log the file syncs with ("": not known yet).
    package var epoch = ""
    /// The node of the change set at the cursor ("": not known, as after loading a snapshot).
    package var cursorNode = ""
    /// The local sequence of the change set at the cursor among its node's.
    package var cursorLocal: UInt64 = 0
}

extension StoreView {
    /// The sealed value of the sync database under `key`, opened, or `nil`.
    func syncValue(_ store: SyncStore, key: [UInt8], in file: StoreFile) throws -> [UInt8]? {
        try key.withUnsafeBytes { key in
            guard let stored = try transaction.get(store.database.dbi, key: key) else { return nil }
            switch SealedValue.open(stored, key: key) {
            case .success(let value): return Array(value)
            case .failure(let damage):
                throw RealmError(.invalidDatabase, "The realm at '\(file.url.path)' is damaged: its sync state \(damage)", fileURL: file.url)
            }
        }
    }

    package func syncState(_ store: SyncStore, in file: StoreFile) throws -> SyncState {
        func word(_ name: String) throws -> UInt64 {
            try syncValue(store, key: SyncStore.stateKey(name), in: file).map(SyncBytes.word) ?? 0
        }
        func text(_ name: String) throws -> String {
            try syncValue(store, key: SyncStore.stateKey(name), in: file).map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
        var state = SyncState(
            node: try text("node"), clock: try word("clock"), cursor: Int64(bitPattern: try word("cursor")), nextSequence: try word("next"))
        state.epoch = try text("epoch")
        state.cursorNode = try text("cursorNode")
        state.cursorLocal = try word("cursorLocal")
        return state
    }

    /// Up to `limit` outbox entries after local sequence `sequence`, in commit order.
    package func outbox(_ store: SyncStore, after sequence: UInt64, limit: Int, in file: StoreFile) throws -> [(sequence: UInt64, changes: [UInt8])] {
        var found: [(UInt64, [UInt8])] = []
        let cursor = try UnsafeCursor(transaction: transaction, dbi: store.database.dbi)
        var entry = try SyncStore.outboxKey(sequence &+ 1).withUnsafeBytes { try cursor.seek(atLeast: $0) }
        while let e = entry, found.count < limit, e.key.count == 9, e.key[0] == 2 {
            let seq = SyncBytes.word(e.key.dropFirst())
            switch SealedValue.open(e.value, key: e.key) {
            case .success(let value): found.append((seq, Array(value)))
            case .failure(let damage):
                throw RealmError(.invalidDatabase, "The realm at '\(file.url.path)' is damaged: its outbox entry \(seq) \(damage)", fileURL: file.url)
            }
            entry = try cursor.next()
        }
        return found
    }

    /// How many entries the outbox holds.
    package func outboxCount(_ store: SyncStore) throws -> Int {
        var count = 0
        let cursor = try UnsafeCursor(transaction: transaction, dbi: store.database.dbi)
        var entry = try [UInt8(2)].withUnsafeBytes { try cursor.seek(atLeast: $0) }
        while let e = entry, e.key.first == 2 {
            count += 1
            entry = try cursor.next()
        }
        return count
    }

    /// The named elements of the list `property` of the object `key` of `className`, or `nil`
    /// if the file has none for it (the list was never synced, or only set before sync was
    /// enabled).
    package func syncList(_ store: SyncStore, className: String, key: [UInt8], property: String, in file: StoreFile) throws -> SyncList? {
        guard let bytes = try syncValue(store, key: SyncStore.listKey(className: className, key: key, property: property), in: file) else {
            return nil
        }
        do {
            return try SyncList(decoding: bytes)
        } catch {
            throw RealmError(
                .invalidDatabase, "The realm at '\(file.url.path)' is damaged: the sync state of '\(className).\(property)' \(error)", fileURL: file.url)
        }
    }

    package func stamp(_ store: SyncStore, className: String, key: [UInt8], property: String, in file: StoreFile) throws -> SyncStamp? {
        let value = try syncValue(store, key: SyncStore.clockKey(className: className, key: key, property: property), in: file)
        return value.flatMap { $0.withUnsafeBytes { SyncStamp($0) } }
    }
}

extension WriteSession {
    /// Makes the file's sync database (see ``SyncStore``); the caller publishes it to the file
    /// once the write commits.
    package func createSyncStore() throws -> SyncStore {
        SyncStore(database: try transaction!.createDatabase(named: SyncStore.databaseName))
    }

    /// Stores `value`, sealed, under `key` in the sync database.
    package func putSyncValue(_ store: SyncStore, key: [UInt8], value: [UInt8]) throws {
        let sealed = SealedValue.sealed(value, key: key)
        try key.withUnsafeBytes { k in try sealed.withUnsafeBytes { _ = try writer.put(store.database.dbi, key: k, value: $0) } }
    }

    package func putSyncWord(_ store: SyncStore, _ name: String, _ value: UInt64) throws {
        var bytes: [UInt8] = []
        SyncBytes.appendWord(value, to: &bytes)
        try putSyncValue(store, key: SyncStore.stateKey(name), value: bytes)
    }

    /// Records the node and local sequence of the change set at the cursor ("" and 0: not known).
    package func putCursorIdentity(_ store: SyncStore, node: String, localSequence: UInt64) throws {
        try putSyncValue(store, key: SyncStore.stateKey("cursorNode"), value: Array(node.utf8))
        try putSyncWord(store, "cursorLocal", localSequence)
    }

    package func setStamp(_ store: SyncStore, _ stamp: SyncStamp, className: String, key: [UInt8], property: String) throws {
        try putSyncValue(store, key: SyncStore.clockKey(className: className, key: key, property: property), value: stamp.bytes)
    }

    package func putSyncList(_ store: SyncStore, _ list: SyncList, className: String, key: [UInt8], property: String) throws {
        try putSyncValue(store, key: SyncStore.listKey(className: className, key: key, property: property), value: list.encoded())
    }

    package func removeSyncList(_ store: SyncStore, className: String, key: [UInt8], property: String) throws {
        try SyncStore.listKey(className: className, key: key, property: property).withUnsafeBytes {
            _ = try writer.delete(store.database.dbi, key: $0)
        }
    }

    /// Removes the stamps of the properties of the object `key` of `className` (deleted: a
    /// creation after the deletion stamps them anew), keeping its creation's and deletion's,
    /// and its lists' named elements.
    package func removePropertyStamps(_ store: SyncStore, className: String, key: [UInt8]) throws {
        let txn = view.transaction
        let cursor = try UnsafeCursor(transaction: txn, dbi: store.database.dbi)
        var doomed: [[UInt8]] = []
        for prefix in [SyncStore.clockKey(className: className, key: key, property: ""), SyncStore.listKey(className: className, key: key, property: "")] {
            var entry = try prefix.withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let e = entry, e.key.starts(with: prefix) {
                let property = String(decoding: e.key.dropFirst(prefix.count), as: UTF8.self)
                if property != SyncStore.created && property != SyncStore.deleted { doomed.append(Array(e.key)) }
                entry = try cursor.next()
            }
        }
        for key in doomed { try key.withUnsafeBytes { _ = try writer.delete(store.database.dbi, key: $0) } }
    }

    /// Removes the outbox entries up to local sequence `sequence`.
    package func removeOutbox(_ store: SyncStore, through sequence: UInt64) throws {
        let txn = view.transaction
        let cursor = try UnsafeCursor(transaction: txn, dbi: store.database.dbi)
        var doomed: [[UInt8]] = []
        var entry = try [UInt8(2)].withUnsafeBytes { try cursor.seek(atLeast: $0) }
        while let e = entry, e.key.count == 9, e.key[0] == 2, SyncBytes.word(e.key.dropFirst()) <= sequence {
            doomed.append(Array(e.key))
            entry = try cursor.next()
        }
        for key in doomed { try key.withUnsafeBytes { _ = try writer.delete(store.database.dbi, key: $0) } }
    }

    /// Writes what `log` recorded as an outbox entry, and stamps each property it wrote with
    /// the commit's clock. Objects of classes without a primary key (embedded ones among them)
    /// have no name another file knows them by, and stay local.
    func recordForSync(_ log: ChangeLog, _ store: SyncStore) throws {
        var state = try view.syncState(store, in: file)
        let clock = SyncStamp.next(after: state.clock, now: file.syncClock.now())
        let stamp = SyncStamp(clock: clock, node: state.node)
        var changes: [SyncChange] = []
        // An embedded object travels inside its parent's property: changed in place, it makes
        // its parent's property change.
        let parents = try embeddedParents(log)
        for className in Set(log.tables.keys).union(parents.keys).sorted() {
            // Found in the write's catalog: the file's shared tables are dropped when the catalog
            // version moves, until a reader finds them again.
            guard let table = try findTable(named: className), table.primaryKeyColumn != nil else { continue }
            let tableChanges = log.tables[className]
            let inserted = Set(tableChanges?.inserted ?? [])
            for key in tableChanges?.deleted ?? [] where !inserted.contains(key) {
                let bytes = key.withBytes { Array($0) }
                changes.append(SyncChange(kind: .delete, className: className, key: bytes))
                try removePropertyStamps(store, className: className, key: bytes)
                try setStamp(store, stamp, className: className, key: bytes, property: SyncStore.deleted)
            }
            for key in tableChanges?.inserted ?? [] {
                let bytes = key.withBytes { Array($0) }
                guard let values = try syncValues(of: bytes, in: table, columns: nil, lists: (store, stamp)) else { continue }
                changes.append(SyncChange(kind: .insert, className: className, key: bytes, values: values))
                try setStamp(store, stamp, className: className, key: bytes, property: SyncStore.created)
                for value in values { try setStamp(store, stamp, className: className, key: bytes, property: value.property) }
            }
            var masks = tableChanges?.modified ?? [:]
            for (key, mask) in parents[className] ?? [:] { masks[key, default: 0] |= mask }
            let modified = masks.filter { !inserted.contains($0.key) }.map { (key: $0.key.withBytes { Array($0) }, mask: $0.value) }
            for (bytes, mask) in modified.sorted(by: { ByteOrder.compare($0.key, $1.key) < 0 }) {
                guard let values = try syncValues(of: bytes, in: table, columns: mask, lists: (store, stamp)), !values.isEmpty else { continue }
                changes.append(SyncChange(kind: .update, className: className, key: bytes, values: values))
                for value in values { try setStamp(store, stamp, className: className, key: bytes, property: value.property) }
            }
        }
        guard !changes.isEmpty else { return }
        let schemaVersion = try file.schemaVersion(in: view) ?? 0
        let set = SyncChangeSet(clock: clock, schemaVersion: schemaVersion, changes: changes)
        try putSyncValue(store, key: SyncStore.outboxKey(state.nextSequence), value: set.encoded())
        state.nextSequence += 1
        try putSyncWord(store, "next", state.nextSequence)
        try putSyncWord(store, "clock", clock)
    }

    /// Whether values of `property` mean the same in another file: not links to objects without
    /// a primary key, whose keys are this file's own, unless they are embedded objects (which
    /// travel as values, in a link or a list; a map of them stays local).
    /// - Throws: What reading the target class's table threw: the exchange fails (and is
    ///   tried again), never sends the object without the property.
    func syncs(_ property: Property) throws -> Bool {
        guard property.type == .object, let target = property.objectClassName else { return true }
        guard let table = try findTable(named: target) else { return false }
        if table.schema.isEmbedded { return !property.isMap }
        return table.primaryKeyColumn != nil
    }

    /// The table of the embedded objects `property` links to, if it does.
    /// - Throws: What reading the target class's table threw.
    package func embeddedTable(of property: Property) throws -> Table? {
        guard property.type == .object, let target = property.objectClassName,
            let table = try findTable(named: target), table.schema.isEmbedded
        else { return nil }
        return table
    }

    /// The objects with a primary key whose embedded objects (at any depth) the write `log`
    /// changed in place, with the columns that hold them.
    private func embeddedParents(_ log: ChangeLog) throws -> [String: [ObjectKey: UInt64]] {
        var found: [String: [ObjectKey: UInt64]] = [:]
        var origins: [String: [(table: Table, column: Int)]] = [:]
        func climb(_ table: Table, _ key: ObjectKey, depth: Int) throws {
            guard depth < 64 else { return }
            if origins[table.className] == nil { origins[table.className] = try linkColumns(to: table.className) }
            for (origin, column) in origins[table.className]! {
                var owners: [ObjectKey] = []
                try key.withBytes { target in
                    try view.forEachBacklink(from: origin, column: column, to: target, file: file) { owner in
                        owners.append(ObjectKey(owner))
                        return true
                    }
                }
                for owner in owners {
                    if origin.schema.isEmbedded {
                        try climb(origin, owner, depth: depth + 1)
                    } else if origin.primaryKeyColumn != nil {
                        found[origin.className, default: [:]][owner, default: 0] |= ChangeLog.bit(column)
                    }
                }
            }
        }
        for (className, changes) in log.tables where !changes.modified.isEmpty {
            guard let table = try findTable(named: className), table.schema.isEmbedded else { continue }
            for key in changes.modified.keys { try climb(table, key, depth: 0) }
        }
        return found
    }

    /// How the list `property` of the object `owner` of `table`, now `elements`, travels: with
    /// `lists`, as the operations that made it from the named elements the file kept (which it
    /// keeps anew; an object `inserted` by the write starts from none); a list of an object
    /// from before the file was synced, as its elements, named by their places from then on.
    private func listField(
        _ elements: [[UInt8]?], of property: Property, owner: [UInt8], in table: Table, inserted: Bool,
        lists: (store: SyncStore, stamp: SyncStamp)?
    ) throws -> SyncValue.Field {
        guard let (store, stamp) = lists else { return .elements(elements) }
        let className = table.className
        var named = try view.syncList(store, className: className, key: owner, property: property.name, in: file)
        // A list that never had an element keeps no names: one of an object created since the
        // file is synced (it has a creation stamp) starts from none.
        if named == nil, try inserted || view.stamp(store, className: className, key: owner, property: SyncStore.created, in: file) != nil {
            named = SyncList()
        }
        guard var named else {
            let whole = SyncList(values: elements, stamp: stamp)
            if !whole.entries.isEmpty { try putSyncList(store, whole, className: className, key: owner, property: property.name) }
            return .elements(elements)
        }
        let operations = named.operations(making: elements, stamp: stamp)
        for operation in operations { named.apply(operation) }
        if !named.entries.isEmpty { try putSyncList(store, named, className: className, key: owner, property: property.name) }
        return .operations(operations)
    }

    /// The values of the embedded object `key` of `table`, as a value of its parent's property.
    private func embeddedValue(_ key: UnsafeRawBufferPointer, in table: Table) throws -> [UInt8]? {
        try syncValues(of: Array(key), in: table, columns: nil).map(SyncValue.encodedObject)
    }

    /// The values of the stored object `key` of `table` in the stored columns of `mask` (all
    /// of them, the primary key too, when `nil`; columns from 63 on share the mask's top bit),
    /// or `nil` if it is gone.
    /// With `lists`, a list (not a set or map) is sent as what the write stamped `stamp` did to
    /// it (``SyncList``), and its named elements are kept; else as its elements.
    private func syncValues(
        of key: [UInt8], in table: Table, columns mask: UInt64?, lists: (store: SyncStore, stamp: SyncStamp)? = nil
    ) throws -> [SyncValue]? {
        try key.withUnsafeBytes { key -> [SyncValue]? in
            guard let record = try view.record(of: table, key: key) else { return nil }
            var values: [SyncValue] = []
            for (column, property) in table.schema.properties.enumerated() {
                guard property.type != .linkingObjects, !(property.isPrimary && mask != nil), try syncs(property) else { continue }
                if let mask, mask & ChangeLog.bit(column) == 0 { continue }
                let field: SyncValue.Field
                let embedded = try embeddedTable(of: property)
                if let list = table.lists[column] {
                    var elements = try view.listElements(list, owner: key)
                    if let embedded {
                        elements = try elements.map { try $0.flatMap { try $0.withUnsafeBytes { try embeddedValue($0, in: embedded) } } }
                    }
                    field = try listField(
                        elements, of: property, owner: Array(key), in: table, inserted: mask == nil, lists: property.isSet || property.isMap ? nil : lists)
                } else if property.isArray {
                    continue
                } else if let bytes = table.field(record.baseAddress!, size: record.count, column: column, in: file) {
                    if let embedded {
                        field = try embeddedValue(bytes, in: embedded).map { .value($0) } ?? .null
                    } else {
                        field = .value(Array(bytes))
                    }
                } else {
                    field = .null
                }
                values.append(SyncValue(property: property.name, type: property.type.rawValue, field: field))
            }
            return values
        }
    }
}

/// The time a synced file's commits stamp their changes with, in this process: this machine's
/// clock, or the shared log's server's when that is ahead (as its client last learned), so that
/// a node whose clock is slow does not lose to writes it came after.
package final class SyncClock: Sendable {
    /// How far the server's clock is ahead of this machine's, in milliseconds (negative: behind).
    private let serverAhead = Atomic<Int64>(0)
    /// How far this machine's clock is made to run ahead, in milliseconds (tests only).
    private let skew = Atomic<Int64>(0)

    package init() {}

    /// This machine's time (as the tests skew it).
    package func local() -> Date {
        Date(timeIntervalSinceNow: Double(skew.load(ordering: .relaxed)) / 1000)
    }

    /// The later of this machine's time and the server's, as last learned.
    package func now() -> Date {
        local().addingTimeInterval(Double(max(0, serverAhead.load(ordering: .relaxed))) / 1000)
    }

    /// The server's time now, as last learned (this machine's before the client learns it).
    package func serverNow() -> Date {
        local().addingTimeInterval(Double(serverAhead.load(ordering: .relaxed)) / 1000)
    }

    /// Records that the server's clock read `server` at `local` (this machine's time).
    package func learn(server: Date, at local: Date) {
        serverAhead.store(Int64((server.timeIntervalSince(local) * 1000).rounded()), ordering: .relaxed)
    }

    /// Makes this machine's clock, as the file's commits see it, run `milliseconds` ahead
    /// (behind, if negative): how the tests give a node a wrong clock.
    package func setSkewForTesting(milliseconds: Int64) {
        skew.store(milliseconds, ordering: .relaxed)
    }
}
