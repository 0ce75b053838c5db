import ArgumentParser
import Foundation
import LMDBRealm

/// A real full disk, without root: a child process limits the size of the files it writes
/// (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored, so a write past it fails with `EFBIG` as on a full
/// disk) and commits the workload until a commit fails. The failure must be a thrown
/// `Realm.Error` naming the file, reads must go on, and the next write must fail the same way
/// rather than crash. The parent then reopens the file without the limit: every acknowledged
/// commit is there, the failed one is not, `verify` finds nothing, and writing goes on.
struct FullDiskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "full-disk", abstract: "Fill a file to a size limit of the process and check what the failed commit leaves.")

    @Option(help: "Sizes of the limit, in KiB, one trial each.") var limits: [Int] = [384, 640, 1_024]

    func run() throws {
        let result = try FullDisk.run(limits: limits)
        print(result.summary)
        if !result.failures.isEmpty { throw ExitCode.failure }
    }
}

enum FullDisk {
    struct Result {
        var trials = 0
        var acknowledgedCommits = 0
        var errors: [String: Int] = [:]
        var failures: [String] = []
        var seconds = 0.0
        var summary: String {
            var text = "full disk: \(trials) trials, \(acknowledgedCommits) acknowledged commits, \(failures.count) failed, "
            text += String(format: "%.0f s", seconds) + "\n  "
            text += errors.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            for failure in failures.prefix(10) { text += "\n  FAILED \(failure)" }
            return text
        }
    }

    static func run(limits: [Int]) throws -> Result {
        let start = Date()
        var result = Result()
        for limit in limits {
            let folder = try TemporaryFolder("full-disk")
            defer { folder.remove() }
            let path = folder.path("data.realm")
            result.trials += 1
            let child = try Child.start(["child-full-disk", path, "\(limit * 1024)"])
            let status = child.waitForExit(timeout: 300)
            let lines = child.standardOutput.split(separator: "\n").map(String.init)
            let acknowledged = child.acknowledged
            func fail(_ what: String) { result.failures.append("limit \(limit) KiB: \(what)") }
            guard status.code == 0 else {
                fail("the child ended \(status): \(child.errorOutput.suffix(400))")
                continue
            }
            for line in lines where line.hasPrefix("FAILED ") { fail(String(line.dropFirst(7))) }
            if let error = lines.first(where: { $0.hasPrefix("ERROR ") }) {
                result.errors[String(error.dropFirst(6).prefix { $0 != " " }), default: 0] += 1
            }
            result.acknowledgedCommits += acknowledged + 1
            // Without the limit: every acknowledged commit, not the failed one, a sound file,
            // and the next commit.
            do {
                let realm = try Realm(configuration: Workload.configuration(path))
                let problems = try Workload.problems(in: realm, acknowledged: acknowledged)
                if !problems.isEmpty { fail(problems.joined(separator: "; ")) }
                let next = Workload.nextCommit(in: realm)
                if next != acknowledged + 1 { fail("the newest commit is \(next - 1), the last acknowledged \(acknowledged)") }
                let report = try realm.verify()
                if !report.isSound { fail("verify: \(report)") }
                try realm.write { Workload.apply(next, in: realm) }
            } catch {
                fail("reopening without the limit: \(error)")
            }
        }
        result.seconds = Date().timeIntervalSince(start)
        return result
    }
}

/// The child of a full-disk trial: limits its files to `limit` bytes, then commits until a
/// commit fails, printing "ack N" after each commit, "ERROR code message" for the failure and
/// "FAILED what" for anything that breaks a promise.
struct ChildFullDiskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "child-full-disk", shouldDisplay: false)
    @Argument var path: String
    @Argument var limit: Int

    func run() throws {
        signal(SIGXFSZ, SIG_IGN)
        var bound = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t.max)
        guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &bound) == 0 else { throw ValidationError("setrlimit: \(errno)") }
        func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        let realm: Realm
        do {
            realm = try Realm(configuration: Workload.configuration(path))
        } catch {
            // The limit may be reached while the file is created: a thrown error is the promise.
            say(error is Realm.Error ? "ERROR \((error as! Realm.Error).code) at open" : "FAILED open threw \(error)")
            return
        }
        var n = 0
        while n < 100_000 {
            do {
                try realm.write { Workload.apply(n, in: realm) }
            } catch let error as Realm.Error {
                say("ERROR \(error.code) \(error)")
                if !error.description.contains(path) { say("FAILED the error does not name the file: \(error)") }
                break
            } catch {
                say("FAILED the commit threw \(type(of: error)), not Realm.Error: \(error)")
                return
            }
            Child.acknowledge(n)
            n += 1
        }
        // Reads go on, and see exactly the acknowledged commits.
        let problems = try Workload.problems(in: realm, acknowledged: n - 1)
        if !problems.isEmpty { say("FAILED after the failed commit: \(problems.joined(separator: "; "))") }
        if Workload.nextCommit(in: realm) != n { say("FAILED the failed commit \(n) is visible") }
        // The next write fails the same way, or fits in pages the failed one freed: thrown or
        // committed, never a crash.
        do {
            try realm.write { Workload.apply(n, in: realm) }
            Child.acknowledge(n)
        } catch let error as Realm.Error {
            if !error.description.contains(path) { say("FAILED the second error does not name the file: \(error)") }
        }
    }
}
