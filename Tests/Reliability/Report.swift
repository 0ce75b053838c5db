import ArgumentParser
import Foundation

/// Every part of the battery at the given sizes, then one table of the figures; fails if any
/// part failed.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract:
            "Run the crash trials, the power cuts, the fault sweep, the corruption injection, the soak and the full disk, and print one table of their figures."
    )

    @Option(help: "Crash trials.") var trials = 200
    @Option(help: "Power-cut trials.") var powerCuts = 200
    @Option(help: "Fault injection at every n-th LMDB call.") var stride = 5
    @Option(help: "Corruption trials.") var corruptions = 500
    @Option(help: "Soak duration in seconds.") var soak = 30.0
    @Option(help: "Seed of the random choices.") var seed = UInt64(UInt32.random(in: 0...UInt32.max))
    @Option(
        help:
            "A folder with the logs of `make fuzz` (fuzz.log) and the sanitizer runs (address-sanitizer.log, thread-sanitizer.log), for their figures."
    )
    var logs: String?

    func run() throws {
        var crashTrials = CrashTrials(seed: seed)
        let crash = try crashTrials.run(trials: trials)
        print(crash.summary)
        var powerCutTrials = PowerCutTrials(seed: seed)
        let powerCut = try powerCutTrials.run(trials: powerCuts)
        print(powerCut.summary)
        let faults = try FaultSweep.run(stride: stride)
        print(faults.summary)
        var corruptionTrials = CorruptionTrials(seed: seed)
        let corruption = try corruptionTrials.run(trials: corruptions)
        print(corruption.summary)
        let soaked = try Soak(seconds: soak, seed: seed, trace: false).run()
        print(soaked.summary)
        let fullDisk = try FullDisk.run(limits: [384, 640, 1_024])
        print(fullDisk.summary)

        var rows: [(String, String)] = [
            (
                "crash trials (seed \(seed))",
                "\(crash.trials): \(crash.byKind.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))"
            ),
            ("acknowledged commits", "\(crash.acknowledgedCommits), lost \(crash.lostCommits)"),
            ("files failing their check after a kill", "\(crash.failures.count)"),
            (
                "power cuts",
                "\(powerCut.trials) cuts of \(powerCut.writers) writers' logged writes and flushes (\(powerCut.newFiles) on new files)"
            ),
            ("  acknowledged commits at the cuts", "\(powerCut.acknowledgedAtCuts), lost \(powerCut.lostCommits)"),
            ("  files failing their check after a cut", "\(powerCut.failures.count)"),
            ("  control cuts (flushes ignored) seen to lose", "\(powerCut.controlDetected) of \(powerCut.controlTrials)"),
            ("LMDB calls of the fault workload", "\(faults.calls) (every \(stride == 1 ? "" : "\(stride)th ")call injected)"),
            ("faults injected", "\(faults.injections)"),
        ]
        for (outcome, count) in faults.outcomes.sorted(by: { $0.key < $1.key }) { rows.append(("  \(outcome)", "\(count)")) }
        rows.append(
            (
                "corruption trials",
                "\(corruption.trials) on a \(corruption.fileSize / 1024) KiB file (\(CorruptionTrials.Damage.allCases.count) kinds of damage)"
            ))
        for (outcome, count) in corruption.outcomes.sorted(by: { $0.key < $1.key }) { rows.append(("  \(outcome)", "\(count)")) }
        rows += [
            ("crashes (SIGSEGV, SIGBUS) reading damaged files", "\(corruption.crashes)"),
            ("different values read with no error", "\(corruption.wrongValues)"),
            ("other ends not naming the file, or hangs", "\(corruption.unexplainedEnds)"),
            (
                "soak",
                "\(String(format: "%.0f", soaked.seconds)) s, \(soaked.actorCommits + soaked.childCommits) commits, \(soaked.reads) checked reads, \(soaked.notifications) checked notifications"
            ),
            ("  memory drift after warm-up", String(format: "%+.1f %% (without the file's map)", soaked.rssDrift)),
            (
                "  file descriptors, reader slots",
                "\(soaked.warmUp.fileDescriptors) → \(soaked.end.fileDescriptors), \(soaked.warmUp.readerSlotsPeak) → \(soaked.end.readerSlotsPeak)"
            ),
            ("  soak failures", "\(soaked.failures.count)"),
            (
                "full disk (RLIMIT_FSIZE)",
                "\(fullDisk.trials) files filled, \(fullDisk.acknowledgedCommits) commits kept, \(fullDisk.failures.count) failed; the failed commit threw "
                    + fullDisk.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            ),
        ]
        let logged = SanitizerAndFuzzFigures(folder: logs)
        rows += logged.rows
        let width = rows.map(\.0.count).max() ?? 0
        print("\nReliability")
        for (name, value) in rows { print("  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
        print(
            "  " + "time".padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + String(
                    format: "%.0f s crash trials, %.0f s power cuts, %.0f s fault injection, %.0f s corruption", crash.seconds, powerCut.seconds,
                    faults.seconds, corruption.seconds))
        if !crash.failures.isEmpty || powerCut.failed || !faults.failures.isEmpty || corruption.failed || !soaked.failures.isEmpty
            || !fullDisk.failures.isEmpty || logged.addressReports > 0 || logged.threadReports > 0
        {
            throw ExitCode.failure
        }
    }
}

/// The figures of the sanitizer runs and the fuzzing, from their logs, as rows of the table:
/// `make reliability` runs them beside the rest of the battery and prints these rows last.
struct LoggedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logged",
        abstract: "Print the figures of the sanitizer runs and the fuzzing from their logs; fail if a sanitizer reported."
    )

    @Option(help: "The folder with fuzz.log, address-sanitizer.log and thread-sanitizer.log.") var logs: String

    func run() throws {
        let logged = SanitizerAndFuzzFigures(folder: logs)
        let width = logged.rows.map(\.0.count).max() ?? 0
        print("\nReliability: sanitizers and fuzzing")
        for (name, value) in logged.rows { print("  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
        if logged.addressReports > 0 || logged.threadReports > 0 { throw ExitCode.failure }
    }
}

/// What the logs of `make fuzz` and the sanitizer runs say, for the table: `make reliability`
/// writes their output to the folder given with `--logs`.
struct SanitizerAndFuzzFigures {
    var fuzzExecutions: [(target: String, executions: Int)] = []
    var fuzzSeconds: Int?
    var addressTests: Int?
    var addressReports = 0
    var threadTests: Int?
    var threadReports = 0

    init(folder: String?) {
        guard let folder else { return }
        if let fuzz = try? String(contentsOfFile: folder + "/fuzz.log", encoding: .utf8) {
            var target = ""
            for line in fuzz.split(separator: "\n") {
                if line.hasPrefix("fuzzing ") {
                    let words = line.split(separator: " ")
                    target = String(words[1])
                    if words.count >= 4 { fuzzSeconds = Int(words[3]) }
                } else if line.hasPrefix("stat::number_of_executed_units:"),
                    let count = Int(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
                {
                    fuzzExecutions.append((target, count))
                }
            }
        }
        (addressTests, addressReports) = Self.sanitizerRun(folder + "/address-sanitizer.log", report: "ERROR: AddressSanitizer")
        addressReports += Self.sanitizerRun(folder + "/address-sanitizer.log", report: "ERROR: LeakSanitizer").1
        (threadTests, threadReports) = Self.sanitizerRun(folder + "/thread-sanitizer.log", report: "WARNING: ThreadSanitizer")
    }

    /// The number of tests that passed in a sanitizer's log, and its reports.
    static func sanitizerRun(_ path: String, report: String) -> (Int?, Int) {
        guard let log = try? String(contentsOfFile: path, encoding: .utf8) else { return (nil, 0) }
        let reports = log.components(separatedBy: report).count - 1
        // Swift Testing's last line: "Test run with N tests in M suites passed after …".
        let passed = log.split(separator: "\n").last { $0.contains("Test run with") && $0.contains("passed") }
        let tests = passed.flatMap { line in line.split(separator: " ").firstIndex(of: "with").flatMap { Int(line.split(separator: " ")[$0 + 1]) } }
        return (tests, reports)
    }

    var rows: [(String, String)] {
        var rows: [(String, String)] = []
        if !fuzzExecutions.isEmpty {
            rows.append(
                (
                    "fuzz executions (\(fuzzSeconds.map { "\($0) s" } ?? "") each)",
                    fuzzExecutions.map { "\($0.target) \($0.executions)" }.joined(separator: ", ")
                ))
        }
        if let addressTests { rows.append(("AddressSanitizer and leaks, whole suite", "\(addressTests) tests, \(addressReports) reports")) }
        if let threadTests { rows.append(("ThreadSanitizer, multi-threaded tests", "\(threadTests) tests, \(threadReports) reports")) }
        return rows
    }
}
