import Foundation
import LMDBRealm

// The inspector on the benchmark's file: `lmdbrealm dump --format json` and `lmdbrealm verify`
// of N articles (the main workload's rows), each a run of the release executable, timed from
// start to exit. Run with `--inspector` after building it:
//
//     swift build -c release --product lmdbrealm
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --inspector [--n N] [--rounds R]
//
// The executable is found at .build/release/lmdbrealm under the current directory, or at the
// path in LMDBREALM_INSPECTOR.

@MainActor func runInspectorBenchmark(settings: Settings) throws {
    let tool = ProcessInfo.processInfo.environment["LMDBREALM_INSPECTOR"]
        ?? FileManager.default.currentDirectoryPath + "/.build/release/lmdbrealm"
    guard FileManager.default.isExecutableFile(atPath: tool) else {
        log("inspector: no executable at \(tool): build it with `swift build -c release --product lmdbrealm`")
        exit(2)
    }
    let n = settings.n
    let rounds = settings.effectiveRounds
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-inspector-\(getpid())")
    // LMDBREALM_INSPECTOR_KEEP=1 keeps the file (for a profiler).
    defer { if ProcessInfo.processInfo.environment["LMDBREALM_INSPECTOR_KEEP"] == nil { try? FileManager.default.removeItem(at: root) } }
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let file = root.appendingPathComponent("articles.realm")
    do {
        var config = Realm.Configuration(fileURL: file, objectTypes: [Article.self])
        config.maximumFileSize = profileMapSize
        let realm = try Realm(configuration: config)
        let rows = makeRows(1...Int64(n))
        try realm.write {
            for row in rows {
                let article = Article()
                article.id = row.id
                article.url = row.url
                article.leadParagraph = row.lead
                article.section = row.section
                article.pubDate = row.pubDate
                article.wordCount = row.wordCount
                realm.add(article)
            }
        }
    }
    log("inspector: N = \(n) articles; \(rounds) rounds; \(tool)")

    /// Seconds the tool takes for `arguments`, checking its exit status and output.
    func run(_ arguments: [String], check: (String) -> Bool) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = root.appendingPathComponent("out")
        guard FileManager.default.createFile(atPath: output.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        process.standardOutput = try FileHandle(forWritingTo: output)
        let (seconds, _) = try timed {
            try process.run()
            process.waitUntilExit()
        }
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        precondition(process.terminationStatus == 0 && check(text), "lmdbrealm \(arguments.joined(separator: " ")) failed: \(text.prefix(500))")
        return seconds
    }

    var times: [String: [Double]] = [:]
    for round in 0..<rounds {
        let dump = try run(["dump", file.path, "--class", "Article", "--format", "json"]) { text in
            text.utf8.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 } == n
        }
        let verify = try run(["verify", file.path]) { _ in true }
        times["dump", default: []].append(dump)
        times["verify", default: []].append(verify)
        log("round \(round + 1)/\(rounds): dump \(String(format: "%.0f", dump * 1000)) ms, verify \(String(format: "%.0f", verify * 1000)) ms")
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let table = """
        Inspector, N = \(n) articles; medians of \(rounds) rounds (the release executable, start to exit)

        | command | seconds | objects/s | what |
        |---|---:|---:|---|
        | dump_json | \(String(format: "%.2f", median(times["dump"]!))) | \(Report.format(Double(n) / median(times["dump"]!))) | `lmdbrealm dump --class Article --format json`: one JSON object per line |
        | verify | \(String(format: "%.2f", median(times["verify"]!))) | \(Report.format(Double(n) / median(times["verify"]!))) | `lmdbrealm verify`: every record, index entry, link and backlink checked |

        """
    print(table)
    if let output = settings.output {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try table.write(toFile: output + "/inspector-latest.md", atomically: true, encoding: .utf8)
    }
}
