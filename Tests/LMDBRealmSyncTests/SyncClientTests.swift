#if Sync
    import Foundation
    import LMDBRealm
    import LMDBRealmStorage
    import LMDBRealmSync
    import SyncTestSupport
    import TestSupport
    import Synchronization
    import CoreMetrics
    import Testing

    final class SyncedNote: Object {
        @Persisted(primaryKey: true) var id = ""
        @Persisted var title = ""
        @Persisted var stars = 0
        @Persisted var tags: List<String>
        @Persisted var parent: SyncedNote?
    }

    /// The next release of `SyncedNote`: one property added (schema version 1).
    final class SyncedNoteV2: Object {
        override class func className() -> String { "SyncedNote" }
        @Persisted(primaryKey: true) var id = ""
        @Persisted var title = ""
        @Persisted var stars = 0
        @Persisted var tags: List<String>
        @Persisted var parent: SyncedNoteV2?
        @Persisted var priority = 0
    }

    /// A node: its file, and its client running until the node is stopped.
    final class Node: Sendable {
        let configuration: Realm.Configuration
        let client: SyncClient
        private let task: Task<Void, any Error>

        init(
            _ name: String, in directory: URL, server: PostgresServer, compaction: LogCompaction = .keepingLatest(10_000),
            release: Int = 1, role: (name: String, password: String)? = nil, clockSkew: Duration? = nil,
            maximumClockSkew: Duration = .seconds(60), metrics: (any MetricsFactory)? = nil
        ) async throws {
            var configuration = Realm.Configuration(fileURL: directory.appendingPathComponent("\(name).realm"))
            configuration.objectTypes = release == 1 ? [SyncedNote.self] : [SyncedNoteV2.self]
            configuration.schemaVersion = UInt64(release - 1)
            self.configuration = configuration
            // These servers offer no TLS; the TLS suite covers the secured connection.
            let postgres = SyncClient.Postgres(
                host: server.host, port: server.port, username: role?.name ?? server.username, password: role?.password ?? server.password,
                database: server.database, tls: .disable)
            let client =
                if let metrics {
                    try await SyncClient(
                        realm: configuration, postgres: postgres, node: name, compaction: compaction, maximumClockSkew: maximumClockSkew,
                        metrics: metrics)
                } else {
                    try await SyncClient(
                        realm: configuration, postgres: postgres, node: name, compaction: compaction, maximumClockSkew: maximumClockSkew)
                }
            self.client = client
            if let clockSkew {
                // The client holds the file open: the clock set here is the one its commits use.
                let milliseconds = clockSkew.components.seconds * 1000
                let opened = configuration
                try await onNewThread { try Realm(configuration: opened).syncClock.setSkewForTesting(milliseconds: milliseconds) }
            }
            task = Task { try await client.run() }
        }

        /// Cancels the client's `run()` and waits for it to return (false if it has not after
        /// `timeout`; the test then fails instead of waiting for ever).
        @discardableResult
        func stop(timeout: Duration = .seconds(15)) async -> Bool {
            task.cancel()
            let task = task
            // Not a task group: a group would wait for the run that does not return.
            let ended = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answered = Mutex(false)
                let answer = { @Sendable (ended: Bool) in
                    if answered.withLock({ done in
                        defer { done = true }
                        return !done
                    }) {
                        continuation.resume(returning: ended)
                    }
                }
                Task {
                    _ = await task.result
                    answer(true)
                }
                Task {
                    try? await Task.sleep(for: timeout)
                    answer(false)
                }
            }
            #expect(ended, "the client's run() did not return within \(timeout) of its cancellation")
            return ended
        }

        /// Runs `body` in a write to the node's file, on a thread of its own.
        func write(_ body: @escaping @Sendable (Realm) -> Void) async throws {
            let configuration = configuration
            try await onNewThread {
                let realm = try Realm(configuration: configuration)
                try realm.write { body(realm) }
            }
        }

        /// Waits until everything the node committed is in the log (`waitForUpload()`; false
        /// after `timeout`).
        func waitUntilSent(timeout: Duration = .seconds(120)) async -> Bool {
            let client = client
            return await within(timeout) { (try? await client.waitForUpload()) != nil }
        }

        /// The node's notes as comparable text, once `done` holds for them (`nil` after `timeout`
        /// seconds): read at each commit to the file, by observing it.
        func notes(timeout: TimeInterval = 120, until done: @escaping @Sendable ([String]) -> Bool) async throws -> [String]? {
            try await observe(timeout: timeout) { done($0.lines) }?.lines
        }

        /// The node's notes once its file has applied the shared log through `sequence` (`nil`
        /// after `timeout` seconds), read from the same version of the file as its cursor.
        /// (PostgreSQL's sequences may leave gaps, so the cursor may pass `sequence` without
        /// stopping at it.) The time allowed is generous: the suite runs beside a build.
        func notes(
            timeout: TimeInterval = 120, appliedThrough sequence: Int64, lines: @escaping @Sendable (Realm) -> [String] = noteLines
        ) async throws -> [String]? {
            try await observe(timeout: timeout, lines: lines) { $0.cursor >= sequence }?.lines
        }

        /// The notes and the sync cursor of one version of the file, at each commit to it, until
        /// `done` holds for them.
        private func observe(
            timeout: TimeInterval, lines: @escaping @Sendable (Realm) -> [String] = noteLines,
            until done: @escaping @Sendable ((lines: [String], cursor: Int64)) -> Bool) async throws
            -> (lines: [String], cursor: Int64)?
        {
            let configuration = configuration
            return try await onNewThread {
                let seen = Collector<(lines: [String], cursor: Int64)>()
                let queue = DispatchQueue(label: "observer")
                // `syncState()` refreshes the realm; the notes are read from the version it read.
                let read = { (realm: Realm) in
                    let cursor = (try? realm.syncState()?.cursor) ?? -1
                    seen.append((lines(realm), cursor))
                }
                // The realm is kept (its observation with it) until the wait is over, and released
                // on its queue.
                let (realm, token) = try queue.sync {
                    let realm = try Realm(configuration: configuration, queue: queue)
                    // A queue's realm is told of others' commits (`.refreshRequired`); it reads them
                    // once refreshed. Observed first, then read: a commit between the two is then
                    // in the read or told (read before observing, it was neither).
                    let token = realm.observe { _, realm in read(realm) }
                    read(realm)
                    return (realm, token)
                }
                defer {
                    queue.sync {
                        token.invalidate()
                        withExtendedLifetime(realm) {}
                    }
                }
                return seen.wait(timeout: timeout) { $0.last.map(done) ?? false }?.last
            }
        }
    }

    func noteLines(_ realm: Realm) -> [String] {
        realm.objects(SyncedNote.self).sorted(byKeyPath: "id").map { "\($0.id) \($0.title) \($0.stars) \(Array($0.tags))" }
    }

    /// Waits until `client` reports a status for which `matches` holds (false after `timeout`).
    func waitForStatus(_ client: SyncClient, timeout: Duration = .seconds(90), _ matches: @escaping @Sendable (SyncClient.Status) -> Bool)
        async -> Bool
    {
        await within(timeout) {
            for await status in client.statusUpdates where matches(status) { return true }
            return false
        }
    }

    /// Whether `body` returns true within `timeout`: false if it returns false, or when the time
    /// is up (it is cancelled then, and must end on cancellation).
    func within(_ timeout: Duration, _ body: @escaping @Sendable () async -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask(operation: body)
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    @Suite(.serialized) struct SyncClientTests {
        @Test func twoNodesSeeEachOthersCommitsThroughPostgres() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server)
                let b = try await Node("b", in: dir, server: server)
                try await a.write { $0.add(SyncedNote(value: ["id": "n1", "title": "from a", "tags": ["x"]])) }
                let seenByB = try await b.notes { $0 == ["n1 from a 0 [\"x\"]"] }
                #expect(seenByB != nil, "b never saw a's note")

                try await b.write { realm in
                    let note = realm.object(ofType: SyncedNote.self, forPrimaryKey: "n1")!
                    note.stars = 5
                    note.tags.append("y")
                }
                let seenByA = try await a.notes { $0 == ["n1 from a 5 [\"x\", \"y\"]"] }
                #expect(seenByA != nil, "a never saw b's change")
                #expect(await waitForStatus(a.client) { $0 == .syncing(lag: 0) })
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes") == "2")
                await a.stop()
                await b.stop()
            }
        }

        @Test func commitsMadeWhilePostgresIsDownAreSentWhenItIsBack() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server)
                let b = try await Node("b", in: dir, server: server)
                #expect(await waitForStatus(a.client) { $0 == .syncing(lag: 0) })
                server.kill()
                // Local writes go on while PostgreSQL is away; they wait in the outbox.
                for i in 1...3 { try await a.write { $0.add(SyncedNote(value: ["id": "n\(i)", "title": "offline"])) } }
                #expect(await waitForStatus(a.client) { if case .offline = $0 { true } else { false } })
                try await onNewThread { try server.restart() }
                let seen = try await b.notes { $0.count == 3 }
                #expect(seen == ["n1 offline 0 []", "n2 offline 0 []", "n3 offline 0 []"])
                await a.stop()
                await b.stop()
            }
        }

        @Test func cancellingRunEndsItWhilePostgresIsDownOrBack() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server)
                #expect(await waitForStatus(a.client) { $0 == .syncing(lag: 0) })
                server.kill()
                let b = try await Node("b", in: dir, server: server)
                #expect(await waitForStatus(a.client) { if case .offline = $0 { true } else { false } })
                #expect(await waitForStatus(b.client) { if case .offline = $0 { true } else { false } })
                // Cancelled while it waits to reconnect, and while it is connected again.
                await b.stop()
                try await onNewThread { try server.restart() }
                #expect(await waitForStatus(a.client) { $0 == .syncing(lag: 0) })
                await a.stop()
            }
        }

        @Test func nodesCutOffFromPostgresSendAndReceiveWhenTheLinkHeals() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server)
                let b = try await Node("b", in: dir, server: server)
                try await a.write { $0.add(SyncedNote(value: ["id": "before", "title": "a"])) }
                #expect(try await b.notes { $0.count == 1 } != nil)
                #expect(try server.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lmdbrealm-sync %'") == "2")
                // The partition: PostgreSQL goes on running, but the nodes' sessions are ended and
                // their role may not log in again.
                try server.psql(
                    """
                    ALTER ROLE \(server.username) NOLOGIN;
                    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '\(server.username)'
                    """, asSuperuser: true)
                #expect(await waitForStatus(a.client) { if case .offline = $0 { true } else { false } })
                #expect(await waitForStatus(b.client) { if case .offline = $0 { true } else { false } })
                try await a.write { $0.add(SyncedNote(value: ["id": "during", "title": "a"])) }
                try await b.write { realm in
                    realm.add(SyncedNote(value: ["id": "during-b", "title": "b"]))
                    realm.objects(SyncedNote.self).filter("id == 'before'").first?.stars = 7
                }
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes", asSuperuser: true) == "1")
                try server.psql("ALTER ROLE \(server.username) LOGIN", asSuperuser: true)
                let expected = ["before a 7 []", "during a 0 []", "during-b b 0 []"]
                #expect(try await a.notes { $0 == expected } == expected)
                #expect(try await b.notes { $0 == expected } == expected)
                await a.stop()
                await b.stop()
            }
        }

        @Test func aNodeOfflineForTenThousandCommitsCatchesUp() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server)
                let configuration = a.configuration
                // b has a note from before, and goes offline (its client stops).
                let early = try await Node("b", in: dir, server: server)
                try await early.write { $0.add(SyncedNote(value: ["id": "from-b", "title": "b"])) }
                #expect(await waitForStatus(early.client) { $0 == .syncing(lag: 0) })
                await early.stop()
                // 10,000 commits: a thousand notes created, then changed nine times each.
                try await onNewThread {
                    let realm = try Realm(configuration: configuration)
                    for i in 0..<10_000 {
                        try realm.write {
                            realm.create(SyncedNote.self, value: ["id": "n\(i % 1000)", "title": "a", "stars": i], update: .modified)
                        }
                    }
                }
                #expect(await a.waitUntilSent())
                let summary = try server.psql(
                    "SELECT node, count(*), min(local_sequence), max(local_sequence), max(sequence) FROM lmdbrealm_changes GROUP BY node ORDER BY node"
                )
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes WHERE node = 'a'") == "10000", "\(summary)")
                let last = Int64(try server.psql("SELECT max(sequence) FROM lmdbrealm_changes")) ?? 0
                // b, back, applies the 10,000 commits it missed.
                let b = try await Node("b", in: dir, server: server)
                let caughtUp = try await b.notes(timeout: 120, appliedThrough: last)
                let expected = try await onNewThread { noteLines(try Realm(configuration: configuration)) }
                #expect(expected.count == 1001)
                #expect(expected.contains("n999 a 9999 []"))
                #expect(expected.contains("from-b b 0 []"))
                #expect(caughtUp == expected)
                await a.stop()
                await b.stop()
            }
        }

        /// A node refuses change sets made with a schema version newer than its own: its status
        /// says so, it applies nothing of them and keeps sending its own; started with the newer
        /// schema, it goes on from there.
        @Test func aNodeOnAnOlderSchemaRefusesNewerChangeSetsAndSaysSo() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server)
                try await a.write { $0.add(SyncedNote(value: ["id": "n1", "title": "first"])) }
                #expect(await a.waitUntilSent())
                await a.stop()
                let b = try await Node("b", in: dir, server: server)
                #expect(try await b.notes(appliedThrough: 1) == ["n1 first 0 []"])

                // a's next release adds a property; its change set reaches the log.
                let a2 = try await Node("a", in: dir, server: server, release: 2)
                try await a2.write { realm in
                    realm.object(ofType: SyncedNoteV2.self, forPrimaryKey: "n1")!.priority = 5
                    realm.add(SyncedNoteV2(value: ["id": "n2", "title": "second", "priority": 2]))
                }
                #expect(await a2.waitUntilSent())
                #expect(
                    await waitForStatus(b.client) { status in
                        guard case .refused(let reason) = status else { return false }
                        return reason.contains("schema version 1") && reason.contains("has version 0")
                    }, "\(b.client.status)")
                // b applied nothing of it, and its own writes still reach a.
                #expect(try await b.notes(appliedThrough: 1) == ["n1 first 0 []"])
                try await b.write { $0.object(ofType: SyncedNote.self, forPrimaryKey: "n1")!.stars = 3 }
                #expect(await b.waitUntilSent())
                let v2Lines: @Sendable (Realm) -> [String] = { realm in
                    realm.objects(SyncedNoteV2.self).sorted(byKeyPath: "id").map { "\($0.id) \($0.title) \($0.stars) \($0.priority)" }
                }
                let last = Int64(try server.psql("SELECT max(sequence) FROM lmdbrealm_changes")) ?? 0
                let applied = try await a2.notes(appliedThrough: last, lines: v2Lines)
                let log = try server.psql(
                    "SELECT string_agg(sequence || ' ' || node || ' #' || local_sequence, ', ' ORDER BY sequence) FROM lmdbrealm_changes")
                #expect(applied == ["n1 first 3 5", "n2 second 0 2"], "a2: \(a2.client.status); the log: \(log)")
                await b.stop()

                // b on the newer release applies what it refused.
                let b2 = try await Node("b", in: dir, server: server, release: 2)
                #expect(try await b2.notes(appliedThrough: last, lines: v2Lines) == ["n1 first 3 5", "n2 second 0 2"])
                #expect(await waitForStatus(b2.client) { if case .syncing = $0 { true } else { false } }, "\(b2.client.status)")
                await a2.stop()
                await b2.stop()
            }
        }

        @Test func threeNodesWritingTheSameObjectsConverge() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                var nodes: [Node] = []
                for name in ["a", "b", "c"] { nodes.append(try await Node(name, in: dir, server: server)) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (n, node) in nodes.enumerated() {
                        group.addTask {
                            for round in 0..<20 {
                                try await node.write { realm in
                                    let id = "n\(round % 4)"
                                    let note =
                                        realm.object(ofType: SyncedNote.self, forPrimaryKey: id) ?? realm.create(SyncedNote.self, value: ["id": id])
                                    if round % 3 == n { note.title = "node \(n) round \(round)" } else { note.stars += 1 }
                                    if round % 5 == n { note.tags.append("\(n)") }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // Every node has sent everything and applied the whole log: then all agree.
                // (Sending runs on its own: the log is complete only once each node has sent.)
                var finals: [[String]] = []
                for node in nodes {
                    #expect(await node.waitUntilSent())
                }
                let last = Int64(try server.psql("SELECT max(sequence) FROM lmdbrealm_changes")) ?? 0
                #expect(last > 0)
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes") == "60")
                for node in nodes {
                    let applied = try await node.notes(appliedThrough: last)
                    finals.append(try #require(applied))
                }
                #expect(finals[0].count == 4)
                #expect(finals[1] == finals[0])
                #expect(finals[2] == finals[0])
                for node in nodes { await node.stop() }
            }
        }
    }
#endif
