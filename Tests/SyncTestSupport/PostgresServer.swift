public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server of its own for a test: initdb in a new temporary directory, started with
/// pg_ctl on a free port of 127.0.0.1, stopped (and its directory removed) by `stop()`.
///
/// ```swift
/// @Test func rowsArrive() throws {
///     let server = try PostgresServer.start()
///     defer { server.stop() }
///     try server.psql("create table items (id int primary key)")
///     …
///     #expect(try server.psql("select count(*) from items") == "3")
/// }
/// ```
///
/// The temporary directory (`lmdbrealm-pg-…`) holds the data directory, the server's log
/// (`postgres.log`) and its Unix socket. The server listens on 127.0.0.1 only and asks for a
/// password there (`scram-sha-256`); its Unix socket, in the temporary directory that only its
/// owner can enter, needs none. It runs with fsync and full-page writes off: fast, and only a
/// crash of the machine could lose data, which a test does not mind. Synchronous commit stays
/// on: a transaction is in the write-ahead log (in the system's cache) when its commit
/// returns, so it survives `kill()`, as it would a crash of PostgreSQL.
///
/// initdb and postgres refuse to run as root, so when the tests run as root (as on CI) they run
/// as the `postgres` account that Debian's package creates, and the temporary directory
/// belongs to that account.
///
/// The server runs until `stop()`, or until the object is released. If the test process
/// crashes first, the server keeps running until the next `start()` (in any process) sees
/// that the process that started it is gone, and stops and removes it.
public final class PostgresServer: @unchecked Sendable {
    // @unchecked Sendable: every stored property but `state` is a constant; `state` is read
    // and written only while `lock` is held, and so is every command that starts or stops the
    // server, so two threads never start or stop it at the same time.

    /// The address the server listens on: "127.0.0.1".
    public let host: String
    /// The TCP port the server listens on; the same after `restart()`.
    public let port: Int
    /// A role with a password, created at start, which owns `database`.
    public let username: String
    /// The role's password (random, for this server only).
    public let password: String
    /// A database owned by `username`, created at start.
    public let database: String
    /// The data directory (inside the temporary directory that `stop()` removes).
    public let directory: URL
    /// The server's log; its end is part of every error about starting or stopping the server.
    public let logFile: URL

    /// The temporary directory: the data directory, the log, the socket, and the commands'
    /// output while they run.
    private let temporaryDirectory: URL
    private let tools: Tools
    private let lock = NSLock()
    private var state = State.running

    /// Whether the server runs, and whether its directory still exists.
    private enum State {
        /// Started, and accepting connections.
        case running
        /// Not running (after `kill()`, or a failed `restart()`); its data is kept.
        case stopped
        /// Stopped for good by `stop()`: its directory is gone.
        case removed
    }

    private init(
        port: Int, temporaryDirectory: URL, tools: Tools, username: String, password: String,
        database: String
    ) {
        self.host = "127.0.0.1"
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.temporaryDirectory = temporaryDirectory
        self.directory = Layout.dataDirectory(in: temporaryDirectory)
        self.logFile = Layout.logFile(in: temporaryDirectory)
        self.tools = tools
    }

    deinit {
        stop()
    }

    // MARK: Starting

    /// Creates a new cluster in a new temporary directory, starts it on a free port of
    /// 127.0.0.1 (with a new port, a few times, if another process took the port meanwhile),
    /// and creates the role and its database. Returns once the server accepts connections.
    ///
    /// Throws a ``PostgresServerError`` that names the command that failed and shows its output
    /// and the end of the server's log.
    ///
    /// With `tls`, the server offers TLS (`ssl = on`) with that certificate and key; without,
    /// it offers none and refuses a client that asks for it.
    public static func start(tls: TestCertificates.Server? = nil) throws -> PostgresServer {
        let tools = try Tools.find()
        removeAbandonedServers(tools: tools)
        let base = try makeTemporaryDirectory(tools: tools)
        let port: Int
        do {
            try initializeCluster(in: base, tools: tools)
            if let tls { try installCertificate(tls, in: base, tools: tools) }
            port = try startOnFreePort(in: base, tools: tools)
        } catch {
            try? FileManager.default.removeItem(at: base)
            throw error
        }
        let server = PostgresServer(
            port: port, temporaryDirectory: base, tools: tools,
            username: "lmdbrealm", password: randomPassword(), database: "lmdbrealm")
        do {
            try server.createRoleAndDatabase()
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    /// A new directory under the system's temporary directory, only for its owner (the
    /// `postgres` account when this process is root), with this process's ID in `owner.pid`.
    private static func makeTemporaryDirectory(tools: Tools) throws -> URL {
        let base = FileManager.default.temporaryDirectory
            .appendingPathComponent(Layout.directoryPrefix + UUID().uuidString, isDirectory: true)
        do {
            try FileManager.default.createDirectory(
                at: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw PostgresServerError("could not create the directory \(base.path): \(error)")
        }
        do {
            try tools.handToServerAccount(base)
            try write("\(getpid())\n", to: Layout.ownerFile(in: base), tools: tools)
        } catch {
            try? FileManager.default.removeItem(at: base)
            throw error
        }
        return base
    }

    /// Stops and removes the servers left behind by test processes that have exited without
    /// stopping them (crashed, or were killed): the directories whose owner process is gone.
    private static func removeAbandonedServers(tools: Tools) {
        let root = FileManager.default.temporaryDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for name in names where name.hasPrefix(Layout.directoryPrefix) {
            let base = root.appendingPathComponent(name, isDirectory: true)
            let owner = text(of: Layout.ownerFile(in: base))
                .trimmingCharacters(in: .whitespacesAndNewlines)
            // No owner file: a directory being created now, or one this process may not read.
            guard let ownerID = pid_t(owner), !isProcessAlive(ownerID) else { continue }
            try? pgCtl(["stop", "-w", "-t", "60", "-m", "immediate"], in: base, tools: tools)
            try? FileManager.default.removeItem(at: base)
        }
    }

    /// Runs initdb, then writes the access rules (pg_hba.conf) and makes postgresql.conf
    /// include the settings file that `writeSettings` writes.
    private static func initializeCluster(in base: URL, tools: Tools) throws {
        let data = Layout.dataDirectory(in: base)
        let arguments = [
            "--pgdata=\(data.path)", "--username=postgres", "--auth=trust",
            "--encoding=UTF8", "--locale=C", "--no-sync",
        ]
        do {
            try Command.runChecked(tools.asServerAccount("initdb", arguments), in: base)
        } catch let error as PostgresServerError where tools.serverAccount != nil {
            throw PostgresServerError(
                "\(error.description)\n(initdb ran as the postgres account: it must be able to "
                    + "reach \(base.path); a TMPDIR inside a private directory such as /root is "
                    + "not reachable)")
        }
        let accessRules = """
            # Written by PostgresServer: no password on the socket (in a directory only its owner
            # can enter), a password on TCP, from this machine only.
            local all all trust
            host all all 127.0.0.1/32 scram-sha-256

            """
        try write(accessRules, to: data.appendingPathComponent("pg_hba.conf"), tools: tools)
        try append(
            "\n# Written by PostgresServer.\ninclude '\(Layout.settingsFileName)'\n",
            to: data.appendingPathComponent("postgresql.conf"))
    }

    /// Copies the server's certificate and key into the data directory (the key readable by
    /// the server's account alone, as PostgreSQL demands) and turns TLS on in postgresql.conf.
    private static func installCertificate(_ tls: TestCertificates.Server, in base: URL, tools: Tools) throws {
        let data = Layout.dataDirectory(in: base)
        for (source, name) in [(tls.certificate, "server.crt"), (tls.key, "server.key")] {
            let target = data.appendingPathComponent(name)
            do {
                try Data(contentsOf: source).write(to: target)
            } catch {
                throw PostgresServerError("could not copy \(source.path) to \(target.path): \(error)")
            }
            guard chmod(target.path, 0o600) == 0 else { throw systemError("chmod(\(target.path), 0600)") }
            try tools.handToServerAccount(target)
        }
        try append(
            "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n",
            to: data.appendingPathComponent("postgresql.conf"))
    }

    /// Writes the settings file: the port, the addresses, the socket directory, and the
    /// settings that make the server fast and keep it to itself.
    private static func writeSettings(port: Int, in base: URL, tools: Tools) throws {
        let settings = """
            # Written by PostgresServer, included by postgresql.conf.
            listen_addresses = '127.0.0.1'
            port = \(port)
            unix_socket_directories = '\(base.path.replacingOccurrences(of: "'", with: "''"))'
            max_connections = 100
            password_encryption = 'scram-sha-256'
            fsync = off
            full_page_writes = off
            # On: with it off, a commit returns before its write-ahead log is written, and
            # kill() loses it. With fsync off, it costs nothing measurable.
            synchronous_commit = on
            lc_messages = 'C'

            """
        try write(settings, to: Layout.settingsFile(in: base), tools: tools)
    }

    /// Starts the server on a free port; when the port was taken between choosing it and the
    /// server binding it, tries again with another one (five tries in all). Returns the port.
    private static func startOnFreePort(in base: URL, tools: Tools) throws -> Int {
        let log = Layout.logFile(in: base)
        var lastError: (any Error)?
        for _ in 1...5 {
            let port = try freeLoopbackPort()
            try writeSettings(port: port, in: base, tools: tools)
            let logSizeBefore = fileSize(log)
            do {
                try startServer(in: base, tools: tools)
                return port
            } catch {
                lastError = error
                guard text(of: log, from: logSizeBefore).contains("Address already in use") else {
                    throw error
                }
            }
        }
        throw lastError ?? PostgresServerError("could not start PostgreSQL")
    }

    /// `pg_ctl start -w`: returns once the server accepts connections; throws when the server
    /// exits first, or has not started within 60 s (and is then stopped).
    ///
    /// pg_ctl runs without any of this process's descriptors but its output: the server it
    /// leaves running would keep them open, and Foundation's `Process` takes a child for
    /// running as long as any process holds the descriptor it gives the child.
    private static func startServer(in base: URL, tools: Tools) throws {
        let log = Layout.logFile(in: base)
        let data = Layout.dataDirectory(in: base)
        let arguments = ["start", "-w", "-t", "60", "-l", log.path, "-D", data.path]
        do {
            try Command.runChecked(
                tools.asServerAccount("pg_ctl", arguments), in: base, log: log,
                inheritingNoDescriptors: true)
        } catch {
            _ = try? pgCtl(["stop", "-w", "-t", "60", "-m", "immediate"], in: base, tools: tools)
            throw error
        }
    }

    /// Creates the role and its database, over the Unix socket as the superuser.
    private func createRoleAndDatabase() throws {
        let arguments = [
            "-X", "-q", "-v", "ON_ERROR_STOP=1",
            "-h", temporaryDirectory.path, "-p", String(port), "-U", "postgres", "-d", "postgres",
            "-c", "CREATE ROLE \(username) LOGIN PASSWORD '\(password)'",
            "-c", "CREATE DATABASE \(database) OWNER \(username)",
        ]
        try Command.runChecked((tools.url(of: "psql"), arguments), in: temporaryDirectory)
    }

    // MARK: Stopping and restarting

    /// Stops the server (`pg_ctl stop -m fast`: sessions are ended, nothing is lost) and
    /// removes its temporary directory. Does nothing the second time.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard state != .removed else { return }
        if state == .running {
            do {
                try pgCtlStop(mode: "fast")
            } catch {
                _ = try? pgCtlStop(mode: "immediate")
            }
        }
        try? FileManager.default.removeItem(at: temporaryDirectory)
        state = .removed
    }

    /// Stops the server if it runs (`pg_ctl stop -m fast`), then starts it again with the same
    /// data on the same port; returns once it accepts connections. After `kill()`, this is how
    /// the server comes back (recovering from its write-ahead log, as after a crash).
    public func restart() throws {
        lock.lock()
        defer { lock.unlock() }
        guard state != .removed else {
            throw PostgresServerError(
                "restart(): the server was stopped with stop(), which removed its data; "
                    + "start a new one with PostgresServer.start()")
        }
        if state == .running {
            try pgCtlStop(mode: "fast")
            state = .stopped
        }
        try Self.startServer(in: temporaryDirectory, tools: tools)
        state = .running
    }

    /// Stops the server abruptly, as a crash would (`pg_ctl stop -m immediate`: no checkpoint,
    /// sessions cut), and keeps its data; `restart()` starts it again.
    public func kill() {
        lock.lock()
        defer { lock.unlock() }
        guard state == .running else { return }
        _ = try? pgCtlStop(mode: "immediate")
        state = .stopped
    }

    /// Copies the data directory of the stopped server (after `kill()`), as a backup taken then,
    /// to `name` in the temporary directory; returns the copy's place.
    public func copyData(named name: String) throws -> URL {
        lock.lock()
        defer { lock.unlock() }
        guard state == .stopped else { throw PostgresServerError("copyData(named:): the server runs; kill() it first") }
        let copy = temporaryDirectory.appendingPathComponent(name)
        // cp -a keeps owners and modes (the server's account's, when this process is root).
        try Command.runChecked((URL(fileURLWithPath: "/bin/cp"), ["-a", directory.path, copy.path]), in: temporaryDirectory)
        return copy
    }

    /// Puts back a copy of `copyData(named:)` in place of the stopped server's data directory,
    /// as restoring a backup does; `restart()` then starts the server on it.
    public func restoreData(from copy: URL) throws {
        lock.lock()
        defer { lock.unlock() }
        guard state == .stopped else { throw PostgresServerError("restoreData(from:): the server runs; kill() it first") }
        try Command.runChecked((URL(fileURLWithPath: "/bin/rm"), ["-rf", directory.path]), in: temporaryDirectory)
        try Command.runChecked((URL(fileURLWithPath: "/bin/cp"), ["-a", copy.path, directory.path]), in: temporaryDirectory)
    }

    /// `pg_ctl stop -m mode`, which returns once the server has exited (60 s at most).
    private func pgCtlStop(mode: String) throws {
        try Self.pgCtl(["stop", "-w", "-t", "60", "-m", mode], in: temporaryDirectory, tools: tools)
    }

    /// Runs pg_ctl on the data directory in `base`, as the server's account; the error of a
    /// failed run ends with the end of the server's log.
    private static func pgCtl(_ arguments: [String], in base: URL, tools: Tools) throws {
        let data = Layout.dataDirectory(in: base)
        try Command.runChecked(
            tools.asServerAccount("pg_ctl", arguments + ["-D", data.path]), in: base,
            log: Layout.logFile(in: base))
    }

    // MARK: SQL

    /// Runs `sql` (one statement or several, separated by semicolons) with the psql client,
    /// over TCP as `username` with its password (or, `asSuperuser`, over the server's Unix
    /// socket as `postgres`), in `database`; stops at the first error and throws it.
    ///
    /// Returns what the statements printed, with psql's `-A -t -q`: rows only, one a line,
    /// columns separated by `|`, no headers and no command tags, and without the last newline:
    /// `select 1` returns "1", `select 1, 'a'` returns "1|a", an insert returns "".
    @discardableResult
    public func psql(_ sql: String, asSuperuser: Bool = false) throws -> String {
        try psql(sql, client: asSuperuser ? ["-h", temporaryDirectory.path, "-U", "postgres"] : ["-h", host, "-U", username], password: password)
    }

    /// Runs `sql` as ``psql(_:asSuperuser:)`` does, over TCP as `role` with `password`.
    @discardableResult
    public func psql(_ sql: String, role: String, password: String) throws -> String {
        try psql(sql, client: ["-h", host, "-U", role], password: password)
    }

    private func psql(_ sql: String, client: [String], password: String) throws -> String {
        lock.lock()
        let removed = state == .removed
        lock.unlock()
        guard !removed else {
            throw PostgresServerError("psql(): the server was stopped with stop()")
        }
        let script = temporaryDirectory.appendingPathComponent(".script-\(UUID().uuidString).sql")
        do {
            try Data(sql.utf8).write(to: script)
        } catch {
            throw PostgresServerError("psql(): could not write the script \(script.path): \(error)")
        }
        defer { try? FileManager.default.removeItem(at: script) }
        let arguments = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"] + client + ["-p", String(port), "-d", database, "-f", "-"]
        let output = try Command.runChecked(
            (tools.url(of: "psql"), arguments), in: temporaryDirectory,
            environment: Command.environment(password: password), input: script)
        return output.hasSuffix("\n") ? String(output.dropLast()) : output
    }
}

/// Why a ``PostgresServer`` could not start, restart or run SQL: the command that failed, what
/// it printed, and the end of the server's log when the server was involved.
public struct PostgresServerError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

// MARK: - The temporary directory

/// Where things are in a server's temporary directory.
private enum Layout {
    /// The start of the name of every server's temporary directory.
    static let directoryPrefix = "lmdbrealm-pg-"

    /// The settings file that postgresql.conf includes (a path relative to the data directory).
    static let settingsFileName = "lmdbrealm.conf"

    static func dataDirectory(in base: URL) -> URL {
        base.appendingPathComponent("data", isDirectory: true)
    }

    static func logFile(in base: URL) -> URL {
        base.appendingPathComponent("postgres.log")
    }

    /// The file that holds the ID of the process that started the server.
    static func ownerFile(in base: URL) -> URL {
        base.appendingPathComponent("owner.pid")
    }

    static func settingsFile(in base: URL) -> URL {
        dataDirectory(in: base).appendingPathComponent(settingsFileName)
    }
}

/// Writes `text` to the file at `url` (replacing it) and gives the file to the server's
/// account, which must read it.
private func write(_ text: String, to url: URL, tools: Tools) throws {
    do {
        try Data(text.utf8).write(to: url)
    } catch {
        throw PostgresServerError("could not write \(url.path): \(error)")
    }
    try tools.handToServerAccount(url)
}

/// Appends `text` to the file at `url` (its owner stays the same).
private func append(_ text: String, to url: URL) throws {
    do {
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    } catch {
        throw PostgresServerError("could not append to \(url.path): \(error)")
    }
}

/// The size of the file at `url` in bytes; 0 when it does not exist.
private func fileSize(_ url: URL) -> Int {
    let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
    return (attributes?[.size] as? NSNumber)?.intValue ?? 0
}

/// The text of the file at `url` from byte `offset` on; "" when it does not exist.
private func text(of url: URL, from offset: Int = 0) -> String {
    guard let data = FileManager.default.contents(atPath: url.path), offset < data.count else {
        return ""
    }
    return String(decoding: data.dropFirst(offset), as: UTF8.self)
}

/// The last `count` lines of the file at `url`.
private func lastLines(of url: URL, count: Int = 30) -> String {
    text(of: url).split(separator: "\n", omittingEmptySubsequences: false)
        .suffix(count).joined(separator: "\n")
}

/// 32 random hexadecimal digits.
private func randomPassword() -> String {
    UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
}

/// A TCP port of 127.0.0.1 that nothing listens on now: the one the system gives a socket
/// bound to port 0, which is closed again. Another process may take it before the server
/// binds it; `startOnFreePort` then tries another.
private func freeLoopbackPort() throws -> Int {
    let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socketDescriptor >= 0 else { throw systemError("socket()") }
    defer { close(socketDescriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian  // 127.0.0.1
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, length) }
    }
    guard bound == 0 else { throw systemError("bind(127.0.0.1:0)") }
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            getsockname(socketDescriptor, $0, &length)
        }
    }
    guard named == 0 else { throw systemError("getsockname()") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether a process with the ID `processID` exists (perhaps one that only reused the ID).
private func isProcessAlive(_ processID: pid_t) -> Bool {
    Glibc.kill(processID, 0) == 0 || errno != ESRCH
}

/// An error for the system call `call` that just failed, with `errno`'s message.
private func systemError(_ call: String) -> PostgresServerError {
    let code = errno
    return PostgresServerError("\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
}

// MARK: - PostgreSQL's programs

/// Where PostgreSQL's programs are, and which account initdb and the server run as.
private struct Tools: Sendable {
    /// The directory of initdb, pg_ctl and psql.
    let binDirectory: URL
    /// The account initdb and the server run as when this process is root; `nil` otherwise.
    let serverAccount: ServerAccount?

    /// Finds the newest PostgreSQL installed, and the `postgres` account when this process
    /// is root.
    static func find() throws -> Tools {
        guard let binDirectory = findBinDirectory() else {
            throw PostgresServerError(
                "PostgreSQL is missing; install it with `apt-get install postgresql` (as root). "
                    + "(There is no initdb in /usr/lib/postgresql/*/bin nor on PATH.)")
        }
        return Tools(binDirectory: binDirectory, serverAccount: try ServerAccount.find())
    }

    /// The bin directory of the newest version in /usr/lib/postgresql (Debian's layout), or
    /// else the directory on PATH that has initdb.
    private static func findBinDirectory() -> URL? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let newestFirst = versions.sorted { isNewer($0, than: $1) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates =
            newestFirst.map { "\(root)/\($0)/bin" } + path.split(separator: ":").map(String.init)
        let found = candidates.first { directory in
            ["initdb", "pg_ctl", "psql"].allSatisfy {
                FileManager.default.isExecutableFile(atPath: "\(directory)/\($0)")
            }
        }
        return found.map { URL(fileURLWithPath: $0, isDirectory: true) }
    }

    /// Whether the version directory name `a` ("15", "9.6") is a newer version than `b`.
    private static func isNewer(_ a: String, than b: String) -> Bool {
        let numbers = { (name: String) in name.split(separator: ".").map { Int($0) ?? -1 } }
        return numbers(b).lexicographicallyPrecedes(numbers(a))
    }

    /// The program `name` of the bin directory.
    func url(of name: String) -> URL {
        binDirectory.appendingPathComponent(name)
    }

    /// The executable and arguments that run the program `name` with `arguments`: as the
    /// server's account when this process is root, directly otherwise.
    func asServerAccount(_ name: String, _ arguments: [String]) -> (URL, [String]) {
        guard let account = serverAccount else { return (url(of: name), arguments) }
        return (account.launcher, account.launcherArguments + [url(of: name).path] + arguments)
    }

    /// Makes the server's account the owner of the file or directory at `url` (when this
    /// process is root; otherwise it is already this process's).
    func handToServerAccount(_ url: URL) throws {
        guard let account = serverAccount else { return }
        guard chown(url.path, account.userID, account.groupID) == 0 else {
            throw systemError("chown(\(url.path), postgres)")
        }
    }
}

/// The `postgres` account, and how a root process runs a program as it.
private struct ServerAccount: Sendable {
    let userID: uid_t
    let groupID: gid_t
    /// setpriv or runuser.
    let launcher: URL
    /// The launcher's arguments before the program's path.
    let launcherArguments: [String]

    static let name = "postgres"

    /// The account when this process is root; `nil` when it is not.
    static func find() throws -> ServerAccount? {
        guard geteuid() == 0 else { return nil }
        guard let (userID, groupID) = lookUpAccount(name) else {
            throw PostgresServerError(
                "running as root, which initdb and postgres refuse, and there is no `\(name)` "
                    + "account to run them as: install PostgreSQL with `apt-get install "
                    + "postgresql` (which creates it), or run the tests as an ordinary user")
        }
        // setpriv changes the user and nothing else; runuser goes through PAM.
        if let setpriv = executable("setpriv", in: ["/usr/bin", "/bin"]) {
            let arguments = ["--reuid=\(userID)", "--regid=\(groupID)", "--init-groups", "--"]
            return ServerAccount(
                userID: userID, groupID: groupID, launcher: setpriv, launcherArguments: arguments)
        }
        if let runuser = executable("runuser", in: ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]) {
            return ServerAccount(
                userID: userID, groupID: groupID, launcher: runuser,
                launcherArguments: ["-u", name, "--"])
        }
        throw PostgresServerError(
            "running as root, and neither setpriv nor runuser (util-linux) is there to run "
                + "initdb and postgres as the `\(name)` account")
    }

    /// The user and group IDs of the account `name`, or `nil` when there is no such account.
    private static func lookUpAccount(_ name: String) -> (uid_t, gid_t)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let status = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return (entry.pw_uid, entry.pw_gid)
    }

    /// The program `name` in the first of `directories` that has it.
    private static func executable(_ name: String, in directories: [String]) -> URL? {
        directories.map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
            .map { URL(fileURLWithPath: $0) }
    }
}

// MARK: - Running a command

/// Runs a program to its end and collects what it printed.
enum Command {
    /// How long a command may run before it is ended; pg_ctl's own waits are 60 s.
    static let timeout: TimeInterval = 120

    /// The environment of a command: this process's, without any PG… variable (which would
    /// point the tools elsewhere), with messages in English, psql's output in UTF-8, and the
    /// password when there is one.
    static func environment(password: String? = nil) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }
        environment["LC_ALL"] = "C"
        environment["PGCLIENTENCODING"] = "UTF8"
        environment["PGCONNECT_TIMEOUT"] = "10"
        if let password { environment["PGPASSWORD"] = password }
        return environment
    }

    /// Runs `command` in `directory` and returns its standard output; throws when it fails,
    /// with the command line, its output, and the end of `log` when given.
    /// `inheritingNoDescriptors` runs it with `spawnAlone` rather than `Process`.
    @discardableResult
    static func runChecked(
        _ command: (URL, [String]), in directory: URL,
        environment: [String: String] = Command.environment(), input: URL? = nil, log: URL? = nil,
        inheritingNoDescriptors: Bool = false
    ) throws -> String {
        let (executable, arguments) = command
        let output = try OutputFiles(in: directory, for: commandLine(executable, arguments))
        defer { output.remove() }
        let status =
            inheritingNoDescriptors
            ? try spawnAlone(
                executable, arguments, in: directory, environment: environment, output: output)
            : try run(
                executable, arguments, in: directory, environment: environment, input: input,
                output: output)
        guard status == 0 else {
            var message = """
                command failed (exit status \(status)): \(output.commandLine)
                \(output.bothOutputs.trimmingCharacters(in: .whitespacesAndNewlines))
                """
            if let log {
                message += "\nend of the server's log (\(log.path)):\n\(lastLines(of: log))"
            }
            throw PostgresServerError(message)
        }
        return output.standardOutput
    }

    /// Runs `executable` with `arguments` in `directory` with Foundation's `Process`, the file
    /// `input` (or nothing) as its standard input and its output into `output`, and waits for
    /// its end (at most `timeout`). Returns its exit status.
    private static func run(
        _ executable: URL, _ arguments: [String], in directory: URL,
        environment: [String: String], input: URL?, output: OutputFiles
    ) throws -> Int32 {
        let standardInput = try input.map { try openForReading($0, for: output.commandLine) }
        defer { try? standardInput?.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = environment
        process.standardInput = standardInput ?? FileHandle.nullDevice
        process.standardOutput = output.standardOutputHandle
        process.standardError = output.standardErrorHandle
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            throw PostgresServerError("could not run \(output.commandLine): \(error)")
        }
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            end(process, exited: exited)
            throw PostgresServerError(
                "command did not finish within \(Int(timeout)) s, ended: \(output.commandLine)\n"
                    + output.bothOutputs)
        }
        return process.terminationStatus
    }

    /// Ends a command that ran too long: SIGTERM, then SIGKILL if it is still there 10 s
    /// later, then waits (10 s at most) for it to be reaped.
    private static func end(_ process: Process, exited: DispatchSemaphore) {
        process.terminate()
        if exited.wait(timeout: .now() + 10) == .timedOut {
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
            _ = exited.wait(timeout: .now() + 10)
        }
    }

    /// Runs `executable` with `arguments` in `directory`, with no standard input and its output
    /// into `output`, and none of this process's other descriptors (not even those another
    /// thread opens meanwhile), and waits for its end. Returns its exit status (128 + the
    /// signal when a signal ended it).
    ///
    /// For `pg_ctl start`, which must not be run with `Process`: the server it starts inherits
    /// pg_ctl's descriptors, and `Process` learns that a child ended when the last copy of a
    /// socket it gives the child is closed, so it would wait for pg_ctl as long as the server
    /// runs; and the server would keep any descriptor that another thread's `Process` was
    /// giving its child at that instant, making that one wait too. pg_ctl ends by itself
    /// (its wait is bounded by `-t`), so this waits without a timeout of its own.
    private static func spawnAlone(
        _ executable: URL, _ arguments: [String], in directory: URL,
        environment: [String: String], output: OutputFiles
    ) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output.standardOutputHandle.fileDescriptor, 1)
        posix_spawn_file_actions_adddup2(&actions, output.standardErrorHandle.fileDescriptor, 2)
        try addCloseOthers(to: &actions)
        try addChangeDirectory(to: directory, in: &actions)

        // Its own process group (as with `Process`), no signal blocked.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))

        let argv = CStringArray([executable.path] + arguments)
        let envp = CStringArray(environment.map { "\($0.key)=\($0.value)" })
        var processID = pid_t()
        let spawned = withExtendedLifetime((argv, envp)) {
            posix_spawn(
                &processID, executable.path, &actions, &attributes, argv.pointers, envp.pointers)
        }
        guard spawned == 0 else {
            throw PostgresServerError(
                "could not run \(output.commandLine): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(processID, &status, 0) == -1 {
            guard errno == EINTR else { throw systemError("waitpid(\(output.commandLine))") }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Makes the child close every descriptor but 0, 1 and 2: in one step with glibc 2.34's
    /// `posix_spawn_file_actions_addclosefrom_np`, or else each one open now.
    private static func addCloseOthers(to actions: inout posix_spawn_file_actions_t) throws {
        typealias AddCloseFrom =
            @convention(c) (
                UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32
            ) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            let addCloseFrom = unsafeBitCast(symbol, to: AddCloseFrom.self)
            let code = addCloseFrom(&actions, 3)
            guard code == 0 else {
                throw PostgresServerError(
                    "posix_spawn_file_actions_addclosefrom_np failed: "
                        + String(cString: strerror(code)))
            }
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    /// Makes the child start in `directory` (where the server's account may go; root's
    /// working directory may be closed to it, and initdb and postgres need theirs), with
    /// glibc 2.29's `posix_spawn_file_actions_addchdir_np`.
    private static func addChangeDirectory(
        to directory: URL, in actions: inout posix_spawn_file_actions_t
    ) throws {
        typealias AddChangeDirectory =
            @convention(c) (
                UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
            ) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else {
            throw PostgresServerError(
                "this C library has no posix_spawn_file_actions_addchdir_np (glibc 2.29)")
        }
        let addChangeDirectory = unsafeBitCast(symbol, to: AddChangeDirectory.self)
        let code = addChangeDirectory(&actions, directory.path)
        guard code == 0 else {
            throw PostgresServerError(
                "posix_spawn_file_actions_addchdir_np(\(directory.path)) failed: "
                    + String(cString: strerror(code)))
        }
    }

    /// Opens the file at `url` for reading, as a command's standard input.
    private static func openForReading(_ url: URL, for commandLine: String) throws -> FileHandle {
        do {
            return try FileHandle(forReadingFrom: url)
        } catch {
            throw PostgresServerError(
                "could not open \(url.path) as the input of \(commandLine): \(error)")
        }
    }

    /// The command line of `executable` with `arguments`, quoted as a shell would need it.
    static func commandLine(_ executable: URL, _ arguments: [String]) -> String {
        ([executable.path] + arguments).map(quoted).joined(separator: " ")
    }

    /// `argument` as a shell would need it, for messages.
    private static func quoted(_ argument: String) -> String {
        let plain = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,@".contains($0) }
        if plain && !argument.isEmpty { return argument }
        return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// Two new files in a directory that receive a command's standard output and standard error,
/// read once it has ended: no pipe to keep reading while it runs, and no read that waits for
/// every copy of a descriptor to be closed (the server pg_ctl starts would keep one).
private struct OutputFiles {
    let commandLine: String
    let standardOutputHandle: FileHandle
    let standardErrorHandle: FileHandle
    private let standardOutputURL: URL
    private let standardErrorURL: URL

    init(in directory: URL, for commandLine: String) throws {
        let name = ".command-\(UUID().uuidString)"
        self.commandLine = commandLine
        standardOutputURL = directory.appendingPathComponent("\(name).out")
        standardErrorURL = directory.appendingPathComponent("\(name).err")
        standardOutputHandle = try Self.create(standardOutputURL, for: commandLine)
        do {
            standardErrorHandle = try Self.create(standardErrorURL, for: commandLine)
        } catch {
            try? standardOutputHandle.close()
            try? FileManager.default.removeItem(at: standardOutputURL)
            throw error
        }
    }

    /// What the command wrote to its standard output.
    var standardOutput: String { text(of: standardOutputURL) }

    /// Both outputs, for an error message.
    var bothOutputs: String {
        [text(of: standardOutputURL), text(of: standardErrorURL)]
            .filter { !$0.isEmpty }.joined(separator: "\n")
    }

    /// Closes and removes the files.
    func remove() {
        try? standardOutputHandle.close()
        try? standardErrorHandle.close()
        try? FileManager.default.removeItem(at: standardOutputURL)
        try? FileManager.default.removeItem(at: standardErrorURL)
    }

    /// Creates an empty file at `url` and opens it for writing.
    private static func create(_ url: URL, for commandLine: String) throws -> FileHandle {
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: url)
        else {
            throw PostgresServerError(
                "could not create \(url.path) for the output of \(commandLine)")
        }
        // Close-on-exec: only the command gets it (as its standard output or error); a command
        // another thread starts meanwhile must not inherit it and write into this one's output.
        _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
        return handle
    }
}

/// Strings as NUL-terminated C strings, in a NULL-terminated array (`argv`, `envp`), freed with
/// the object.
private final class CStringArray {
    let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointers = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() {
            pointers[index] = strdup(string)
        }
        pointers[strings.count] = nil
    }

    deinit {
        for index in 0..<count { free(pointers[index]) }
        pointers.deallocate()
    }
}
