#if Sync
    internal import Foundation
    internal import LMDBRealm
    internal import Logging
    internal import PostgresNIO

    /// When a node folds the shared log's older change sets into the snapshot, so that the log
    /// does not grow for ever and a new node does not replay all of it.
    public struct LogCompaction: Sendable, Equatable {
        /// How many of the newest change sets the log keeps (`nil`: this node never compacts).
        public var keepsLatest: Int?

        /// Folds the change sets older than the newest `count` once the log holds twice as many
        /// after the snapshot. A node that was offline for fewer than `count` change sets
        /// replays them; one further behind loads the snapshot.
        public static func keepingLatest(_ count: Int) -> LogCompaction {
            precondition(count >= 0, "A log keeps zero or more change sets, not \(count)")
            return LogCompaction(keepsLatest: count)
        }

        /// This node leaves compaction to the others.
        public static let never = LogCompaction(keepsLatest: nil)
    }

    /// The snapshot: the shared log's change sets up to `through` folded into one state per
    /// object (the table `lmdbrealm_objects`, one row per object with each value's stamp), kept
    /// by compaction. The log's rows up to `through` are gone once folded.
    struct SnapshotPosition {
        var through: Int64 = 0
        var clock: UInt64 = 0
        var schemaVersion: UInt64 = 0
    }

    /// The shared log's snapshot holds what this client cannot read.
    struct SyncSnapshotError: Error, CustomStringConvertible {
        var description: String
    }

    extension SyncClient {
        /// Folds the shared log's change sets older than its newest `count` into the snapshot,
        /// and removes them from the log, at once, on a connection of its own (``run()`` does it
        /// by itself, as ``compaction`` says).
        /// - Returns: How many change sets were folded (none if another node is compacting).
        @discardableResult
        public func compactLog(keepingLatest count: Int) async throws -> Int {
            precondition(count >= 0, "A log keeps zero or more change sets, not \(count)")
            let raw = try await PostgresConnection.connect(configuration: connectionConfiguration, id: 0, logger: logger)
            let connection = SyncConnection(raw, logger: logger)
            do {
                try await createLog(connection)
                let folded = try await compact(connection, keepingLatest: count)
                try await raw.close()
                return folded
            } catch {
                try? await raw.close()
                throw error
            }
        }

        /// The next ``snapshotPage`` objects of the snapshot after `after` in (class, key) order
        /// (only those with links if `links`), read as one value that PostgreSQL assembles: a
        /// row per object costs more to send and read than the object itself.
        private func snapshotPage(
            _ connection: SyncConnection, after: (className: String, key: [UInt8]), links: Bool
        ) async throws -> [SyncSnapshotObject] {
            let key = ByteBuffer(bytes: after.key)
            let rows = try await connection.query(
                """
                SELECT string_agg(
                    int4send(octet_length(convert_to(class, 'UTF8'))) || convert_to(class, 'UTF8')
                    || int4send(octet_length(key)) || key || int4send(octet_length(state)) || state, ''::bytea ORDER BY class, key)
                FROM (SELECT class, key, state FROM lmdbrealm_objects
                      WHERE (class, key) > (\(after.className), \(key)) AND (has_links OR NOT \(links))
                      ORDER BY class, key LIMIT \(Self.snapshotPage)) AS page
                """)
            var blob: ByteBuffer?
            for try await (bytes) in rows.decode(ByteBuffer?.self) { blob = bytes }
            guard var blob else { return [] }
            var objects: [SyncSnapshotObject] = []
            objects.reserveCapacity(Self.snapshotPage)
            func field(_ what: String) throws -> [UInt8] {
                guard let count = blob.readInteger(as: Int32.self), count >= 0, let bytes = blob.readBytes(length: Int(count)) else {
                    throw SyncSnapshotError(description: "a page of the snapshot ends inside an object's \(what)")
                }
                return bytes
            }
            while blob.readableBytes > 0 {
                let className = String(decoding: try field("class"), as: UTF8.self)
                let key = try field("key")
                let state = try field("state")
                do {
                    objects.append(try SyncSnapshotObject(className: className, key: key, decoding: state))
                } catch {
                    throw SyncSnapshotError(description: "the snapshot's object \(className) \(key) is malformed: \(error)")
                }
            }
            return objects
        }

        func snapshotPosition(_ connection: SyncConnection) async throws -> SnapshotPosition {
            let rows = try await connection.query("SELECT through, clock, schema_version FROM lmdbrealm_snapshot WHERE id = 1")
            for try await (through, clock, version) in rows.decode((Int64, Int64, Int64).self) {
                return SnapshotPosition(through: through, clock: UInt64(clock), schemaVersion: UInt64(version))
            }
            return SnapshotPosition()
        }

        /// Folds change sets of the log older than its newest `count` into the snapshot, a
        /// thousand a transaction, each of which also moves the snapshot's position and removes
        /// them from the log. One node at a time: another that tries meanwhile folds nothing.
        /// - Returns: How many change sets were folded.
        @discardableResult
        func compact(_ connection: SyncConnection, keepingLatest count: Int) async throws -> Int {
            var folded = 0
            while true {
                try Task.checkCancellation()
                let step = try await connection.transaction { connection in
                    try await self.compactStep(connection, keepingLatest: count)
                }
                guard let step else { return folded }
                folded += step
            }
        }

        /// One transaction of ``compact(_:keepingLatest:)``: `nil` when there is nothing (more)
        /// to fold or another node holds the lock.
        private func compactStep(_ connection: SyncConnection, keepingLatest count: Int) async throws -> Int? {
            let locked = try await connection.query("SELECT pg_try_advisory_xact_lock(7302)")
            guard try await locked.decode(Bool.self).first(where: { _ in true }) == true else { return nil }
            let position = try await snapshotPosition(connection)
            let lastRows = try await connection.query("SELECT COALESCE(max(sequence), 0) FROM lmdbrealm_changes")
            let last = try await lastRows.decode(Int64.self).first(where: { _ in true }) ?? 0
            let target = last - Int64(count)
            guard target > position.through else { return nil }
            let rows = try await connection.query(
                """
                SELECT sequence, node, changes FROM lmdbrealm_changes WHERE sequence > \(position.through) AND sequence <= \(target)
                ORDER BY sequence LIMIT 1000
                """)
            var incoming: [SyncIncoming] = []
            for try await (sequence, node, changes) in rows.decode((Int64, String, ByteBuffer).self) {
                incoming.append(SyncIncoming(sequence: sequence, node: node, changes: Array(changes.readableBytesView)))
            }
            guard let through = incoming.last?.sequence else { return nil }
            let fold = try SyncFold(incoming)
            // What the snapshot holds of the objects the change sets change.
            let ids = Array(fold.objects)
            let classes = ids.map(\.className)
            let keys = ids.map { ByteBuffer(bytes: $0.key) }
            var objects: [SyncObjectID: SyncSnapshotObject] = [:]
            let held = try await connection.query(
                """
                SELECT o.class, o.key, o.state FROM lmdbrealm_objects o
                JOIN unnest(\(classes)::text[], \(keys)::bytea[]) AS wanted(class, key) ON o.class = wanted.class AND o.key = wanted.key
                """)
            for try await (className, key, state) in held.decode((String, ByteBuffer, ByteBuffer).self) {
                let id = SyncObjectID(className: className, key: Array(key.readableBytesView))
                objects[id] = try SyncSnapshotObject(className: className, key: id.key, decoding: Array(state.readableBytesView))
            }
            fold.fold(into: &objects)
            let changed = Array(objects.values)
            let states = changed.map { ByteBuffer(bytes: $0.encoded()) }
            try await connection.query(
                """
                INSERT INTO lmdbrealm_objects (class, key, state, has_links)
                SELECT * FROM unnest(\(changed.map(\.className))::text[], \(changed.map { ByteBuffer(bytes: $0.key) })::bytea[],
                                     \(states)::bytea[], \(changed.map(\.hasLinks))::boolean[])
                ON CONFLICT (class, key) DO UPDATE SET state = excluded.state, has_links = excluded.has_links
                """)
            let clock = Int64(max(position.clock, fold.clock))
            let version = Int64(max(position.schemaVersion, fold.schemaVersion))
            try await connection.query(
                """
                INSERT INTO lmdbrealm_snapshot (id, through, clock, schema_version) VALUES (1, \(through), \(clock), \(version))
                ON CONFLICT (id) DO UPDATE SET through = excluded.through, clock = excluded.clock, schema_version = excluded.schema_version
                """)
            try await connection.query("DELETE FROM lmdbrealm_changes WHERE sequence <= \(through)")
            return incoming.count
        }

        /// Objects of the snapshot a write of the file loads.
        static let snapshotPage = 5000

        /// Loads the snapshot into the file, if its position is past `cursor`, as one consistent
        /// read of it: first the objects, then the links of those that have some, in writes of
        /// ``snapshotPage`` objects; the last write moves the file's cursor to the snapshot's
        /// position.
        /// - Returns: `false` if the file refuses it (a schema it does not have; ``status`` says so).
        func loadSnapshot(_ connection: SyncConnection, after cursor: Int64) async throws -> Bool {
            try Task.checkCancellation()
            return try await connection.transaction { connection in
                try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                let position = try await self.snapshotPosition(connection)
                guard position.through > cursor else { return true }
                do {
                    for links in [false, true] {
                        // A page is applied while the next is read: one write at a time.
                        try await withThrowingTaskGroup(of: Void.self) { writes in
                            var after: (className: String, key: [UInt8]) = ("", [])
                            while true {
                                let page = try await self.snapshotPage(connection, after: after, links: links)
                                guard let last = page.last, page.count == Self.snapshotPage else {
                                    try await writes.waitForAll()
                                    try await self.file.perform {
                                        try $0.applySyncSnapshot(
                                            page, links: links, schemaVersion: position.schemaVersion,
                                            through: links ? (position.through, position.clock) : nil)
                                    }
                                    break
                                }
                                after = (last.className, last.key)
                                try await writes.next()
                                writes.addTask {
                                    try await self.file.perform {
                                        try $0.applySyncSnapshot(page, links: links, schemaVersion: position.schemaVersion)
                                    }
                                }
                            }
                        }
                    }
                } catch let error as Realm.Error where Self.refuses(error) {
                    self.setStatus(.refused(reason: error.localizedDescription), lasting: true)
                    return false
                } catch let error as SyncSnapshotError {
                    self.setStatus(.refused(reason: error.description), lasting: true)
                    return false
                }
                return true
            }
        }
    }
#endif
