import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

// Models with an indexed `rank` and a primary key of each kind: a sort by rank with a limit
// walks the index and makes accessors from keys alone, reading the primary key from the key.

final class RankedByInt: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted(indexed: true) var rank = 0
    @Persisted var name = ""
}

final class RankedByString: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted(indexed: true) var rank = 0
    @Persisted var name = ""
}

final class RankedByUUID: Object {
    @Persisted(primaryKey: true) var id: UUID
    @Persisted(indexed: true) var rank = 0
    @Persisted var name = ""
}

final class RankedByObjectId: Object {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted(indexed: true) var rank = 0
    @Persisted var name = ""
}

final class RankedByOptionalInt: Object {
    @Persisted(primaryKey: true) var id: Int?
    @Persisted(indexed: true) var rank = 0
    @Persisted var name = ""
}

/// No primary key: the key is an auto-assigned number.
final class RankedByAutoKey: Object {
    @Persisted(indexed: true) var rank = 0
    @Persisted var name = ""
}

private let rankedTypes: [Object.Type] = [
    RankedByInt.self, RankedByString.self, RankedByUUID.self, RankedByObjectId.self, RankedByOptionalInt.self,
    RankedByAutoKey.self,
]

/// Ranks with ties (every rank three times) in an order unrelated to the keys.
private func rank(_ i: Int) -> Int { (i * 7) % 40 }

@Suite struct IndexOrderTests {
    /// What the walk must produce: by rank, ties in key order (a stable sort of key order).
    private func expected(_ names: [(name: String, rank: Int)], ascending: Bool, limit: Int) -> [String] {
        let byRank = names.enumerated().sorted { a, b in
            a.element.rank != b.element.rank
                ? (ascending ? a.element.rank < b.element.rank : a.element.rank > b.element.rank) : a.offset < b.offset
        }
        return byRank.prefix(limit).map(\.element.name)
    }

    @Test func aLoopOverAnIndexOrderedLimitReadsEveryKindOfPrimaryKey() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: rankedTypes))
            let longPrefix = String(repeating: "k", count: 30)  // keys longer than the 16 inline bytes
            let uuids = (0..<120).map { _ in UUID() }.sorted { $0.uuidString < $1.uuidString }
            let objectIds = (0..<120).map { _ in ObjectId.generate() }
            try realm.write {
                for i in 0..<120 {
                    let a = RankedByInt()
                    a.id = i - 60  // negative keys too
                    a.rank = rank(i)
                    a.name = "int \(i - 60)"
                    realm.add(a)
                    let b = RankedByString()
                    b.id = i % 2 == 0 ? String(format: "s%03d", i) : longPrefix + String(format: "%03d", i)
                    b.rank = rank(i)
                    b.name = "string \(b.id)"
                    realm.add(b)
                    let c = RankedByUUID()
                    c.id = uuids[i]
                    c.rank = rank(i)
                    c.name = "uuid \(i)"
                    realm.add(c)
                    let d = RankedByObjectId()
                    d.id = objectIds[i]
                    d.rank = rank(i)
                    d.name = "oid \(i)"
                    realm.add(d)
                    let e = RankedByAutoKey()
                    e.rank = rank(i)
                    e.name = "auto \(i)"
                    realm.add(e)
                }
                for i in 0..<10 {
                    let o = RankedByOptionalInt()
                    o.id = i == 0 ? nil : i
                    o.rank = 5 - i % 3
                    o.name = "opt \(i)"
                    realm.add(o)
                }
            }

            func check<T: Object>(
                _ type: T.Type, id: (T) -> String, name: (T) -> String, rank: (T) -> Int,
                sourceLocation: SourceLocation = #_sourceLocation
            ) {
                let all = Array(realm.objects(type))  // key order
                let table = all.map { (name: name($0), rank: rank($0)) }
                let idByName = Dictionary(uniqueKeysWithValues: all.map { (name($0), id($0)) })
                for ascending in [true, false] {
                    for limit in [1, 3, 7, 50, 500] {
                        let results = realm.objects(type).sorted(byKeyPath: "rank", ascending: ascending).limit(limit)
                        #expect(results.explain().hasPrefix("index-ordered scan of"), sourceLocation: sourceLocation)
                        let want = expected(table, ascending: ascending, limit: limit)
                        // The primary key alone (decoded from the key), then another property
                        // (the record looked up on first read).
                        var ids: [String] = []
                        for object in results { ids.append(id(object)) }
                        #expect(ids == want.map { idByName[$0]! }, "\(type) ascending \(ascending) limit \(limit)", sourceLocation: sourceLocation)
                        var names: [String] = []
                        for object in results { names.append(name(object)) }
                        #expect(names == want, "\(type) ascending \(ascending) limit \(limit)", sourceLocation: sourceLocation)
                        // Subscripts and count on the results the loops evaluated.
                        #expect(results.count == want.count, sourceLocation: sourceLocation)
                        #expect(results.last.map(name) == want.last, sourceLocation: sourceLocation)
                        #expect(results.map(name) == want, sourceLocation: sourceLocation)
                    }
                }
            }
            check(RankedByInt.self, id: { String($0.id) }, name: \.name, rank: \.rank)
            check(RankedByString.self, id: \.id, name: \.name, rank: \.rank)
            check(RankedByUUID.self, id: \.id.uuidString, name: \.name, rank: \.rank)
            check(RankedByObjectId.self, id: \.id.stringValue, name: \.name, rank: \.rank)
            check(RankedByOptionalInt.self, id: { $0.id.map(String.init) ?? "nil" }, name: \.name, rank: \.rank)
            check(RankedByAutoKey.self, id: \.name, name: \.name, rank: \.rank)
        }
    }

    @Test func accessorsKeptFromTheLoopStayDistinctAndUsable() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: rankedTypes))
            try realm.write {
                for i in 0..<50 {
                    let a = RankedByInt()
                    a.id = i
                    a.rank = i
                    a.name = "n\(i)"
                    realm.add(a)
                }
            }
            var kept: [RankedByInt] = []
            for a in realm.objects(RankedByInt.self).sorted(byKeyPath: "rank", ascending: false).limit(5) { kept.append(a) }
            #expect(kept.map(\.id) == [49, 48, 47, 46, 45])
            #expect(Set(kept.map { ObjectIdentifier($0) }).count == 5, "no accessor re-pointed while held")
            #expect(kept.map(\.name) == ["n49", "n48", "n47", "n46", "n45"])
            #expect(!kept[0].isInvalidated)

            // Written to and deleted without their records ever read.
            var fresh: [RankedByInt] = []
            for a in realm.objects(RankedByInt.self).sorted(byKeyPath: "rank").limit(3) { fresh.append(a) }
            try realm.write {
                fresh[0].name = "renamed"
                realm.delete(fresh[1])
            }
            #expect(fresh[0].name == "renamed")
            #expect(fresh[1].isInvalidated)
            #expect(fresh[2].id == 2 && fresh[2].name == "n2")
            #expect(realm.indexProblems() == [])
            #expect(realm.objects(RankedByInt.self).sorted(byKeyPath: "rank").limit(3).map(\.id) == [0, 2, 3])
        }
    }

    @Test func aLoopSkipsObjectsDeletedWhileItRuns() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: rankedTypes))
            try realm.write {
                for i in 0..<20 {
                    let a = RankedByInt()
                    a.id = i
                    a.rank = 100 - i
                    a.name = "n\(i)"
                    realm.add(a)
                }
            }
            var seen: [Int] = []
            try realm.write {
                for a in realm.objects(RankedByInt.self).sorted(byKeyPath: "rank", ascending: false).limit(6) {
                    seen.append(a.id)
                    if a.id == 1 { realm.delete(realm.object(ofType: RankedByInt.self, forPrimaryKey: 3)!) }
                    _ = a.name  // read after the write moved the realm on
                }
            }
            #expect(seen == [0, 1, 2, 4, 5])
        }
    }

    @Test func anEmptyTableAndALimitOfZeroGiveNothing() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: rankedTypes))
            var n = 0
            for _ in realm.objects(RankedByInt.self).sorted(byKeyPath: "rank").limit(10) { n += 1 }
            try realm.write {
                let a = RankedByInt()
                a.id = 1
                realm.add(a)
            }
            for _ in realm.objects(RankedByInt.self).sorted(byKeyPath: "rank").limit(0) { n += 1 }
            #expect(n == 0)
        }
    }
}
