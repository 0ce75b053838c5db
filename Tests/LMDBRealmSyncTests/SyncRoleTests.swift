#if Sync
    import Foundation
    import LMDBRealm
    import LMDBRealmSync
    import SyncTestSupport
    import TestSupport
    import Testing

    /// A role per node, enforced by PostgreSQL: after the script `SyncSetup` makes (and
    /// `lmdbrealm sync-setup` prints), a node appends change sets under its own id only, never
    /// changes or removes the log, and only the compactor folds it.
    @Suite struct SyncRoleTests {
        /// A server set up for nodes `nodes` and `compactor`, each role with the password
        /// "pw-<name>".
        private func setUpServer(nodes: [String], compactor: String? = nil) async throws -> PostgresServer {
            let server = try await onNewThread { try PostgresServer.start() }
            do {
                try server.psql(try SyncSetup.script(nodes: nodes, compactor: compactor), asSuperuser: true)
                for name in nodes + (compactor.map { [$0] } ?? []) {
                    try server.psql("ALTER ROLE \"\(name)\" PASSWORD 'pw-\(name)'", asSuperuser: true)
                }
            } catch {
                server.stop()
                throw error
            }
            return server
        }

        private func role(_ name: String) -> (name: String, password: String) { (name, "pw-\(name)") }

        /// What psql as `role` printed, or the error it threw, as text.
        private func attempt(_ server: PostgresServer, _ sql: String, as role: (name: String, password: String)) -> String {
            do {
                return try server.psql(sql, role: role.name, password: role.password)
            } catch {
                return "error: \(error)"
            }
        }

        @Test func nodesSyncUnderTheirOwnRolesAndMayOnlyAppendAsThemselves() async throws {
            let server = try await setUpServer(nodes: ["a", "b"])
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let a = try await Node("a", in: dir, server: server, role: role("a"))
                let b = try await Node("b", in: dir, server: server, role: role("b"))
                try await a.write { $0.add(SyncedNote(value: ["id": "n1", "title": "from a"])) }
                try await b.write { $0.add(SyncedNote(value: ["id": "n2", "title": "from b"])) }
                #expect(await a.waitUntilSent(), "\(a.client.status)")
                #expect(await b.waitUntilSent(), "\(b.client.status)")
                let expected = ["n1 from a 0 []", "n2 from b 0 []"]
                #expect(try await a.notes(until: { $0 == expected }) == expected, "\(a.client.status)")
                #expect(try await b.notes(until: { $0 == expected }) == expected, "\(b.client.status)")
                #expect(try server.psql("SELECT string_agg(node, ',' ORDER BY node) FROM lmdbrealm_changes", asSuperuser: true) == "a,b")
                await a.stop()
                await b.stop()
            }
            // What a node's role may not do, straight through SQL.
            let a = role("a")
            let refusals = [
                "INSERT INTO lmdbrealm_changes (node, local_sequence, changes) VALUES ('b', 99, '\\x00')": "row-level security",
                "UPDATE lmdbrealm_changes SET changes = '\\x00'": "permission denied for table lmdbrealm_changes",
                "DELETE FROM lmdbrealm_changes": "permission denied for table lmdbrealm_changes",
                "TRUNCATE lmdbrealm_changes": "permission denied for table lmdbrealm_changes",
                "INSERT INTO lmdbrealm_snapshot VALUES (1, 1, 1, 0)": "permission denied for table lmdbrealm_snapshot",
                "DELETE FROM lmdbrealm_objects": "permission denied for table lmdbrealm_objects",
                "DROP TABLE lmdbrealm_changes": "must be owner of table lmdbrealm_changes",
            ]
            for (sql, expected) in refusals {
                let answer = attempt(server, sql, as: a)
                #expect(answer.contains(expected), "\(sql): \(answer)")
            }
            #expect(attempt(server, "SELECT count(*) FROM lmdbrealm_changes", as: a) == "2")
            #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes", asSuperuser: true) == "2", "the refusals changed the log")
        }

        @Test func aNodePosingAsAnotherIsRefusedByPostgreSQLAndItsStatusSaysWhy() async throws {
            let server = try await setUpServer(nodes: ["a", "b"])
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                // Node "b" logs in with a's role.
                let posing = try await Node("b", in: dir, server: server, role: role("a"))
                try await posing.write { $0.add(SyncedNote(value: ["id": "n1", "title": "forged"])) }
                let refused = await waitForStatus(posing.client) { status in
                    guard case .notPermitted(let reason) = status else { return false }
                    return reason.contains("role 'a'") && reason.contains("node 'b'") && reason.contains("row-level security")
                }
                #expect(refused, "\(posing.client.status)")
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes", asSuperuser: true) == "0")
                await posing.stop()
                // The same file, under its own role, sends what waited in its outbox.
                let b = try await Node("b", in: dir, server: server, role: role("b"))
                #expect(await b.waitUntilSent(), "\(b.client.status)")
                #expect(try server.psql("SELECT string_agg(node, ',') FROM lmdbrealm_changes", asSuperuser: true) == "b")
                await b.stop()
            }
        }

        @Test func onlyTheCompactorFoldsTheLog() async throws {
            let server = try await setUpServer(nodes: ["a"], compactor: "compactor")
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                // a would compact after 2 change sets; its role may not, so it leaves the log whole.
                let a = try await Node("a", in: dir, server: server, compaction: .keepingLatest(1), role: role("a"))
                for round in 0..<6 {
                    try await a.write { $0.add(SyncedNote(value: ["id": "n\(round)", "title": "t"]), update: .modified) }
                }
                #expect(await a.waitUntilSent(), "\(a.client.status)")
                let last = Int64(try server.psql("SELECT max(sequence) FROM lmdbrealm_changes", asSuperuser: true)) ?? 0
                #expect(try await a.notes(appliedThrough: last)?.count == 6, "\(a.client.status)")
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes", asSuperuser: true) == "6")
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_snapshot", asSuperuser: true) == "0")
                #expect(
                    await waitForStatus(a.client) { if case .syncing = $0 { true } else { false } },
                    "a node that may not compact is \(a.client.status)")
                // The compactor folds all but the newest change set.
                let compactor = try await Node("compactor", in: dir, server: server, compaction: .never, role: role("compactor"))
                #expect(try await compactor.client.compactLog(keepingLatest: 1) == 5)
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes", asSuperuser: true) == "1")
                #expect(try server.psql("SELECT through FROM lmdbrealm_snapshot", asSuperuser: true) == String(last - 1))
                // A node's own call is refused by PostgreSQL.
                await #expect(throws: (any Error).self) { try await a.client.compactLog(keepingLatest: 0) }
                await compactor.stop()
                await a.stop()
            }
        }

        @Test func theScriptRefusesNamesItCannotKeep() throws {
            let long = String(repeating: "n", count: 64)
            let cases: [([String], String?, String, String)] = [
                ([""], nil, "lmdbrealm", "empty"),
                ([long], nil, "lmdbrealm", "64 bytes long"),
                (["a", "a"], nil, "lmdbrealm", "given twice"),
                (["a"], "a", "lmdbrealm", "given twice"),
                (["a"], nil, "app-1", "the prefix 'app-1'"),
                (["a$lmdbrealm$b"], nil, "lmdbrealm", "$lmdbrealm$"),
            ]
            for (nodes, compactor, prefix, expected) in cases {
                #expect {
                    try SyncSetup.script(nodes: nodes, compactor: compactor, prefix: prefix)
                } throws: { error in
                    "\(error)".contains(expected)
                }
            }
            // Quotes in a node id stay inside its identifier and literal.
            let script = try SyncSetup.script(nodes: ["o'neil \"x\""])
            #expect(script.contains("\"o'neil \"\"x\"\"\""))
            #expect(script.contains("rolname = 'o''neil \"x\"'"))
        }

        @Test func theScriptRunsAgainWithMoreNodes() async throws {
            let server = try await setUpServer(nodes: ["a"])
            defer { server.stop() }
            try server.psql(try SyncSetup.script(nodes: ["a", "b"]), asSuperuser: true)
            #expect(
                try server.psql(
                    "SELECT string_agg(r.rolname, ',' ORDER BY r.rolname) FROM pg_roles r WHERE pg_has_role(r.oid, 'lmdbrealm_node', 'MEMBER') AND r.rolname <> 'lmdbrealm_node' AND NOT r.rolsuper",
                    asSuperuser: true) == "a,b")
            #expect(try server.psql("SELECT count(*) FROM pg_policies WHERE tablename = 'lmdbrealm_changes'", asSuperuser: true) == "3")
        }
    }
#endif
