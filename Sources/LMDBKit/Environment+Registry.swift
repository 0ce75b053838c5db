import Foundation

extension Environment {
    /// The process-wide table of open environments, keyed by real path, holding them weakly:
    /// the last owner to let go closes the file, and the next open starts afresh.
    static let registry = Registry()

    final class Registry: @unchecked Sendable {
        // @unchecked Sendable: `entries` is only read or written while `lock` is held.
        // Recursive: an environment's deinit closes its file under this lock (see `close`), and
        // that deinit may run while this thread already holds it.
        private let lock = NSRecursiveLock()
        private var entries: [String: WeakEnvironment] = [:]

        struct WeakEnvironment {
            weak var environment: Environment?
        }

        func environment(
            for path: String,
            create: () throws -> Environment,
            compatible: (Environment) -> Bool
        ) throws -> Environment {
            lock.lock()
            defer { lock.unlock() }
            if let existing = entries[path]?.environment {
                guard compatible(existing) else {
                    throw LMDBError(code: LMDBError.optionsConflict.code, context: "opening \(path)")
                }
                return existing
            }
            // Opened under the lock: two threads racing to open one file must not both call
            // mdb_env_open on it.
            let env = try create()
            entries[path] = WeakEnvironment(environment: env)
            if entries.count > 64 { entries = entries.filter { $0.value.environment != nil } }
            return env
        }

        /// Runs `body` (the mdb_env_close of a dying environment) under the registry lock, so a
        /// new open of the same file cannot overlap the close: closing releases the process's
        /// POSIX locks on the lock file, and they must not be the new environment's.
        func close(_ body: () -> Void) {
            lock.withLock(body)
        }

        /// The paths open in this process now.
        var openPaths: [String] {
            lock.withLock { entries.filter { $0.value.environment != nil }.map(\.key) }
        }

        /// Whether `path` is open in this process now.
        func isOpen(_ path: String) -> Bool {
            lock.withLock { entries[path]?.environment != nil }
        }
    }

    /// The real paths of every environment open in this process, for tests that check
    /// nothing was left open.
    @_spi(Testing) public static var openPaths: [String] { registry.openPaths }

    /// Whether the file at `path` is open as an environment in this process.
    public static func isOpen(path: String) -> Bool {
        registry.isOpen(canonicalPath(path))
    }
}
