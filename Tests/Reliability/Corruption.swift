import ArgumentParser
import Foundation
import LMDBRealm

/// Corruption injection: copies of a file of the workload (flat objects and a graph) are
/// damaged — a flipped bit, a zeroed page, a page copied over another, a truncation, a damaged
/// or swapped meta page — and each is opened, verified and read whole in a child process, as a
/// user's program would. Each trial must end as a typed error that names the file (at open or
/// while reading), a `verify` finding, a stop by a signal whose message names the file, or the
/// same values as before the damage (it hit free space). Everything else is counted against
/// us: a crash by SIGSEGV or SIGBUS, different values read with no error, and any other end —
/// an error that does not name the file, a signal (an LMDB assertion's SIGABRT, SIGFPE, …)
/// whose message does not name it, an exit with no error reported, or a child still running
/// after ``CorruptionTrials/childTimeout`` seconds.
struct CorruptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "corrupt", abstract: "Damage copies of a file in every way a disk can and read each in a child process.")

    @Option(help: "Number of trials.") var trials = 500
    @Option(help: "Seed of the random damage.") var seed = UInt64(UInt32.random(in: 0...UInt32.max))
    @Option(help: "Keep the damaged files of failed trials in this directory.") var keep: String?

    func run() throws {
        var injection = CorruptionTrials(seed: seed)
        injection.keep = keep
        let result = try injection.run(trials: trials)
        print(result.summary)
        if result.failed { throw ExitCode.failure }
    }
}

struct CorruptionTrials {
    static let pageSize = 4_096
    /// Seconds a child may take to open, verify and read the file before it counts as hung and
    /// is killed (an undamaged file reads in well under a second).
    static let childTimeout: TimeInterval = 60

    enum Damage: String, CaseIterable {
        case bitFlip = "a flipped bit"
        case zeroedPage = "a zeroed page"
        case duplicatedPage = "a page copied over another"
        case truncation = "a truncation"
        case metaPage = "a damaged meta page"
        case swappedMeta = "swapped meta pages"
    }

    struct Result {
        var trials = 0
        var outcomes: [String: Int] = [:]
        var byDamage: [String: [String: Int]] = [:]
        var crashes = 0
        var wrongValues = 0
        /// Trials that ended in none of the accepted ways and neither crashed nor read wrong
        /// values: an error or a stop whose message does not name the file, an exit with no
        /// error reported, or a hang.
        var unexplainedEnds = 0
        var examples: [String] = []
        var seconds = 0.0
        var fileSize = 0
        var seed: UInt64 = 0

        /// Whether any trial ended in a way counted against us.
        var failed: Bool { crashes > 0 || wrongValues > 0 || unexplainedEnds > 0 }

        var summary: String {
            var text = "corruption injection (seed \(seed)): \(trials) trials on a \(fileSize / 1024) KiB file, \(crashes) crashes, "
            text += "\(wrongValues) read different values with no error, "
            text += "\(unexplainedEnds) ended unexplained (not naming the file, no error reported, or hung), "
            text += "\(String(format: "%.0f", seconds)) s\n  "
            text += outcomes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            for (damage, outcomes) in byDamage.sorted(by: { $0.key < $1.key }) {
                text += "\n  \(damage): " + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            }
            for example in examples.prefix(8) { text += "\n  \(example)" }
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

    mutating func run(trials: Int) throws -> Result {
        let start = Date()
        let folder = try TemporaryFolder("corrupt")
        defer { folder.remove() }
        // A compacted copy: nearly every page is live, so nearly every damage hits data.
        let original = folder.path("original.realm")
        do {
            let realm = try Realm(configuration: Workload.configuration(folder.path("written.realm")))
            for n in 0..<120 { try realm.write { Workload.apply(n, in: realm) } }
            try realm.writeCopy(toFile: URL(fileURLWithPath: original))
        }
        let pristine = try Data(contentsOf: URL(fileURLWithPath: original))
        let reference = try Child.start(["child-read", original])
        _ = reference.waitForExit(timeout: Self.childTimeout)
        guard let expected = reference.standardOutput.split(separator: "\n").first(where: { $0.hasPrefix("DIGEST ") }) else {
            throw ValidationError("the undamaged file did not read: \(reference.standardOutput) \(reference.errorOutput)")
        }
        var result = Result()
        result.seed = seed
        result.fileSize = pristine.count
        let pages = pristine.count / Self.pageSize
        for trial in 0..<trials {
            let damage = Damage.allCases[trial % Damage.allCases.count]
            var bytes = pristine
            var detail = ""
            switch damage {
            case .bitFlip:
                let offset = Int(random.next(below: UInt64(bytes.count)))
                let bit = UInt8(1) << UInt8(random.next(below: 8))
                bytes[offset] ^= bit
                detail = "byte \(offset)"
            case .zeroedPage:
                let page = 2 + Int(random.next(below: UInt64(pages - 2)))
                bytes.replaceSubrange(page * Self.pageSize..<(page + 1) * Self.pageSize, with: Data(count: Self.pageSize))
                detail = "page \(page)"
            case .duplicatedPage:
                let from = 2 + Int(random.next(below: UInt64(pages - 2)))
                let to = 2 + Int(random.next(below: UInt64(pages - 2)))
                let copy = bytes.subdata(in: from * Self.pageSize..<(from + 1) * Self.pageSize)
                bytes.replaceSubrange(to * Self.pageSize..<(to + 1) * Self.pageSize, with: copy)
                detail = "page \(from) over \(to)"
            case .truncation:
                let length = Int(random.next(below: UInt64(bytes.count)))
                bytes = bytes.prefix(length)
                detail = "at \(length) bytes"
            case .metaPage:
                let page = Int(random.next(below: 2))
                let offset = page * Self.pageSize + 16 + Int(random.next(below: 120))
                bytes[offset] ^= UInt8(1) << UInt8(random.next(below: 8))
                detail = "byte \(offset)"
            case .swappedMeta:
                let first = bytes.subdata(in: 0..<Self.pageSize)
                let second = bytes.subdata(in: Self.pageSize..<2 * Self.pageSize)
                bytes.replaceSubrange(0..<Self.pageSize, with: second)
                bytes.replaceSubrange(Self.pageSize..<2 * Self.pageSize, with: first)
            }
            let path = folder.path("trial-\(trial).realm")
            try bytes.write(to: URL(fileURLWithPath: path))
            // A message names the file by the path given or by its real path (LMDB's own).
            let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            func namesFile(_ text: some StringProtocol) -> Bool { text.contains(path) || text.contains(real) }
            let child = try Child.start(["child-read", path])
            let started = Date()
            let status = child.waitForExit(timeout: Self.childTimeout)
            // Only the watchdog of `waitForExit(timeout:)` sends SIGKILL, once the time is up.
            let hung = status.signal == SIGKILL && Date().timeIntervalSince(started) >= Self.childTimeout
            // What the child printed counts only if it then ended normally: one that goes on to
            // stop or crash is judged by how it ended.
            let lines = status.code == 0 ? child.standardOutput.split(separator: "\n") : []
            let what = "trial \(trial): \(damage.rawValue)\(detail.isEmpty ? "" : " (\(detail))")"
            let outcome: String
            var failed = true
            if let line = lines.first(where: { $0.hasPrefix("OPEN-ERROR ") || $0.hasPrefix("READ-ERROR ") }) {
                // "OPEN-ERROR code<TAB>description": the error's description must name the file.
                let fields = line.split(separator: "\t", maxSplits: 1)
                let code = fields[0].split(separator: " ").dropFirst().joined(separator: " ")
                let when = line.hasPrefix("OPEN-ERROR ") ? "at open" : "reading"
                if fields.count == 2 && namesFile(fields[1]) {
                    outcome = "error \(when) (\(code))"
                    failed = false
                } else {
                    outcome = "error \(when), file not named (\(code))"
                    result.unexplainedEnds += 1
                    result.examples.append("\(what): an error \(when) that does not name the file: \(fields.dropFirst().first ?? "")")
                }
            } else if lines.contains(where: { $0.hasPrefix("FINDINGS ") }) {
                outcome = "verify finding"
                failed = false
            } else if let digest = lines.first(where: { $0.hasPrefix("DIGEST ") }) {
                if digest == expected {
                    outcome = "same values (damage in unused space)"
                    failed = false
                } else {
                    outcome = "different values, no error"
                    result.wrongValues += 1
                    result.examples.append("\(what) read different values with no error")
                }
            } else if hung {
                outcome = "hang (killed after \(Int(Self.childTimeout)) s)"
                result.unexplainedEnds += 1
                result.examples.append("\(what) still running after \(Int(Self.childTimeout)) s: \(child.errorOutput.suffix(200))")
            } else if status.signal == SIGSEGV || status.signal == SIGBUS {
                outcome = "crash (signal \(status.signal!))"
                result.crashes += 1
                result.examples.append("\(what) crashed: \(child.errorOutput.prefix(200))")
            } else if status.signal != nil && namesFile(child.errorOutput) {
                outcome = "stop naming the file"
                failed = false
            } else if status.signal == SIGABRT && child.errorOutput.contains("Assertion") {
                outcome = "LMDB assertion, file not named"
                result.unexplainedEnds += 1
                result.examples.append("\(what): \(child.errorOutput.prefix(200))")
            } else if let signal = status.signal {
                outcome = "signal \(signal), file not named"
                result.unexplainedEnds += 1
                result.examples.append("\(what) ended by signal \(signal): \(child.errorOutput.prefix(200))")
            } else {
                outcome = "exit status \(status.code ?? -1), no error reported"
                result.unexplainedEnds += 1
                result.examples.append("\(what) ended \(status) with no error reported: \(child.errorOutput.prefix(200))")
            }
            if let keep, failed {
                // try?: keeping the file is a courtesy to whoever examines the failure; the
                // failure itself is counted and reported whether or not the copy is made.
                try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
                try? FileManager.default.copyItem(atPath: path, toPath: keep + "/trial-\(trial).realm")
            }
            result.outcomes[outcome, default: 0] += 1
            result.byDamage[damage.rawValue, default: [:]][outcome, default: 0] += 1
            result.trials += 1
            // try?: the trial's files are in the run's folder, which is removed at the end anyway.
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-lock")
        }
        result.seconds = Date().timeIntervalSince(start)
        return result
    }
}

/// The child of a corruption trial: opens the file as the workload's program does, verifies
/// it, and reads every object of every class, printing a digest of what it read. A
/// `Realm.Error` is printed as "OPEN-ERROR code<TAB>description" (thrown by the open) or
/// "READ-ERROR code<TAB>description" (thrown afterwards), on one line, for the parent to check
/// that it names the file.
struct ChildReadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "child-read", shouldDisplay: false)
    @Argument var path: String

    func run() throws {
        let realm: Realm
        do {
            realm = try Realm(configuration: Workload.configuration(path))
        } catch let error as Realm.Error {
            print("OPEN-ERROR \(Self.line(error))")
            return
        }
        let report: VerificationReport
        do {
            report = try realm.verify()
        } catch let error as Realm.Error {
            print("READ-ERROR \(Self.line(error))")
            return
        }
        if !report.isSound {
            print("FINDINGS \(report.findings.count)")
            return
        }
        var digest = Digest()
        for className in Workload.objectTypes.map({ $0.className() }) {
            for object in realm.dynamicObjects(className) {
                for property in object.objectSchema.properties {
                    digest.add(Self.render(object[property.name]))
                }
            }
        }
        print("DIGEST \(digest.value)")
    }

    /// `error`'s code and description on one line, a tab between them.
    static func line(_ error: Realm.Error) -> String {
        "\(error.code)\t" + error.description.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    static func render(_ value: Any?) -> String {
        switch value {
        case nil: return "nil"
        case let object as DynamicObject: return "<\(object.objectSchema.primaryKeyProperty.map { render(object[$0.name]) } ?? "?")>"
        case let array as [Any?]: return "[" + array.map(render).joined(separator: ",") + "]"
        case let map as [String: Any?]:
            return "{" + map.sorted { $0.key < $1.key }.map { "\($0.key):\(render($0.value))" }.joined(separator: ",") + "}"
        default: return "\(value!)"
        }
    }
}

/// FNV-1a over the rendered values.
struct Digest {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
    mutating func add(_ text: String) {
        for byte in text.utf8 {
            value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        value = (value ^ 0xff) &* 0x100_0000_01b3
    }
}
