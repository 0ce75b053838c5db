import Foundation
@testable import LMDBRealm
import TestSupport
import Testing

/// `CollectionDiff`: the deletions and insertions that turn one ordered list of keys into
/// another, keeping as many objects in place as can be (a longest run in the same order).
@Suite struct CollectionDiffTests {
    static func key(_ n: Int) -> ObjectKey {
        var bytes: [UInt8] = []
        KeyEncoding.appendBigEndian(UInt64(n), to: &bytes)
        return ObjectKey(bytes)
    }

    /// Applies the diff to `old` as a change set is applied: deletions (old indices), then
    /// insertions (new indices), the inserted keys taken from `new`.
    static func apply(_ diff: CollectionDiff, old: [ObjectKey], new: [ObjectKey]) -> [ObjectKey] {
        var result = old
        for i in diff.deletions.reversed() { result.remove(at: i) }
        for j in diff.insertions { result.insert(new[j], at: j) }
        return result
    }

    /// The length of a longest strictly increasing subsequence, the slow and obvious way.
    static func longestIncreasingLength(_ values: [Int]) -> Int {
        var best = [Int](repeating: 1, count: values.count)
        for i in values.indices {
            for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) }
        }
        return best.max() ?? 0
    }

    @Test func equalListsChangeNothing() {
        let keys = (0..<5).map(Self.key)
        let diff = CollectionDiff(old: keys, new: keys)
        #expect(diff.deletions.isEmpty && diff.insertions.isEmpty)
        #expect(diff.keptOldToNew == [0, 1, 2, 3, 4])
    }

    @Test func aMoveIsADeletionAndAnInsertion() {
        let old = [1, 2, 3, 4].map(Self.key)
        let new = [2, 3, 4, 1].map(Self.key)
        let diff = CollectionDiff(old: old, new: new)
        #expect(diff.deletions == [0])
        #expect(diff.insertions == [3])
        #expect(diff.keptOldToNew == [-1, 0, 1, 2])
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func randomListsAreTurnedIntoEachOtherKeepingALongestRun(seed: UInt64) {
        var random = SeededGenerator(state: seed)
        for _ in 0..<200 {
            let universe = Int.random(in: 0...30, using: &random)
            let old = (0..<universe).filter { _ in Bool.random(using: &random) }.shuffled(using: &random).map(Self.key)
            let new = (0..<universe).filter { _ in Bool.random(using: &random) }.shuffled(using: &random).map(Self.key)
            let diff = CollectionDiff(old: old, new: new)
            #expect(Self.apply(diff, old: old, new: new) == new)
            #expect(diff.deletions == diff.deletions.sorted() && diff.insertions == diff.insertions.sorted())
            // Kept objects are in both lists, at the positions the map says.
            for (i, j) in diff.keptOldToNew.enumerated() where j >= 0 { #expect(old[i] == new[j]) }
            // As few moves as can be: every object of a longest same-order run stays.
            let newIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1, $0) })
            let survivors = old.compactMap { newIndex[$0] }
            #expect(diff.keptOldToNew.filter { $0 >= 0 }.count == Self.longestIncreasingLength(survivors))
        }
    }
}
