import Foundation
import LMDBRealm
import TestSupport
import Testing

/// Lists as synced files merge them (`SyncList`): replicas that edit one list concurrently and
/// receive each other's operations, in any order the shared log can deliver them, hold the same
/// elements; and a write's operations make exactly the list it wrote.
@Suite struct SyncListTests {
    private static func value(_ text: String) -> [UInt8]? { Array(text.utf8) }
    private static func text(_ list: SyncList) -> [String] { list.values.map { $0.map { String(decoding: $0, as: UTF8.self) } ?? "nil" } }

    /// A random edit of `elements`: an insertion, a removal, a move or a replacement, at random
    /// places, now and then several at once (each changes what the next sees).
    private static func edit(_ elements: [[UInt8]?], _ random: inout SeededGenerator, label: String) -> [[UInt8]?] {
        var out = elements
        for step in 0..<Int.random(in: 1...3, using: &random) {
            let new = Int.random(in: 0..<5, using: &random) == 0 ? nil : value("\(label).\(step)")
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !out.isEmpty:
                out.remove(at: Int.random(in: 0..<out.count, using: &random))
            case 1 where out.count > 1:
                let moved = out.remove(at: Int.random(in: 0..<out.count, using: &random))
                out.insert(moved, at: Int.random(in: 0...out.count, using: &random))
            case 2 where !out.isEmpty:
                out[Int.random(in: 0..<out.count, using: &random)] = new
            default:
                out.insert(new, at: Int.random(in: 0...out.count, using: &random))
            }
        }
        return out
    }

    @Test(arguments: 0..<200) func aWritesOperationsMakeTheListItWrote(seed: UInt64) {
        var random = SeededGenerator(state: seed)
        var list = SyncList()
        for round in 0..<8 {
            let wanted = Self.edit(list.values, &random, label: "r\(round)")
            let stamp = SyncStamp(clock: UInt64(round + 1) << 16, node: "a")
            let operations = list.operations(making: wanted, stamp: stamp)
            for operation in operations { list.apply(operation) }
            #expect(list.values == wanted, "seed \(seed), round \(round)")
            // Applying them again changes nothing, and the bytes keep every name.
            for operation in operations { list.apply(operation) }
            #expect(list.values == wanted)
            #expect((try? SyncList(decoding: list.encoded())) == list)
        }
    }

    /// Three replicas edit one list; each write's operations go into a shared log when it is
    /// made (a replica's writes in its order, each after what its replica had received), and
    /// every replica receives the log's operations in the log's order, interleaved at random
    /// with its own writes. In the end every replica holds the same list.
    @Test(arguments: 0..<200) func replicasConvergeWhateverTheInterleaving(seed: UInt64) {
        var random = SeededGenerator(state: seed)
        let nodes = ["a", "b", "c"]
        var replicas = Array(repeating: SyncList(), count: nodes.count)
        var received = Array(repeating: 0, count: nodes.count)
        var clocks = Array(repeating: UInt64(0), count: nodes.count)
        var log: [(node: Int, operations: [SyncListOperation], clock: UInt64)] = []
        for step in 0..<30 {
            let n = Int.random(in: 0..<nodes.count, using: &random)
            if Bool.random(using: &random), received[n] < log.count {
                // Receives some of the log.
                let upTo = Int.random(in: (received[n] + 1)...log.count, using: &random)
                for entry in log[received[n]..<upTo] where entry.node != n {
                    for operation in entry.operations { replicas[n].apply(operation) }
                    clocks[n] = max(clocks[n], entry.clock)
                }
                received[n] = upTo
            } else {
                clocks[n] += 1
                let stamp = SyncStamp(clock: clocks[n], node: nodes[n])
                let wanted = Self.edit(replicas[n].values, &random, label: "\(nodes[n])\(step)")
                let operations = replicas[n].operations(making: wanted, stamp: stamp)
                for operation in operations { replicas[n].apply(operation) }
                #expect(replicas[n].values == wanted)
                log.append((n, operations, clocks[n]))
            }
        }
        for n in nodes.indices {
            for entry in log[received[n]...] where entry.node != n {
                for operation in entry.operations { replicas[n].apply(operation) }
            }
        }
        for n in nodes.indices.dropFirst() {
            #expect(replicas[n].values == replicas[0].values, "seed \(seed)")
        }
        // The same list again from the operations that rebuild one replica's.
        #expect(SyncList(operations: replicas[0].rebuildingOperations).values == replicas[0].values)
    }

    /// Two replicas insert at the same place without seeing each other's insertion: both
    /// elements are kept, the later write's first, on both; a removal removes its element
    /// only, and an element inserted next to it concurrently stays.
    @Test func concurrentInsertionsAtOnePlaceKeepBoth() {
        let base = SyncList().operations(making: [Self.value("x"), Self.value("y")], stamp: SyncStamp(clock: 1, node: "a"))
        var a = SyncList(operations: base)
        var b = SyncList(operations: base)
        let fromA = a.operations(making: [Self.value("x"), Self.value("a"), Self.value("y")], stamp: SyncStamp(clock: 5, node: "a"))
        let fromB = b.operations(making: [Self.value("x"), Self.value("b")], stamp: SyncStamp(clock: 6, node: "b"))
        for operation in fromA { a.apply(operation) }
        for operation in fromB { b.apply(operation) }
        for operation in fromB { a.apply(operation) }
        for operation in fromA { b.apply(operation) }
        #expect(Self.text(a) == ["x", "b", "a"])
        #expect(Self.text(b) == Self.text(a))
    }
}
