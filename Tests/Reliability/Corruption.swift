import ArgumentParser
import Foundation
import LMDBRealm

/// Corruption injection: copies of a file of the workload (flat objects and a graph) are
/// damaged — a flipped bit, a zeroed page, a page copied over another, a truncation, a damaged
/// or swapped meta page — and each is opened, verified and read whole in a child process, as a
/// user's program would. Each trial ends as a typed error at open, a `verify` finding, a stop
/// that names the file, or the same values as before the damage (it hit free space). A crash
/// by SIGSEGV or SIGBUS, or different values read with no error, is counted against us.
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
        if result.crashes > 0 || result.wrongValues > 0 { throw ExitCode.failure }
    }
}

struct CorruptionTrials {
    static let pageSize = 4_096

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
        var examples: [String] = []
        var seconds = 0.0
        var fileSize = 0

        var summary: String {
            var text = "corruption injection: \(trials) trials on a \(fileSize / 1024) KiB file, \(crashes) crashes, "
            text += "\(wrongValues) read different values with no error, \(String(format: "%.0f", seconds)) s\n  "
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
        _ = reference.waitForExit()
        guard let expected = reference.standardOutput.split(separator: "\n").first(where: { $0.hasPrefix("DIGEST ") }) else {
            throw ValidationError("the undamaged file did not read: \(reference.standardOutput) \(reference.errorOutput)")
        }
        var result = Result()
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
            let child = try Child.start(["child-read", path])
            let status = child.waitForExit()
            let lines = child.standardOutput.split(separator: "\n")
            let outcome: String
            if let line = lines.first(where: { $0.hasPrefix("OPEN-ERROR ") }) {
                outcome = "error at open (\(line.dropFirst(11)))"
            } else if lines.contains(where: { $0.hasPrefix("FINDINGS ") }) {
                outcome = "verify finding"
            } else if let digest = lines.first(where: { $0.hasPrefix("DIGEST ") }) {
                if digest == expected {
                    outcome = "same values (damage in unused space)"
                } else {
                    outcome = "different values, no error"
                    result.wrongValues += 1
                    result.examples.append("trial \(trial): \(damage.rawValue) (\(detail)) read different values with no error")
                }
            } else if status.signal == SIGSEGV || status.signal == SIGBUS {
                outcome = "crash (signal \(status.signal!))"
                result.crashes += 1
                result.examples.append("trial \(trial): \(damage.rawValue) (\(detail)) crashed: \(child.errorOutput.prefix(200))")
            } else if status.signal != nil && child.errorOutput.contains(path) {
                outcome = "stop naming the file"
            } else if status.signal == SIGABRT && child.errorOutput.contains("Assertion") {
                outcome = "LMDB assertion, file not named"
                result.examples.append("trial \(trial): \(damage.rawValue) (\(detail)): \(child.errorOutput.prefix(160))")
            } else {
                outcome = "other end (\(status))"
                result.examples.append("trial \(trial): \(damage.rawValue) (\(detail)) ended \(status): \(child.errorOutput.prefix(200))")
            }
            if let keep, outcome.hasPrefix("crash") || outcome.hasPrefix("different") || outcome.hasPrefix("other") || outcome.hasPrefix("LMDB") {
                try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
                try? FileManager.default.copyItem(atPath: path, toPath: keep + "/trial-\(trial).realm")
            }
            result.outcomes[outcome, default: 0] += 1
            result.byDamage[damage.rawValue, default: [:]][outcome, default: 0] += 1
            result.trials += 1
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + "-lock")
        }
        result.seconds = Date().timeIntervalSince(start)
        return result
    }
}

/// The child of a corruption trial: opens the file as the workload's program does, verifies
/// it, and reads every object of every class, printing a digest of what it read.
struct ChildReadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "child-read", shouldDisplay: false)
    @Argument var path: String

    func run() throws {
        let realm: Realm
        do {
            realm = try Realm(configuration: Workload.configuration(path))
        } catch let error as Realm.Error {
            print("OPEN-ERROR \(error.code)")
            return
        }
        let report = try realm.verify()
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
