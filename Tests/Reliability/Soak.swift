import ArgumentParser
import Dispatch
import Foundation
@_spi(Testing) import LMDBRealm
import Synchronization

/// The soak: for a while, actors writing through `asyncWrite`, a second process writing,
/// reader threads and queue observers all work on one file, each read and each delivered change
/// checked (conserved sum, links to live objects, backlinks agreeing with links); after a
/// warm-up, resident memory, file descriptors and reader slots must stay level. Then a process
/// holding a read is killed and its reader slot must be reclaimed, and a file's reader table is
/// exhausted, which must throw `tooManyReaders`.
struct SoakCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak", abstract: "Write, read and observe one file from many threads and two processes for a while; check it throughout.")

    @Option(help: "How long the writers, readers and observers run, in seconds.") var seconds = 60.0
    @Option(help: "Seed of the transfers and links (a failed soak prints it).") var seed = UInt64(UInt32.random(in: 0...UInt32.max))
    @Flag(help: "Print the figures of each sample.") var trace = false

    func run() throws {
        let result = try Soak(seconds: seconds, seed: seed, trace: trace).run()
        print(result.summary)
        if !result.failures.isEmpty { throw ExitCode.failure }
    }
}

/// What the soak's threads, actors and observers share.
final class SoakState: Sendable {
    let stopping = Atomic<Bool>(false)
    let actorCommits = Atomic<Int>(0)
    let reads = Atomic<Int>(0)
    let notifications = Atomic<Int>(0)
    /// How many problems were found, and the first of them.
    private let found = Mutex<(count: Int, first: [String])>((0, []))

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func report(_ problems: [String], from source: String) {
        guard !problems.isEmpty else { return }
        found.withLock { found in
            found.count += problems.count
            for problem in problems where found.first.count < 20 { found.first.append("\(source): \(problem)") }
        }
    }

    var problems: (count: Int, first: [String]) { found.withLock { $0 } }
}

/// One of the writers in this process: an actor whose realm writes with `asyncWrite`.
actor SoakWriterActor {
    let writer: Int
    let seed: UInt64
    private var realm: Realm?

    init(writer: Int, seed: UInt64, configuration: Realm.Configuration) async throws {
        self.writer = writer
        self.seed = seed
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// Commits until `state` says stop; returns how many commits returned.
    func run(_ state: SoakState) async -> Int {
        guard let realm else { return 0 }
        var n = 0
        while !state.isStopping {
            do {
                try await realm.asyncWrite { SoakWorkload.apply(writer: writer, commit: n, seed: seed, in: realm) }
            } catch {
                state.report(["commit \(n) failed: \(error)"], from: "actor \(writer)")
                break
            }
            n += 1
            state.actorCommits.add(1, ordering: .relaxed)
        }
        self.realm = nil
        return n
    }
}

struct Soak {
    struct Result {
        var seconds = 0.0
        var actorCommits = 0
        var childCommits = 0
        var reads = 0
        var notifications = 0
        var warmUp = SoakSample()
        var end = SoakSample()
        /// The reader slots in use before a child held one, while it did, after it was killed,
        /// and after another process opened the file; and how many stale slots that open cleared.
        var staleSlots: (before: Int, holding: Int, killed: Int, reclaimed: Int, cleared: Int) = (0, 0, 0, 0, 0)
        /// Readers opened and refused with `tooManyReaders` on a file with 4 reader slots.
        var readerLimit: (slots: Int, threads: Int, opened: Int, refused: Int) = (0, 0, 0, 0)
        /// The reader slots in use once the writers, readers and observers are gone.
        var slotsAfterClosing = 0
        var failures: [String] = []

        /// The growth of resident memory after the warm-up, in percent, without the pages of the
        /// realm file's map (those follow the file's size, reported apart).
        var rssDrift: Double {
            warmUp.rssWithoutRealmMap > 0
                ? Double(end.rssWithoutRealmMap - warmUp.rssWithoutRealmMap) / Double(warmUp.rssWithoutRealmMap) * 100 : 0
        }
        var totalRSSDrift: Double { warmUp.rss > 0 ? Double(end.rss - warmUp.rss) / Double(warmUp.rss) * 100 : 0 }

        var summary: String {
            var text = "soak: \(String(format: "%.0f", seconds)) s, \(actorCommits) commits by 8 actors, \(childCommits) by another process, "
            text += "\(reads) checked reads, \(notifications) checked notifications; "
            text +=
                "RSS without the file's map \(megabytes(warmUp.rssWithoutRealmMap)) MB at warm-up, \(megabytes(end.rssWithoutRealmMap)) MB at the end "
            text +=
                "(\(String(format: "%+.1f", rssDrift)) %; with it \(megabytes(warmUp.rss)) → \(megabytes(end.rss)) MB, \(String(format: "%+.1f", totalRSSDrift)) %; "
            text += "file \(megabytes(warmUp.fileSize)) → \(megabytes(end.fileSize)) MB); fds \(warmUp.fileDescriptors) → \(end.fileDescriptors); "
            text +=
                "reader slots \(warmUp.readerSlots)–\(warmUp.readerSlotsPeak) → \(end.readerSlots)–\(end.readerSlotsPeak), \(slotsAfterClosing) once closed; "
            text += "killed reader's slot: \(staleSlots.before) → \(staleSlots.holding) holding → \(staleSlots.killed) killed → "
            text += "\(staleSlots.reclaimed) after another process's open cleared \(staleSlots.cleared); "
            text +=
                "\(readerLimit.threads) readers on \(readerLimit.slots) slots: \(readerLimit.opened) opened, \(readerLimit.refused) tooManyReaders; "
            text += "\(failures.count) failed"
            text += "\n  memory at warm-up \(warmUp.memory), at the end \(end.memory)"
            for failure in failures.prefix(20) { text += "\n  FAILED \(failure)" }
            return text
        }

        private func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1e6) }
    }

    static let actors = 8
    static let readers = 8
    static let observerQueues = 4
    /// The writer number of the other process.
    static let childWriter = actors

    let seconds: Double
    let seed: UInt64
    let trace: Bool

    func run() throws -> Result {
        var result = Result()
        let start = Date()
        let directory = try TemporaryFolder("soak")
        defer { directory.remove() }
        let path = directory.path("soak.realm")
        let configuration = SoakWorkload.configuration(path)
        let realm = try Realm(configuration: configuration)
        try SoakWorkload.prepare(realm, writers: Self.actors + 1)
        let state = SoakState()

        // The other process, writing from the start.
        let child = try Child.start(["soak-child", "write", path, "--writer", "\(Self.childWriter)", "--seed", "\(seed)"])
        child.waitForAck(atLeast: 0, timeout: 60)
        if child.acknowledged < 0 {
            result.failures.append("the writing process did not commit: \(child.errorOutput)")
        }

        let writers = DispatchGroup()
        let actorCommits = Shared<[Int: Int]>([:])
        for writer in 0..<Self.actors {
            writers.enter()
            Task.detached { [seed] in
                defer { writers.leave() }
                do {
                    let actor = try await SoakWriterActor(writer: writer, seed: seed, configuration: configuration)
                    let commits = await actor.run(state)
                    actorCommits.withLock { $0[writer] = commits }
                } catch {
                    state.report(["cannot open: \(error)"], from: "actor \(writer)")
                }
            }
        }

        let readers = DispatchGroup()
        for reader in 0..<Self.readers {
            readers.enter()
            Thread {
                defer { readers.leave() }
                Self.read(configuration, state, name: "reader \(reader)")
            }.start()
        }

        var tokens: [NotificationToken] = []
        var queues: [DispatchQueue] = []
        for index in 0..<Self.observerQueues {
            let queue = DispatchQueue(label: "soak observer \(index)")
            queues.append(queue)
            let check: @Sendable (Realm?, String) -> Void = { realm, what in
                state.notifications.add(1, ordering: .relaxed)
                guard let realm else { return state.report(["a delivered change has no realm"], from: "observer \(index)") }
                state.report(SoakWorkload.problems(in: realm).map { "\(what): \($0)" }, from: "observer \(index)")
            }
            if index % 2 == 0 {
                tokens.append(
                    realm.objects(SoakGroup.self).observe(on: queue) { change in
                        switch change {
                        case .initial(let groups): check(groups.realm, "initial")
                        case .update(let groups, _, _, _): check(groups.realm, "update")
                        case .error(let error): state.report(["\(error)"], from: "observer \(index)")
                        }
                    })
            } else {
                tokens.append(
                    realm.objects(Account.self).where { $0.balance > Workload.initialBalance }.observe(on: queue) { change in
                        switch change {
                        case .initial(let accounts): check(accounts.realm, "initial")
                        case .update(let accounts, _, _, _): check(accounts.realm, "update")
                        case .error(let error): state.report(["\(error)"], from: "observer \(index)")
                        }
                    })
            }
        }

        // Samples the process while the others work; the sleep only paces the samples. The
        // figures at the warm-up and at the end are those of the 2 s after the warm-up and of
        // the last 2 s.
        let warmUpAt = start.addingTimeInterval(seconds * 0.2)
        let endAt = start.addingTimeInterval(seconds)
        let canonicalPath = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var samples: [SoakSample] = []
        while Date() < endAt {
            Thread.sleep(forTimeInterval: min(0.25, max(0, endAt.timeIntervalSinceNow)))
            // This thread's realm moves on too, or the version it pins would keep the file growing.
            realm.refresh()
            guard Date() >= warmUpAt || trace else { continue }
            let sample = try SoakSample.take(realm, path: canonicalPath)
            if Date() >= warmUpAt { samples.append(sample) }
            if trace {
                print(
                    String(format: "%6.2f s", -start.timeIntervalSinceNow), "actors \(state.actorCommits.load(ordering: .relaxed))",
                    "all \(SoakWorkload.commits(in: realm))", "reads \(state.reads.load(ordering: .relaxed))",
                    "notifications \(state.notifications.load(ordering: .relaxed))", sample.memory, "fds \(sample.fileDescriptors)",
                    "slots \(sample.readerSlots)")
            }
        }
        let window = max(1, min(8, samples.count / 2))
        result.warmUp = SoakSample.window(samples.prefix(window))
        result.end = SoakSample.window(samples.suffix(window))
        if !child.process.isRunning { result.failures.append("the writing process ended early: \(child.errorOutput)") }

        // Stop and collect.
        state.stopping.store(true, ordering: .releasing)
        if writers.wait(timeout: .now() + 60) == .timedOut { result.failures.append("the actors did not stop within 60 s") }
        if readers.wait(timeout: .now() + 60) == .timedOut { result.failures.append("the readers did not stop within 60 s") }
        child.closeInput()
        let status = child.waitForExit(timeout: 60)
        if status.code != 0 { result.failures.append("the writing process ended \(status): \(child.errorOutput)") }
        let committed = child.standardOutput.split(separator: "\n").first { $0.hasPrefix("committed ") }
        result.childCommits = committed.flatMap { Int($0.dropFirst("committed ".count)) } ?? -1
        for token in tokens { token.invalidate() }
        for queue in queues { queue.sync {} }

        result.seconds = Date().timeIntervalSince(start)
        result.actorCommits = state.actorCommits.load(ordering: .relaxed)
        result.reads = state.reads.load(ordering: .relaxed)
        result.notifications = state.notifications.load(ordering: .relaxed)

        // Every commit that returned is in the file, and the file is whole.
        realm.refresh()
        state.report(SoakWorkload.problems(in: realm), from: "the final check")
        let counts = actorCommits.withLock { $0 }
        for writer in 0...Self.childWriter {
            let stored = realm.object(ofType: SoakWriter.self, forPrimaryKey: writer)?.commits ?? -1
            let returned = writer == Self.childWriter ? result.childCommits : counts[writer] ?? -1
            if stored != returned { result.failures.append("writer \(writer): \(returned) commits returned, \(stored) in the file") }
        }
        let report = try realm.verify()
        result.failures += report.findings.prefix(5).map { "verify: \($0)" }

        let problems = state.problems
        result.failures += problems.first
        if problems.count > problems.first.count { result.failures.append("… \(problems.count - problems.first.count) more problems") }
        if result.rssDrift >= 10 {
            result.failures.append(
                "resident memory (without the realm file's map) grew \(String(format: "%.1f", result.rssDrift)) % after the warm-up: \(result.warmUp.memory) → \(result.end.memory)"
            )
        }
        if result.end.fileDescriptors > result.warmUp.fileDescriptors {
            result.failures.append("open file descriptors grew from \(result.warmUp.fileDescriptors) to \(result.end.fileDescriptors)")
        }
        // How many reader slots are in use at an instant depends on the reads under way then, so
        // the fewest in use at the end must stay within what was in use after the warm-up; and
        // once everything but this thread's realm is closed, only its slot may be left.
        if result.end.readerSlots > result.warmUp.readerSlotsPeak {
            result.failures.append(
                "reader slots in use grew: at least \(result.end.readerSlots) at the end, at most \(result.warmUp.readerSlotsPeak) after the warm-up")
        }
        result.slotsAfterClosing = realm.readerSlotsInUse
        if result.slotsAfterClosing != 1 {
            result.failures.append("\(result.slotsAfterClosing) reader slots in use once the others closed, not only this thread's one")
        }

        result.failures += try reclaimKilledReader(path, realm, &result)
        result.failures += try exhaustReaderTable(directory.path("limited.realm"), &result)
        result.seconds = Date().timeIntervalSince(start)
        return result
    }

    /// A reader thread: refreshes and checks its realm until the soak stops.
    static func read(_ configuration: Realm.Configuration, _ state: SoakState, name: String) {
        let realm: Realm
        do {
            realm = try Realm(configuration: configuration)
        } catch {
            return state.report(["cannot open: \(error)"], from: name)
        }
        var seen = 0
        while !state.isStopping {
            realm.refresh()
            var problems = SoakWorkload.problems(in: realm)
            let commits = SoakWorkload.commits(in: realm)
            if commits < seen { problems.append("a refresh went back from \(seen) commits to \(commits)") }
            seen = commits
            state.report(problems, from: name)
            state.reads.add(1, ordering: .relaxed)
        }
    }

    // MARK: - A killed reader's slot

    /// Kills a process while it holds a read of the file, then opens the file in another
    /// process: that open clears the dead process's slot.
    func reclaimKilledReader(_ path: String, _ realm: Realm, _ result: inout Result) throws -> [String] {
        var failures: [String] = []
        realm.refresh()
        let before = realm.readerSlotsInUse
        let holder = try Child.start(["soak-child", "hold", path])
        guard holder.waitForLine(startingWith: "holding", timeout: 60) != nil else {
            return ["the holding process did not start: \(holder.errorOutput)"]
        }
        let holding = realm.readerSlotsInUse
        kill(holder.process.processIdentifier, SIGKILL)
        let status = holder.waitForExit(timeout: 60)
        if status.signal != SIGKILL { failures.append("the holding process ended \(status), not by SIGKILL") }
        let killed = realm.readerSlotsInUse
        let opener = try Child.start(["soak-child", "reopen", path])
        let line = opener.waitForLine(startingWith: "cleared ", timeout: 60)
        let opened = opener.waitForExit(timeout: 60)
        let cleared = line.flatMap { Int($0.dropFirst("cleared ".count).prefix { $0.isNumber }) } ?? -1
        let reclaimed = realm.readerSlotsInUse
        result.staleSlots = (before, holding, killed, reclaimed, cleared)
        if opened.code != 0 { failures.append("the reopening process ended \(opened): \(opener.errorOutput)") }
        if holding != before + 1 { failures.append("the holding process took \(holding - before) reader slots, not 1") }
        if killed != holding { failures.append("the killed process's slot was gone before another open: \(killed) slots, \(holding) while it held") }
        if cleared < 1 { failures.append("the reopening process cleared \(cleared) stale reader slots, not the killed one") }
        if reclaimed != before { failures.append("\(reclaimed) reader slots in use after the reopen, \(before) before the holder") }
        return failures
    }

    // MARK: - A full reader table

    /// Opens a realm on more threads than the file has reader slots, each keeping it until all
    /// tried: the opens past the table's size throw `tooManyReaders`, and once the readers are
    /// gone a new one opens.
    func exhaustReaderTable(_ path: String, _ result: inout Result) throws -> [String] {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Account.self])
        configuration.maximumNumberOfReaders = 4
        let threads = 10
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(Account()) }
        }
        let config = configuration
        let outcomes = Shared<[String]>([])
        let attempted = DispatchGroup()
        let finished = DispatchGroup()
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<threads {
            attempted.enter()
            finished.enter()
            Thread {
                defer { finished.leave() }
                do {
                    let realm = try Realm(configuration: config)
                    outcomes.withLock { $0.append("opened \(realm.objects(Account.self).count)") }
                    attempted.leave()
                    _ = release.wait(timeout: .now() + 120)
                } catch let error as Realm.Error where error.code == .tooManyReaders {
                    outcomes.withLock { $0.append("tooManyReaders") }
                    attempted.leave()
                } catch {
                    outcomes.withLock { $0.append("\(error)") }
                    attempted.leave()
                }
            }.start()
        }
        var failures: [String] = []
        if attempted.wait(timeout: .now() + 60) == .timedOut { failures.append("the readers did not all try to open within 60 s") }
        let all = outcomes.withLock { $0 }
        for _ in 0..<threads { release.signal() }
        if finished.wait(timeout: .now() + 60) == .timedOut { failures.append("the readers did not end within 60 s") }
        let opened = all.filter { $0 == "opened 1" }.count
        let refused = all.filter { $0 == "tooManyReaders" }.count
        result.readerLimit = (configuration.maximumNumberOfReaders, threads, opened, refused)
        if opened + refused != threads { failures.append("unexpected outcomes of opening past the reader limit: \(all)") }
        if opened > configuration.maximumNumberOfReaders || refused == 0 {
            failures.append("\(opened) readers opened on a file with \(configuration.maximumNumberOfReaders) slots, \(refused) refused")
        }
        // With the slots free again, a reader opens.
        let after = Shared("")
        let done = DispatchSemaphore(value: 0)
        Thread {
            do {
                let realm = try Realm(configuration: config)
                after.withLock { $0 = "opened \(realm.objects(Account.self).count)" }
            } catch {
                after.withLock { $0 = "\(error)" }
            }
            done.signal()
        }.start()
        if done.wait(timeout: .now() + 60) == .timedOut { failures.append("an open after the readers ended did not return within 60 s") }
        let reopened = after.withLock { $0 }
        if reopened != "opened 1" { failures.append("an open after the readers ended: \(reopened)") }
        return failures
    }
}

/// The soak's other process. `write`: commits writer `--writer`'s changes until its standard
/// input closes (or it is killed), printing "ack 0" after its first commit and "committed N"
/// at the end. `hold`: opens the file, reads it, prints "holding" and waits to be killed.
/// `reopen`: opens the file (which clears stale reader slots) and prints "cleared N".
struct SoakChildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "soak-child", shouldDisplay: false)
    @Argument var mode: String
    @Argument var path: String
    @Option var writer = Soak.childWriter
    @Option var seed: UInt64 = 0

    func run() throws {
        switch mode {
        case "write":
            let realm = try Realm(configuration: SoakWorkload.configuration(path))
            let stop = Flag()
            Thread {
                _ = FileHandle.standardInput.readDataToEndOfFile()
                stop.value.store(true, ordering: .releasing)
            }.start()
            var n = 0
            while !stop.value.load(ordering: .acquiring) {
                try realm.write { SoakWorkload.apply(writer: writer, commit: n, seed: seed, in: realm) }
                if n == 0 { Child.acknowledge(0) }
                n += 1
            }
            FileHandle.standardOutput.write(Data("committed \(n)\n".utf8))
        case "hold":
            let realm = try Realm(configuration: SoakWorkload.configuration(path))
            FileHandle.standardOutput.write(Data("holding \(realm.objects(SoakNode.self).count) nodes\n".utf8))
            _ = FileHandle.standardInput.readDataToEndOfFile()
        case "reopen":
            let messages = Shared<[String]>([])
            var configuration = SoakWorkload.configuration(path)
            configuration.logger = Realm.Logger(level: .warn) { _, message in messages.withLock { $0.append(message) } }
            let realm = try Realm(configuration: configuration)
            let message = messages.withLock { $0 }.first { $0.hasPrefix("Cleared ") }
            let cleared = message.flatMap { Int($0.dropFirst("Cleared ".count).prefix { $0.isNumber }) } ?? 0
            FileHandle.standardOutput.write(Data("cleared \(cleared) of \(realm.readerSlotsInUse) slots\n".utf8))
        default:
            throw ValidationError("unknown mode \(mode)")
        }
    }

    final class Flag: Sendable {
        let value = Atomic<Bool>(false)
    }
}

/// A value that threads share under a lock.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R>(_ body: (inout sending Value) -> sending R) -> sending R { mutex.withLock(body) }
}
