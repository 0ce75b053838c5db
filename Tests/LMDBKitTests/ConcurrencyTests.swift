import Foundation
import LMDBKit
import TestSupport
import Testing

/// Several threads using one environment at once.
@Suite struct ConcurrencyTests {
    /// Runs `body(i)` on `count` threads of their own and waits for all of them.
    ///
    /// Each thread lets go of `body` (and so of everything it captured) before it reports that
    /// it is done, so no environment outlives the call because a thread was slow to exit.
    /// - Returns: Whether every thread finished within `timeout` seconds.
    static func onThreads(_ count: Int, timeout: Double = 30, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
        let group = DispatchGroup()
        for i in 0..<count {
            group.enter()
            let work = Locked<(@Sendable (Int) -> Void)?>(body)
            let thread = Thread {
                if let body = work.update({ $0.take() }) { body(i) }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        return group.wait(timeout: .now() + timeout) == .success
    }

    /// What each writer thread did.
    struct Tally: Sendable {
        var committed = 0
        var errors: [String] = []
    }

    @Test(arguments: [false, true])
    func twoThreadsWriteConcurrently(growingTheMap: Bool) throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) {
                if growingTheMap {
                    // Small enough that the writers must grow the map while racing each other.
                    $0.mapSize = 64 * 1024
                    $0.durability = .noSync
                }
            }
            let initialMapSize = env.mapSize
            let db = try env.createDatabase(named: "t")
            let writes = 200
            let valueSize = growingTheMap ? 8_000 : 16
            let tally = Locked([Tally](repeating: Tally(), count: 2))
            let finished = Self.onThreads(2) { thread in
                for i in 0..<writes {
                    do {
                        try env.write { txn in
                            try txn.put(pattern(thread * writes + i, count: valueSize), forKey: key(i, prefix: "t\(thread)-"), in: db)
                        }
                        tally.update { $0[thread].committed += 1 }
                    } catch {
                        tally.update { $0[thread].errors.append("\(error)") }
                    }
                }
            }
            #expect(finished)
            #expect(tally.value.map(\.committed) == [writes, writes])
            #expect(tally.value.flatMap(\.errors) == [])
            #expect(try entryCount(of: db, in: env) == 2 * writes)
            try env.read { txn in
                for thread in 0..<2 {
                    for i in 0..<writes {
                        let intact = try txn.get(key(i, prefix: "t\(thread)-"), in: db) {
                            Array($0) == pattern(thread * writes + i, count: valueSize)
                        }
                        #expect(intact == true, "thread \(thread) write \(i)")
                    }
                }
            }
            if growingTheMap { #expect(env.mapSize > initialMapSize) }
            #expect(env.activeTransactionCount == 0)
        }
    }

    @Test func readersAlwaysSeeWholeCommits() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) {
                $0.durability = .noSync
                $0.mapSize = 64 * 1024
            }
            let db = try env.createDatabase(named: "t")
            // Every commit moves two counters together; a reader must never see them apart.
            @Sendable func counter(_ n: Int) -> [UInt8] { withUnsafeBytes(of: n) { Array($0) } }
            try env.write { txn in
                try txn.put(counter(0), forKey: bytes("a"), in: db)
                try txn.put(counter(0), forKey: bytes("b"), in: db)
            }
            let commits = 300
            let done = Locked(false)
            let torn = Locked(0)
            let reads = Locked(0)
            let failures = Locked<[String]>([])
            let finished = Self.onThreads(3) { thread in
                if thread == 0 {
                    do {
                        for n in 1...commits {
                            try env.write { txn in
                                try txn.put(counter(n), forKey: bytes("a"), in: db)
                                // Padding that makes the map grow now and then.
                                try txn.put(pattern(n, count: 2_000), forKey: key(n), in: db)
                                try txn.put(counter(n), forKey: bytes("b"), in: db)
                            }
                        }
                    } catch {
                        failures.update { $0.append("writer: \(error)") }
                    }
                    done.value = true
                } else {
                    var last = 0
                    while true {
                        let finishedWriting = done.value
                        do {
                            let (a, b) = try env.read { txn in
                                (try txn.get(bytes("a"), in: db) { $0.loadUnaligned(as: Int.self) } ?? -1,
                                 try txn.get(bytes("b"), in: db) { $0.loadUnaligned(as: Int.self) } ?? -2)
                            }
                            reads.update { $0 += 1 }
                            if a != b || a < last { torn.update { $0 += 1 } }
                            last = a
                        } catch {
                            failures.update { $0.append("reader: \(error)") }
                            return
                        }
                        if finishedWriting { break }
                    }
                    if last != commits { failures.update { $0.append("reader ended at \(last)") } }
                }
            }
            #expect(finished)
            #expect(failures.value == [])
            #expect(torn.value == 0)
            #expect(reads.value >= 2)
            #expect(try entryCount(of: db, in: env) == commits + 2)
        }
    }

    @Test func concurrentOpensOfOnePathShareOneEnvironment() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file()
            for _ in 0..<20 {
                let opened = Locked<[Environment]>([])
                let failures = Locked(0)
                let finished = Self.onThreads(4) { _ in
                    do {
                        let env = try Environment.open(path: path)
                        opened.update { $0.append(env) }
                    } catch {
                        failures.update { $0 += 1 }
                    }
                }
                #expect(finished)
                #expect(failures.value == 0)
                let environments = opened.value
                #expect(environments.count == 4)
                #expect(environments.allSatisfy { $0 === environments[0] })
            }
            #expect(!Environment.isOpen(path: path))
        }
    }

    @Test func databasesCreatedConcurrentlyAreAllKept() throws {
        try withTemporaryDirectory { dir in
            let env = try openEnvironment(at: dir.file()) { $0.maxDatabases = 64 }
            let created = Locked<[String: Database]>([:])
            let failures = Locked<[String]>([])
            let finished = Self.onThreads(4) { thread in
                for i in 0..<8 {
                    // Every thread creates the shared names and some of its own.
                    for name in ["shared\(i)", "own\(thread)-\(i)"] {
                        do {
                            let db = try env.createDatabase(named: name)
                            try env.write { txn in try txn.put(bytes(name), forKey: bytes("t\(thread)"), in: db) }
                            created.update { dbs in
                                if let earlier = dbs[name], earlier != db { failures.update { $0.append(name) } }
                                dbs[name] = db
                            }
                        } catch {
                            failures.update { $0.append("\(name): \(error)") }
                        }
                    }
                }
            }
            #expect(finished)
            #expect(failures.value == [])
            #expect(created.value.count == 8 + 32)
            #expect(try entryCount(of: .main, in: env) == 40)
            for i in 0..<8 {
                let db = try #require(try env.database(named: "shared\(i)"))
                #expect(try entryCount(of: db, in: env) == 4)
            }
        }
    }
}
