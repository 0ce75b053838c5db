import ArgumentParser
import Foundation
@_spi(Testing) import LMDBKit
import LMDBRealm

/// Fault injection at every LMDB call: each step of a workload (open, three graph commits, a
/// query, writeCopy, compaction at open, a migration, verify) is run again and again from the file as it was
/// before the step, with its k-th LMDB call failing, for every k and every error that call
/// can really return. Each time the step must throw a `Realm.Error` that names the file, leave
/// the file byte for byte as it was, leak no file descriptor, and succeed when run again; or
/// absorb the failure (a full map grows and retries) and be complete; reads whose API cannot
/// throw (RealmSwift's `Results`) stop the process with a message naming the file.
struct FaultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faults", abstract: "Fail every LMDB call of a workload in turn and check what each failure leaves.")

    @Option(help: "Inject at every n-th call only (1: every call).") var stride = 1

    func run() throws {
        let result = try FaultSweep.run(stride: stride)
        print(result.summary)
        if !result.failures.isEmpty { throw ExitCode.failure }
    }
}

enum FaultSweep {
    /// The errors each wrapped LMDB function can really return (lmdb.h), beyond the misuse
    /// codes (`EINVAL`, `MDB_BAD_TXN`, …), which LMDBKit treats as bugs and stops on.
    static let errors: [String: [LMDBError]] = [
        "mdb_env_open": [.permissionDenied, .ioError, .invalid, .versionMismatch],
        "mdb_txn_begin": [.readersFull, .panic, LMDBError(code: ENOMEM)],
        "mdb_txn_renew": [.panic],
        "mdb_txn_commit": [.noSpace, .ioError, .mapFull],
        "mdb_dbi_open": [.databasesFull, .mapFull],
        "mdb_get": [.corrupted, .pageNotFound],
        "mdb_cursor_get": [.corrupted, .pageNotFound],
        "mdb_cursor_open": [LMDBError(code: ENOMEM)],
        "mdb_put": [.mapFull, .transactionFull],
        "mdb_cursor_put": [.mapFull, .transactionFull],
        "mdb_del": [.mapFull, .transactionFull],
        "mdb_cursor_del": [.mapFull, .transactionFull],
        "mdb_drop": [.mapFull, .transactionFull],
        "mdb_env_set_mapsize": [LMDBError(code: ENOMEM)],
        "mdb_env_sync": [.ioError],
    ]

    struct Step: Sendable {
        let name: String
        /// The file the step works on, in the run's directory.
        let file: String
        /// Whether the step opens the file itself (no handle is opened for it beforehand).
        let opens: Bool
        let run: @Sendable (_ realm: Realm?, _ directory: TemporaryFolder) throws -> Void
    }

    static let steps: [Step] = {
        var steps = [
            Step(name: "open", file: "data.realm", opens: true) { _, directory in
                _ = try Realm(configuration: Workload.configuration(directory.path("data.realm")))
            }
        ]
        for n in 0..<3 {
            steps.append(
                Step(name: "commit \(n)", file: "data.realm", opens: false) { realm, _ in
                    try realm!.write { Workload.apply(n, in: realm!) }
                })
        }
        steps += [
            Step(name: "query", file: "data.realm", opens: false) { realm, _ in
                let entries = realm!.objects(Entry.self).where { $0.category == "c1" || $0.text.contains("xx") }.sorted(byKeyPath: "id")
                _ = entries.map(\.text.count).reduce(0, +)
                _ = realm!.objects(Member.self).where { $0.team.name == "team 1" }.count
            },
            Step(name: "writeCopy", file: "data.realm", opens: false) { realm, directory in
                let copy = URL(fileURLWithPath: directory.path("copy.realm"))
                do {
                    try realm!.writeCopy(toFile: copy)
                } catch {
                    // A failed copy leaves no file behind (checked by the sweep).
                    throw error
                }
            },
            Step(name: "compact", file: "logbook.realm", opens: true) { _, directory in
                var configuration = Logbook.configurationV0(directory.path("logbook.realm"))
                configuration.shouldCompactOnLaunch = { _, _ in true }
                _ = try Realm(configuration: configuration)
            },
            Step(name: "migrate", file: "logbook.realm", opens: true) { _, directory in
                _ = try Realm(configuration: Logbook.configurationV3(directory.path("logbook.realm")))
            },
            Step(name: "verify", file: "data.realm", opens: false) { realm, _ in
                let report = try realm!.verify()
                if !report.isSound { throw VerifyFinding(report: report) }
            },
        ]
        return steps
    }()

    /// What `verify` found: a read that failed is a finding of its report, not a thrown error.
    struct VerifyFinding: Error {
        let report: VerificationReport
    }

    struct Result {
        var calls = 0
        var injections = 0
        var outcomes: [String: Int] = [:]
        var failures: [String] = []
        var seconds = 0.0
        var summary: String {
            var text =
                "fault injection: \(injections) faults at \(calls) LMDB calls, \(failures.count) failed, \(String(format: "%.0f", seconds)) s\n  "
            text += outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            for failure in failures.prefix(10) { text += "\n  FAILED \(failure)" }
            return text
        }
    }

    /// Builds the snapshots (the files before each step), records each step's calls, then runs
    /// the injections in child processes, restarting after one stops on a read failure.
    static func run(stride: Int) throws -> Result {
        let start = Date()
        let folder = try TemporaryFolder("faults")
        defer { folder.remove() }
        let snapshots = folder.path("snapshots")
        let recorder = try Child.start(["child-faults", snapshots, "--prepare"])
        let status = recorder.waitForExit()
        guard status.code == 0 else { throw ValidationError("preparing the fault sweep failed (\(status)): \(recorder.errorOutput)") }
        // One line per step: the functions of its calls.
        let calls = recorder.standardOutput.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        var plan: [(step: Int, call: Int, code: Int)] = []
        for (step, functions) in calls.enumerated() {
            for (index, function) in functions.enumerated() where (index + step) % stride == 0 {
                for code in 0..<(errors[function]?.count ?? 0) { plan.append((step, index + 1, code)) }
            }
        }
        var result = Result()
        result.calls = calls.map(\.count).reduce(0, +)
        var next = 0
        while next < plan.count {
            let (step, call, code) = plan[next]
            let child = try Child.start(["child-faults", snapshots, "--from", "\(step)", "\(call)", "\(code)", "--stride", "\(stride)"])
            let status = child.waitForExit()
            var finished = 0
            for line in child.standardOutput.split(separator: "\n") where line.hasPrefix("RUN ") {
                let fields = line.split(separator: "\t").map(String.init)
                finished += 1
                result.injections += 1
                result.outcomes[fields[2], default: 0] += 1
                if fields[2] == "failed" { result.failures.append("\(fields[1]): \(fields[3])") }
            }
            next += finished
            if status.code == 0 { break }
            // The child stopped in the run after the last it finished: a read failure where
            // the API cannot throw. The stop must name the file.
            guard next < plan.count else { break }
            let (s, c, e) = plan[next]
            let function = calls[s][c - 1]
            let what = "\(steps[s].name), call \(c) (\(function)) failing with \(errors[function]![e].code)"
            result.injections += 1
            if (status.signal == SIGILL || status.signal == SIGTRAP) && child.errorOutput.contains(steps[s].file) {
                result.outcomes["stopped, naming the file", default: 0] += 1
            } else {
                result.outcomes["failed", default: 0] += 1
                result.failures.append("\(what): the process ended \(status): \(child.errorOutput.suffix(300))")
            }
            next += 1
        }
        // Every planned injection is made once: a child that finished fewer (or more) than it
        // was given would leave calls of the workload untested while the sweep passed.
        if result.injections != plan.count {
            result.failures.append("\(result.injections) injections were made where the plan has \(plan.count)")
        }
        result.seconds = Date().timeIntervalSince(start)
        return result
    }
}

/// The child of the fault sweep: `--prepare` writes the file before each step into the
/// snapshot directory and prints each step's LMDB calls; `--from STEP CALL CODE` runs the
/// sweep's injections from that one on, printing one line per injection.
struct ChildFaultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "child-faults", shouldDisplay: false)
    @Argument var snapshots: String
    @Flag var prepare = false
    @Option(parsing: .upToNextOption) var from: [Int] = []
    @Option var stride = 1

    func run() throws {
        if prepare { return try prepareSnapshots() }
        let calls = try recordCalls()
        var first = true
        for (step, functions) in calls.enumerated() where step >= from[0] {
            for (index, function) in functions.enumerated() where (index + step) % stride == 0 {
                if first && step == from[0] && index + 1 < from[1] { continue }
                for (codeIndex, error) in (FaultSweep.errors[function] ?? []).enumerated() {
                    if first && step == from[0] && index + 1 == from[1] && codeIndex < from[2] { continue }
                    first = false
                    let label = "\(FaultSweep.steps[step].name), call \(index + 1) (\(function)) failing with \(error.code)"
                    FileHandle.standardError.write(Data("injecting: \(label)\n".utf8))
                    let outcome: (String, String)
                    do {
                        outcome = try inject(error, atCall: index + 1, of: step)
                    } catch {
                        outcome = ("failed", "\(error)")
                    }
                    FileHandle.standardOutput.write(Data("RUN \t\(label)\t\(outcome.0)\t\(outcome.1)\n".utf8))
                }
            }
        }
    }

    private func stepDirectory(_ step: Int) -> URL { URL(fileURLWithPath: snapshots).appendingPathComponent("before-\(step)") }

    /// Runs every step in turn, keeping a copy of the files before each.
    private func prepareSnapshots() throws {
        let work = try TemporaryFolder("faults-prepare")
        defer { work.remove() }
        try FileManager.default.createDirectory(atPath: snapshots, withIntermediateDirectories: true)
        try Logbook.write(work.path("logbook.realm"), count: 20)
        var realm: Realm?
        for (index, step) in FaultSweep.steps.enumerated() {
            try FileManager.default.copyItem(at: work.url, to: stepDirectory(index))
            if !step.opens && realm == nil { realm = try Realm(configuration: Workload.configuration(work.path("data.realm"))) }
            try step.run(step.opens ? nil : realm, work)
            if step.name == "writeCopy" { try FileManager.default.removeItem(atPath: work.path("copy.realm")) }
        }
        for functions in try recordCalls() { print(functions.joined(separator: " ")) }
    }

    /// Each step's LMDB calls, run from its snapshot as an injection run does.
    private func recordCalls() throws -> [[String]] {
        try FaultSweep.steps.indices.map { index in
            let work = try copySnapshot(index)
            defer { work.remove() }
            let step = FaultSweep.steps[index]
            let realm = step.opens ? nil : try Realm(configuration: Workload.configuration(work.path("data.realm")))
            FaultInjection.startRecording()
            try step.run(realm, work)
            return FaultInjection.stopRecording()
        }
    }

    private func copySnapshot(_ step: Int) throws -> TemporaryFolder {
        let work = try TemporaryFolder("faults-run")
        try FileManager.default.removeItem(at: work.url)
        try FileManager.default.copyItem(at: stepDirectory(step), to: work.url)
        return work
    }

    /// One injection: the outcome's name and what went wrong, if anything.
    private func inject(_ error: LMDBError, atCall call: Int, of stepIndex: Int) throws -> (String, String) {
        let step = FaultSweep.steps[stepIndex]
        let work = try copySnapshot(stepIndex)
        defer { work.remove() }
        let file = work.path(step.file)
        let descriptors = openDescriptors()
        var outcome = ("absorbed", "")
        weak var leaked: Realm?
        do {
            let realm = step.opens ? nil : try Realm(configuration: Workload.configuration(work.path("data.realm")))
            leaked = realm
            let before = FileManager.default.contents(atPath: file)
            FaultInjection.at(call: call, .fail(error))
            do {
                try step.run(realm, work)
                FaultInjection.reset()
            } catch let thrown {
                FaultInjection.reset()
                if let finding = thrown as? FaultSweep.VerifyFinding {
                    guard finding.report.findings.allSatisfy({ $0.kind == .damagedDatabase }) else {
                        return ("failed", "verify reported more than the failed read: \(finding.report.findings.map(\.message))")
                    }
                    outcome = ("reported by verify", "")
                } else {
                    guard let realmError = thrown as? Realm.Error else { return ("failed", "threw \(type(of: thrown)), not Realm.Error: \(thrown)") }
                    guard
                        realmError.description.contains(file)
                            || (step.name == "writeCopy" && realmError.description.contains(work.path("copy.realm")))
                    else {
                        return ("failed", "the error does not name the file: \(realmError)")
                    }
                    // A file the step was creating may be left (empty or new); one that existed is
                    // byte for byte as it was — or, for an open whose compaction or migration
                    // committed before a later read failed, wholly changed (checked below).
                    if before != nil && FileManager.default.contents(atPath: file) != before && !step.opens {
                        return ("failed", "the file changed: \(realmError)")
                    }
                    if step.name == "writeCopy" && FileManager.default.fileExists(atPath: work.path("copy.realm")) {
                        return ("failed", "a failed writeCopy left its file")
                    }
                    outcome = ("thrown, naming the file", "")
                }
                // The next operation succeeds: the step again, on the same handle.
                do {
                    try step.run(realm, work)
                } catch {
                    return ("failed", "the step failed again without a fault: \(error) (first: \(thrown))")
                }
            }
            if stepIndex >= 1 && step.file == "data.realm" {
                let check = try realm ?? Realm(configuration: Workload.configuration(file))
                let committed = min(stepIndex - 1, 2)
                let problems = try Workload.problems(in: check, acknowledged: committed)
                if !problems.isEmpty { return ("failed", problems.joined(separator: "; ")) }
            } else if step.file == "logbook.realm" {
                let problems = try Logbook.problems(file, count: 20)
                if !problems.isEmpty { return ("failed", problems.joined(separator: "; ")) }
            }
        }
        if leaked != nil { return ("failed", "the realm was not released: a reference to it outlived every handle") }
        let after = openDescriptors()
        if after > descriptors {
            let names =
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap {
                    try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
                } ?? []
            return ("failed", "\(after - descriptors) file descriptor(s) left open: \(names.filter { $0.contains(work.url.lastPathComponent) })")
        }
        return outcome
    }

    private func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }
}
