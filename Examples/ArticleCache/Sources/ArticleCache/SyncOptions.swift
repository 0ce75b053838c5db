#if Sync
    import ArgumentParser
    import Foundation
    import LMDBRealm
    import LMDBRealmSync

    /// `--sync` and `--node`: the cache kept in step with other machines' caches through a
    /// PostgreSQL database, while the command runs.
    struct SyncOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "Keep the cache in step with other caches through this PostgreSQL database while the command runs.",
                discussion: "The connection uses TLS unless the URL says sslmode=disable; the password may also come from $PGPASSWORD.",
                valueName: "postgres://user:password@host:port/database?sslmode=verify-full&sslrootcert=ca.pem"))
        var sync: String?

        @Option(help: "This cache's name among the caches that share the database (default: the host name and process ID).")
        var node: String?

        func validate() throws {
            if node != nil && sync == nil { throw ValidationError("--node names this cache for --sync, which is missing") }
            if let sync { _ = try Self.postgres(from: sync) }
        }

        /// The connection a `postgres://` (or `postgresql://`) URL describes, libpq's `sslmode`
        /// and `sslrootcert` included (TLS unless `sslmode=disable`).
        static func postgres(from text: String) throws -> SyncClient.Postgres {
            var postgres: SyncClient.Postgres
            do {
                postgres = try SyncClient.Postgres(url: text)
            } catch {
                throw ValidationError("--sync: \(error)")
            }
            if postgres.password == nil { postgres.password = ProcessInfo.processInfo.environment["PGPASSWORD"] }
            return postgres
        }

        /// Starts syncing the file of `configuration` (nothing without `--sync`), each change of
        /// the client's status told on standard error; the sync stops when the task returned is
        /// cancelled.
        func start(_ configuration: Realm.Configuration) async throws -> Task<Void, any Error>? {
            guard let sync else { return nil }
            let name = node ?? "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
            let client = try await SyncClient(realm: configuration, postgres: try Self.postgres(from: sync), node: name)
            let statuses = Task {
                var last = ""
                for await status in client.statusUpdates {
                    // One line when the kind of status changes, not at each change of the lag.
                    let kind = String(describing: status).prefix { $0 != " " }
                    if kind != last { FileHandle.standardError.write(Data("sync (node \(name)): \(status)\n".utf8)) }
                    last = String(kind)
                }
            }
            return Task {
                defer { statuses.cancel() }
                try await client.run()
            }
        }
    }
#endif
