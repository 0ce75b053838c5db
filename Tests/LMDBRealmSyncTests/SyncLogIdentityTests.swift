#if Sync
    import Foundation
    import LMDBRealm
    import LMDBRealmSync
    import SyncTestSupport
    import TestSupport
    import Testing

    /// A log that went back is found out, never followed silently: the file remembers the log's
    /// epoch and the change set at its cursor, and checks both at every connection.
    @Suite struct SyncLogIdentityTests {
        private func refusesTheLog(_ node: Node, saying words: String...) async -> Bool {
            await waitForStatus(node.client) { status in
                guard case .refused(let reason) = status else { return false }
                return words.allSatisfy { reason.contains($0) }
            }
        }

        @Test func aLogRestoredFromABackupIsFoundOutAtReconnect() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server)
                let b = try await Node("b", in: dir, server: server)
                try await a.write { $0.add(SyncedNote(value: ["id": "n1", "title": "before the backup"])) }
                #expect(await a.waitUntilSent(), "\(a.client.status)")
                #expect(try await b.notes(appliedThrough: 1)?.count == 1, "\(b.client.status)")
                // A backup of PostgreSQL's data, taken while it is stopped.
                server.kill()
                let backup = try server.copyData(named: "backup")
                try server.restart()
                try await a.write { $0.add(SyncedNote(value: ["id": "n2", "title": "after the backup"])) }
                try await b.write { $0.add(SyncedNote(value: ["id": "n3", "title": "after the backup"])) }
                #expect(await a.waitUntilSent(), "\(a.client.status)")
                #expect(await b.waitUntilSent(), "\(b.client.status)")
                let last = Int64(try server.psql("SELECT max(sequence) FROM lmdbrealm_changes")) ?? 0
                #expect(try await a.notes(appliedThrough: last)?.count == 3, "\(a.client.status)")
                #expect(try await b.notes(appliedThrough: last)?.count == 3, "\(b.client.status)")
                // The backup restored: the log holds n1 alone, and hands sequence 2 out again.
                server.kill()
                try server.restoreData(from: backup)
                try server.restart()
                for node in [a, b] {
                    #expect(await refusesTheLog(node, saying: "went back", "through \(last)"), "\(node.client.status)")
                }
                // Neither node sent into the restored log, nor took anything from it.
                try await a.write { $0.add(SyncedNote(value: ["id": "n4", "title": "after the restore"])) }
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes") == "1")
                #expect(try await b.notes(appliedThrough: last)?.count == 3)
                // A node that never synced with the log before starts from it as it is.
                let c = try await Node("c", in: dir, server: server)
                #expect(try await c.notes(appliedThrough: 1) == ["n1 before the backup 0 []"], "\(c.client.status)")
                #expect(await waitForStatus(c.client) { if case .syncing = $0 { true } else { false } }, "\(c.client.status)")
                await a.stop()
                await b.stop()
                await c.stop()
            }
        }

        /// Node a sends a note, applies the log through it, and stops.
        private func syncOneNoteAndStop(in dir: URL, server: PostgresServer) async throws {
                let a = try await Node("a", in: dir, server: server)
                try await a.write { $0.add(SyncedNote(value: ["id": "n1", "title": "one"])) }
                #expect(await a.waitUntilSent())
                #expect(try await a.notes(appliedThrough: 1)?.count == 1, "\(a.client.status)")
                await a.stop()
        }

        @Test func aLogWhoseChangeSetAtTheCursorIsAnotherHasGoneBack() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                try await syncOneNoteAndStop(in: dir, server: server)
                // The row at a's cursor is now another node's change set: the numbers were
                // handed out again.
                try server.psql("UPDATE lmdbrealm_changes SET node = 'z', local_sequence = 7 WHERE sequence = 1")
                let again = try await Node("a", in: dir, server: server)
                #expect(await refusesTheLog(again, saying: "went back", "node 'z'", "#7", "node 'a'"), "\(again.client.status)")
                await again.stop()
            }
        }

        @Test func recreatedTablesAreAnotherLog() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                try await syncOneNoteAndStop(in: dir, server: server)
                try server.psql("DROP TABLE lmdbrealm_changes, lmdbrealm_objects, lmdbrealm_snapshot, lmdbrealm_log")
                let again = try await Node("a", in: dir, server: server)
                #expect(await refusesTheLog(again, saying: "another log", "recreated"), "\(again.client.status)")
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes") == "0")
                await again.stop()
            }
        }
    }
#endif
