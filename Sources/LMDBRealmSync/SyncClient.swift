#if Sync
    public import Foundation
    public import LMDBRealm
    import LMDBRealmStorage
    internal import Logging
    package import CoreMetrics
    internal import NIOSSL
    internal import PostgresNIO
    import Synchronization

    /// Keeps one node's realm file in step with every other node's through PostgreSQL.
    ///
    /// Each local commit writes its changes to the file's outbox in its own transaction (see
    /// ``init(realm:postgres:node:)``), so a commit made while the network, PostgreSQL or this
    /// process is down is sent later, and never twice. ``run()`` sends the outbox in commit order
    /// to one append-only table whose `bigserial` gives every change set its place in a global
    /// order, and applies the other nodes' change sets in that order, each in a write that also
    /// moves the file's cursor past it. New change sets arrive by `LISTEN`/`NOTIFY`. Observers of
    /// the file see them as any other commit.
    ///
    /// ```swift
    /// let sync = try await SyncClient(realm: configuration, postgres: .init(host: "127.0.0.1", port: 5432,
    ///                                 username: "app", password: "…", database: "app"), node: "api-1")
    /// try await sync.run()          // until cancelled
    /// ```
    ///
    /// The merge rules (the last writer wins per property; deletes win over updates; links to
    /// deleted objects are null) are in the article "Sync".
    public final class SyncClient: Sendable {
        /// Where the shared log is: a PostgreSQL database the client may create a table in, and
        /// how the connection to it is secured.
        ///
        /// ```swift
        /// let postgres = try SyncClient.Postgres(
        ///     url: "postgres://app@db.internal:5432/app?sslmode=verify-full&sslrootcert=/etc/app/db-ca.pem")
        /// ```
        public struct Postgres: Sendable {
            public var host: String
            public var port: Int
            public var username: String
            public var password: String?
            public var database: String
            /// How the connection is secured; TLS unless asked otherwise.
            public var tls: TLS

            /// How the connection to PostgreSQL is secured: libpq's `sslmode` values that never
            /// fall back to plaintext, and `disable`.
            public enum TLS: Sendable, Equatable {
                /// Plaintext: the password and every change set cross the network readable.
                /// Only for a server on this machine or a network the app trusts.
                case disable
                /// TLS, without checking who the server is (libpq's `sslmode=require`): safe
                /// from listening, not from a server posing as PostgreSQL.
                case require
                /// TLS with the server's certificate checked against the root certificates in
                /// the PEM file `rootCertificate`, not its name (libpq's `verify-ca`).
                case verifyCA(rootCertificate: URL)
                /// TLS with the server's certificate checked against the root certificates in
                /// the PEM file `rootCertificate` and naming the host connected to (a DNS name
                /// or IP address among its subject alternative names; libpq's `verify-full`).
                case verifyFull(rootCertificate: URL)

                /// libpq's name of the mode.
                public var sslmode: String {
                    switch self {
                    case .disable: "disable"
                    case .require: "require"
                    case .verifyCA: "verify-ca"
                    case .verifyFull: "verify-full"
                    }
                }
            }

            /// A connection to `database` at `host`; TLS (`.require`) unless `tls` says otherwise.
            public init(
                host: String, port: Int = 5432, username: String, password: String?, database: String, tls: TLS = .require
            ) {
                self.host = host
                self.port = port
                self.username = username
                self.password = password
                self.database = database
                self.tls = tls
            }

            /// The connection a libpq URL describes:
            /// `postgres://user:password@host:port/database?sslmode=…&sslrootcert=…` (or
            /// `postgresql://`; user name and password percent-encoded).
            ///
            /// `sslmode` is `disable`, `require`, `verify-ca` or `verify-full`; without it the
            /// connection is `verify-full` when `sslrootcert` names a root certificate and
            /// `require` otherwise (libpq's `allow` and `prefer`, which fall back to plaintext
            /// without a word, are refused). The database defaults to the user's name, the port
            /// to 5432; the password may be left out (and given to ``password`` later).
            ///
            /// - Throws: ``SyncClient/ConfigurationError`` naming what is wrong: not such a URL, no
            ///   host or user, a port that is no number, an unknown parameter or `sslmode`,
            ///   `sslrootcert` with `sslmode=disable` or `require`.
            public init(url text: String) throws {
                func wrong(_ why: String) -> ConfigurationError {
                    ConfigurationError("the PostgreSQL URL \(Self.redacted(text)) \(why)")
                }
                guard let url = URLComponents(string: text) else { throw wrong("is not a URL") }
                guard url.scheme == "postgres" || url.scheme == "postgresql" else {
                    throw wrong("does not start with postgres:// or postgresql://")
                }
                guard let host = url.host, !host.isEmpty else { throw wrong("names no host (postgres://user@host/database)") }
                guard let user = url.user, !user.isEmpty else { throw wrong("names no user (postgres://user@host/database)") }
                var mode: String?
                var rootCertificate: URL?
                for item in url.queryItems ?? [] {
                    guard let value = item.value, !value.isEmpty else { throw wrong("gives no value to \(item.name)") }
                    switch item.name {
                    case "sslmode": mode = value
                    case "sslrootcert": rootCertificate = URL(fileURLWithPath: value)
                    default:
                        throw wrong("has the parameter \(item.name), which is not understood here (sslmode and sslrootcert are)")
                    }
                }
                let tls: TLS
                switch (mode, rootCertificate) {
                case (nil, nil), ("require", nil): tls = .require
                case (nil, let root?), ("verify-full", let root?): tls = .verifyFull(rootCertificate: root)
                case ("verify-ca", let root?): tls = .verifyCA(rootCertificate: root)
                case ("disable", nil): tls = .disable
                case ("verify-full", nil), ("verify-ca", nil):
                    throw wrong("asks for sslmode=\(mode!) without sslrootcert: the root certificate to check the server's against")
                case ("disable", _?), ("require", _?):
                    throw wrong(
                        "gives sslrootcert with sslmode=\(mode!), which checks no certificate: use sslmode=verify-full (or verify-ca)")
                case ("allow", _), ("prefer", _):
                    throw wrong(
                        "asks for sslmode=\(mode!), which falls back to plaintext without a word: use require, verify-ca or verify-full, or disable for plaintext")
                case (let mode?, _):
                    throw wrong("has sslmode=\(mode), which is none of disable, require, verify-ca, verify-full")
                }
                if let port = url.port, !(1...65535).contains(port) { throw wrong("has the port \(port), which is not one") }
                let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
                self.init(
                    host: host, port: url.port ?? 5432, username: user, password: url.password,
                    database: database.isEmpty ? user : database, tls: tls)
            }

            /// `text` with its password, if any, replaced by `***` (for errors and logs).
            static func redacted(_ text: String) -> String {
                guard var url = URLComponents(string: text), url.password != nil else { return text }
                url.password = "***"
                return url.string ?? text
            }
        }

        /// A connection setting that cannot work: a malformed URL, a root certificate that cannot
        /// be read. Thrown before anything connects.
        public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
            public let description: String

            init(_ description: String) {
                self.description = description
            }
        }

        /// What the client is doing.
        public enum Status: Sendable, Equatable, CustomStringConvertible {
            /// Connecting to PostgreSQL (first, or again after a failure).
            case connecting
            /// Connected: `lag` local change sets wait to be sent.
            case syncing(lag: Int)
            /// PostgreSQL cannot be reached since `since`; local writes go on and wait in the outbox.
            case offline(since: Date)
            /// Change sets of the shared log cannot be applied to this file (a schema this node
            /// does not have, say): `reason` says which and why. Local change sets are still sent.
            case refused(reason: String)
            /// PostgreSQL answers but the connection cannot be made as asked: the server offers
            /// no TLS, its certificate is not signed by the root certificate or does not name
            /// the host, or it refuses the login. `reason` says which. The client tries again,
            /// backing off, as when offline; local writes wait in the outbox.
            case cannotConnect(reason: String)
            /// PostgreSQL refuses what this node asks of it: its role may not append change sets
            /// under this node's id (a node posing as another, after `lmdbrealm sync-setup`), or
            /// may not create the log's missing tables. `reason` names the role, the node and
            /// PostgreSQL's words. The client tries again, backing off, as when offline (an
            /// administrator may grant what is missing); local writes wait in the outbox.
            case notPermitted(reason: String)

            public var description: String {
                switch self {
                case .connecting: "connecting"
                case .syncing(let lag): "syncing (\(lag) to send)"
                case .offline(let since): "offline since \(since)"
                case .refused(let reason): "refusing the shared log: \(reason)"
                case .cannotConnect(let reason): "cannot connect: \(reason)"
                case .notPermitted(let reason): "not permitted: \(reason)"
                }
            }
        }

        /// This node's name, unique among the nodes sharing the log.
        public let node: String
        let file: FileWorker
        private let postgres: Postgres
        /// How every connection of this client is made (TLS context included).
        let connectionConfiguration: PostgresConnection.Configuration
        /// When the log is folded into the snapshot.
        public let compaction: LogCompaction
        /// How far ahead of PostgreSQL's clock a change set's stamp may be.
        public let maximumClockSkew: Duration
        /// What the client reports through swift-metrics (see ``SyncMetrics``).
        let metrics: SyncMetrics
        /// When PostgreSQL's time was last learned.
        private let serverTimeLearned = Mutex<ContinuousClock.Instant?>(nil)
        private let state = Mutex(ClientState())
        /// The local sequence of the newest change set this client has put in the log.
        private let pushedThrough = Mutex<UInt64>(0)
        /// Whether the role may compact, as the current connection found (`nil`: not asked yet),
        /// and whether a refusal was said.
        private let compactionPermission = Mutex<(known: Bool?, said: Bool)>((nil, false))
        /// Warnings only: a lost connection is said once (then the status tells), not at each retry.
        let logger: Logger = {
            var logger = Logger(label: "LMDBRealmSync")
            logger.logLevel = .warning
            return logger
        }()

        /// The table of the shared log and the channel its new rows are announced on.
        static let table = "lmdbrealm_changes"

        /// Opens the realm of `configuration` for syncing as node `node` through the database
        /// `postgres` names: from now on every local commit to the file (by any handle of this
        /// process, and by other processes that open the file after this) goes to its outbox.
        /// Nothing is sent until ``run()``.
        ///
        /// `compaction` says when this node folds the shared log's older change sets into its
        /// snapshot (any node may; one at a time does).
        ///
        /// The connection is secured as `postgres.tls` says; a root certificate it names is read
        /// now.
        ///
        /// Commits are stamped with the later of this machine's time and PostgreSQL's (learned
        /// at each exchange), so a node whose clock is slow does not lose to writes it came after.
        /// A node whose clock runs more than `maximumClockSkew` ahead of PostgreSQL's sends none
        /// of its change sets stamped past that (its status, `.refused(reason:)`, says by how
        /// much) until PostgreSQL's time has caught up with them, and no node applies another's
        /// change set stamped past it.
        /// - Throws: ``ConfigurationError`` if the root certificate cannot be read; `Realm.Error`
        ///   if the file cannot be opened, or is synced as another node.
        public convenience init(
            realm configuration: Realm.Configuration, postgres: Postgres, node: String, compaction: LogCompaction = .keepingLatest(10_000),
            maximumClockSkew: Duration = .seconds(60)
        ) async throws {
            try await self.init(
                realm: configuration, postgres: postgres, node: node, compaction: compaction, maximumClockSkew: maximumClockSkew,
                metrics: MetricsSystem.factory)
        }

        /// As ``init(realm:postgres:node:compaction:maximumClockSkew:)``, reporting to `metrics`
        /// (the tests' own factory) instead of the one the application bootstrapped.
        package init(
            realm configuration: Realm.Configuration, postgres: Postgres, node: String, compaction: LogCompaction = .keepingLatest(10_000),
            maximumClockSkew: Duration = .seconds(60), metrics factory: any MetricsFactory
        ) async throws {
            metrics = SyncMetrics(node: node, factory: factory)
            precondition(maximumClockSkew >= .zero, "A clock skew bound is zero or more, not \(maximumClockSkew)")
            self.maximumClockSkew = maximumClockSkew
            self.node = node
            self.postgres = postgres
            connectionConfiguration = try Self.connectionConfiguration(postgres, node: node)
            self.compaction = compaction
            file = try await FileWorker.open(configuration, node: node)
        }

        /// What the client is doing now.
        public var status: Status { state.withLock { $0.status } }

        /// The client's status as it changes, starting with the current one; a slow reader sees
        /// the newest.
        public var statusUpdates: AsyncStream<Status> {
            let (stream, continuation) = AsyncStream.makeStream(of: Status.self, bufferingPolicy: .bufferingNewest(1))
            let id = state.withLock { state in
                continuation.yield(state.status)
                state.nextWatcher += 1
                state.watchers[state.nextWatcher] = continuation
                return state.nextWatcher
            }
            continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) } }
            return stream
        }

        /// Waits until every commit made to the file before the call is in the shared log, as
        /// RealmSwift's `SyncSession.wait(for: .upload)` does. ``run()`` must be running (or
        /// start) for it to end; cancelling the waiting task ends the wait with
        /// `CancellationError`.
        ///
        /// `status` can say `.syncing(lag: 0)` from before the latest commits; this cannot.
        public func waitForUpload() async throws {
            let (commits, commit) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            let observation = try await file.observeCommits { _ in commit.yield() }
            defer { observation.cancel() }
            let target = try await file.perform { realm in (try realm.syncState()?.nextSequence ?? 1) - 1 }
            // Sent once the outbox's oldest entry is younger than the target (or there is none);
            // each removal from the outbox is a commit to the file.
            func sent() async throws -> Bool {
                try await file.perform { realm in
                    try realm.syncOutbox(after: 0, limit: 1).first.map { $0.sequence > target } ?? true
                }
            }
            if try await sent() { return }
            for await _ in commits {
                if try await sent() { return }
            }
            throw CancellationError()
        }

        /// Sends local change sets and applies other nodes' until the task is cancelled; it
        /// reconnects after failures, backing off up to two seconds. Once its task is cancelled,
        /// `run()` returns at its next step (a change set being sent or applied is finished), and
        /// within two seconds whatever the connection waits for: a connection that does not answer
        /// by then is closed.
        public func run() async throws {
            let configuration = connectionConfiguration
            var backoff: Duration = .milliseconds(50)
            var offlineSince: Date?
            var connectionID = 0
            var lastRefusal: String?
            // What was last said of a refusal after connecting (each is said once, not each retry).
            var lastSaid: String?
            while !Task.isCancelled {
                if offlineSince == nil { setStatus(.connecting) }
                do {
                    connectionID += 1
                    if connectionID > 1 { metrics.reconnects.increment() }
                    let raw: PostgresConnection
                    do {
                        raw = try await PostgresConnection.connect(configuration: configuration, id: connectionID, logger: logger)
                    } catch {
                        if Task.isCancelled { break }
                        guard let refusal = connectionRefusal(error) else { throw error }
                        if lastRefusal != refusal { logger.warning("sync of node '\(node)' cannot connect: \(refusal)") }
                        lastRefusal = refusal
                        offlineSince = offlineSince ?? Date()
                        metrics.refused("cannotConnect")
                        setStatus(.cannotConnect(reason: refusal))
                        try? await Task.sleep(for: backoff)
                        backoff = min(backoff * 2, .seconds(2))
                        continue
                    }
                    lastRefusal = nil
                    let connection = SyncConnection(raw, logger: logger)
                    var failure: (any Error)?
                    do {
                        try await withTaskCancellationHandler {
                            try await Self.untilClosed(connection) {
                                try await self.createLog(connection)
                                try await self.checkLogIdentity(connection)
                                try await self.learnServerTime(connection, unlessWithin: .zero)
                            }
                            offlineSince = nil
                            backoff = .milliseconds(50)
                            try await self.session(connection)
                        } onCancel: {
                            // The session stops at its next step (each checks for cancellation
                            // before it sends a query). What a connection that no longer answers
                            // would hold up, closing it fails, after a grace period that lets
                            // an exchange in progress end.
                            Task {
                                try? await Task.sleep(for: .seconds(2))
                                try? await raw.close()
                            }
                        }
                    } catch {
                        failure = error
                    }
                    try? await raw.close()
                    if let failure { throw failure }
                } catch {
                    if Task.isCancelled { break }
                    let wasOnline = offlineSince == nil
                    let since = offlineSince ?? Date()
                    offlineSince = since
                    if let ahead = error as? ClockAhead {
                        // What is stamped before the bound was sent; the rest waits for
                        // PostgreSQL's time to reach it. Changes of others are still applied.
                        // Said once a change set (the distance shrinks as PostgreSQL's time goes on).
                        let said = "clock ahead at \(ahead.sequence)"
                        if lastSaid != said { logger.warning("sync of node '\(node)': \(ahead.reason)") }
                        lastSaid = said
                        metrics.refused("clockAhead")
                        setStatus(.refused(reason: ahead.reason))
                        try? await Task.sleep(for: .seconds(2))
                        continue
                    }
                    if let wentBack = error as? LogWentBack {
                        // Neither sent nor applied: the log this file synced with is not there.
                        if lastSaid != wentBack.reason { logger.error("sync of node '\(node)' stopped: \(wentBack.reason)") }
                        lastSaid = wentBack.reason
                        metrics.refused("logWentBack")
                        setStatus(.refused(reason: wentBack.reason))
                        try? await Task.sleep(for: .seconds(2))
                        continue
                    }
                    if let refusal = permissionRefusal(error) {
                        // Said once: the connection succeeds each time, the refusal follows.
                        if lastSaid != refusal { logger.warning("sync of node '\(node)' is not permitted: \(refusal)") }
                        lastSaid = refusal
                        metrics.refused("notPermitted")
                        setStatus(.notPermitted(reason: refusal))
                        try? await Task.sleep(for: backoff)
                        backoff = min(backoff * 2, .seconds(2))
                        continue
                    }
                    if wasOnline { logger.warning("sync of node '\(node)' interrupted: \(String(reflecting: error))") }
                    setStatus(.offline(since: since))
                    try? await Task.sleep(for: backoff)
                    backoff = min(backoff * 2, .seconds(2))
                }
            }
            try Task.checkCancellation()
        }

        /// How to connect to `postgres` as `node`: its TLS context made (and root certificate
        /// read) once.
        static func connectionConfiguration(_ postgres: Postgres, node: String) throws -> PostgresConnection.Configuration {
            let tls: PostgresConnection.Configuration.TLS
            switch postgres.tls {
            case .disable:
                tls = .disable
            case .require:
                var settings = TLSConfiguration.makeClientConfiguration()
                settings.certificateVerification = .none
                tls = .require(try tlsContext(settings))
            case .verifyCA(let root), .verifyFull(let root):
                let certificates: [NIOSSLCertificate]
                do {
                    certificates = try NIOSSLCertificate.fromPEMFile(root.path)
                } catch {
                    let reason =
                        FileManager.default.fileExists(atPath: root.path)
                        ? "holds no PEM certificate that can be read (\(error))" : "does not exist"
                    throw ConfigurationError("the root certificate \(root.path) (sslrootcert, for sslmode=\(postgres.tls.sslmode)) \(reason)")
                }
                guard !certificates.isEmpty else {
                    throw ConfigurationError("the root certificate \(root.path) (sslrootcert) holds no certificate")
                }
                var settings = TLSConfiguration.makeClientConfiguration()
                settings.trustRoots = .certificates(certificates)
                if case .verifyCA = postgres.tls { settings.certificateVerification = .noHostnameVerification }
                tls = .require(try tlsContext(settings))
            }
            var configuration = PostgresConnection.Configuration(
                host: postgres.host, port: postgres.port, username: postgres.username, password: postgres.password,
                database: postgres.database, tls: tls)
            // What `pg_stat_activity` shows of the connection.
            configuration.options.additionalStartupParameters = [("application_name", "lmdbrealm-sync \(node)")]
            return configuration
        }

        private static func tlsContext(_ settings: TLSConfiguration) throws -> NIOSSLContext {
            do {
                return try NIOSSLContext(configuration: settings)
            } catch {
                throw ConfigurationError("the TLS settings for PostgreSQL cannot be used: \(error)")
            }
        }

        /// Why a connection to PostgreSQL that failed cannot succeed by trying again as it is
        /// (the server offers no TLS, its certificate is refused, the login is refused), or nil
        /// for a failure of the network or the server (offline).
        func connectionRefusal(_ error: any Error) -> String? {
            let place = "\(postgres.host):\(postgres.port)"
            var error = error
            if let psql = error as? PSQLError {
                if psql.code == .sslUnsupported {
                    return "the server at \(place) offers no TLS, which sslmode=\(postgres.tls.sslmode) requires "
                        + "(plaintext only with sslmode=disable)"
                }
                if psql.code == .server, let state = psql.serverInfo?[.sqlState], state.hasPrefix("28") {
                    let message = psql.serverInfo?[.message] ?? "authentication failed"
                    return "the server at \(place) refuses the login of role '\(postgres.username)': \(message)"
                }
                guard let underlying = psql.underlying else { return nil }
                error = underlying
            }
            var root: String {
                switch postgres.tls {
                case .verifyCA(let root), .verifyFull(let root): root.path
                case .disable, .require: "(none)"
                }
            }
            if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
                return "the certificate of the server at \(place) does not name \(postgres.host) "
                    + "(sslmode=verify-full checks the host against its subject alternative names)"
            }
            if let ssl = error as? NIOSSLError {
                if case .handshakeFailed(let reason) = ssl {
                    let text = String(describing: reason)
                    if text.contains("CERTIFICATE_VERIFY_FAILED") {
                        return "the certificate of the server at \(place) is not signed by the root certificate \(root) "
                            + "(or has expired): \(text)"
                    }
                    return "the TLS handshake with the server at \(place) failed: \(text)"
                }
                return "TLS with the server at \(place) failed: \(ssl)"
            }
            return nil
        }

        /// What PostgreSQL refused this node's role, if `error` is a refusal of a privilege
        /// (SQLSTATE 42501: a row-level security policy, a missing grant), or nil.
        func permissionRefusal(_ error: any Error) -> String? {
            guard let psql = error as? PSQLError, psql.code == .server, psql.serverInfo?[.sqlState] == "42501" else { return nil }
            let message = psql.serverInfo?[.message] ?? "permission denied"
            let role = postgres.username
            if message.contains("row-level security") {
                return "PostgreSQL refuses role '\(role)' the change sets of node '\(node)': \(message) "
                    + "(a node logs in as the role named by its node id)"
            }
            if message.contains("schema") {
                return "the shared log's tables are missing and role '\(role)' may not create them: \(message) "
                    + "(run the script `lmdbrealm sync-setup` prints)"
            }
            return "PostgreSQL refuses role '\(role)' (node '\(node)'): \(message)"
        }

        /// Checks that the shared log is the one the file synced with, and has not gone back:
        /// its epoch is the one the file remembers (a log whose tables were recreated has
        /// another), and it still holds the change set the file's cursor is at — the same one —
        /// or its snapshot has folded it. A log restored from a backup, or a standby that lagged
        /// and took over, hands the same sequence numbers out again; a node that went on from its
        /// cursor would skip what they number, for ever. Throws ``LogWentBack`` saying which.
        /// The first time, the file learns the log's epoch.
        func checkLogIdentity(_ connection: SyncConnection) async throws {
            let epochRows = try await connection.query("SELECT epoch FROM lmdbrealm_log WHERE id = 1")
            let epoch = try await epochRows.decode(String.self).first(where: { _ in true }) ?? ""
            guard let state = try await file.perform({ try $0.syncState() }) else { return }
            let place = "\(postgres.host):\(postgres.port)/\(postgres.database)"
            let consequence =
                "this node neither sends nor applies change sets until its file is reset (a new file for the node, "
                + "or the log put back)"
            if !state.epoch.isEmpty && state.epoch != epoch {
                throw LogWentBack(
                    reason: "the shared log at \(place) is another log (epoch \(epoch)) than the one this file synced with "
                        + "(epoch \(state.epoch)): its tables were recreated; \(consequence)")
            }
            if state.cursor > 0 {
                let rows = try await connection.query(
                    "SELECT node, local_sequence FROM lmdbrealm_changes WHERE sequence = \(state.cursor)")
                if let (node, local) = try await rows.decode((String, Int64).self).first(where: { _ in true }) {
                    if !state.cursorNode.isEmpty && (node != state.cursorNode || UInt64(bitPattern: local) != state.cursorLocal) {
                        throw LogWentBack(
                            reason: "the shared log at \(place) went back: its change set \(state.cursor) is node '\(node)'s #\(local), "
                                + "where this file applied node '\(state.cursorNode)'s #\(state.cursorLocal) (a restore from a backup, "
                                + "or a failover to a standby that lagged); \(consequence)")
                    }
                } else if try await snapshotPosition(connection).through < state.cursor {
                    let lastRows = try await connection.query("SELECT COALESCE(max(sequence), 0) FROM lmdbrealm_changes")
                    let last = try await lastRows.decode(Int64.self).first(where: { _ in true }) ?? 0
                    throw LogWentBack(
                        reason: "the shared log at \(place) went back: this file applied its change sets through \(state.cursor), "
                            + "and the log no longer holds that one (its newest is \(last)): a restore from a backup, or a failover "
                            + "to a standby that lagged; \(consequence)")
                }
            }
            if state.epoch.isEmpty && !epoch.isEmpty {
                try await file.perform { try $0.setSyncEpoch(epoch) }
            }
        }

        /// Makes the shared log's tables if the database has none (one node at a time: two
        /// `CREATE TABLE IF NOT EXISTS` at once can both try to create it). Tables that exist
        /// are left alone, so a node whose role may not create tables (after `lmdbrealm
        /// sync-setup`) asks nothing it may not.
        func createLog(_ connection: SyncConnection) async throws {
            let present = try await connection.query(
                "SELECT count(*) FROM unnest(\(SyncSetup.tables)::text[]) AS t(name) WHERE to_regclass(name) IS NOT NULL")
            if try await present.decode(Int64.self).first(where: { _ in true }) == Int64(SyncSetup.tables.count) { return }
            try await connection.transaction { connection in
                try await connection.execute("SELECT pg_advisory_xact_lock(7300)")
                for statement in SyncSetup.tableStatements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement))
                }
            }
        }

        /// One connection's life: exchanges change sets whenever a local commit or a notification
        /// says there may be some, until the connection fails.
        private func session(_ connection: SyncConnection) async throws {
            compactionPermission.withLock { $0.known = nil }
            let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            // A commit wakes the session when it left something to send: the client's own writes
            // (change sets applied, the outbox emptied) do not, nor commits that change nothing
            // synced. (A failed read wakes it: the exchange meets the failure.)
            let observation = try await file.observeCommits { [self] realm in
                let after = pushedThrough.withLock { $0 }
                if (try? realm.syncOutbox(after: after, limit: 1))?.isEmpty != true { wake.yield() }
            }
            defer { observation.cancel() }
            try await connection.raw.listen(on: Self.table) { notifications in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // Each node's notifications name it: this node's own pushes need no pull.
                        let node = self.node
                        for try await notification in notifications where notification.payload != node { wake.yield() }
                        throw ConnectionEnded()
                    }
                    group.addTask {
                        // A first exchange after connecting catches up with what was missed.
                        wake.yield()
                        for await _ in wakes {
                            try await Self.untilClosed(connection) { try await self.exchange(connection) }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }

        /// Runs `operation` and returns what it returns, or throws as soon as `connection` closes
        /// or the task is cancelled, whichever comes first. A query sent just as the connection
        /// closed can wait for ever (the connection drops it, with the promise of its answer):
        /// the session then goes on without it, and the operation is left to end, or not, on a
        /// task of its own. What it would still do to the file is safe to do late: change sets
        /// are applied once (the file's cursor says which), and removing sent outbox entries
        /// twice removes nothing the second time.
        private static func untilClosed<T: Sendable>(
            _ connection: SyncConnection, _ operation: @escaping @Sendable () async throws -> T
        ) async throws -> T {
            let running = RunningOperation<T>()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    running.start(continuation, operation)
                    connection.raw.closeFuture.whenComplete { _ in running.finish(.failure(ConnectionEnded())) }
                }
            } onCancel: {
                running.finish(.failure(CancellationError()))
            }
        }

        /// Sends the outbox, then applies what the shared log holds after the file's cursor; the
        /// first write of the pull also removes what was sent from the outbox, so that an
        /// exchange costs one write to the file.
        private func exchange(_ connection: SyncConnection) async throws {
            try Task.checkCancellation()
            try await learnServerTime(connection, unlessWithin: .seconds(5))
            let (sent, ahead) = try await push(connection)
            if state.withLock({ $0.lasting }) {
                if let sent { try await file.perform { try $0.removeSyncOutbox(through: sent) } }
            } else {
                let (cursor, snapshot) = try await pull(connection, removingOutboxThrough: sent)
                if let keep = compaction.keepsLatest, cursor - snapshot > 2 * Int64(keep), try await mayCompact(connection) {
                    try await compact(connection, keepingLatest: keep)
                }
            }
            // What others sent is applied; this node's change sets stamped too far ahead wait.
            if let ahead { throw ahead }
            let lag = try await file.perform { try $0.syncOutboxCount() }
            metrics.outbox.record(lag)
            state.withLock { state in
                if state.lasting { return }
                state.update(.syncing(lag: lag))
            }
        }

        /// Whether this node's role may fold the log into the snapshot (after `lmdbrealm
        /// sync-setup`, only the compactor's may), asked once a connection; a node that may not
        /// says so once and leaves compaction to the compactor.
        private func mayCompact(_ connection: SyncConnection) async throws -> Bool {
            if let known = compactionPermission.withLock({ $0.known }) { return known }
            let rows = try await connection.query(
                """
                SELECT has_table_privilege('lmdbrealm_objects', 'INSERT, UPDATE')
                    AND has_table_privilege('lmdbrealm_snapshot', 'INSERT, UPDATE')
                    AND has_table_privilege('lmdbrealm_changes', 'DELETE')
                """)
            let permitted = try await rows.decode(Bool.self).first(where: { _ in true }) ?? false
            let say = compactionPermission.withLock { state in
                state.known = permitted
                defer { if !permitted { state.said = true } }
                return !permitted && !state.said
            }
            if say {
                logger.notice(
                    "node '\(node)' leaves compaction to the compactor: role '\(postgres.username)' may not write the snapshot or remove change sets")
            }
            return permitted
        }

        /// Learns PostgreSQL's time, unless it was learned less than `interval` ago: the file's
        /// commits take the later of it and this machine's, and the skew bound is measured from it.
        private func learnServerTime(_ connection: SyncConnection, unlessWithin interval: Duration) async throws {
            if interval > .zero, let last = serverTimeLearned.withLock({ $0 }), ContinuousClock.now - last < interval { return }
            let clock = file.clock!
            let before = clock.local()
            let rows = try await connection.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
            guard let milliseconds = try await rows.decode(Int64.self).first(where: { _ in true }) else { return }
            let after = clock.local()
            // Read halfway through the round trip, as far as this side can tell.
            clock.learn(server: Date(timeIntervalSince1970: Double(milliseconds) / 1000), at: before.addingTimeInterval(after.timeIntervalSince(before) / 2))
            serverTimeLearned.withLock { $0 = .now }
        }

        /// The latest clock a change set may be stamped with: PostgreSQL's time, as last
        /// learned, plus the skew allowed.
        private func latestClock() -> UInt64 {
            let milliseconds = file.clock.serverNow().timeIntervalSince1970 * 1000 + Double(maximumClockSkew.components.seconds) * 1000
                + Double(maximumClockSkew.components.attoseconds) / 1e15
            return (UInt64(max(0, milliseconds)) << 16) | 0xFFFF
        }

        /// Sends the outbox in commit order, 500 change sets a transaction, and returns the local
        /// sequence of the last one sent. A change set the log has already (sent before a
        /// failure, its removal from the outbox lost) is not added twice: the log's unique
        /// (node, local sequence) passes over it. The first change set stamped further ahead of
        /// PostgreSQL's time than allowed stops the sending (with those after it), and is returned.
        private func push(_ connection: SyncConnection) async throws -> (sent: UInt64?, ahead: ClockAhead?) {
            var sent: UInt64?
            while true {
                let after = sent ?? 0
                var entries = try await file.perform { try $0.syncOutbox(after: after, limit: 500) }
                // Change sets stamped past the bound wait, and those after them.
                let latest = latestClock()
                var ahead: ClockAhead?
                if let first = entries.firstIndex(where: { (SyncChangeSet.clock(ofEncoded: $0.changes) ?? 0) > latest }) {
                    let clock = SyncChangeSet.clock(ofEncoded: entries[first].changes) ?? 0
                    let seconds = Double(Int64(clock >> 16) - Int64(latest >> 16)) / 1000 + Double(maximumClockSkew.components.seconds)
                    ahead = ClockAhead(
                        sequence: entries[first].sequence,
                        reason: "the clock of node '\(node)' runs ahead of PostgreSQL's: its change set \(entries[first].sequence) is "
                            + "stamped \(String(format: "%.1f", seconds)) s past PostgreSQL's time, more than the \(maximumClockSkew) allowed; "
                            + "it and those after it wait until PostgreSQL's time is that close to them (set this machine's clock right)")
                    entries.removeSubrange(first...)
                }
                guard let last = entries.last else { return (sent, ahead) }
                try Task.checkCancellation()
                let node = self.node
                try await connection.transaction { connection in
                    // One pusher at a time: each takes its sequence numbers and commits before the
                    // next begins, so a puller never sees a number before a smaller one is visible.
                    try await connection.execute("SELECT pg_advisory_xact_lock(7301)")
                    // One statement for the batch, in commit order; the notification names this
                    // node, whose own session passes over it.
                    let localSequences = entries.map { Int64($0.sequence) }
                    let changes = entries.map { ByteBuffer(bytes: $0.changes) }
                    try await connection.execute(
                        """
                        WITH sent AS (
                            INSERT INTO lmdbrealm_changes (node, local_sequence, changes)
                            SELECT \(node), t.local, t.changes FROM unnest(\(localSequences)::bigint[], \(changes)::bytea[])
                                WITH ORDINALITY AS t(local, changes, place) ORDER BY t.place
                            ON CONFLICT (node, local_sequence) DO NOTHING
                            RETURNING 1)
                        SELECT pg_notify('lmdbrealm_changes', \(node))
                        """)
                }
                sent = last.sequence
                metrics.sent.increment(by: entries.count)
                pushedThrough.withLock { $0 = max($0, last.sequence) }
                if ahead != nil { return (sent, ahead) }
            }
        }

        /// Applies the shared log after the file's cursor, a thousand change sets a write; the
        /// first write also removes the outbox entries up to `sent`. A file whose cursor is
        /// behind the snapshot (the change sets after it may be folded and gone) loads the
        /// snapshot first.
        /// - Returns: The file's cursor and the snapshot's position, as last seen.
        private func pull(_ connection: SyncConnection, removingOutboxThrough sent: UInt64?) async throws -> (cursor: Int64, snapshot: Int64) {
            var removal = sent
            while true {
                let cursor = try await file.perform { try $0.syncState()?.cursor ?? 0 }
                try Task.checkCancellation()
                let rows = try await connection.query(
                    """
                    SELECT sequence, node, local_sequence, changes FROM lmdbrealm_changes WHERE sequence > \(cursor)
                    ORDER BY sequence LIMIT 1000
                    """)
                var incoming: [SyncIncoming] = []
                for try await (sequence, node, local, changes) in rows.decode((Int64, String, Int64, ByteBuffer).self) {
                    incoming.append(
                        SyncIncoming(sequence: sequence, node: node, changes: Array(changes.readableBytesView), localSequence: local))
                }
                // Read after the change sets: if a compaction folded some of those after the
                // cursor before they were read, the snapshot's position says so.
                let snapshot = try await snapshotPosition(connection)
                if snapshot.through > cursor {
                    if let removing = removal { try await file.perform { try $0.removeSyncOutbox(through: removing) } }
                    removal = nil
                    guard try await loadSnapshot(connection, after: cursor) else { return (cursor, snapshot.through) }
                    continue
                }
                let (batch, removing) = (incoming, removal)
                guard !batch.isEmpty else {
                    if let removing { try await file.perform { try $0.removeSyncOutbox(through: removing) } }
                    return (cursor, snapshot.through)
                }
                let latest = latestClock()
                do {
                    try await file.perform { try $0.applySyncChanges(batch, removingOutboxThrough: removing, latestClock: latest) }
                    recordApplied(batch)
                } catch let error as Realm.Error where Self.refuses(error) {
                    // The change sets before the refused one are applied, one write each.
                    var refusal = error
                    var removing = removing
                    for item in batch {
                        do {
                            try await file.perform { [removing] in
                                try $0.applySyncChanges([item], removingOutboxThrough: removing, latestClock: latest)
                            }
                            removing = nil
                        } catch let error as Realm.Error where Self.refuses(error) {
                            refusal = error
                            break
                        }
                    }
                    metrics.refused("refused")
                    setStatus(.refused(reason: refusal.localizedDescription), lasting: true)
                    if let removing { try await file.perform { try $0.removeSyncOutbox(through: removing) } }
                    return (cursor, snapshot.through)
                }
                removal = nil
                if batch.count < 1000 { return (batch.last!.sequence, snapshot.through) }
            }
        }

        /// Counts the other nodes' change sets of `batch` (just applied) and how long after their
        /// stamps they were applied.
        private func recordApplied(_ batch: [SyncIncoming]) {
            let now = file.clock.serverNow().timeIntervalSince1970 * 1000
            var count = 0
            for item in batch where item.node != node {
                count += 1
                if let clock = SyncChangeSet.clock(ofEncoded: item.changes) {
                    metrics.applyDelay.recordNanoseconds(Int64(max(0, now - Double(clock >> 16)) * 1_000_000))
                }
            }
            if count > 0 { metrics.applied.increment(by: count) }
        }

        /// Whether `error`, applying the shared log, is one the log's content causes (a schema
        /// this file does not have, or bytes that are not a change set): trying again cannot
        /// help, so the client refuses the log and says why instead of reconnecting for ever.
        static func refuses(_ error: Realm.Error) -> Bool {
            error.code == .schemaMismatch || error.code == .invalidValue
        }

        /// Sets the status; a `lasting` refusal (of the log's content) stays until the client is
        /// made anew, and this client applies nothing more meanwhile.
        func setStatus(_ status: Status, lasting: Bool = false) {
            state.withLock { state in
                state.update(status)
                state.lasting = lasting
            }
        }
    }

    /// Change sets of this node wait: they are stamped further ahead of PostgreSQL's time than
    /// the client allows.
    struct ClockAhead: Error, CustomStringConvertible {
        /// The local sequence of the first change set that waits.
        let sequence: UInt64
        let reason: String
        var description: String { reason }
    }

    /// The shared log is not the one the file synced with, or went back (see
    /// `SyncClient.checkLogIdentity`).
    struct LogWentBack: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// An operation of `SyncClient.untilClosed` on a task of its own, and the continuation that
    /// its result, the connection's closing or a cancellation resumes, whichever comes first.
    private final class RunningOperation<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var task: Task<Void, Never>?
            var finished: Result<T, any Error>?
        }
        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<T, any Error>, _ operation: @escaping @Sendable () async throws -> T) {
            let task = Task {
                do {
                    self.finish(.success(try await operation()))
                } catch {
                    self.finish(.failure(error))
                }
            }
            let early = state.withLock { state -> Result<T, any Error>? in
                state.task = task
                guard let finished = state.finished else {
                    state.continuation = continuation
                    return nil
                }
                return finished
            }
            // Cancelled (or the connection closed) before it began.
            if let early {
                task.cancel()
                continuation.resume(with: early)
            }
        }

        func finish(_ result: Result<T, any Error>) {
            let (continuation, task) = state.withLock { state in
                if state.finished == nil { state.finished = result }
                defer { state.continuation = nil }
                return (state.continuation, state.task)
            }
            guard let continuation else { return }
            if case .failure = result { task?.cancel() }
            continuation.resume(with: result)
        }
    }

    /// The client's status and who watches it.
    private struct ClientState {
        var status: SyncClient.Status = .connecting
        /// Whether `status` is a refusal of the log's content, which stays.
        var lasting = false
        var watchers: [Int: AsyncStream<SyncClient.Status>.Continuation] = [:]
        var nextWatcher = 0

        mutating func update(_ new: SyncClient.Status) {
            guard new != status else { return }
            status = new
            for watcher in watchers.values { watcher.yield(new) }
        }
    }

    /// The client's handle of the file, confined to a serial queue of its own.
    final class FileWorker: @unchecked Sendable {
        // @unchecked Sendable: `realm` is made on `queue` and only ever used in blocks run on it;
        // `clock` (itself Sendable) is set there once, before `open` returns the worker.
        private let queue: DispatchQueue
        private var realm: Realm!
        /// The time the file's synced commits in this process are stamped with.
        private(set) var clock: SyncClock!

        private init(queue: DispatchQueue) {
            self.queue = queue
        }

        static func open(_ configuration: Realm.Configuration, node: String) async throws -> FileWorker {
            let worker = FileWorker(queue: DispatchQueue(label: "LMDBRealmSync.\(node)"))
            try await worker.run {
                worker.realm = try Realm(configuration: configuration, queue: worker.queue)
                try worker.realm.enableSync(node: node)
                worker.clock = worker.realm.syncClock
            }
            return worker
        }

        /// `body` with the realm, on its queue, refreshed to the newest version first.
        func perform<R: Sendable>(_ body: @escaping @Sendable (Realm) throws -> R) async throws -> R {
            try await run {
                self.realm.refresh()
                return try body(self.realm)
            }
        }

        /// Calls `commit` after each commit to the file, by any handle or process, until cancelled.
        func observeCommits(_ commit: @escaping @Sendable (Realm) -> Void) async throws -> Observation {
            try await run {
                let token = self.realm.observe { _, realm in commit(realm) }
                return Observation(token: token, queue: self.queue)
            }
        }

        private func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
            try await withCheckedThrowingContinuation { continuation in
                queue.async { continuation.resume(with: Result { try body() }) }
            }
        }
    }

    /// An observation of the file's commits; cancelling it ends it on the file's queue.
    struct Observation: @unchecked Sendable {
        // @unchecked Sendable: the token is only invalidated on `queue`, the realm's.
        let token: NotificationToken
        let queue: DispatchQueue

        func cancel() {
            let token = token
            queue.async { token.invalidate() }
        }
    }
#endif
