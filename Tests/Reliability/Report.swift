import ArgumentParser
import Foundation

/// Every part of the battery at the given sizes, then one table of the figures; fails if any
/// part failed.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Run the crash trials, the fault sweep, the corruption injection, the soak and the full disk, and print one table of their figures."
    )

    @Option(help: "Crash trials.") var trials = 200
    @Option(help: "Fault injection at every n-th LMDB call.") var stride = 5
    @Option(help: "Corruption trials.") var corruptions = 500
    @Option(help: "Soak duration in seconds.") var soak = 30.0
    @Option(help: "Seed of the random choices.") var seed = UInt64(UInt32.random(in: 0...UInt32.max))

    func run() throws {
        var crashTrials = CrashTrials(seed: seed)
        let crash = try crashTrials.run(trials: trials)
        print(crash.summary)
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
        let width = rows.map(\.0.count).max() ?? 0
        print("\nReliability")
        for (name, value) in rows { print("  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
        print(
            "  " + "time".padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + String(format: "%.0f s crash trials, %.0f s fault injection, %.0f s corruption", crash.seconds, faults.seconds, corruption.seconds))
        if !crash.failures.isEmpty || !faults.failures.isEmpty || corruption.crashes > 0 || corruption.wrongValues > 0 || !soaked.failures.isEmpty
            || !fullDisk.failures.isEmpty
        {
            throw ExitCode.failure
        }
    }
}
