import Dispatch
import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// Random inserts, deletes, updates and sort-order changes from another thread; every change
/// set delivered must turn the previous list of objects into the new one, and report as
/// modified exactly the surviving objects whose observed properties changed.
@Suite(.serialized) struct RandomizedChangeSetTests {
    /// One object as an observer saw it.
    struct Seen: Equatable, Sendable {
        var id: String
        var url: String
        var leadParagraph: String
        var wordCount: Int
    }

    /// Checks each change set against the previous and the new state; collects failures.
    final class Checker: @unchecked Sendable {
        // @unchecked Sendable: used only on the observation queue, then read after it drained.
        let observesAll: Bool
        var previous: [Seen] = []
        var failures: [String] = []
        var deliveries = 0
        var modificationsSeen = 0
        var movesSeen = 0
        let latest = Collector<[String]>()

        init(observesAll: Bool) { self.observesAll = observesAll }

        func snapshot(_ results: Results<Article>) -> [Seen] {
            results.map { Seen(id: $0.id, url: $0.url, leadParagraph: $0.leadParagraph, wordCount: $0.wordCount) }
        }

        func observedChanged(_ a: Seen, _ b: Seen) -> Bool {
            // Observing every property, or only wordCount.
            a.wordCount != b.wordCount || (observesAll && (a.url != b.url || a.leadParagraph != b.leadParagraph))
        }

        func check(_ change: RealmCollectionChange<Results<Article>>) {
            switch change {
            case .initial(let results):
                previous = snapshot(results)
            case .update(let results, let deletions, let insertions, let modifications):
                deliveries += 1
                let now = snapshot(results)
                defer {
                    previous = now
                    latest.append(now.map(\.id))
                }
                guard deletions == deletions.sorted(), insertions == insertions.sorted(), modifications == modifications.sorted() else {
                    failures.append("indices not ascending: -\(deletions) +\(insertions) ~\(modifications)")
                    return
                }
                // Apply deletions, then insertions.
                let deleted = Set(deletions)
                var kept: [(old: Int, seen: Seen)] = previous.enumerated().filter { !deleted.contains($0.offset) }.map { ($0.offset, $0.element) }
                guard kept.count + insertions.count == now.count else {
                    failures.append("count: \(previous.count) - \(deletions.count) + \(insertions.count) != \(now.count)")
                    return
                }
                let inserted = Set(insertions)
                let survivorsInNew = now.enumerated().filter { !inserted.contains($0.offset) }.map(\.element)
                if kept.map(\.seen.id) != survivorsInNew.map(\.id) {
                    failures.append("applying -\(deletions) +\(insertions) to \(previous.map(\.id)) does not give \(now.map(\.id))")
                    return
                }
                movesSeen += deletions.filter { i in now.contains { $0.id == previous[i].id } }.count
                // Modifications: exactly the kept objects whose observed properties changed.
                var expected: [Int] = []
                for (k, item) in kept.enumerated() where observedChanged(item.seen, survivorsInNew[k]) { expected.append(item.old) }
                if expected != modifications {
                    failures.append("modifications \(modifications), expected \(expected)")
                }
                modificationsSeen += modifications.count
                kept.removeAll()
            case .error(let error):
                failures.append("error: \(error)")
            }
        }
    }

    static func run(
        logs: Bool, observesAll: Bool, test: String = #function, shape: @escaping @Sendable (Results<Article>) -> Results<Article>
    ) throws {
        let seed = SeededGenerator.testSeed("\(test) (logs: \(logs))")
        try withTemporaryDirectory { dir in
            var configuration = makeConfiguration(dir, types: [Article.self])
            configuration.recordsChangeLogs = logs
            let config = configuration
            let realm = try Realm(configuration: config)
            try realm.write { for i in 0..<40 { realm.add(Article(id: "k\(i)", wordCount: (i * 37) % 500)) } }
            let queue = DispatchQueue(label: "observer")
            let checker = Checker(observesAll: observesAll)
            let token = shape(realm.objects(Article.self)).observe(keyPaths: observesAll ? nil : ["wordCount"], on: queue) {
                checker.check($0)
            }
            queue.sync {}
            // Wait for `.initial`.
            _ = try onOtherThread { queue.sync {} }

            let expected = try onOtherThread { () -> [String] in
                var rng = SeededGenerator(state: seed)
                let writer = try Realm(configuration: config)
                var next = 40
                for _ in 0..<120 {
                    try writer.write {
                        let all = Array(writer.objects(Article.self))
                        for object in all {
                            switch Int.random(in: 0..<20, using: &rng) {
                            case 0: writer.delete(object)
                            case 1, 2: object.wordCount = Int.random(in: 0..<500, using: &rng)
                            case 3: object.url = "u\(Int.random(in: 0..<1000, using: &rng))"
                            case 4: object.leadParagraph = "unobserved \(Int.random(in: 0..<1000, using: &rng))"
                            default: break
                            }
                        }
                        for _ in 0..<Int.random(in: 0..<4, using: &rng) {
                            writer.add(Article(id: "k\(next)", wordCount: Int.random(in: 0..<500, using: &rng)))
                            next += 1
                        }
                        if Int.random(in: 0..<10, using: &rng) == 0 {
                            // Replace an object wholesale (upsert) now and then.
                            let replacement = Article(id: "k\(Int.random(in: 0..<next, using: &rng))", wordCount: Int.random(in: 0..<500, using: &rng))
                            writer.add(replacement, update: .modified)
                        }
                    }
                }
                return shape(writer.objects(Article.self)).map(\.id)
            }
            let caughtUp = checker.latest.wait(timeout: eventTimeout) { $0.last == expected }
            #expect(caughtUp != nil, "the observer never reached the final state (seed \(seed))")
            queue.sync {
                #expect(checker.failures.isEmpty, "seed \(seed): \(checker.failures.prefix(5))")
                #expect(checker.deliveries > 0)
            }
            token.invalidate()
            queue.sync {}
            queue.sync {}
        }
    }

    @Test(arguments: [true, false])
    func wholeTable(logs: Bool) throws {
        try Self.run(logs: logs, observesAll: true) { $0 }
    }

    @Test(arguments: [true, false])
    func filteredSortedAndLimited(logs: Bool) throws {
        try Self.run(logs: logs, observesAll: true) {
            $0.where { $0.wordCount > 100 }.sorted(byKeyPath: "wordCount", ascending: false).limit(25)
        }
    }

    @Test(arguments: [true, false])
    func sortedObservingOneProperty(logs: Bool) throws {
        try Self.run(logs: logs, observesAll: false) { $0.sorted(byKeyPath: "url") }
    }
}
