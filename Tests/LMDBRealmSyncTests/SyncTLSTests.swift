#if Sync
    import Foundation
    import LMDBRealm
    import LMDBRealmSync
    import SyncTestSupport
    import TestSupport
    import Testing

    /// The connection to PostgreSQL: TLS unless asked otherwise, the server's certificate checked
    /// against a root certificate made by openssl for the test, refusals that say which check
    /// failed, and a network capture that holds nothing the app wrote.
    @Suite struct SyncTLSTests {
        static let marker = "marker-7c1d-never-in-clear"

        /// A node's file and its client (not running).
        private func client(
            in dir: URL, node: String = "a", server: PostgresServer, port: Int? = nil, host: String? = nil, tls: SyncClient.Postgres.TLS
        ) async throws -> (SyncClient, Realm.Configuration) {
            var configuration = Realm.Configuration(fileURL: dir.appendingPathComponent("\(node).realm"))
            configuration.objectTypes = [SyncedNote.self]
            let postgres = SyncClient.Postgres(
                host: host ?? server.host, port: port ?? server.port, username: server.username, password: server.password,
                database: server.database, tls: tls)
            return (try await SyncClient(realm: configuration, postgres: postgres, node: node), configuration)
        }

        /// Writes a note titled with the marker and waits until it is in the shared log.
        private func writeAndUpload(_ client: SyncClient, _ configuration: Realm.Configuration) async throws {
            let run = Task { try await client.run() }
            defer { run.cancel() }
            try await onNewThread {
                let realm = try Realm(configuration: configuration)
                try realm.write { realm.add(SyncedNote(value: ["id": "n1", "title": Self.marker])) }
            }
            let uploaded = await within(.seconds(60)) {
                (try? await client.waitForUpload()) != nil
            }
            #expect(uploaded, "the note did not reach the shared log; status: \(client.status)")
            run.cancel()
            _ = await run.result
        }

        @Test(arguments: [("verify-full", false), ("require", false), ("disable", true)])
        func whatCrossesTheNetworkIsReadableOnlyWhenPlaintextIsAskedFor(mode: String, readable: Bool) async throws {
            try await withTemporaryDirectory { dir in
                let root = try TestCertificates(in: dir, name: "root")
                let server = try await onNewThread { try PostgresServer.start(tls: try root.server(names: ["IP:127.0.0.1"], file: "server")) }
                defer { server.stop() }
                let relay = try TCPRelay(to: server.port)
                defer { relay.stop() }
                let tls: SyncClient.Postgres.TLS =
                    switch mode {
                    case "verify-full": .verifyFull(rootCertificate: root.certificate)
                    case "require": .require
                    default: .disable
                    }
                let (client, configuration) = try await self.client(in: dir, server: server, port: relay.port, tls: tls)
                try await writeAndUpload(client, configuration)
                let stored = try server.psql("SELECT count(*) FROM lmdbrealm_changes WHERE position('\(Self.marker)' in encode(changes, 'escape')) > 0")
                #expect(stored == "1", "the change set with the marker is not in the log")
                let captured = relay.captured
                #expect(relay.connections >= 1 && captured.count > 1_000, "the relay passed \(captured.count) bytes")
                #expect((captured.range(of: Data(Self.marker.utf8)) != nil) == readable, "marker in the capture: \(!readable)")
                #expect((captured.range(of: Data(server.username.utf8)) != nil) == readable, "role name in the capture")
            }
        }

        @Test func theServerSeesATLSConnection() async throws {
            try await withTemporaryDirectory { dir in
                let root = try TestCertificates(in: dir, name: "root")
                let server = try await onNewThread { try PostgresServer.start(tls: try root.server(names: ["IP:127.0.0.1"], file: "server")) }
                defer { server.stop() }
                let (client, configuration) = try await self.client(in: dir, server: server, tls: .verifyFull(rootCertificate: root.certificate))
                let run = Task { try await client.run() }
                defer { run.cancel() }
                #expect(await waitForStatus(client) { if case .syncing = $0 { true } else { false } }, "status: \(client.status)")
                let ssl = try server.psql(
                    "SELECT string_agg(s.ssl::text || ' ' || s.version, ',') FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
                        + "WHERE a.application_name = 'lmdbrealm-sync a'", asSuperuser: true)
                #expect(ssl.hasPrefix("true TLSv1.3") || ssl.hasPrefix("true TLSv1.2"), "pg_stat_ssl: \(ssl)")
                _ = configuration
            }
        }

        enum Refusal: String, CaseIterable, Sendable {
            case wrongRoot, wrongHost, noTLS
        }

        @Test(arguments: Refusal.allCases)
        func aConnectionThatIsNotAsAskedIsRefusedWithAStatusThatSaysWhy(_ refusal: Refusal) async throws {
            try await withTemporaryDirectory { dir in
                let root = try TestCertificates(in: dir, name: "root")
                let other = try TestCertificates(in: dir, name: "other")
                let names = refusal == .wrongHost ? ["DNS:db.example.org"] : ["IP:127.0.0.1"]
                let certificate = try root.server(names: names, file: "server")
                let server = try await onNewThread { try PostgresServer.start(tls: refusal == .noTLS ? nil : certificate) }
                defer { server.stop() }
                let tls: SyncClient.Postgres.TLS =
                    switch refusal {
                    case .wrongRoot: .verifyFull(rootCertificate: other.certificate)
                    case .wrongHost: .verifyFull(rootCertificate: root.certificate)
                    case .noTLS: .require
                    }
                let (client, configuration) = try await self.client(in: dir, server: server, tls: tls)
                let run = Task { try await client.run() }
                defer { run.cancel() }
                let expected =
                    switch refusal {
                    case .wrongRoot: "is not signed by the root certificate \(other.certificate.path)"
                    case .wrongHost: "does not name 127.0.0.1"
                    case .noTLS: "offers no TLS, which sslmode=require requires"
                    }
                let refused = await waitForStatus(client) { status in
                    if case .cannotConnect(let reason) = status { reason.contains(expected) } else { false }
                }
                #expect(refused, "status: \(client.status)")
                #expect(client.status.description.hasPrefix("cannot connect: "))
                // Nothing reached the server: the log's tables were never made.
                #expect(try server.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'lmdbrealm_changes'") == "0")
                _ = configuration
            }
        }

        /// verify-ca checks the root, not the name: the certificate for another name connects.
        @Test func verifyCAChecksTheRootButNotTheName() async throws {
            try await withTemporaryDirectory { dir in
                let root = try TestCertificates(in: dir, name: "root")
                let server = try await onNewThread { try PostgresServer.start(tls: try root.server(names: ["DNS:db.example.org"], file: "server")) }
                defer { server.stop() }
                let (client, configuration) = try await self.client(in: dir, server: server, tls: .verifyCA(rootCertificate: root.certificate))
                try await writeAndUpload(client, configuration)
                #expect(try server.psql("SELECT count(*) FROM lmdbrealm_changes") == "1")
            }
        }

        // MARK: Settings

        @Test(arguments: [
            ("postgres://app@db.internal/app", SyncClient.Postgres.TLS.require),
            ("postgresql://app@db.internal:6432/app?sslmode=require", .require),
            ("postgres://app@db.internal/app?sslmode=disable", .disable),
            ("postgres://app@db.internal/app?sslrootcert=/etc/ca.pem", .verifyFull(rootCertificate: URL(fileURLWithPath: "/etc/ca.pem"))),
            ("postgres://app@db.internal/app?sslmode=verify-full&sslrootcert=/etc/ca.pem", .verifyFull(rootCertificate: URL(fileURLWithPath: "/etc/ca.pem"))),
            ("postgres://app@db.internal/app?sslmode=verify-ca&sslrootcert=/etc/ca.pem", .verifyCA(rootCertificate: URL(fileURLWithPath: "/etc/ca.pem"))),
        ])
        func aURLSaysHowTheConnectionIsSecured(url: String, tls: SyncClient.Postgres.TLS) throws {
            let postgres = try SyncClient.Postgres(url: url)
            #expect(postgres.tls == tls)
            #expect(postgres.host == "db.internal" && postgres.username == "app" && postgres.database == "app")
        }

        @Test func aURLGivesUserPasswordPortAndDatabase() throws {
            let postgres = try SyncClient.Postgres(url: "postgres://sync%20node:p%40ss@10.0.0.5:6543?sslmode=disable")
            #expect(postgres.username == "sync node")
            #expect(postgres.password == "p@ss")
            #expect(postgres.port == 6543)
            #expect(postgres.database == "sync node")
            #expect(postgres.tls == .disable)
        }

        @Test(arguments: [
            ("not a url at all", "does not start with postgres:// or postgresql://"),
            ("postgres://app@db:port/app", "is not a URL"),
            ("mysql://app@db/app", "does not start with postgres:// or postgresql://"),
            ("postgres:///app", "names no host"),
            ("postgres://db.internal/app", "names no user"),
            ("postgres://app@db/app?sslmode=prefer", "sslmode=prefer, which falls back to plaintext"),
            ("postgres://app@db/app?sslmode=allow", "sslmode=allow, which falls back to plaintext"),
            ("postgres://app@db/app?sslmode=verify-full", "without sslrootcert"),
            ("postgres://app@db/app?sslmode=require&sslrootcert=/ca.pem", "checks no certificate"),
            ("postgres://app@db/app?sslmode=secure", "sslmode=secure, which is none of"),
            ("postgres://app@db/app?connect_timeout=3", "the parameter connect_timeout, which is not understood"),
            ("postgres://app@db:0/app", "has the port 0"),
            ("postgres://app:hunter2@db/app?sslmode=", "gives no value to sslmode"),
        ])
        func aMalformedURLIsAThrownErrorNamingWhatIsWrong(url: String, message: String) {
            #expect {
                try SyncClient.Postgres(url: url)
            } throws: { error in
                let text = String(describing: error)
                return error is SyncClient.ConfigurationError && text.contains(message) && !text.contains("hunter2")
            }
        }

        @Test func aRootCertificateThatCannotBeReadIsAThrownErrorBeforeAnythingConnects() async throws {
            try await withTemporaryDirectory { dir in
                var configuration = Realm.Configuration(fileURL: dir.appendingPathComponent("a.realm"))
                configuration.objectTypes = [SyncedNote.self]
                let missing = dir.appendingPathComponent("missing-ca.pem")
                let garbage = dir.appendingPathComponent("garbage.pem")
                try Data("not a certificate".utf8).write(to: garbage)
                for (file, message) in [(missing, "does not exist"), (garbage, "holds no PEM certificate")] {
                    // Port 1 of this machine: nothing listens there; the error comes first.
                    let postgres = SyncClient.Postgres(
                        host: "127.0.0.1", port: 1, username: "app", password: nil, database: "app", tls: .verifyFull(rootCertificate: file))
                    await #expect {
                        _ = try await SyncClient(realm: configuration, postgres: postgres, node: "a")
                    } throws: { error in
                        let text = String(describing: error)
                        return error is SyncClient.ConfigurationError && text.contains(file.path) && text.contains(message)
                    }
                }
            }
        }
    }
#endif
