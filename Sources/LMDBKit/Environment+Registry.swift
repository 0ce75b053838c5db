public import Foundation

extension Environment {
    /// The process-wide table of open environments, keyed by real path, holding them weakly:
    /// the last owner to let go closes the file, and the next open starts afresh.
    static let registry = Registry()

    final class Registry: @unchecked Sendable {
        // @unchecked Sendable: `entries` and every `Slot` are only read or written while
        // `lock` is held.
        private let lock = NSCondition()
        private var entries: [String: Slot] = [:]

        /// One open of a path: the environment while it lives, and whether its file has been
        /// closed since. A weak reference turns nil as soon as the environment starts to die,
        /// before its deinit has closed the file; `closed` covers that window.
        final class Slot {
            weak var environment: Environment?
            var closed = false
        }

        func environment(
            for path: String,
            create: () throws -> Environment,
            compatible: (Environment) -> Bool
        ) throws -> Environment {
            // No strong reference to an environment may be released while `lock` is held: if
            // it were the last, the environment's deinit would take the lock again.
            lock.lock()
            if let slot = entries[path] {
                if let existing = slot.environment {
                    lock.unlock()
                    guard compatible(existing) else {
                        throw LMDBError(code: LMDBError.optionsConflict.code, context: "opening \(path)")
                    }
                    return existing
                }
                // The last owner is letting go: wait until its file is closed, so the process's
                // POSIX locks on the lock file are not released under the new environment.
                while !slot.closed { lock.wait() }
            }
            defer { lock.unlock() }
            // Opened under the lock: two threads racing to open one file must not both call
            // mdb_env_open on it. (A failed open's deinit does not take the lock.)
            let env = try create()
            let slot = Slot()
            slot.environment = env
            env.slot = slot
            entries[path] = slot
            if entries.count > 64 { entries = entries.filter { !$0.value.closed } }
            return env
        }

        /// Runs `body` (the mdb_env_close of a dying environment) under the registry lock and
        /// marks its slot closed, so a new open of the same file waits for the close.
        func close(_ slot: Slot, _ body: () -> Void) {
            lock.lock()
            body()
            slot.closed = true
            lock.broadcast()
            lock.unlock()
        }

        /// Waits until every environment whose path starts with `prefix` has closed its file, at
        /// most until `deadline`; returns the paths still open then. Reads only the slots'
        /// `closed` flags under the lock, never their weak references.
        func waitUntilClosed(prefix: String, deadline: Date) -> [String] {
            lock.lock()
            defer { lock.unlock() }
            func stillOpen() -> [String] { entries.filter { $0.key.hasPrefix(prefix) && !$0.value.closed }.map(\.key) }
            while !stillOpen().isEmpty {
                if !lock.wait(until: deadline) { break }
            }
            return stillOpen()
        }

        /// The paths open in this process now. The weak references are read outside the lock
        /// (reading one makes a strong reference, which may be the last).
        var openPaths: [String] {
            let slots = lock.withLock { Array(entries) }
            return slots.filter { $0.value.environment != nil }.map(\.key)
        }

        /// Whether `path` is open in this process now.
        func isOpen(_ path: String) -> Bool {
            let slot = lock.withLock { entries[path] }
            return slot?.environment != nil
        }
    }

    /// The real paths of every environment open in this process, for tests that check
    /// nothing was left open.
    @_spi(Testing) public static var openPaths: [String] { registry.openPaths }

    /// Waits (at most `timeout` seconds) until no environment under the directory `prefix` is
    /// open in this process; returns those still open. For tests whose last handles are
    /// released on other threads or queues.
    @_spi(Testing) public static func waitUntilClosed(under prefix: String, timeout: TimeInterval) -> [String] {
        registry.waitUntilClosed(prefix: prefix, deadline: Date(timeIntervalSinceNow: timeout))
    }

    /// Whether the file at `path` is open as an environment in this process.
    public static func isOpen(path: String) -> Bool {
        registry.isOpen(canonicalPath(path))
    }
}
