import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// A lock-free record of what `shouldCompactOnLaunch` was asked.
private final class Asked: @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var sizes: [(Int, Int)] = []
    func append(_ total: Int, _ used: Int) { lock.withLock { sizes.append((total, used)) } }
    var values: [(Int, Int)] { lock.withLock { sizes } }
}

@Suite struct CompactOnLaunchTests {
    let helper = builtExecutable(named: "RealmTestHelper")

    /// A file with much free space, after deleting most of it.
    private static func makeSparseFile(_ dir: URL) throws -> (Realm.Configuration, Int) {
        let config = makeConfiguration(dir, types: [Article.self])
        let realm = try Realm(configuration: config)
        try realm.write {
            for i in 0..<20_000 { realm.add(Article(id: "a\(i)", wordCount: i)) }
        }
        try realm.write { realm.delete(realm.objects(Article.self).where { $0.wordCount >= 100 }) }
        let size = try realm.statistics.fileSize
        return (config, size)
    }

    private static func fileSize(_ config: Realm.Configuration) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: config.fileURL!.path)[.size] as! NSNumber).intValue
    }

    @Test func aFileNoOtherProcessHasOpenIsCompactedWhenAsked() throws {
        try withTemporaryDirectory { dir in
            var (config, before) = try Self.makeSparseFile(dir)
            let asked = Asked()
            config.shouldCompactOnLaunch = { total, used in
                asked.append(total, used)
                return true
            }
            let realm = try Realm(configuration: config)
            #expect(asked.values.count == 1)
            #expect(asked.values.first.map { $0.0 == before && $0.1 < $0.0 / 2 } == true, "\(asked.values), file \(before)")
            #expect(try Self.fileSize(config) < before / 2)
            #expect(realm.objects(Article.self).count == 100)
            #expect(realm.objects(Article.self).where { $0.section == "Sports" }.count == 100)
            #expect(realm.indexProblems() == [])
            try realm.write { realm.add(Article(id: "after")) }
            // Asked on the first open in the process only.
            _ = try Realm(configuration: config)
            #expect(asked.values.count == 1)
        }
    }

    @Test func aDeclinedCompactionLeavesTheFile() throws {
        try withTemporaryDirectory { dir in
            var (config, before) = try Self.makeSparseFile(dir)
            config.shouldCompactOnLaunch = { _, _ in false }
            let realm = try Realm(configuration: config)
            #expect(try Self.fileSize(config) == before)
            #expect(realm.objects(Article.self).count == 100)
        }
    }

    /// While a second process has the file open, it is not compacted (nor is the question
    /// asked); once that process is gone, it is.
    @Test func aFileAnotherProcessHasOpenIsLeftAlone() throws {
        try withTemporaryDirectory { dir in
            var (config, before) = try Self.makeSparseFile(dir)
            let (process, input, text) = try start(helper, ["hold", config.fileURL!.path], waitingFor: "holding")
            #expect(text.contains("holding data"), "\(text)")
            let asked = Asked()
            config.shouldCompactOnLaunch = { total, used in
                asked.append(total, used)
                return true
            }
            do {
                let realm = try Realm(configuration: config)
                #expect(asked.values.isEmpty)
                #expect(try Self.fileSize(config) == before)
                #expect(realm.objects(Article.self).count == 100)
            }
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let realm = try Realm(configuration: config)
            #expect(asked.values.count == 1)
            #expect(try Self.fileSize(config) < before / 2)
            #expect(realm.objects(Article.self).count == 100)
        }
    }
}

@Suite struct StaleReaderTests {
    let helper = builtExecutable(named: "RealmTestHelper")

    /// Starts a process holding the file at `url` open (with a reader slot), once it says so.
    private func holder(_ url: URL) throws -> (Process, Pipe) {
        let (process, input, _) = try start(helper, ["hold", url.path], waitingFor: "holding")
        return (process, input)
    }

    /// A process killed while it read leaves its reader slot (while another keeps the file
    /// open, so the lock file is not started afresh); the next process to open the file clears
    /// it and says so through the logger.
    @Test func readerSlotsOfADeadProcessAreClearedAndReported() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("stale.realm")
            do {
                let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [Article.self]))
                try realm.write { realm.add(Article(id: "a")) }
            }
            let (alive, aliveInput) = try holder(url)
            let (doomed, _) = try holder(url)
            kill(doomed.processIdentifier, SIGKILL)
            doomed.waitUntilExit()
            let messages = LockedStrings()
            var config = Realm.Configuration(fileURL: url, objectTypes: [Article.self])
            config.logger = Realm.Logger(level: .info) { level, message in messages.append("\(level): \(message)") }
            do {
                let realm = try Realm(configuration: config)
                #expect(realm.objects(Article.self).count == 1)
            }
            try aliveInput.fileHandleForWriting.close()
            alive.waitUntilExit()
            #expect(
                messages.values.contains { $0.hasPrefix("warn: Cleared 1 reader slot(s)") && $0.hasSuffix("left by processes that died") },
                "\(messages.values)")
        }
    }
}
