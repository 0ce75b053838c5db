#if Sync
    import ArticleCacheKit
    import Foundation
    import LMDBRealm
    import LMDBRealmStorage
    import LMDBRealmSync
    import SyncTestSupport
    import TestSupport
    import Testing

    /// Hears every commit to some ArticleCache files, whichever process makes it: a realm of
    /// each, confined to a queue of its own, observes its file.
    private final class FileCommits: @unchecked Sendable {
        // @unchecked Sendable: each realm and token is made, used and released on its own queue;
        // the semaphore is thread-safe.
        private let commits = DispatchSemaphore(value: 0)
        private var handles: [(queue: DispatchQueue, realm: Realm?, token: NotificationToken?)] = []

        init(_ files: [String]) throws {
            for file in files {
                let queue = DispatchQueue(label: "commits-\(file)")
                let (realm, token) = try queue.sync { () -> (Realm, NotificationToken) in
                    let realm = try Realm(configuration: ArticleStore(fileURL: URL(fileURLWithPath: file)).configuration, queue: queue)
                    return (realm, realm.observe { [commits] _, _ in commits.signal() })
                }
                handles.append((queue, realm, token))
            }
        }

        /// Waits for the next commit (or one heard since the last wait), until `deadline`.
        /// - Returns: Whether a commit came.
        func wait(until deadline: DispatchTime) -> Bool {
            commits.wait(timeout: deadline) == .success
        }

        func stop() {
            for index in handles.indices {
                handles[index].queue.sync {
                    handles[index].token = nil
                    handles[index].realm = nil
                }
            }
        }
    }

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

    /// A PostgreSQL server of the test's own and a temporary directory for `body`, with the
    /// server's address as `--sync` takes it and as a client's `Postgres`.
    private func withServer(
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (_ dir: URL, _ server: PostgresServer, _ url: String, _ postgres: SyncClient.Postgres) async throws -> Void
    ) async throws {
        let server = try await onNewThread { try PostgresServer.start() }
        defer { server.stop() }
        try await withTemporaryDirectory(sourceLocation: sourceLocation) { dir in
            let url = "postgres://\(server.username):\(server.password)@\(server.host):\(server.port)/\(server.database)?sslmode=disable"
            let postgres = SyncClient.Postgres(
                host: server.host, port: server.port, username: server.username, password: server.password, database: server.database,
                tls: .disable)
            try await body(dir, server, url, postgres)
        }
    }

    /// The ArticleCache example's `watch --sync`, as the README shows it: two caches on two
    /// "machines" (processes with files of their own) and a fetch into one of them.
    @Suite struct ArticleCacheSyncTests {
        @Test(arguments: [
            (["--sync", "mysql://u@127.0.0.1/db"], "--sync: the PostgreSQL URL mysql://u@127.0.0.1/db does not start with postgres://"),
            (["--sync", "postgres://127.0.0.1/db"], "--sync: the PostgreSQL URL postgres://127.0.0.1/db names no user"),
            (["--sync", "postgres://u:pw@127.0.0.1/db?sslmode=prefer"], "asks for sslmode=prefer, which falls back to plaintext"),
            (["--node", "a"], "--node names this cache for --sync, which is missing"),
        ])
        func aMalformedSyncOptionIsAUsageErrorThatOpensNothing(arguments: [String], message: String) async throws {
            try await withTemporaryDirectory { dir in
                let cache = dir.appendingPathComponent("cache.realm")
                let result = try await onNewThread {
                    try run(builtExecutable(named: "ArticleCache"), ["watch", "--database", cache.path] + arguments)
                }
                #expect(result.status == 64, "\(result.output)")
                #expect(result.output.contains(message), "\(result.output)")
                #expect(!FileManager.default.fileExists(atPath: cache.path))
            }
        }

        /// Over TLS, the server's certificate checked (`sslmode=verify-full`), as the README shows.
        @Test func aFetchIntoOneCacheIsPrintedByTheWatcherOfAnother() async throws {
            try await withTemporaryDirectory { dir in
                let root = try TestCertificates(in: dir, name: "root")
                let certificate = try root.server(names: ["IP:127.0.0.1"], file: "server")
                let server = try await onNewThread { try PostgresServer.start(tls: certificate) }
                defer { server.stop() }
                let url =
                    "postgres://\(server.username):\(server.password)@\(server.host):\(server.port)/\(server.database)"
                    + "?sslmode=verify-full&sslrootcert=\(root.certificate.path)"
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
                    // b, which never fetched, holds what a holds: the articles with their
                    // authors, keywords and embedded multimedia.
                    let dumps = try [a, b].map { try run(builtExecutable(named: "lmdbrealm"), ["dump", $0]).output }
                    #expect(dumps[1].contains(#""multimedia":[{"url":"https://"#), "\(dumps[1].prefix(2000))")
                    #expect(dumps[1] == dumps[0])
                }
            }
        }

        /// Three caches, each synced by a `watch --sync` process of its own, fetched into at once
        /// (the same articles written by three nodes concurrently): the three files converge to
        /// the same objects, as `lmdbrealm dump` writes them.
        @Test func threeCachesFetchedIntoAtOnceConvergeToTheSameDump() async throws {
            let server = try await onNewThread { try PostgresServer.start() }
            defer { server.stop() }
            try await withTemporaryDirectory { dir in
                let url = "postgres://\(server.username):\(server.password)@\(server.host):\(server.port)/\(server.database)?sslmode=disable"
                let tool = builtExecutable(named: "ArticleCache")
                let inspector = builtExecutable(named: "lmdbrealm")
                let nodes = ["a", "b", "c"]
                let files = nodes.map { dir.appendingPathComponent("\($0).realm").path }
                try await onNewThread {
                    let watchers = try zip(nodes, files).map { node, file in
                        try RunningProcess(tool, ["watch", "--database", file, "--sync", url, "--node", node])
                    }
                    defer { for watcher in watchers where watcher.process.isRunning { watcher.process.terminate() } }
                    for (watcher, node) in zip(watchers, nodes) {
                        #expect(watcher.wait(for: "sync (node \(node)): syncing"), "\(watcher.output)")
                        #expect(watcher.wait(for: "Watching"), "\(watcher.output)")
                    }
                    // Every commit to any of the files, by any process, is heard here.
                    let committed = try FileCommits(files)
                    defer { committed.stop() }
                    let fetches = try files.map { try RunningProcess(tool, ["fetch", "--database", $0]) }
                    for fetch in fetches {
                        #expect(fetch.waitForExit(), "\(fetch.output)")
                    }
                    // Converged: the same dump three times, with the fetched articles. The files are
                    // read again after each commit until then (a minute at most).
                    let deadline = DispatchTime.now() + 60
                    var dumps: [String] = []
                    repeat {
                        dumps = try files.map { file in
                            let dump = try run(inspector, ["dump", file])
                            #expect(dump.status == 0, "\(dump.output)")
                            return dump.output
                        }
                        if Set(dumps).count == 1 { break }
                    } while committed.wait(until: deadline)
                    #expect(Set(dumps).count == 1, "\(dumps)")
                    #expect(dumps[0].split(separator: "\n").filter { $0.contains(#""_class":"Article""#) }.count == 10)
                }
            }
        }

        /// A new node's process killed (SIGKILL) while it loads the snapshot of a compacted log:
        /// started again, it ends with what the node that wrote the objects holds, links, lists
        /// and embedded objects included, each once. The instant of the kill is moved until one
        /// lands inside the load (objects written, cursor not yet moved).
        @Test func aNodeKilledWhileLoadingTheSnapshotEndsWithTheWholeOfIt() async throws {
            try await withServer { dir, server, url, postgres in
                let tool = builtExecutable(named: "ArticleCache")
                let inspector = builtExecutable(named: "lmdbrealm")
                let a = ArticleStore(fileURL: dir.appendingPathComponent("a.realm"))
                let writer = try await SyncClient(realm: a.configuration, postgres: postgres, node: "a", compaction: .never)
                let count = 8_000
                try await onNewThread {
                    let realm = try Realm(configuration: a.configuration)
                    try realm.write {
                        for i in 0..<count {
                            let article = Article()
                            article.id = "nyt://article/\(i)"
                            article.url = "https://example.com/\(i)"
                            article.headline = "Headline \(i)"
                            article.leadParagraph = "Lead paragraph of article \(i)."
                            article.section = "Section \(i % 12)"
                            article.pubDate = Date(timeIntervalSince1970: 1_700_000_000 + Double(i))
                            article.wordCount = i % 1_500
                            article.byline = Author(id: "author-\(i % 150)", name: "Author \(i % 150)")
                            for k in 0..<4 { article.keywords.append(Keyword(value: "keyword \((i * 7 + k * 31) % 400)", kind: "subject")) }
                            article.multimedia.append(Multimedia(url: "https://example.com/\(i).jpg", width: 600, height: 400, type: "image"))
                            realm.add(article, update: .modified)
                        }
                    }
                }
                let sending = Task { try await writer.run() }
                #expect(await waitForStatus(writer, timeout: .seconds(120)) { $0 == .syncing(lag: 0) })
                sending.cancel()
                _ = await sending.result
                _ = try await writer.compactLog(keepingLatest: 0)
                let through = Int64(try server.psql("SELECT through FROM lmdbrealm_snapshot")) ?? -1
                #expect(through >= 1)
                let expected = try run(inspector, ["dump", a.fileURL.path])
                #expect(expected.status == 0, "\(expected.output)")

                /// The articles a file holds and its sync cursor, read once no process has it open.
                let state = { @Sendable (store: ArticleStore) throws -> (articles: Int, cursor: Int64) in
                    let realm = try Realm(configuration: store.configuration)
                    return (realm.objects(Article.self).count, try realm.syncState()?.cursor ?? -1)
                }
                var delay = 0.25
                var inside = 0
                var seen: [String] = []
                for trial in 0..<16 where inside < 2 {
                    let b = ArticleStore(fileURL: dir.appendingPathComponent("b\(trial).realm"))
                    let node = "b\(trial)"
                    let wait = delay
                    let killed = try await onNewThread {
                        let watcher = try RunningProcess(tool, ["watch", "--database", b.fileURL.path, "--sync", url, "--node", node])
                        #expect(watcher.wait(for: "sync (node \(node)): connecting"), "\(watcher.output)")
                        Thread.sleep(forTimeInterval: wait)
                        kill(watcher.process.processIdentifier, SIGKILL)
                        #expect(watcher.waitForExit())
                        return try state(b)
                    }
                    seen.append("\(delay): \(killed.articles) articles, cursor \(killed.cursor)")
                    if killed.articles > 0 && killed.cursor < through {
                        inside += 1
                    } else if killed.articles == 0 {
                        delay *= 1.6
                    } else {
                        delay *= 0.6
                    }
                    // Started again, it loads the snapshot to the end: the file is read again at
                    // each commit to it until its cursor is the snapshot's (two minutes at most).
                    let committed = try FileCommits([b.fileURL.path])
                    defer { committed.stop() }
                    let reader = try await SyncClient(realm: b.configuration, postgres: postgres, node: node, compaction: .never)
                    let loading = Task { try await reader.run() }
                    let loaded = try await onNewThread {
                        let deadline = DispatchTime.now() + 120
                        repeat {
                            if try state(b).cursor == through { return true }
                        } while committed.wait(until: deadline)
                        return try state(b).cursor == through
                    }
                    loading.cancel()
                    _ = await loading.result
                    #expect(loaded, "\(seen)")
                    let dump = try run(inspector, ["dump", b.fileURL.path])
                    #expect(dump.status == 0, "\(dump.output)")
                    #expect(dump.output == expected.output, "trial \(trial), killed after \(seen.last!)")
                }
                #expect(inside >= 1, "no kill landed inside the load: \(seen)")
            }
        }

        /// A node's process killed (SIGKILL) at random instants while it sends 2,000 commits: the
        /// log gets each commit exactly once, in order, and another node applies them all.
        @Test func aNodeKilledWhileSendingLosesNothingAndSendsNothingTwice() async throws {
            try await withServer { dir, server, url, postgres in
                let tool = builtExecutable(named: "ArticleCache")
                let a = ArticleStore(fileURL: dir.appendingPathComponent("a.realm"))
                // Synced from the start, but no client runs: the commits wait in the outbox.
                _ = try await SyncClient(realm: a.configuration, postgres: postgres, node: "a")
                let fetched = try run(tool, ["fetch", "--database", a.fileURL.path])
                #expect(fetched.status == 0, "\(fetched.output)")
                let commits = 2_000
                try await onNewThread {
                    let realm = try Realm(configuration: a.configuration)
                    let articles = realm.objects(Article.self).sorted(byKeyPath: "id")
                    for i in 0..<commits {
                        try realm.write { articles[i % articles.count].headline = "edit \(i)" }
                    }
                }
                let total = commits + 1
                let sentAtKills = try await onNewThread {
                    var sentAtKills: [Int] = []
                    for trial in 0..<6 {
                        let watcher = try RunningProcess(tool, ["watch", "--database", a.fileURL.path, "--sync", url, "--node", "a"])
                        #expect(watcher.wait(for: "sync (node a): connecting"), "\(watcher.output)")
                        // A random instant of the first seconds, while it connects and sends.
                        Thread.sleep(forTimeInterval: Double.random(in: 0...0.3) * Double(trial + 1))
                        kill(watcher.process.processIdentifier, SIGKILL)
                        #expect(watcher.waitForExit())
                        // (No table yet if the first process was killed before it made it.)
                        sentAtKills.append(Int((try? server.psql("SELECT count(*) FROM lmdbrealm_changes")) ?? "0") ?? -1)
                    }
                    return sentAtKills
                }
                // Sent to the end by a client that is not killed.
                let client = try await SyncClient(realm: a.configuration, postgres: postgres, node: "a")
                let running = Task { try await client.run() }
                #expect(await waitForStatus(client, timeout: .seconds(120)) { $0 == .syncing(lag: 0) }, "sent at the kills: \(sentAtKills)")
                running.cancel()
                _ = await running.result
                // Each local sequence once, none missing, in the log's order.
                #expect(
                    try server.psql(
                        """
                        SELECT count(*), count(DISTINCT local_sequence), min(local_sequence), max(local_sequence),
                               bool_and(in_order) FROM (SELECT local_sequence,
                               local_sequence > coalesce(lag(local_sequence) OVER (ORDER BY sequence), 0) AS in_order
                               FROM lmdbrealm_changes WHERE node = 'a') AS sent
                        """) == "\(total)|\(total)|1|\(total)|t", "sent at the kills: \(sentAtKills)")
                // Another node applies the whole log and holds what a holds.
                let b = ArticleStore(fileURL: dir.appendingPathComponent("b.realm"))
                let other = try await SyncClient(realm: b.configuration, postgres: postgres, node: "b")
                let applying = Task { try await other.run() }
                #expect(await waitForStatus(other, timeout: .seconds(120)) { $0 == .syncing(lag: 0) })
                applying.cancel()
                _ = await applying.result
                let headlines = { @Sendable (store: ArticleStore) in try store.articles().map(\.headline).sorted() }
                let (mine, theirs) = try await onNewThread { (try headlines(a), try headlines(b)) }
                #expect(mine.count == 10)
                #expect(mine.contains("edit \(commits - 1)"))
                #expect(theirs == mine)
            }
        }
    }
#endif
