import ArgumentParser
import Foundation
@_spi(Testing) import LMDBKit
import LMDBRealm

/// Crash trials: a child process commits the workload, acknowledging each commit on a pipe after
/// it returns; it is killed with SIGKILL at a random instant, or at a chosen LMDB call inside a
/// write or a migration (`FaultInjection.at(call:of:_:)` with `.kill`). The file is then reopened
/// and checked: every acknowledged commit there, nothing half-applied, `verify` clean.
struct CrashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash", abstract: "Kill a writing process at random instants and check the file it leaves.")

    @Option(help: "Number of trials.") var trials = 200
    @Option(help: "Seed of the random choices (a failed trial prints it).") var seed = UInt64(UInt32.random(in: 0...UInt32.max))

    func run() throws {
        var trialRunner = CrashTrials(seed: seed)
        let result = try trialRunner.run(trials: trials)
        print(result.summary)
        if !result.failures.isEmpty { throw ExitCode.failure }
    }
}

struct CrashTrials {
    struct Result {
        var trials = 0
        var acknowledgedCommits = 0
        var lostCommits = 0
        var byKind: [String: Int] = [:]
        var outcomes: [String: Int] = [:]
        var migrationCalls = 0
        var failures: [String] = []
        var seconds = 0.0

        var summary: String {
            let kinds = byKind.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            var text = "crash trials: \(trials) (\(kinds)), \(acknowledgedCommits) commits acknowledged, \(lostCommits) lost, "
            text += "\(failures.count) failed, \(String(format: "%.0f", seconds)) s"
            text +=
                "\n  a migration makes \(migrationCalls) LMDB calls; "
                + outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            for failure in failures.prefix(10) { text += "\n  FAILED \(failure)" }
            return text
        }
    }

    var random: SplitMix
    let seed: UInt64
    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix(seed: seed)
    }

    /// The functions a kill at a chosen call aims at: any call, the commit, and the writes of
    /// records, index entries, links and list places.
    static let killedFunctions: [String?] = [nil, "mdb_txn_commit", "mdb_put", "mdb_cursor_put", "mdb_del", "mdb_cursor_del"]

    mutating func run(trials: Int) throws -> Result {
        var result = Result()
        let start = Date()
        let directory = try TemporaryFolder("crash")
        defer { directory.remove() }
        // How many LMDB calls the migration makes, so that kills land all along it.
        let sample = directory.path("logbook-sample.realm")
        try Logbook.write(sample, count: 300)
        let counter = try Child.start(["child-migrate", sample, "--kill-at-call", "0"])
        _ = counter.waitForExit()
        let migrationCalls = Int(counter.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 1_000
        result.migrationCalls = migrationCalls
        var path = ""
        var acknowledged = -1
        for trial in 0..<trials {
            // A fresh file every 25 trials keeps each check short.
            if trial % 25 == 0 {
                path = directory.path("trial-\(trial).realm")
                acknowledged = -1
            }
            let label = "trial \(trial) (seed \(seed))"
            if trial % 5 == 4 {
                result.byKind["during a migration", default: 0] += 1
                let logbook = directory.path("logbook-\(trial).realm")
                try Logbook.write(logbook, count: 300)
                // Half the kills land anywhere, half around the migration's commit, near its end.
                let call =
                    trial % 10 == 4
                    ? Int(random.next(below: UInt64(migrationCalls))) + 1 : max(1, migrationCalls - Int(random.next(below: 8)))
                let child = try Child.start(["child-migrate", logbook, "--kill-at-call", "\(call)"])
                let status = child.waitForExit()
                let problems = try Logbook.problems(logbook, count: 300)
                let migrated = try schemaVersionAtURL(URL(fileURLWithPath: logbook)) == 3
                result.outcomes[
                    status.signal == SIGKILL
                        ? (migrated ? "migration killed after its commit" : "migration killed before its commit")
                        : "migration not reached by its kill", default: 0] += 1
                if !problems.isEmpty || (status.signal != SIGKILL && status.code != 0) {
                    result.failures.append(
                        "\(label): migration killed at call \(call), ended \(status): \(problems.joined(separator: "; ")) \(child.errorOutput)")
                }
            } else {
                var arguments = ["child-workload", path]
                let atCall = trial % 5 == 2 || trial % 5 == 3
                if atCall {
                    let function = Self.killedFunctions[Int(random.next(below: UInt64(Self.killedFunctions.count)))]
                    arguments += [
                        "--after-commits", "\(random.next(below: 4))", "--kill-at-call", "\(random.next(below: function == nil ? 300 : 40) + 1)",
                    ]
                    if let function { arguments += ["--of", function] }
                    result.byKind["at an LMDB call", default: 0] += 1
                } else {
                    result.byKind["at a random instant", default: 0] += 1
                }
                let child = try Child.start(arguments)
                // A child aiming at a call commits on until it reaches it (or 12 commits pass).
                let wanted = acknowledged + 1 + (atCall ? 12 : Int(random.next(below: 8)))
                child.waitForAck(atLeast: wanted, timeout: 60)
                if !atCall {
                    // The instant of the kill: up to 3 ms after the wanted commit returned.
                    usleep(UInt32(random.next(below: 3_000)))
                }
                // A child killed at its chosen call is gone already; one that commits on past
                // `wanted` (its call was never reached) is killed here.
                kill(child.process.processIdentifier, SIGKILL)
                if atCall {
                    result.outcomes[child.endedBeforeWanted ? "killed at the chosen call" : "chosen call not reached, killed", default: 0] += 1
                }
                let status = child.waitForExit()
                let acks = child.acknowledged
                if status.signal != SIGKILL {
                    result.failures.append("\(label): the workload ended \(status) instead of being killed: \(child.errorOutput)")
                }
                result.acknowledgedCommits += max(0, acks - acknowledged)
                acknowledged = max(acknowledged, acks)
                let realm = try Realm(configuration: Workload.configuration(path))
                let newest = Workload.nextCommit(in: realm) - 1
                if newest < acknowledged { result.lostCommits += acknowledged - newest }
                let problems = try Workload.problems(in: realm, acknowledged: acknowledged)
                if !problems.isEmpty { result.failures.append("\(label): \(problems.joined(separator: "; "))") }
                // Commits that returned after the last ack was read are there too.
                acknowledged = max(acknowledged, newest)
            }
            result.trials += 1
        }
        result.seconds = Date().timeIntervalSince(start)
        return result
    }
}

/// The child of a crash trial: commits the workload until killed, printing "ack N" after commit
/// N returns; with `--kill-at-call`, kills itself at that LMDB call once `--after-commits`
/// commits returned; with `--commits`, ends after that many. Under the power-cut recorder
/// (`PowerCut.swift`) it marks each commit in the recorder's log when it returned.
struct ChildWorkloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "child-workload", shouldDisplay: false)
    @Argument var path: String
    @Option var afterCommits = 0
    @Option var killAtCall: Int?
    @Option var of: String?
    @Option var commits: Int?

    func run() throws {
        typealias Mark = @convention(c) (UInt64) -> Void
        let mark = dlsym(dlopen(nil, RTLD_NOW), "lmdbrealm_powercut_mark").map { unsafeBitCast($0, to: Mark.self) }
        let realm = try Realm(configuration: Workload.configuration(path))
        var n = Workload.nextCommit(in: realm)
        var done = 0
        while done != commits {
            if done == afterCommits, let killAtCall { FaultInjection.at(call: killAtCall, of: of, .kill) }
            try realm.write { Workload.apply(n, in: realm) }
            mark?(UInt64(n))
            Child.acknowledge(n)
            n += 1
            done += 1
        }
    }
}

/// The child of a migration trial: migrates the logbook to version 3, killing itself at the
/// given LMDB call if the migration reaches it.
struct ChildMigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "child-migrate", shouldDisplay: false)
    @Argument var path: String
    @Option var killAtCall: Int

    func run() throws {
        if killAtCall == 0 {
            // Counts the migration's calls instead.
            FaultInjection.startRecording()
            _ = try Realm(configuration: Logbook.configurationV3(path))
            let calls = FaultInjection.stopRecording()
            if ProcessInfo.processInfo.environment["RELIABILITY_SHOW_CALLS"] != nil {
                for (i, call) in calls.enumerated() where call != "mdb_cursor_get" && call != "mdb_get" { print(i + 1, call) }
            }
            print(calls.count)
            return
        }
        FaultInjection.at(call: killAtCall, .kill)
        _ = try Realm(configuration: Logbook.configurationV3(path))
        FaultInjection.reset()
    }
}

/// Writes a logbook of `count` entries at schema version 0.
struct WriteLogbookCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "write-logbook", shouldDisplay: false)
    @Argument var path: String
    @Argument var count: Int
    func run() throws { try Logbook.write(path, count: count) }
}
