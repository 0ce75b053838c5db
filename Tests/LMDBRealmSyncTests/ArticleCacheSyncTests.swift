#if Sync
    import Foundation
    import SyncTestSupport
    import TestSupport
    import Testing

    /// A process whose output (standard output and error together) is collected as it comes.
    private final class RunningProcess: @unchecked Sendable {
        // @unchecked Sendable: `text` and `ended` are only touched under `condition`'s lock; the
        // process is only started, then waited for or terminated.
        let process = Process()
        private let condition = NSCondition()
        private var text = ""
        private var ended = false

        init(_ executable: URL, _ arguments: [String]) throws {
            process.executableURL = executable
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            pipe.fileHandleForReading.readabilityHandler = { [condition] handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil }
                condition.lock()
                self.text += String(decoding: data, as: UTF8.self)
                condition.broadcast()
                condition.unlock()
            }
            process.terminationHandler = { [condition] _ in
                condition.lock()
                self.ended = true
                condition.broadcast()
                condition.unlock()
            }
            try process.run()
        }

        var output: String {
            condition.lock()
            defer { condition.unlock() }
            return text
        }

        /// Waits until the output holds `marker` (false if the process ends first, or after `timeout`).
        func wait(for marker: String, timeout: TimeInterval = 60) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while !text.contains(marker) && !ended {
                if !condition.wait(until: deadline) { break }
            }
            return text.contains(marker)
        }

        /// Waits until the process has ended (false after `timeout`).
        func waitForExit(timeout: TimeInterval = 60) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while !ended {
                if !condition.wait(until: deadline) { break }
            }
            return ended
        }
    }

    /// The ArticleCache example's `watch --sync`, as the README shows it: two caches on two
    /// "machines" (processes with files of their own) and a fetch into one of them.
    @Suite struct ArticleCacheSyncTests {
        @Test func aFetchIntoOneCacheIsPrintedByTheWatcherOfAnother() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let url = "postgres://\(server.username):\(server.password)@\(server.host):\(server.port)/\(server.database)"
                let tool = builtExecutable(named: "ArticleCache")
                let (a, b) = (dir.appendingPathComponent("a.realm").path, dir.appendingPathComponent("b.realm").path)
                try await onNewThread {
                    // a's watcher runs until it is stopped (a watcher that has printed its batches
                    // stops syncing too); b's stops after the fetch it receives.
                    let watchers = try [
                        RunningProcess(tool, ["watch", "--database", a, "--sync", url, "--node", "a"]),
                        RunningProcess(tool, ["watch", "--database", b, "--sync", url, "--node", "b", "--batches", "1"]),
                    ]
                    defer { for watcher in watchers where watcher.process.isRunning { watcher.process.terminate() } }
                    for (watcher, node) in zip(watchers, ["a", "b"]) {
                        #expect(watcher.wait(for: "sync (node \(node)): syncing"), "\(watcher.output)")
                        #expect(watcher.wait(for: "Watching"), "\(watcher.output)")
                    }
                    let fetched = try run(tool, ["fetch", "--database", a])
                    #expect(fetched.status == 0, "\(fetched.output)")
                    let exited = watchers[1].waitForExit()
                    #expect(exited, "\(watchers[1].output)")
                    if exited { #expect(watchers[1].process.terminationStatus == 0) }
                    let added = watchers.map { watcher in watcher.output.split(separator: "\n").filter { $0.hasPrefix("+ ") }.sorted() }
                    #expect(added[0].count == 10)
                    #expect(added[1] == added[0])
                }
            }
        }
    }
#endif
