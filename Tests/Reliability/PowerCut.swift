import ArgumentParser
import Foundation
import LMDBRealm

/// Power-cut trials: a child commits the workload with a recorder loaded (`PowerCut/powercut_shim.c`,
/// built here with the toolchain's `clang` and loaded with `LD_PRELOAD`) that logs every write,
/// flush and truncation of its files, and a mark after each commit returned. A power cut at a
/// point of that log keeps what was flushed before it (writes through a descriptor opened with
/// `O_DSYNC` as they return) and, of the writes not yet flushed, a part that depends on the
/// trial's mode — none, all, each write or not, each 512-byte sector or not, or the sectors in
/// the order they were written up to a random point. The file so made is opened and checked in
/// a fresh process: every acknowledged commit there, nothing half-applied, `verify` clean.
///
/// A control run judges the same logs as if nothing were ever flushed: its cuts lose
/// acknowledged commits, and the check must say so, or the harness itself is broken.
///
/// Directory entries are taken as durable once the file was flushed (ext4 and XFS journal
/// a new file's entry with its first flush); a log holding a rename into the folder or an
/// `msync` fails its trials, as renames and writes through a map are not modelled.
struct PowerCutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "power-cut", abstract: "Cut the power at random points of a writing process's writes and check the file each cut leaves.")

    @Option(help: "Number of trials.") var trials = 200
    @Option(help: "Seed of the random choices (a failed trial prints it).") var seed = UInt64(UInt32.random(in: 0...UInt32.max))
    @Option(help: "Keep the files of failed trials in this directory.") var keep: String?

    func run() throws {
        var powerCuts = PowerCutTrials(seed: seed)
        powerCuts.keep = keep
        let result = try powerCuts.run(trials: trials)
        print(result.summary)
        if result.failed { throw ExitCode.failure }
    }
}

/// What the recorder logged, in the order the calls returned.
struct WriteLog {
    enum Event {
        case opened(inode: UInt64, path: String)
        case wrote(inode: UInt64, offset: Int, bytes: [UInt8], durable: Bool)
        case flushed(inode: UInt64)
        case truncated(inode: UInt64, size: Int)
        case marked(commit: Int)
        case flushedAll
        case renamed(String)
        case mapFlushed
    }

    var events: [Event] = []

    /// Reads a log the recorder wrote (see `powercut_shim.c` for its records).
    init(contentsOf path: String) throws {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 0
        func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            guard at + MemoryLayout<T>.size <= data.count else { throw ValidationError("\(path): a record ends early at byte \(at)") }
            var value: T = 0
            for i in 0..<MemoryLayout<T>.size { value |= T(data[at + i]) << (8 * i) }
            at += MemoryLayout<T>.size
            return value
        }
        while at < data.count {
            let kind = try integer(UInt32.self)
            let flags = try integer(UInt32.self)
            let inode = try integer(UInt64.self)
            let offset = Int(try integer(UInt64.self))
            let length = Int(try integer(UInt64.self))
            guard at + length <= data.count else { throw ValidationError("\(path): a record's \(length) bytes end past the log") }
            let payload = Array(data[at..<(at + length)])
            at += length
            switch kind {
            case 1: events.append(.opened(inode: inode, path: String(decoding: payload, as: UTF8.self)))
            case 2: events.append(.wrote(inode: inode, offset: offset, bytes: payload, durable: flags & 1 != 0))
            case 3: events.append(.flushed(inode: inode))
            case 4: events.append(.truncated(inode: inode, size: offset))
            case 5: events.append(.marked(commit: offset))
            case 6: events.append(.flushedAll)
            case 8: events.append(.mapFlushed)
            case 7: events.append(.renamed(payload.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " → ")))
            default: throw ValidationError("\(path): unknown record kind \(kind) at byte \(at - length)")
            }
        }
    }
}

struct PowerCutTrials {
    static let sectorSize = 512
    /// Seconds the check of one file may take before it counts as hung.
    static let childTimeout: TimeInterval = 60
    /// Commits the base file holds before a child writes on it.
    static let baseCommits = 20

    /// What a cut keeps of the writes made since their file was last flushed.
    enum Mode: String, CaseIterable {
        case none = "none of the unflushed writes"
        case all = "all of them"
        case wholeWrites = "each write or not"
        case sectors = "each sector or not"
        case prefix = "the sectors in write order, up to a point"
    }

    struct Result {
        var trials = 0
        var writers = 0
        var newFiles = 0
        var events = 0
        var acknowledgedAtCuts = 0
        var byMode: [String: Int] = [:]
        var outcomes: [String: Int] = [:]
        var examples: [String: String] = [:]
        var lostCommits = 0
        var failures: [String] = []
        var controlTrials = 0
        var controlDetected = 0
        var controlFailures: [String] = []
        var seconds = 0.0
        var seed: UInt64 = 0

        var failed: Bool { !failures.isEmpty || !controlFailures.isEmpty }

        var summary: String {
            var text = "power-cut trials (seed \(seed)): \(trials) cuts of \(writers) writing processes (\(newFiles) on new files), \(events) logged calls; "
            text += "\(acknowledgedAtCuts) acknowledged commits at the cuts, \(lostCommits) lost, \(failures.count) failed, "
            text += String(format: "%.0f s", seconds)
            text += "\n  kept of the unflushed writes: " + byMode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            text += "\n  " + outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            for (kind, example) in examples.sorted(by: { $0.key < $1.key }) { text += "\n  e.g. \(kind): \(example)" }
            text += "\n  control (flushes ignored): \(controlDetected) of \(controlTrials) cuts found to lose acknowledged commits"
            for failure in (failures + controlFailures).prefix(10) { text += "\n  FAILED \(failure)" }
            return text
        }
    }

    var random: SplitMix
    let seed: UInt64
    var keep: String?

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix(seed: seed)
    }

    /// The recorder, built from its source beside this file into `folder`.
    static func buildRecorder(in folder: TemporaryFolder) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("PowerCut/powercut_shim.c").path
        let library = folder.path("libpowercut.so")
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["clang", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", library, source, "-ldl"]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else {
            throw ValidationError("building the power-cut recorder from \(source) with clang failed (status \(compiler.terminationStatus))")
        }
        return library
    }

    mutating func run(trials: Int) throws -> Result {
        var result = Result()
        result.seed = seed
        let start = Date()
        let folder = try TemporaryFolder("power-cut")
        defer { folder.remove() }
        let recorder = try Self.buildRecorder(in: folder)
        let name = "power.realm"
        // The base: a file with commits already, made without the recorder.
        let base = folder.path("base.realm")
        let maker = try Child.start(["child-workload", base, "--commits", "\(Self.baseCommits)"])
        let made = maker.waitForExit(timeout: 120)
        guard made.code == 0 else { throw ValidationError("making the base file ended \(made): \(maker.errorOutput)") }
        let baseImage = try [UInt8](Data(contentsOf: URL(fileURLWithPath: base)))

        var writer = 0
        let cutsPerWriter = 5
        while result.trials < trials {
            let run = try TemporaryFolder("power-cut-run")
            defer { run.remove() }
            // The folder's path as the recorder logs it, symbolic links resolved.
            let files = run.url.appendingPathComponent("files").resolvingSymlinksInPath().path
            try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
            let path = URL(fileURLWithPath: files).resolvingSymlinksInPath().path + "/" + name
            // One writer in four starts a new file; the others write on a copy of the base.
            let newFile = writer % 4 == 3
            if !newFile { try Data(baseImage).write(to: URL(fileURLWithPath: path)) }
            let commits = Int(random.next(below: 10)) + 3
            let log = run.path("writes.log")
            let child = try Child.start(
                ["child-workload", path, "--commits", "\(commits)"],
                environment: ["LD_PRELOAD": recorder, "POWERCUT_DIR": files, "POWERCUT_LOG": log])
            let status = child.waitForExit(timeout: 120)
            let label = "writer \(writer) (seed \(seed))"
            guard status.code == 0 else {
                result.failures.append("\(label): the workload ended \(status) under the recorder: \(child.errorOutput.suffix(400))")
                writer += 1
                result.trials += cutsPerWriter
                continue
            }
            let events = try WriteLog(contentsOf: log).events
            result.writers += 1
            result.events += events.count
            if newFile { result.newFiles += 1 }
            let initial: [String: [UInt8]] = newFile ? [:] : [path: baseImage]
            let acknowledgedBefore = newFile ? -1 : Self.baseCommits - 1
            for cutNumber in 0..<cutsPerWriter where result.trials < trials {
                let cut = Int(random.next(below: UInt64(events.count + 1)))
                let mode = Mode.allCases[Int(random.next(below: UInt64(Mode.allCases.count)))]
                let trialLabel = "\(label), cut \(cutNumber) after \(cut) of \(events.count) calls, keeping \(mode.rawValue)"
                var trialRandom = SplitMix(seed: random.next())
                result.byMode[mode.rawValue, default: 0] += 1
                result.trials += 1
                let acknowledged = Self.acknowledged(events.prefix(cut), before: acknowledgedBefore)
                result.acknowledgedAtCuts += max(0, acknowledged - acknowledgedBefore)
                let outcome = try check(
                    events: events.prefix(cut), initial: initial, name: name, acknowledged: acknowledged, mode: mode, ignoringFlushes: false,
                    random: &trialRandom, in: run)
                result.outcomes[outcome.kind, default: 0] += 1
                if let example = outcome.example, result.examples[outcome.kind] == nil { result.examples[outcome.kind] = example }
                if let lost = outcome.lost { result.lostCommits += lost }
                if let failure = outcome.failure {
                    result.failures.append("\(trialLabel): \(failure)")
                    if let keep { try? keepFiles(of: run, as: "writer-\(writer)-cut-\(cutNumber)", in: keep) }
                }
            }
            // The control: the last cut after a commit returned, judged as if nothing were ever
            // flushed and nothing unflushed kept.
            if writer % 5 == 0, let lastMark = events.lastIndex(where: { if case .marked = $0 { true } else { false } }) {
                result.controlTrials += 1
                let acknowledged = Self.acknowledged(events.prefix(lastMark + 1), before: acknowledgedBefore)
                var controlRandom = SplitMix(seed: random.next())
                let outcome = try check(
                    events: events.prefix(lastMark + 1), initial: initial, name: name, acknowledged: acknowledged, mode: .none,
                    ignoringFlushes: true, random: &controlRandom, in: run)
                if outcome.kind == "acknowledged commits lost" || outcome.kind == "no file a commit was acknowledged in" {
                    result.controlDetected += 1
                } else {
                    result.controlFailures.append(
                        "\(label): the control lost commits up to \(acknowledged) yet the check ended \"\(outcome.kind)\" \(outcome.failure ?? "")")
                }
            }
            writer += 1
        }
        if result.controlTrials == 0 { result.controlFailures.append("no control trial ran: the check was never shown to see a lost commit") }
        result.seconds = Date().timeIntervalSince(start)
        return result
    }

    /// The newest commit a mark among `events` acknowledges, or `before`.
    static func acknowledged(_ events: ArraySlice<WriteLog.Event>, before: Int) -> Int {
        events.reduce(before) { newest, event in if case .marked(let n) = event { max(newest, n) } else { newest } }
    }

    struct Outcome {
        var kind: String
        /// What the check printed, for an accepted end that is not a sound file.
        var example: String?
        var failure: String?
        var lost: Int?
    }

    /// Builds the files a power cut after `events` leaves and checks them in a child process.
    func check(
        events: ArraySlice<WriteLog.Event>, initial: [String: [UInt8]], name: String, acknowledged: Int, mode: Mode, ignoringFlushes: Bool,
        random: inout SplitMix, in run: TemporaryFolder
    ) throws -> Outcome {
        let images = try Self.images(after: events, initial: initial, mode: mode, ignoringFlushes: ignoringFlushes, random: &random)
        let cut = run.path("cut")
        try? FileManager.default.removeItem(atPath: cut)
        try FileManager.default.createDirectory(atPath: cut, withIntermediateDirectories: true)
        for (path, bytes) in images {
            try Data(bytes).write(to: URL(fileURLWithPath: cut + "/" + URL(fileURLWithPath: path).lastPathComponent))
        }
        let file = cut + "/" + name
        let child = try Child.start(["child-power-check", file, "--acknowledged=\(acknowledged)"])
        let status = child.waitForExit(timeout: Self.childTimeout)
        let output = child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        if status.signal != nil {
            return Outcome(kind: "stopped by a signal", failure: "the check ended \(status): \(child.errorOutput.suffix(600))")
        }
        if output.hasPrefix("OK ") {
            return Outcome(kind: "every acknowledged commit kept, file sound")
        }
        if output.hasPrefix("LOST ") {
            let newest = Int(output.split(separator: " ")[1]) ?? -1
            return Outcome(kind: "acknowledged commits lost", failure: output, lost: acknowledged - newest)
        }
        if output.hasPrefix("PROBLEMS ") { return Outcome(kind: "damaged", failure: output) }
        if output.hasPrefix("OPEN-ERROR ") {
            // An error is an answer only when nothing was acknowledged: the file then held no
            // commit anyone was told of, and the error must name it.
            if acknowledged < 0, output.contains(file) {
                return Outcome(kind: "no commit acknowledged, typed error naming the file", example: String(output.prefix(300)))
            }
            if acknowledged >= 0 && ignoringFlushes && output.contains(file) { return Outcome(kind: "no file a commit was acknowledged in") }
            return Outcome(kind: "error", failure: output)
        }
        if output.hasPrefix("NO-FILE") {
            if acknowledged < 0 { return Outcome(kind: "no commit acknowledged, no file") }
            return Outcome(kind: "no file a commit was acknowledged in", failure: "acknowledged commit \(acknowledged), and the file is gone")
        }
        return Outcome(kind: "other end", failure: "the check ended \(status) printing \"\(output.prefix(300))\": \(child.errorOutput.suffix(600))")
    }

    /// The files a cut after `events` leaves: per file, the writes and truncations made, applied
    /// in the order they returned — those flushed before the cut always, the others as `mode`
    /// says — over the file as it was before the writer started.
    static func images(
        after events: ArraySlice<WriteLog.Event>, initial: [String: [UInt8]], mode: Mode, ignoringFlushes: Bool, random: inout SplitMix
    ) throws -> [String: [UInt8]] {
        enum Operation {
            case write(offset: Int, bytes: [UInt8])
            case truncate(Int)
        }
        var paths: [UInt64: String] = [:]
        var initialImages = initial
        var operations: [UInt64: [(operation: Operation, durable: Bool)]] = [:]
        for event in events {
            switch event {
            case .opened(let inode, let path):
                paths[inode] = path
                // Opened is created: the file is there, empty if nothing written is kept.
                initialImages[path] = initialImages[path] ?? []
            case .wrote(let inode, let offset, let bytes, let durable):
                operations[inode, default: []].append((.write(offset: offset, bytes: bytes), durable && !ignoringFlushes))
            case .truncated(let inode, let size):
                operations[inode, default: []].append((.truncate(size), false))
            case .flushed(let inode):
                if !ignoringFlushes { operations[inode] = operations[inode]?.map { ($0.operation, true) } }
            case .flushedAll:
                if !ignoringFlushes { operations = operations.mapValues { $0.map { ($0.operation, true) } } }
            case .marked:
                break
            case .renamed(let what):
                throw ValidationError("the writer renamed a file into its folder (\(what)): renames are not modelled")
            case .mapFlushed:
                throw ValidationError("the writer flushed a writable map (msync): writes through a map are not modelled")
            }
        }
        // Pending sectors in write order, for the prefix mode: how many of them are kept.
        let pendingSectors = operations.values.joined().reduce(0) { count, entry in
            guard !entry.durable, case .write(let offset, let bytes) = entry.operation else { return count }
            return count + Self.sectors(offset: offset, count: bytes.count).count
        }
        var prefixLeft = Int(random.next(below: UInt64(pendingSectors + 1)))
        var images = initialImages
        // Operations of all files, in log order, so that the prefix mode follows the write order.
        var ordered: [(inode: UInt64, operation: Operation, durable: Bool)] = []
        var cursor: [UInt64: Int] = [:]
        for event in events {
            let inode: UInt64
            switch event {
            case .wrote(let i, _, _, _), .truncated(let i, _): inode = i
            default: continue
            }
            let index = cursor[inode, default: 0]
            cursor[inode] = index + 1
            let entry = operations[inode]![index]
            ordered.append((inode, entry.operation, entry.durable))
        }
        for (inode, operation, durable) in ordered {
            guard let path = paths[inode] else { continue }
            var image = images[path] ?? []
            switch operation {
            case .truncate(let size):
                let kept = durable || mode == .all || ((mode == .wholeWrites || mode == .sectors) && random.next(below: 2) == 0)
                if kept {
                    if size < image.count { image.removeSubrange(size...) } else { image += [UInt8](repeating: 0, count: size - image.count) }
                }
            case .write(let offset, let bytes):
                let keepsWhole = durable || mode == .all || (mode == .wholeWrites && random.next(below: 2) == 0)
                for sector in Self.sectors(offset: offset, count: bytes.count) {
                    let kept: Bool
                    if keepsWhole {
                        kept = true
                    } else {
                        switch mode {
                        case .sectors: kept = random.next(below: 2) == 0
                        case .prefix:
                            kept = prefixLeft > 0
                            prefixLeft -= 1
                        default: kept = false
                        }
                    }
                    guard kept else { continue }
                    if image.count < sector.upperBound { image += [UInt8](repeating: 0, count: sector.upperBound - image.count) }
                    image.replaceSubrange(sector, with: bytes[(sector.lowerBound - offset)..<(sector.upperBound - offset)])
                }
            }
            images[path] = image
        }
        return images
    }

    /// The parts of a write of `count` bytes at `offset` that fall in each 512-byte sector of the file.
    static func sectors(offset: Int, count: Int) -> [Range<Int>] {
        var parts: [Range<Int>] = []
        var at = offset
        let end = offset + count
        while at < end {
            let next = min(end, (at / sectorSize + 1) * sectorSize)
            parts.append(at..<next)
            at = next
        }
        return parts
    }

    /// Copies a failed trial's files (the writer's log, the base and the cut) into `folder`.
    func keepFiles(of run: TemporaryFolder, as name: String, in folder: String) throws {
        let target = URL(fileURLWithPath: folder).appendingPathComponent(name)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        for item in ["writes.log", "cut"] {
            try? FileManager.default.copyItem(at: run.url.appendingPathComponent(item), to: target.appendingPathComponent(item))
        }
    }
}

/// The check of a power-cut trial: opens the file, checks it against the commits acknowledged,
/// and prints one line — OK (the newest commit), LOST (the newest commit, fewer than
/// acknowledged), PROBLEMS (what is wrong), OPEN-ERROR (a typed error's description), NO-FILE.
struct ChildPowerCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "child-power-check", shouldDisplay: false)
    @Argument var path: String
    @Option var acknowledged: Int

    func run() throws {
        guard FileManager.default.fileExists(atPath: path) else {
            print("NO-FILE")
            return
        }
        let realm: Realm
        do {
            realm = try Realm(configuration: Workload.configuration(path))
        } catch let error as Realm.Error {
            print("OPEN-ERROR \(ChildReadCommand.line(error))")
            return
        }
        let newest = Workload.nextCommit(in: realm) - 1
        let problems = try Workload.problems(in: realm, acknowledged: acknowledged)
        if newest < acknowledged {
            print("LOST \(newest) \(problems.joined(separator: "; "))")
        } else if !problems.isEmpty {
            print("PROBLEMS \(problems.joined(separator: "; "))")
        } else {
            print("OK \(newest)")
        }
    }
}
