import Foundation

/// The results directory of this package, whatever the working directory.
let defaultOutput = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("results").path

let durability = [
    "LMDBRealm": "durable commits (LMDB default: data and meta page fsynced on commit)",
    "LMDBRealm-unchecked": "as LMDBRealm, with verifiesChecksums off (records' checksums not checked on reads)",
    "SQLite": "WAL, synchronous=FULL (WAL fsynced on commit)",
    "GRDB": "WAL, synchronous=FULL (WAL fsynced on commit)",
    "LMDBKit": "durability .full (LMDB default: data and meta page fsynced on commit)",
]

struct ResultRow: Codable {
    var engine: String
    var operation: String
    var n: Int
    var seconds: Double
    var opsPerSecond: Double
    var peakRSSBytes: Int?
    var fileSizeBytes: Int?
}

struct Machine: Codable {
    var cores: Int
    var cpu: String
    var memoryBytes: Int
    var system: String
    var swift: String
}

struct Document: Codable {
    var date: String
    var machine: Machine
    var settings: [String: String]
    var results: [ResultRow]
}

func commandOutput(_ path: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

func currentMachine() -> Machine {
    let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let cpu = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
        .flatMap { $0.split(separator: ":", maxSplits: 1).last }
        .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
    let swift = commandOutput("/usr/bin/env", ["swift", "--version"])?
        .split(separator: "\n").first { $0.contains("Swift version") }.map(String.init) ?? "unknown"
    var name = utsname()
    uname(&name)
    func field<T>(_ value: T) -> String {
        withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
    return Machine(
        cores: ProcessInfo.processInfo.activeProcessorCount, cpu: cpu,
        memoryBytes: Int(ProcessInfo.processInfo.physicalMemory),
        system: "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))", swift: swift)
}

struct Report {
    var settings: Settings
    var rounds: Int
    var date: Date
    var samples: [String: EngineSamples]
    var engines: [String]
    var elapsed: Double
    let machine = currentMachine()

    var rows: [ResultRow] {
        var rows: [ResultRow] = []
        for engine in engines {
            guard let s = samples[engine] else { continue }
            let rss = s.rss.isEmpty ? nil : median(s.rss)
            for (measure, values) in s.latency.sorted(by: { $0.key < $1.key }) {
                for (name, pick) in [("p50", values.map(\.p50)), ("p99", values.map(\.p99))] {
                    let ms = median(pick)
                    rows.append(ResultRow(engine: engine, operation: "notify.\(measure).\(name)", n: settings.n, seconds: ms / 1000,
                                          opsPerSecond: 1000 / ms))
                }
            }
            for (path, values) in s.notificationRound.sorted(by: { $0.key < $1.key }) {
                let seconds = median(values)
                rows.append(ResultRow(engine: engine, operation: "notify.round.\(path)", n: notificationObjects, seconds: seconds,
                                      opsPerSecond: 1 / seconds))
            }
            for op in Operation.allCases {
                if op == .file_size {
                    rows.append(ResultRow(engine: engine, operation: op.rawValue, n: settings.n, seconds: 0, opsPerSecond: 0,
                                          peakRSSBytes: rss, fileSizeBytes: s.fileSize.isEmpty ? nil : median(s.fileSize)))
                } else if let sample = s.ops[op] {
                    let seconds = median(sample.seconds)
                    rows.append(ResultRow(engine: engine, operation: op.rawValue, n: settings.n, seconds: seconds,
                                          opsPerSecond: Double(sample.operations) / seconds, peakRSSBytes: rss))
                }
            }
        }
        return rows
    }

    func value(_ engine: String, _ op: Operation) -> Double? {
        rows.first { $0.engine == engine && $0.operation == op.rawValue }
            .map { op == .file_size ? Double($0.fileSizeBytes ?? 0) : $0.opsPerSecond }
    }

    var dateString: String { ISO8601DateFormatter().string(from: date) }

    /// The objects of the Results in the notification-round measure.
    var notificationObjects: Int { settings.quick ? 10_000 : 100_000 }

    /// LMDBRealm's notification figures, as Markdown.
    func notificationsTable() -> String {
        guard let s = samples["LMDBRealm"], !s.latency.isEmpty else { return "" }
        func ms(_ x: Double) -> String { x < 1 ? String(format: "%.0f µs", x * 1000) : String(format: "%.2f ms", x) }
        let commits = settings.quick ? (100, 50) : (1000, 300)
        var out = "### Notifications (LMDBRealm)\n\n| measure | p50 | p99 |\n|---|---:|---:|\n"
        let labels = [
            ("thread.fromCommitCall", "commit on one thread → callback on another queue, from the call to `commitWrite` (the durable commit included), \(commits.0) commits"),
            ("thread.fromCommitReturn", "the same, from `commitWrite`'s return"),
            ("process.fromCommitCall", "commit in another process → callback here (noticed through inotify), from the start of its write, \(commits.1) commits 5 ms apart"),
        ]
        for (key, label) in labels {
            guard let values = s.latency[key] else { continue }
            out += "| \(label) | \(ms(median(values.map(\.p50)))) | \(ms(median(values.map(\.p99)))) |\n"
        }
        out += "\n| one notification round: a Results of \(Self.format(Double(notificationObjects))) objects, one of them modified by another handle | median |\n|---|---:|\n"
        if let v = s.notificationRound["withLog"] {
            out += "| in-process commit (the writer's change log names the object) | \(ms(median(v) * 1000)) |\n"
        }
        if let v = s.notificationRound["byComparison"] {
            out += "| without a change log, as for another process's commit (the two versions compared) | \(ms(median(v) * 1000)) |\n"
        }
        out += "\nThe round is `refresh()` on the observing realm: the new version, the change set, the callback. Each p50 and p99 is the median of the rounds' values.\n"
        return out
    }

    func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var settingsMap = [
            "n": String(settings.n), "rounds": String(rounds), "statistic": "median of rounds",
            "order": "engines interleaved per round, each in its own process: " + engines.joined(separator: " "),
            "get_by_id": "100,000 random primary keys",
            "small_txns": "1,000 single-insert transactions, durable commit",
            "queries": "count_filter, count_section_indexed and top100_by_date repeated for at least 50 ms, seconds per query",
            "indexes": "section and pubDate indexed in every engine",
            "sqliteCache": "SQLite and GRDB: PRAGMA cache_size=-1048576 (1 GiB, holds the whole file)",
            "elapsedSeconds": String(format: "%.0f", elapsed),
        ]
        for (engine, text) in durability { settingsMap["durability.\(engine)"] = text }
        let document = Document(date: dateString, machine: machine, settings: settingsMap, results: rows)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(document).write(to: directory.appendingPathComponent("latest.json"))
        try Data(markdown().utf8).write(to: directory.appendingPathComponent("latest.md"))
        try Data(svg().utf8).write(to: directory.appendingPathComponent("latest.svg"))
    }

    // MARK: Markdown

    static func format(_ x: Double) -> String {
        if x >= 10_000_000 { return String(format: "%.1f M", x / 1e6) }
        if x >= 1_000_000 { return String(format: "%.2f M", x / 1e6) }
        if x >= 10_000 { return String(format: "%.0f k", x / 1e3) }
        if x >= 100 { return String(format: "%.0f", x) }
        return x == x.rounded() ? String(format: "%.0f", x) : String(format: "%.1f", x)
    }

    static func mb(_ bytes: Double) -> String { String(format: "%.1f", bytes / 1_048_576) }

    func markdownTable() -> String {
        var out = "| operation | unit | " + engines.joined(separator: " | ") + " | LMDBRealm / SQLite | LMDBRealm / LMDBKit | checked / unchecked |\n"
        out += "|---|---|" + engines.map { _ in "---:" }.joined(separator: "|") + "|---:|---:|---:|\n"
        func ratio(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b, b > 0 else { return "–" }
            return String(format: "%.2f×", a / b)
        }
        for op in Operation.allCases {
            let values = engines.map { value($0, op) }
            let cells = values.map { v in v.map { op == .file_size ? Self.mb($0) : Self.format($0) } ?? "–" }
            out += "| \(op.rawValue) | \(op.unit) | " + cells.joined(separator: " | ")
            out += " | \(ratio(value("LMDBRealm", op), value("SQLite", op))) | \(ratio(value("LMDBRealm", op), value("LMDBKit", op)))"
            out += " | \(ratio(value("LMDBRealm", op), value("LMDBRealm-unchecked", op))) |\n"
        }
        func rss(_ engine: String) -> Double? { samples[engine].flatMap { $0.rss.isEmpty ? nil : Double(median($0.rss)) } }
        out += "| peak RSS | MB | " + engines.map { rss($0).map(Self.mb) ?? "–" }.joined(separator: " | ")
        out += " | \(ratio(rss("LMDBRealm"), rss("SQLite"))) | \(ratio(rss("LMDBRealm"), rss("LMDBKit"))) | \(ratio(rss("LMDBRealm"), rss("LMDBRealm-unchecked"))) |\n"
        return out
    }

    func markdown() -> String {
        var out = "# LMDBRealm benchmarks\n\n"
        out += "`swift run -c release --package-path Benchmarks LMDBRealmBenchmarks"
        out += settings.quick ? " --quick`" : " --n \(settings.n)`"
        out += " — N = \(settings.n) Articles, median of \(rounds) rounds, engines interleaved (each round runs "
        out += engines.joined(separator: ", ") + " in turn, each in a fresh process on a fresh file).\n\n"
        out += "Machine: \(machine.cores) cores, \(machine.cpu), \(Self.mb(Double(machine.memoryBytes))) MB, \(machine.system); \(machine.swift). \(dateString).\n\n"
        out += markdownTable()
        out += "\nHigher is better except file size and peak RSS. Ratios above 1 favour LMDBRealm (for file size and RSS, below 1 does).\n\n"
        let notifications = notificationsTable()
        if !notifications.isEmpty { out += notifications + "\n" }
        out += "Operations:\n\n"
        for op in Operation.allCases { out += "- `\(op.rawValue)`: \(op.summary)\n" }
        out += "- peak RSS: the engine's process peak (`getrusage`), data generation included\n\n"
        out += "Durability, the same for every durable commit:\n\n"
        for engine in engines { out += "- \(engine): \(durability[engine] ?? "")\n" }
        out += """

            Notes: SQLite and GRDB update with one `UPDATE … SET wordCount = wordCount + 1` and delete \
            with one `DELETE FROM article`; LMDBRealm walks its objects to update them \
            (`for a in objects { a.wordCount += 1 }`) and deletes the whole class at once \
            (`realm.delete(realm.objects(Article.self))`, which empties its table and indexes); LMDBKit \
            rewrites each record and empties its databases (`mdb_drop`). \
            SQLite's file size is measured after a WAL checkpoint. SQLite and GRDB run with a 1 GiB \
            page cache (`PRAGMA cache_size=-1048576`), which holds the whole file as LMDB's memory map does.

            """
        return out
    }

    // MARK: SVG: grouped horizontal bars, log-scale ops/s

    func svg() -> String {
        let ops = Operation.allCases.filter { $0 != .file_size }
        let colors = ["#d62728", "#1f77b4", "#9467bd", "#7f7f7f"]
        let barHeight = 13.0, groupGap = 14.0, left = 190.0, right = 40.0, top = 78.0, width = 960.0
        let plotWidth = width - left - right
        let values = ops.flatMap { op in engines.compactMap { value($0, op) } }.filter { $0 > 0 }
        let lowExp = floor(log10(values.min() ?? 1)), highExp = ceil(log10(values.max() ?? 10))
        let span = max(highExp - lowExp, 1)
        func x(_ v: Double) -> Double { left + (log10(v) - lowExp) / span * plotWidth }
        let groupHeight = Double(engines.count) * barHeight + groupGap
        let plotHeight = Double(ops.count) * groupHeight
        let height = top + plotHeight + 50
        var s = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="16" y="22" font-size="15" font-weight="bold">LMDBRealm vs SQLite, GRDB and raw LMDBKit — N = \(settings.n), operations per second (log scale, higher is better)</text>
            <text x="16" y="40" fill="#555">Median of \(rounds) interleaved rounds; \(machine.cores) cores, \(escape(machine.system)); \(escape(machine.swift)); \(dateString)</text>

            """
        for (i, engine) in engines.enumerated() {
            let lx = left + Double(i) * 150
            s += "<rect x=\"\(lx)\" y=\"50\" width=\"12\" height=\"12\" fill=\"\(colors[i % colors.count])\"/>"
            s += "<text x=\"\(lx + 17)\" y=\"60\">\(engine)</text>\n"
        }
        var e = lowExp
        while e <= highExp {
            let gx = x(pow(10, e))
            s += "<line x1=\"\(gx)\" y1=\"\(top - 4)\" x2=\"\(gx)\" y2=\"\(top + plotHeight)\" stroke=\"#ddd\"/>"
            s += "<text x=\"\(gx)\" y=\"\(top + plotHeight + 16)\" text-anchor=\"middle\" fill=\"#555\">\(Self.format(pow(10, e)))</text>\n"
            e += 1
        }
        s += "<text x=\"\(left + plotWidth / 2)\" y=\"\(top + plotHeight + 36)\" text-anchor=\"middle\" fill=\"#555\">operations per second (objects, lookups, queries or commits — see each label)</text>\n"
        for (g, op) in ops.enumerated() {
            let gy = top + Double(g) * groupHeight
            s += "<text x=\"\(left - 8)\" y=\"\(gy + groupHeight / 2 - 6)\" text-anchor=\"end\" font-weight=\"bold\">\(op.rawValue)</text>"
            s += "<text x=\"\(left - 8)\" y=\"\(gy + groupHeight / 2 + 8)\" text-anchor=\"end\" fill=\"#555\" font-size=\"11\">\(op.unit)</text>\n"
            for (i, engine) in engines.enumerated() {
                guard let v = value(engine, op), v > 0 else { continue }
                let y = gy + Double(i) * barHeight
                let w = max(x(v) - left, 1)
                s += "<rect x=\"\(left)\" y=\"\(y)\" width=\"\(String(format: "%.1f", w))\" height=\"\(barHeight - 2)\" fill=\"\(colors[i % colors.count])\"><title>\(engine) \(op.rawValue): \(Self.format(v)) \(op.unit)</title></rect>"
                s += "<text x=\"\(String(format: "%.1f", left + w + 4))\" y=\"\(y + barHeight - 3)\" font-size=\"10\" fill=\"#333\">\(Self.format(v))</text>\n"
            }
        }
        s += "</svg>\n"
        return s
    }

    func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
