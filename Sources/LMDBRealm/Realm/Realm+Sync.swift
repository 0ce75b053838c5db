import Foundation
import LMDBRealmFormat
package import LMDBRealmStorage

/// The file-side half of LMDBRealmSync: a synced file's outbox, its state, and the applying of
/// other nodes' change sets by the merge rules (the DocC article "Sync" states them).
extension Realm {
    /// Makes the file a synced one, as node `node`: from the next commit on, every local write
    /// also writes its changes to the file's outbox, in its own transaction.
    ///
    /// Processes that have the file open already find the sync state at their next write, and
    /// record that write and every later one too.
    /// - Throws: ``Realm/Error`` if the file is synced as another node, or cannot be written.
    package func enableSync(node: String) throws {
        checkThread()
        require(!node.isEmpty, "A sync node needs a name")
        if let store = file.sync {
            let state = try readView().syncState(store, in: file)
            guard state.node == node else {
                throw Realm.Error(.fail, "The realm at '\(file.url.path)' is synced as node '\(state.node)', not '\(node)'", fileURL: file.url)
            }
            return
        }
        var made: SyncStore?
        try write {
            guard let session else { return }
            let store = try session.createSyncStore()
            // Writes of other processes that have the file open look for the sync database
            // when the catalog version moves (see StoreFile.discoverSync).
            try session.bumpCatalogVersion()
            try session.putSyncValue(store, key: SyncStore.stateKey("node"), value: Array(node.utf8))
            try session.putSyncWord(store, "next", 1)
            made = store
        }
        if let made { file.publishSync(made) }
    }

    /// The time this process stamps the file's synced commits with (shared by its handles).
    package var syncClock: SyncClock { file.syncClock }

    /// Records the identity of the shared log the file syncs with (see ``SyncState/epoch``).
    package func setSyncEpoch(_ epoch: String) throws {
        checkThread()
        guard let store = file.sync else { return }
        try write {
            guard let session else { return }
            session.appliesRemoteChanges = true
            try session.putSyncValue(store, key: SyncStore.stateKey("epoch"), value: Array(epoch.utf8))
        }
    }

    /// The sync state of the file, or `nil` if it is not synced.
    package func syncState() throws -> SyncState? {
        checkThread()
        guard let store = file.sync else { return nil }
        return try withFreshView { try $0.syncState(store, in: file) }
    }

    /// Up to `limit` outbox entries after local sequence `sequence`, in commit order, as the
    /// newest version of the file holds them.
    package func syncOutbox(after sequence: UInt64, limit: Int) throws -> [(sequence: UInt64, changes: [UInt8])] {
        checkThread()
        guard let store = file.sync else { return [] }
        return try withFreshView { try $0.outbox(store, after: sequence, limit: limit, in: file) }
    }

    /// How many outbox entries wait to be sent.
    package func syncOutboxCount() throws -> Int {
        checkThread()
        guard let store = file.sync else { return 0 }
        return try withFreshView { try $0.outboxCount(store) }
    }

    /// Removes the outbox entries up to local sequence `sequence`: the shared log has them.
    package func removeSyncOutbox(through sequence: UInt64) throws {
        checkThread()
        guard let store = file.sync else { return }
        try write {
            guard let session else { return }
            session.appliesRemoteChanges = true
            try session.removeOutbox(store, through: sequence)
        }
    }

    /// Applies change sets of the shared log in one write that also moves the file's cursor
    /// past them: each is applied exactly once (those at or before the cursor are passed over,
    /// as are the file's own). Observers see them as any other commit. The same write removes
    /// the outbox entries up to `sent` (the shared log has them), if given.
    /// A change set of another node whose clock is past `latestClock` (its node's clock ran
    /// ahead of the server's by more than the client allows) is refused.
    /// - Throws: ``Realm/Error`` with code `schemaMismatch` when a change set needs a class,
    ///   property or schema version this file does not have, `invalidValue` when one is
    ///   malformed, holds a value this app cannot read or is stamped past `latestClock`; nothing
    ///   is applied (or removed) then.
    package func applySyncChanges(
        _ incoming: [SyncIncoming], removingOutboxThrough sent: UInt64? = nil, latestClock: UInt64 = .max
    ) throws {
        checkThread()
        guard let store = file.sync else {
            throw Realm.Error(.fail, "The realm at '\(file.url.path)' is not synced", fileURL: file.url)
        }
        // A throw from the block rolls the write back: nothing is applied.
        do {
            try applyingSyncChanges(incoming, removingOutboxThrough: sent, latestClock: latestClock, store)
        } catch let error as Realm.Error {
            throw error
        } catch {
            throw Realm.Error(error, url: file.url, doing: "Cannot apply change sets to")
        }
    }

    private func applyingSyncChanges(
        _ incoming: [SyncIncoming], removingOutboxThrough sent: UInt64?, latestClock: UInt64, _ store: SyncStore
    ) throws {
        try write {
            guard let session else { return }
            session.appliesRemoteChanges = true
            if let sent { try session.removeOutbox(store, through: sent) }
            var state = try session.view.syncState(store, in: file)
            let schemaVersion = try file.schemaVersion(in: session.view) ?? 0
            let applier = SyncApplier(realm: self, session: session, store: store)
            var last: SyncIncoming?
            for item in incoming where item.sequence > state.cursor {
                let set: SyncChangeSet
                do {
                    set = try SyncChangeSet(decoding: item.changes)
                } catch {
                    throw Realm.Error(.invalidValue, "Change set \(item.sequence) from node '\(item.node)' is malformed: \(error)", fileURL: file.url)
                }
                if item.node != state.node {
                    guard set.clock <= latestClock else {
                        let ahead = Double((set.clock >> 16) &- (latestClock >> 16)) / 1000
                        throw Realm.Error(
                            .invalidValue,
                            "Change set \(item.sequence) from node '\(item.node)' is stamped \(String(format: "%.1f", ahead)) s past the "
                                + "latest clock this node accepts (PostgreSQL's time and the skew allowed): the clock of node '\(item.node)' runs ahead",
                            fileURL: file.url)
                    }
                    guard set.schemaVersion <= schemaVersion else {
                        throw Realm.Error(
                            .schemaMismatch,
                            "Change set \(item.sequence) from node '\(item.node)' was made with schema version \(set.schemaVersion); the realm at '\(file.url.path)' has version \(schemaVersion)",
                            fileURL: file.url)
                    }
                    try applier.apply(set, stamp: SyncStamp(clock: set.clock, node: item.node), sequence: item.sequence)
                }
                state.cursor = item.sequence
                state.clock = max(state.clock, set.clock)
                last = item
            }
            try session.putSyncWord(store, "cursor", UInt64(bitPattern: state.cursor))
            try session.putSyncWord(store, "clock", state.clock)
            if let last { try session.putCursorIdentity(store, node: last.node, localSequence: UInt64(bitPattern: last.localSequence)) }
        }
    }

    /// Loads objects of the shared log's snapshot into the file, merging them with what it
    /// holds by the rules change sets are applied by (each value with its own stamp). A
    /// snapshot is loaded in two passes, each in writes of as many objects as the caller likes:
    /// first every object without its links (`links: false`), then the links of those that have
    /// some (`links: true`), so that a link finds its target whichever write made it. The last
    /// write passes `through` — the snapshot's log position and newest clock — and moves the
    /// file's cursor there: the shared log's change sets up to it are in the file.
    /// - Throws: ``Realm/Error`` with code `schemaMismatch` when the snapshot was made with a
    ///   newer schema version than the file's (`schemaVersion`), or an object is of a class, or
    ///   has a property, this file does not have; nothing of that write is applied then.
    package func applySyncSnapshot(
        _ objects: [SyncSnapshotObject], links: Bool, schemaVersion snapshotVersion: UInt64 = 0, through: (sequence: Int64, clock: UInt64)? = nil
    ) throws {
        checkThread()
        guard let store = file.sync else {
            throw Realm.Error(.fail, "The realm at '\(file.url.path)' is not synced", fileURL: file.url)
        }
        do {
            try write {
                guard let session else { return }
                session.appliesRemoteChanges = true
                let schemaVersion = try file.schemaVersion(in: session.view) ?? 0
                guard snapshotVersion <= schemaVersion else {
                    throw Realm.Error(
                        .schemaMismatch,
                        "The shared log's snapshot was made with schema version \(snapshotVersion); the realm at '\(file.url.path)' has version \(schemaVersion)",
                        fileURL: file.url)
                }
                let link = PropertyType.object.rawValue
                // The objects' changes grouped by stamp (objects made by one commit share it), a
                // change set for each: deletions and creations first, then the values set
                // later, which need their objects to exist. Otherwise the rules make the order
                // of the sets indifferent.
                var lives: [SyncStamp: [SyncChange]] = [:]
                var updates: [SyncStamp: [SyncChange]] = [:]
                for object in objects {
                    for (stamp, var change) in object.changeSets() {
                        if links {
                            guard change.kind != .delete else { continue }
                            change.kind = .update
                            change.values.removeAll { $0.type != link }
                            guard !change.values.isEmpty else { continue }
                        } else if change.values.contains(where: { $0.type == link }) {
                            change.values.removeAll { $0.type == link }
                        }
                        if change.kind == .update {
                            updates[stamp, default: []].append(change)
                        } else {
                            lives[stamp, default: []].append(change)
                        }
                    }
                }
                let applier = SyncApplier(realm: self, session: session, store: store)
                for (stamp, changes) in Array(lives) + Array(updates) {
                    let set = SyncChangeSet(clock: stamp.clock, schemaVersion: schemaVersion, changes: changes)
                    try applier.apply(set, stamp: stamp, sequence: through?.sequence ?? 0)
                }
                guard let through else { return }
                let state = try session.view.syncState(store, in: file)
                try session.putSyncWord(store, "cursor", UInt64(bitPattern: max(state.cursor, through.sequence)))
                // The change set at the snapshot's position is folded away: not known.
                if through.sequence > state.cursor { try session.putCursorIdentity(store, node: "", localSequence: 0) }
                try session.putSyncWord(store, "clock", max(state.clock, through.clock))
            }
        } catch let error as Realm.Error {
            throw error
        } catch {
            throw Realm.Error(error, url: file.url, doing: "Cannot load the sync snapshot into")
        }
    }

    /// `body` run on a view of the newest version of the file.
    private func withFreshView<R>(_ body: (StoreView) throws -> R) throws -> R {
        if let session { return try body(session.view) }
        refresh()
        return try body(readView())
    }
}

/// Applies one change set of another node to a write, by the merge rules: a property takes the
/// value of the write with the greater stamp; a delete wins over every update and over a
/// creation older than itself; a link (or list element) to an object this file does not have
/// is null (left out).
private final class SyncApplier {
    let realm: Realm
    let session: WriteSession
    let store: SyncStore
    /// The stamp of the change set being applied.
    private var stamp = SyncStamp(clock: 0, node: "")
    /// The place in the log of the change set being applied.
    private var sequence: Int64 = 0
    /// The tables of the classes met so far in this write.
    private var tables: [String: Table] = [:]
    /// By class, then property: the declared Swift types of the properties whose stored values
    /// may make none of them (enums, failable custom types, collections of them).
    private var convertedTypes: [String: [String: Any.Type]] = [:]

    init(realm: Realm, session: WriteSession, store: SyncStore) {
        self.realm = realm
        self.session = session
        self.store = store
    }

    private var file: StoreFile { session.file }
    private var view: StoreView { session.view }

    /// Applies `set`, the write stamped `stamp`; `sequence` (its place in the log) names it in
    /// errors.
    func apply(_ set: SyncChangeSet, stamp: SyncStamp, sequence: Int64) throws {
        self.stamp = stamp
        self.sequence = sequence
        // A value this app cannot read (a newer version's enum case, a custom type's stored
        // value that makes none here) refuses the whole set before any of it is applied.
        for change in set.changes { try checkValues(change.values, of: change.className) }
        // Deletions and creations first, so that links within the set find their targets.
        var live: [(SyncChange, Table)] = []
        for change in set.changes {
            let table = try self.table(change.className, sequence: sequence)
            guard !change.key.isEmpty, change.key.count <= file.maximumKeySize else {
                throw Realm.Error(
                    .invalidValue,
                    "Change set \(sequence) from node '\(stamp.node)' names an object of '\(change.className)' by a key of \(change.key.count) bytes",
                    fileURL: file.url)
            }
            switch change.kind {
            case .delete: try delete(change, in: table)
            case .insert: if try create(change, in: table) { live.append((change, table)) }
            case .update: live.append((change, table))
            }
        }
        for (change, table) in live { try update(change, in: table, sequence: sequence) }
    }

    private func table(_ className: String, sequence: Int64) throws -> Table {
        if let table = tables[className] { return table }
        guard let table = realm.dynamicBinding(named: className)?.table else {
            throw Realm.Error(
                .schemaMismatch,
                "Change set \(sequence) from node '\(stamp.node)' changes class '\(className)', which the realm at '\(file.url.path)' does not have",
                fileURL: file.url)
        }
        tables[className] = table
        return table
    }

    /// Throws ``RealmError/Code/invalidValue`` naming the class, the property and the value if
    /// one of `values` (of an object of `className`) makes no value of the type this app
    /// declares for it: an enum case it does not have, a failable custom type's stored value
    /// that makes none.
    private func checkValues(_ values: [SyncValue], of className: String) throws {
        let types = declaredConvertedTypes(of: className)
        guard !types.isEmpty else { return }
        for value in values {
            guard let type = types[value.property] else { continue }
            let isMap = realm.dynamicBinding(named: className)?.table.schema.properties.first { $0.name == value.property }?.isMap ?? false
            var fields: [[UInt8]] = []
            switch value.field {
            case .null: break
            case .value(let bytes): fields = [bytes]
            case .elements(let elements): fields = elements.compactMap { isMap ? MapEntry.decode($0)?.1 : $0 }
            case .operations(let operations):
                for case .insert(_, _, let element?) in operations { fields.append(element) }
            }
            for field in fields {
                guard let problem = field.withUnsafeBytes({ storedValueProblem($0, as: type) }) else { continue }
                throw Realm.Error(
                    .invalidValue,
                    "Change set \(sequence) from node '\(stamp.node)' sets '\(className).\(value.property)' to \(problem) in this version of the app",
                    fileURL: file.url)
            }
        }
    }

    private func declaredConvertedTypes(of className: String) -> [String: Any.Type] {
        if let known = convertedTypes[className] { return known }
        var types: [String: Any.Type] = [:]
        if let info = file.classInfo(named: className) {
            for (property, field) in zip(info.schema.properties, info.fields) {
                let declared = field.accessor.listValue?.elementValueType ?? field.accessor.declaredValueType
                if storedValuesMayMakeNone(of: declared) { types[property.name] = declared }
            }
        }
        convertedTypes[className] = types
        return types
    }

    private func exists(_ key: [UInt8], in table: Table) throws -> Bool {
        try key.withUnsafeBytes { try view.record(of: table, key: $0) != nil }
    }

    private func stamp(of change: SyncChange, _ property: String) throws -> SyncStamp? {
        try view.stamp(store, className: change.className, key: change.key, property: property, in: file)
    }

    private func delete(_ change: SyncChange, in table: Table) throws {
        if let created = try stamp(of: change, SyncStore.created), created > stamp { return }
        if let deleted = try stamp(of: change, SyncStore.deleted), deleted > stamp { return }
        try session.removePropertyStamps(store, className: change.className, key: change.key)
        try session.setStamp(store, stamp, className: change.className, key: change.key, property: SyncStore.deleted)
        try session.removeObjects([ObjectKey(change.key)], from: table)
    }

    /// Creates the object of an insert if it should exist and does not; its values are set by
    /// ``update(_:in:sequence:)``.
    /// - Returns: Whether the object exists now.
    private func create(_ change: SyncChange, in table: Table) throws -> Bool {
        if let deleted = try stamp(of: change, SyncStore.deleted), deleted > stamp { return false }
        if let created = try stamp(of: change, SyncStore.created), created > stamp {
            return try exists(change.key, in: table)
        }
        try session.setStamp(store, stamp, className: change.className, key: change.key, property: SyncStore.created)
        if try exists(change.key, in: table) { return true }
        let given = Dictionary(change.values.map { ($0.property, $0) }, uniquingKeysWith: { a, _ in a })
        let fields = table.schema.properties.map { property -> [UInt8]? in
            guard !property.isArray, property.type != .linkingObjects else { return nil }
            if property.type != .object, let value = given[property.name], value.type == property.type.rawValue, case .value(let bytes) = value.field
            {
                return bytes
            }
            return property.isOptional || property.type == .object ? nil : Realm.defaultField(property.type)
        }
        _ = try realm.explainingRefusals { try session.insert(fields: fields, into: table, update: .error) }
        return true
    }

    private func update(_ change: SyncChange, in table: Table, sequence: Int64) throws {
        guard try exists(change.key, in: table) else { return }
        let key = ObjectKey(change.key)
        for value in change.values {
            guard let column = table.schema.properties.firstIndex(where: { $0.name == value.property }) else {
                throw Realm.Error(
                    .schemaMismatch,
                    "Change set \(sequence) from node '\(stamp.node)' sets '\(change.className).\(value.property)', which the realm at '\(file.url.path)' does not have",
                    fileURL: file.url)
            }
            let property = table.schema.properties[column]
            guard property.type.rawValue == value.type else {
                throw Realm.Error(
                    .schemaMismatch,
                    "Change set \(sequence) from node '\(stamp.node)' sets '\(change.className).\(value.property)' as \(value.type); the realm at '\(file.url.path)' has it as \(property.type.rawValue)",
                    fileURL: file.url)
            }
            if property.isPrimary { continue }
            let last = try stamp(of: change, value.property)
            if case .operations(let operations) = value.field {
                // Merged, whatever their stamps: operations on named elements commute.
                guard table.lists[column] != nil, !property.isSet, !property.isMap else { continue }
                var list = try view.syncList(store, className: change.className, key: change.key, property: value.property, in: file) ?? SyncList()
                for operation in operations { list.apply(operation) }
                if !list.entries.isEmpty {
                    try session.putSyncList(store, list, className: change.className, key: change.key, property: value.property)
                }
                if last.map({ $0 < stamp }) ?? true {
                    try session.setStamp(store, stamp, className: change.className, key: change.key, property: value.property)
                }
                try setList(.elements(list.values), of: change.key, in: table, column: column, property: property)
                continue
            }
            if let last, last > stamp { continue }
            try session.setStamp(store, stamp, className: change.className, key: change.key, property: value.property)
            if case .elements(let elements) = value.field, table.lists[column] != nil, !property.isSet, !property.isMap {
                // A list set whole: its elements named by their places, as on every node.
                let whole = SyncList(values: elements, stamp: stamp)
                if !whole.entries.isEmpty {
                    try session.putSyncList(store, whole, className: change.className, key: change.key, property: value.property)
                } else {
                    try session.removeSyncList(store, className: change.className, key: change.key, property: value.property)
                }
            }
            switch value.field {
            case .elements, .operations:
                try setList(value.field, of: change.key, in: table, column: column, property: property)
            case .null, .value:
                if let embedded = try session.embeddedTable(of: property) {
                    try setEmbedded(value.field, of: change.key, in: table, column: column, embedded: embedded)
                    continue
                }
                var bytes: [UInt8]?
                if case .value(let b) = value.field { bytes = b }
                if property.type == .object, let target = bytes, try !targetExists(target, of: property) { bytes = nil }
                try change.key.withUnsafeBytes { k in
                    guard let record = try view.record(of: table, key: k) else { return }
                    let current = table.field(record.baseAddress!, size: record.count, column: column, in: file)
                    try bytes.withUnsafeBytesIfPresent { new in
                        guard !ByteOrder.equal(current, new) else { return }
                        try session.replaceField(of: key, record: record, in: table, storedColumn: column, with: new)
                    }
                }
            }
        }
    }

    /// Sets the list, set or map `column` (`property`) of the object `owner` of `table` to
    /// `field`'s elements: new embedded objects made from them, or the links whose targets the
    /// file has, or the values.
    private func setList(_ field: SyncValue.Field, of owner: [UInt8], in table: Table, column: Int, property: Property) throws {
        guard case .elements(let elements) = field, table.lists[column] != nil else { return }
        if let embedded = try session.embeddedTable(of: property) {
            try setEmbedded(field, of: owner, in: table, column: column, embedded: embedded)
            return
        }
        try session.setList(try present(elements, of: property, isMap: property.isMap), of: ObjectKey(owner), in: table, column: column)
    }

    /// Sets the link or list `column` of the object `owner` of `table` to new embedded objects
    /// made from `field`; those it held before are deleted (by the link's or list's rewriting,
    /// as embedded objects replaced are).
    private func setEmbedded(_ field: SyncValue.Field, of owner: [UInt8], in table: Table, column: Int, embedded: Table) throws {
        let key = ObjectKey(owner)
        if let list = table.lists[column] {
            guard case .elements(let elements) = field else { return }
            let old = try owner.withUnsafeBytes { try view.listElements(list, owner: $0) }
            var made: [[UInt8]?] = []
            for case let element? in elements { made.append(try createEmbedded(element, in: embedded)) }
            try session.setList(made, old: old, of: key, in: table, column: column)
        } else {
            var made: [UInt8]?
            if case .value(let bytes) = field { made = try createEmbedded(bytes, in: embedded) }
            try owner.withUnsafeBytes { k in
                guard let record = try view.record(of: table, key: k) else { return }
                try made.withUnsafeBytesIfPresent { try session.replaceField(of: key, record: record, in: table, storedColumn: column, with: $0) }
            }
        }
    }

    /// Makes an embedded object of `table` from the bytes of a parent's value (its own embedded
    /// objects too), and returns its key. Links to objects this file does not have are null.
    private func createEmbedded(_ bytes: [UInt8], in table: Table) throws -> [UInt8] {
        let values: [SyncValue]
        do {
            values = try SyncValue.decodedObject(bytes, of: table.className)
        } catch {
            throw Realm.Error(.invalidValue, "An embedded '\(table.className)' from node '\(stamp.node)' is malformed: \(error)", fileURL: file.url)
        }
        try checkValues(values, of: table.className)
        let given = Dictionary(values.map { ($0.property, $0) }, uniquingKeysWith: { a, _ in a })
        var fields: [[UInt8]?] = []
        for property in table.schema.properties {
            guard !property.isArray, property.type != .linkingObjects else {
                fields.append(nil)
                continue
            }
            let value = given[property.name]
            if property.type == .object {
                guard case .value(let target)? = value?.field else {
                    fields.append(nil)
                    continue
                }
                if let embedded = try session.embeddedTable(of: property) {
                    fields.append(try createEmbedded(target, in: embedded))
                } else {
                    fields.append(try targetExists(target, of: property) ? target : nil)
                }
            } else if let value, value.type == property.type.rawValue, case .value(let bytes) = value.field {
                fields.append(bytes)
            } else {
                fields.append(property.isOptional ? nil : Realm.defaultField(property.type))
            }
        }
        let key = try session.insert(fields: fields, into: table, update: .error)
        for (column, property) in table.schema.properties.enumerated() {
            guard table.lists[column] != nil, case .elements(let elements)? = given[property.name]?.field else { continue }
            if let embedded = try session.embeddedTable(of: property) {
                var made: [[UInt8]?] = []
                for case let element? in elements { made.append(try createEmbedded(element, in: embedded)) }
                try session.setList(made, of: key, in: table, column: column)
            } else {
                try session.setList(try present(elements, of: property, isMap: property.isMap), of: key, in: table, column: column)
            }
        }
        return key.withBytes { Array($0) }
    }

    private func targetExists(_ key: [UInt8], of property: Property) throws -> Bool {
        guard let name = property.objectClassName else { return false }
        let target: Table
        if let known = tables[name] {
            target = known
        } else {
            guard let found = realm.dynamicBinding(named: name)?.table else { return false }
            tables[name] = found
            target = found
        }
        return try exists(key, in: target)
    }

    /// `elements` without links to objects this file does not have (a map keeps the entry,
    /// with a null value).
    private func present(_ elements: [[UInt8]?], of property: Property, isMap: Bool) throws -> [[UInt8]?] {
        guard property.type == .object else { return elements }
        var kept: [[UInt8]?] = []
        for element in elements {
            if isMap {
                guard let (_, target) = MapEntry.decode(element) else { continue }
                if let target, try !targetExists(target, of: property) {
                    kept.append(MapEntry.withNullValue(element))
                } else {
                    kept.append(element)
                }
            } else if let element, try targetExists(element, of: property) {
                kept.append(element)
            }
        }
        return kept
    }
}
