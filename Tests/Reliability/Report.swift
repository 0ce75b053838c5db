import ArgumentParser
import Foundation

/// Every part of the battery at the given sizes, then one table of the figures; fails if any
/// part failed.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Run the crash trials and the fault sweep and print one table of their figures.")

    @Option(help: "Crash trials.") var trials = 200
    @Option(help: "Fault injection at every n-th LMDB call.") var stride = 5
    @Option(help: "Seed of the crash trials.") var seed = UInt64(UInt32.random(in: 0...UInt32.max))

    func run() throws {
        var crashTrials = CrashTrials(seed: seed)
        let crash = try crashTrials.run(trials: trials)
        print(crash.summary)
        let faults = try FaultSweep.run(stride: stride)
        print(faults.summary)

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
        let width = rows.map(\.0.count).max() ?? 0
        print("\nReliability")
        for (name, value) in rows { print("  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + value) }
        print(
            "  " + "time".padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + String(format: "%.0f s crash trials, %.0f s fault injection", crash.seconds, faults.seconds))
        if !crash.failures.isEmpty || !faults.failures.isEmpty { throw ExitCode.failure }
    }
}
