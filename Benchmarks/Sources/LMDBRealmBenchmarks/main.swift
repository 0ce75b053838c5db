// LMDBRealm against SQLite (C API and GRDB records) and the raw LMDBKit floor, on the Article
// workload. Each engine runs in a child process of its own, engines interleaved round by round
// (A B C D, A B C D, …); every figure is the median of the rounds.
//
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks [--n N] [--rounds R] [--quick]
//         [--engines LMDBRealm,SQLite,GRDB,LMDBKit] [--output DIR]
//
// `--profile insert|scan|get|filter|top100|delete|construct` instead repeats one operation of the
// LMDBRealm engine in this process alone, for a profiler (see Profile.swift); `--graph` runs the
// object-graph workload against normalised SQLite (see Graph.swift), `--feed` the newest 50 of a
// section against SQLite with its composite index (see Feed.swift), `--sectioned` sectioned results
// and their change sets against SQLite (see Sectioned.swift), `--decimal` the sum of a Decimal128
// (see DecimalSum.swift), `--geo` points in a circle against SQLite's R*Tree (see GeoWithin.swift),
// `--inspector` the `lmdbrealm` executable's dump and verify (see InspectorBenchmark.swift).
import Foundation

let allEngineTypes: [any Engine.Type] = [RealmEngine.self, UncheckedRealmEngine.self, SQLiteEngine.self, GRDBEngine.self, KitEngine.self]

struct Settings {
    var n = 100_000
    var rounds: Int?
    var quick = false
    var child: String?
    var output: String?
    var engines = engineNames
    var profile: ProfiledOperation?
    var graph = false
    var feed = false
    var sectioned = false
    var decimal = false
    var geo = false
    var inspector = false
    var serverPatterns = false

    var effectiveRounds: Int { rounds ?? (quick ? 3 : (n >= 1_000_000 ? 3 : 5)) }
}

func parseArguments() -> Settings {
    var settings = Settings()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    func usage() -> Never {
        FileHandle.standardError.write(Data("""
            usage: LMDBRealmBenchmarks [--n N] [--rounds R] [--quick] [--engines A,B] [--output DIR]
                   LMDBRealmBenchmarks --graph [--n N] [--rounds R] [--quick]
                   LMDBRealmBenchmarks --feed [--n N] [--rounds R]
                   LMDBRealmBenchmarks --sectioned [--n N] [--rounds R]
                   LMDBRealmBenchmarks --decimal [--n N] [--rounds R]
                   LMDBRealmBenchmarks --geo [--n N] [--rounds R]
                   LMDBRealmBenchmarks --inspector [--n N] [--rounds R]
                   LMDBRealmBenchmarks --server-patterns [--n N] [--rounds R]
                   LMDBRealmBenchmarks --profile \(ProfiledOperation.allCases.map(\.rawValue).joined(separator: "|")) [--n N] [--rounds R]

            """.utf8))
        exit(2)
    }
    while let argument = arguments.next() {
        switch argument {
        case "--n": guard let v = Int(arguments.next() ?? "") else { usage() }; settings.n = v
        case "--rounds": guard let v = Int(arguments.next() ?? "") else { usage() }; settings.rounds = v
        case "--quick": settings.quick = true
        case "--output": guard let v = arguments.next() else { usage() }; settings.output = v
        case "--engines":
            guard let v = arguments.next() else { usage() }
            settings.engines = v.split(separator: ",").map(String.init)
            if !settings.engines.allSatisfy(engineNames.contains) { usage() }
        case "--graph": settings.graph = true
        case "--feed": settings.feed = true
        case "--sectioned": settings.sectioned = true
        case "--decimal": settings.decimal = true
        case "--geo": settings.geo = true
        case "--inspector": settings.inspector = true
        case "--server-patterns": settings.serverPatterns = true
        case "--child": guard let v = arguments.next() else { usage() }; settings.child = v
        case "--profile":
            guard let v = ProfiledOperation(rawValue: arguments.next() ?? "") else { usage() }
            settings.profile = v
        default: usage()
        }
    }
    if settings.quick {
        settings.n = 10_000
    }
    // A quick run (the smoke test `make test` runs) leaves the committed full results alone.
    if settings.output == nil {
        settings.output = settings.quick ? defaultOutput + "/quick" : defaultOutput
    }
    if settings.n < 1 || settings.effectiveRounds < 1 { usage() }
    return settings
}

func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Seconds for one run of `body`.
func timed<R>(_ body: () throws -> R) rethrows -> (Double, R) {
    let start = now()
    let result = try body()
    return (Double(now() - start) / 1e9, result)
}

/// Seconds per run of a query, repeated until 50 ms have passed (at most 100,000 times).
func timedQuery(_ body: () throws -> Int) rethrows -> (Double, Int) {
    var runs = 0
    var result = 0
    let start = now()
    repeat {
        result = try body()
        runs += 1
    } while now() - start < 50_000_000 && runs < 100_000
    return (Double(now() - start) / 1e9 / Double(runs), result)
}

// MARK: - Child: one engine, one round, every operation on a fresh file

@MainActor func runChild(_ engineName: String, settings: Settings) throws {
    guard let type = allEngineTypes.first(where: { $0.name == engineName }) else {
        log("unknown engine \(engineName)")
        exit(2)
    }
    let n = settings.n
    let rows = makeRows(1...Int64(n))
    let extra = makeRows(Int64(n + 1)...Int64(n + 1000), seed: 43)
    let lookups = makeLookups(n)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-benchmarks-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    // Lines of "operation seconds operations check", then "rss bytes" and "file bytes".
    var lines: [String] = []
    func record(_ op: Operation, _ seconds: Double, _ operations: Int, _ check: Int) {
        lines.append("\(op.rawValue) \(seconds) \(operations) \(check)")
    }
    do {
        let engine = try type.init(directory: directory)
        var (s, _) = try timed { try engine.insertBulk(rows) }
        record(.insert_bulk, s, n, try engine.count())
        try engine.settleFiles()
        lines.append("file \(dataFileBytes(in: directory))")
        var check = 0
        (s, check) = try timed { try engine.scanAll() }
        record(.scan_all, s, n, check)
        (s, check) = try timed { try engine.get(lookups) }
        record(.get_by_id, s, lookups.count, check)
        (s, check) = try timedQuery { try engine.countFilter() }
        record(.count_filter, s, 1, check)
        (s, check) = try timedQuery { try engine.countSection("Sports") }
        record(.count_section_indexed, s, 1, check)
        (s, check) = try timedQuery { try engine.top100() }
        record(.top100_by_date, s, 1, check)
        (s, _) = try timed { try engine.updateAll() }
        record(.update_all, s, n, try engine.scanAll())
        (s, _) = try timed { try engine.smallTransactions(extra) }
        record(.small_txns, s, extra.count, try engine.count())
        (s, _) = try timed { try engine.deleteAll() }
        record(.delete_all, s, n + extra.count, try engine.count())
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    lines.append("rss \(Int(usage.ru_maxrss) * 1024)")
    print(lines.joined(separator: "\n"))
}

// MARK: - Parent: rounds of child processes, medians, reports

struct Sample {
    var seconds: [Double] = []
    var operations = 0
    var checks: Set<Int> = []
}

struct EngineSamples {
    var ops: [Operation: Sample] = [:]
    var rss: [Int] = []
    var fileSize: [Int] = []
    /// Notification latencies (milliseconds), p50 and p99 per round, by measure.
    var latency: [String: [(p50: Double, p99: Double)]] = [:]
    /// Seconds per notification round, per round, by path.
    var notificationRound: [String: [Double]] = [:]
}

func median<T: Comparable>(_ xs: [T]) -> T {
    let s = xs.sorted()
    return s[s.count / 2]
}

@MainActor func runParent(_ settings: Settings) throws {
    let rounds = settings.effectiveRounds
    let engineTypes = allEngineTypes.filter { settings.engines.contains($0.name) }
    let started = Date()
    log("LMDBRealmBenchmarks: N = \(settings.n), \(rounds) rounds, engines \(engineTypes.map { $0.name }.joined(separator: ", ")) interleaved")
    var samples: [String: EngineSamples] = [:]
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    for round in 1...rounds {
        for type in engineTypes {
            let name = type.name
            let process = Process()
            process.executableURL = executable
            process.arguments = ["--child", name, "--n", String(settings.n)]
            let pipe = Pipe()
            process.standardOutput = pipe
            let (seconds, output): (Double, Data) = try timed {
                try process.run()
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                return data
            }
            guard process.terminationStatus == 0 else {
                log("error: \(name) failed in round \(round) (status \(process.terminationStatus))")
                exit(1)
            }
            // Group commit (and LMDBRealm's notification figures) in a process of their own.
            var combined = output
            if ["LMDBRealm", "SQLite", "LMDBKit"].contains(name) {
                let concurrent = Process()
                concurrent.executableURL = executable
                concurrent.arguments = ["--child", "concurrency:" + name] + (settings.quick ? ["--quick"] : [])
                let pipe = Pipe()
                concurrent.standardOutput = pipe
                try concurrent.run()
                combined += pipe.fileHandleForReading.readDataToEndOfFile()
                concurrent.waitUntilExit()
                guard concurrent.terminationStatus == 0 else {
                    log("error: \(name)'s concurrent operations failed in round \(round) (status \(concurrent.terminationStatus))")
                    exit(1)
                }
            }
            var engine = samples[name] ?? EngineSamples()
            for line in String(decoding: combined, as: UTF8.self).split(separator: "\n") {
                let fields = line.split(separator: " ").map(String.init)
                switch fields.first {
                case "rss": engine.rss.append(Int(fields[1]) ?? 0)
                case "file": engine.fileSize.append(Int(fields[1]) ?? 0)
                case "latency" where fields.count == 4:
                    engine.latency[fields[1], default: []].append((Double(fields[2]) ?? .nan, Double(fields[3]) ?? .nan))
                case "round" where fields.count == 4:
                    engine.notificationRound[fields[1], default: []].append(Double(fields[2]) ?? .nan)
                default:
                    guard fields.count == 4, let op = Operation(rawValue: fields[0]) else { continue }
                    var sample = engine.ops[op] ?? Sample()
                    sample.seconds.append(Double(fields[1]) ?? .nan)
                    sample.operations = Int(fields[2]) ?? 0
                    sample.checks.insert(Int(fields[3]) ?? 0)
                    engine.ops[op] = sample
                }
            }
            samples[name] = engine
            log(String(format: "  round %d/%d  %-10@ %6.1f s", round, rounds, name as NSString, seconds))
        }
    }
    // Every engine must have computed the same answers.
    for op in Operation.allCases where op != .file_size {
        let answers = Set(engineTypes.compactMap { samples[$0.name]?.ops[op]?.checks })
        if answers.count > 1 {
            log("warning: engines disagree on \(op.rawValue): \(engineTypes.map { "\($0.name) \(samples[$0.name]?.ops[op]?.checks.sorted() ?? [])" })")
        }
    }
    let outputPath = settings.output ?? defaultOutput
    let report = Report(settings: settings, rounds: rounds, date: started, samples: samples,
                        engines: engineTypes.map { $0.name }, elapsed: Date().timeIntervalSince(started))
    try report.write(to: URL(fileURLWithPath: outputPath))
    print(report.markdownTable())
    log(String(format: "done in %.0f s; wrote %@/latest.json, latest.md and latest.svg", report.elapsed, outputPath))
}

// The other process of the cross-process notification latency.
if CommandLine.arguments.count == 4 && CommandLine.arguments[1] == "--notify-writer" {
    do {
        try runNotifyWriter(path: CommandLine.arguments[2], commits: Int(CommandLine.arguments[3])!)
        exit(0)
    } catch {
        log("error: \(error)")
        exit(1)
    }
}

let settings = parseArguments()
do {
    if settings.graph {
        try MainActor.assumeIsolated { try runGraph(settings: settings) }
    } else if settings.feed {
        try MainActor.assumeIsolated { try runFeed(settings: settings) }
    } else if settings.sectioned {
        try MainActor.assumeIsolated { try runSectioned(settings: settings) }
    } else if settings.decimal {
        try MainActor.assumeIsolated { try runDecimalSum(settings: settings) }
    } else if settings.geo {
        try MainActor.assumeIsolated { try runGeoWithin(settings: settings) }
    } else if settings.inspector {
        try MainActor.assumeIsolated { try runInspectorBenchmark(settings: settings) }
    } else if settings.serverPatterns {
        let done = DispatchSemaphore(value: 0)
        let (n, rounds) = (settings.n, settings.effectiveRounds)
        Task.detached {
            do { try await runServerPatterns(n: n, rounds: rounds) } catch { log("error: \(error)"); exit(1) }
            done.signal()
        }
        done.wait()
    } else if let op = settings.profile {
        try MainActor.assumeIsolated { try runProfile(op, settings: settings) }
    } else if let child = settings.child, child.hasPrefix("concurrency:") {
        try MainActor.assumeIsolated { try runConcurrencyChild(String(child.dropFirst(12)), settings: settings) }
    } else if let child = settings.child {
        try MainActor.assumeIsolated { try runChild(child, settings: settings) }
    } else {
        try MainActor.assumeIsolated { try runParent(settings) }
    }
} catch {
    log("error: \(error)")
    exit(1)
}
