import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

final class Topic: Object {
    @Persisted(primaryKey: true) var value: String
    @Persisted var weight = 0
    @Persisted(originProperty: "topics") var pieces: LinkingObjects<Piece>
}

final class Columnist: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted(indexed: true) var name: String
    @Persisted(originProperty: "author") var pieces: LinkingObjects<Piece>
}

final class Piece: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var title = ""
    @Persisted var author: Columnist?
    @Persisted var topics: List<Topic>
    @Persisted var ratings: List<Int>
    @Persisted var labels: List<String?>
    @Persisted var related: List<Piece>
}

func collectionConfiguration(_ dir: URL) -> Realm.Configuration {
    makeConfiguration(dir, types: [Piece.self, Topic.self, Columnist.self])
}

/// What the test wrote, as plain values: the oracle every query is checked against.
private struct PieceValues {
    let id: Int
    let title: String
    let author: Int?
    let topics: [Int]
    let ratings: [Int]
    let labels: [String?]
}

/// The seed of the pieces `fill` writes.
private let pieceSeed: UInt64 = 42

private func topicWeight(_ t: Int) -> Int { (t * 7) % 6 }
private func topicName(_ t: Int) -> String { "t\(t)" }
private func columnistName(_ c: Int) -> String { "c\(c)" }

/// 300 pieces with random authors, topics (duplicates too), ratings and labels; 20 topics,
/// 8 columnists (one with no pieces). The same pieces every time (`pieceSeed`).
private func fill(_ realm: Realm, test: String = #function) throws -> [PieceValues] {
    print("\(test): pieces of seed \(pieceSeed)")
    var rng = SeededGenerator(state: pieceSeed)
    let topics = (0..<20).map { t in
        let topic = Topic()
        topic.value = topicName(t)
        topic.weight = topicWeight(t)
        return topic
    }
    let columnists = (0..<8).map { c in
        let columnist = Columnist()
        columnist.id = "id\(c)"
        columnist.name = columnistName(c)
        return columnist
    }
    var values: [PieceValues] = []
    try realm.write {
        for c in columnists { realm.add(c) }
        for id in 0..<300 {
            let author = Int.random(in: 0..<8, using: &rng)
            let v = PieceValues(
                id: id, title: ["alpha", "beta", "gamma", ""][id % 4] + "\(id % 10)",
                author: author == 7 || id % 11 == 0 ? nil : author,
                topics: (0..<Int.random(in: 0...5, using: &rng)).map { _ in Int.random(in: 0..<20, using: &rng) },
                ratings: (0..<Int.random(in: 0...4, using: &rng)).map { _ in Int.random(in: 0...5, using: &rng) },
                labels: (0..<Int.random(in: 0...3, using: &rng)).map { _ in ["a", "b", nil, ""][Int.random(in: 0..<4, using: &rng)] })
            let piece = Piece()
            piece.id = id
            piece.title = v.title
            piece.author = v.author.map { columnists[$0] }
            piece.topics.append(objectsIn: v.topics.map { topics[$0] })
            piece.ratings.append(objectsIn: v.ratings)
            piece.labels.append(objectsIn: v.labels)
            realm.add(piece, update: .modified)
            values.append(v)
        }
    }
    return values
}

@Suite struct CollectionQueryTests {
    @Test func queriesThroughListsAndBacklinksMatchWhatWasWritten() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            let pieces = try fill(realm)
            let t3 = realm.object(ofType: Topic.self, forPrimaryKey: "t3")!
            let t5 = realm.object(ofType: Topic.self, forPrimaryKey: "t5")!
            func avg(_ xs: [Int]) -> Double? { xs.isEmpty ? nil : Double(xs.reduce(0, +)) / Double(xs.count) }
            let cases: [(String, [Any], (PieceValues) -> Bool)] = [
                ("ANY topics.value == 't3'", [], { $0.topics.contains(3) }),
                ("topics.value == 't3'", [], { $0.topics.contains(3) }),
                ("ALL topics.weight > 2", [], { $0.topics.allSatisfy { topicWeight($0) > 2 } }),
                ("NONE topics.value BEGINSWITH 't1'", [], { !$0.topics.contains { topicName($0).hasPrefix("t1") } }),
                ("ANY topics.value IN {'t1', 't2'}", [], { $0.topics.contains { $0 == 1 || $0 == 2 } }),
                ("topics == %@", [t3], { $0.topics.contains(3) }),
                ("%@ IN topics", [t5], { $0.topics.contains(5) }),
                ("ANY topics IN %@", [[t3, t5]], { $0.topics.contains { $0 == 3 || $0 == 5 } }),
                ("NOT topics == %@ AND title BEGINSWITH 'a'", [t3], { !$0.topics.contains(3) && $0.title.hasPrefix("a") }),
                ("topics.@count > 2", [], { $0.topics.count > 2 }),
                ("topics.@count == 0", [], { $0.topics.isEmpty }),
                ("topics.@size BETWEEN {1, 2}", [], { (1...2).contains($0.topics.count) }),
                ("topics.@sum.weight > 10", [], { $0.topics.map(topicWeight).reduce(0, +) > 10 }),
                ("topics.@max.weight < 3", [], { ($0.topics.map(topicWeight).max() ?? -1) < 3 && !$0.topics.isEmpty }),
                ("topics.@avg.weight == nil", [], { $0.topics.isEmpty }),
                ("ratings.@sum > 10", [], { $0.ratings.reduce(0, +) > 10 }),
                ("ratings.@avg >= 3", [], { (avg($0.ratings) ?? -1) >= 3 }),
                ("ratings.@min < 1", [], { ($0.ratings.min() ?? 99) < 1 }),
                ("ratings.@max == 5", [], { $0.ratings.max() == 5 }),
                ("ANY ratings > 4", [], { $0.ratings.contains { $0 > 4 } }),
                ("ALL ratings BETWEEN {1, 4}", [], { $0.ratings.allSatisfy { (1...4).contains($0) } }),
                ("3 IN ratings", [], { $0.ratings.contains(3) }),
                ("ratings.@count > ratings.@count", [], { _ in false }),
                ("'a' IN labels", [], { $0.labels.contains("a") }),
                ("labels CONTAINS 'b'", [], { $0.labels.contains("b") }),
                ("ANY labels == nil", [], { $0.labels.contains(nil) }),
                ("ANY labels ==[c] 'A'", [], { $0.labels.contains("a") }),
                ("NONE labels == ''", [], { !$0.labels.contains("") }),
                ("SUBQUERY(topics, $t, $t.weight > 3 AND $t.value != 't1').@count >= 2", [], {
                    $0.topics.filter { topicWeight($0) > 3 && $0 != 1 }.count >= 2
                }),
                ("SUBQUERY(ratings, $r, $r >= 4).@count == 1", [], { $0.ratings.filter { $0 >= 4 }.count == 1 }),
                ("author.name == 'c3'", [], { $0.author == 3 }),
                ("author.name IN {'c1', 'c2'} AND ANY topics.weight == 0", [], {
                    ($0.author == 1 || $0.author == 2) && $0.topics.contains { topicWeight($0) == 0 }
                }),
                ("author.pieces.@count > 40", [], { p in
                    p.author.map { a in pieces.filter { $0.author == a }.count > 40 } ?? false
                }),
                ("author.name != 'c3'", [], { $0.author != 3 }),
            ]
            for (format, args, oracle) in cases {
                guard format != "ratings.@count > ratings.@count" else {
                    #expect(throws: RealmError.self, "\(format)") { _ = try realm.objects(Piece.self).filter(checking: format, argumentArray: args) }
                    continue
                }
                let expected = pieces.filter(oracle).map(\.id)
                // Every query selects some pieces and leaves others: a broken test would show.
                #expect(!expected.isEmpty && expected.count < pieces.count, "\(format) selects \(expected.count)")
                let results = realm.objects(Piece.self).filter(format, argumentArray: args)
                #expect(results.map(\.id) == expected, "\(format)")
                #expect(results.count == expected.count, "\(format)")
            }

            // From the other side: backlinks in queries.
            let topicCases: [(String, (Int) -> Bool)] = [
                ("pieces.@count == 0", { t in !pieces.contains { $0.topics.contains(t) } }),
                ("pieces.@count > 20", { t in pieces.filter { $0.topics.contains(t) }.count > 20 }),
                ("ANY pieces.title BEGINSWITH 'gamma'", { t in pieces.contains { $0.topics.contains(t) && $0.title.hasPrefix("gamma") } }),
                ("ANY pieces.author.name == 'c2'", { t in pieces.contains { $0.topics.contains(t) && $0.author == 2 } }),
            ]
            for (format, oracle) in topicCases {
                let expected = (0..<20).filter(oracle).map(topicName).sorted()
                #expect(realm.objects(Topic.self).filter(format).map(\.value) == expected, "\(format)")
            }
            // Links to indexed properties go through the index, then the links' own indexes.
            let pieceObjects = realm.objects(Piece.self)
            #expect(pieceObjects.filter("author.name == 'c3'").explain().hasPrefix("link lookup on Piece.author from [index equality on Columnist.name"))
            #expect(pieceObjects.filter("ANY topics.value == 't3'").explain().hasPrefix("link lookup on Piece.topics from [primary-key lookup"))
            #expect(pieceObjects.filter("author.name == nil").explain().hasPrefix("full scan"), "a null link matches: no lookup")
            #expect(pieceObjects.filter("ALL topics.value == 't3'").explain().hasPrefix("full scan"), "an empty list matches ALL")
            let quiet = realm.objects(Columnist.self).filter("pieces.@count == 0").map(\.name)
            #expect(quiet == ["c7"])
        }
    }

    @Test func theQueryLanguageReachesIntoCollectionsAsPredicateStringsDo() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            _ = try fill(realm)
            let t3 = realm.object(ofType: Topic.self, forPrimaryKey: "t3")!
            let t5 = realm.object(ofType: Topic.self, forPrimaryKey: "t5")!
            let pieces = realm.objects(Piece.self)
            let pairs: [(Results<Piece>, String, [Any])] = [
                (pieces.where { $0.topics.value == "t3" }, "ANY topics.value == 't3'", []),
                (pieces.where { $0.topics.weight > 3 && $0.title.starts(with: "b") }, "ANY topics.weight > 3 AND title BEGINSWITH 'b'", []),
                (pieces.where { $0.topics.count > 2 }, "topics.@count > 2", []),
                (pieces.where { $0.topics.contains(t3) }, "%@ IN topics", [t3]),
                (pieces.where { $0.topics.containsAny(in: [t3, t5]) }, "ANY topics IN %@", [[t3, t5]]),
                (pieces.where { !$0.topics.contains(t3) }, "NOT %@ IN topics", [t3]),
                (pieces.where { $0.ratings.contains(3) }, "3 IN ratings", []),
                (pieces.where { $0.ratings.avg >= 3 }, "ratings.@avg >= 3", []),
                (pieces.where { $0.ratings.sum > 10 }, "ratings.@sum > 10", []),
                (pieces.where { $0.ratings.min == 0 }, "ratings.@min == 0", []),
                (pieces.where { $0.ratings.max.contains(2...4) }, "ratings.@max BETWEEN {2, 4}", []),
                (pieces.where { $0.labels.contains(nil) }, "ANY labels == nil", []),
                (pieces.where { ($0.topics.weight > 3).count >= 2 }, "SUBQUERY(topics, $t, $t.weight > 3).@count >= 2", []),
                (pieces.where { $0.author.name == "c3" }, "author.name == 'c3'", []),
                (pieces.where { $0.author.pieces.count > 40 }, "author.pieces.@count > 40", []),
                // Aggregates of a property over a list of objects, as RealmSwift writes them.
                (pieces.where { $0.topics.weight.avg > 3 }, "topics.@avg.weight > 3", []),
                (pieces.where { $0.topics.weight.max >= 4 }, "topics.@max.weight >= 4", []),
                (pieces.where { $0.topics.weight.min < 2 }, "topics.@min.weight < 2", []),
                (pieces.where { $0.topics.weight.sum > 10 }, "topics.@sum.weight > 10", []),
            ]
            for (built, format, args) in pairs {
                let expected = pieces.filter(format, argumentArray: args).map(\.id)
                #expect(!expected.isEmpty, "\(format)")
                #expect(built.map(\.id) == expected, "\(format)")
            }
            let topics = realm.objects(Topic.self)
            #expect(topics.where { $0.pieces.count == 0 }.map(\.value) == (topics.filter("pieces.@count == 0").map(\.value)))
            #expect(topics.where { $0.pieces.title.starts(with: "gamma") }.count == (topics.filter("ANY pieces.title BEGINSWITH 'gamma'").count))
        }
    }

    @Test func linkingObjectsAreLiveAndCountedFromTheIndexes() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            let pieces = try fill(realm)
            let t3 = realm.object(ofType: Topic.self, forPrimaryKey: "t3")!
            let c2 = realm.object(ofType: Columnist.self, forPrimaryKey: "id2")!
            let withT3 = pieces.filter { $0.topics.contains(3) }.map(\.id)
            #expect(t3.pieces.count == withT3.count, "a piece holding t3 twice counts once")
            #expect(t3.pieces.map(\.id) == withT3)
            #expect(c2.pieces.count == pieces.filter { $0.author == 2 }.count)
            #expect(t3.pieces.explain().contains("link lookup on Piece.topics (1 object)"))
            #expect(t3.pieces.explain().contains("count from index"))
            #expect(c2.pieces.explain().contains("index equality on Piece.author"))
            #expect(c2.pieces.where { $0.title.starts(with: "beta") }.map(\.id) == pieces.filter { $0.author == 2 && $0.title.hasPrefix("beta") }.map(\.id))
            #expect(t3.pieces.sorted(byKeyPath: "id", ascending: false).first?.id == withT3.last)

            // Live: a write changes what the same collection shows.
            let backlinks = t3.pieces
            let before = backlinks.count
            let piece = realm.object(ofType: Piece.self, forPrimaryKey: withT3[0])!
            try realm.write {
                while let i = piece.topics.index(of: t3) { piece.topics.remove(at: i) }
                piece.author = c2
            }
            #expect(backlinks.count == before - 1)
            #expect(!backlinks.contains { $0.id == withT3[0] })
            #expect(c2.pieces.contains { $0.id == withT3[0] })
            try realm.write { realm.delete(realm.object(ofType: Piece.self, forPrimaryKey: withT3[1])!) }
            #expect(backlinks.count == before - 2)

            // Unmanaged: empty.
            #expect(Topic().pieces.isEmpty && Topic().pieces.count == 0)
            #expect(t3.objectSchema["pieces"]?.type == .linkingObjects)
            #expect("\(t3.objectSchema["pieces"]!)" == "pieces: LinkingObjects<Piece>")
        }
    }

    @Test func linkingObjectsNotifyTheirObservers() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            _ = try fill(realm)
            let t4 = realm.object(ofType: Topic.self, forPrimaryKey: "t4")!
            var changes: [String] = []
            let token = t4.pieces.observe { change in
                switch change {
                case .initial(let objects): changes.append("initial \(objects.count)")
                case .update(let objects, let deletions, let insertions, _):
                    changes.append("update \(objects.count) -\(deletions.count) +\(insertions.count)")
                case .error(let error): changes.append("error \(error)")
                }
            }
            defer { token.invalidate() }
            let count = t4.pieces.count
            try realm.write {
                let piece = Piece()
                piece.id = 1000
                piece.topics.append(t4)
                realm.add(piece)
            }
            realm.refresh()
            #expect(changes == ["initial \(count)", "update \(count + 1) -0 +1"])
        }
    }

    @Test func malformedCollectionQueriesSayWhatIsWrong() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            let cases: [(String, String)] = [
                ("ANY title == 'x'", "ANY at offset 0 needs a key path through a list or LinkingObjects"),
                ("topics.@median > 1", "unknown aggregate '@median'"),
                ("topics.@sum > 1", "needs a property of Topic after it"),
                ("labels.@sum > 1", "needs numbers"),
                ("ratings.value == 1", "whose values have no property 'value'"),
                ("SUBQUERY(topics, t, t.weight > 1).@count > 0", "expected a variable such as $x"),
                ("SUBQUERY(topics, $t, weight > 1).@count > 0", "inside SUBQUERY, key paths start with its variable"),
                ("SUBQUERY(topics, $t, $t.weight > 1) > 0", "expected .@count after SUBQUERY"),
                ("topics.@count == 'many'", "cannot compare"),
                ("topics.pieces.title == 'x'", "goes through two collections"),
            ]
            for (format, message) in cases {
                do {
                    _ = try realm.objects(Piece.self).filter(checking: format)
                    Issue.record("\(format) was accepted")
                } catch let error as RealmError {
                    #expect(error.message.contains(message), "\(format): \(error.message)")
                }
            }
        }
    }
}

@Suite struct ListCollectionTests {
    @Test func aListOfObjectsIsQueriedSortedAndAggregatedInListOrder() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            let pieces = try fill(realm)
            let withDuplicates = pieces.first { Set($0.topics).count < $0.topics.count && $0.topics.count > 2 }!
            let piece = realm.object(ofType: Piece.self, forPrimaryKey: withDuplicates.id)!
            let weights = withDuplicates.topics.map(topicWeight)
            #expect(piece.topics.asResults!.map(\.value) == withDuplicates.topics.map(topicName), "list order, duplicates kept")
            #expect(piece.topics.where { $0.weight >= 2 }.map(\.value) == withDuplicates.topics.filter { topicWeight($0) >= 2 }.map(topicName))
            #expect(piece.topics.filter("weight < %@", 2).count == weights.filter { $0 < 2 }.count)
            #expect(piece.topics.sorted(byKeyPath: "weight").map(\.weight) == weights.sorted())
            #expect(piece.topics.sum(ofProperty: "weight") == weights.reduce(0, +))
            #expect(piece.topics.max(ofProperty: "weight") == weights.max())
            #expect(piece.topics.asResults!.explain().hasPrefix("primary-key lookup of \(withDuplicates.topics.count) keys"))

            let rated = realm.object(ofType: Piece.self, forPrimaryKey: pieces.first { $0.ratings.count > 2 }!.id)!
            let ratings = Array(rated.ratings)
            #expect(rated.ratings.min() == ratings.min() && rated.ratings.max() == ratings.max())
            #expect(rated.ratings.sum() == ratings.reduce(0, +))
            #expect(rated.ratings.average() == Double(ratings.reduce(0, +)) / Double(ratings.count))
            #expect(rated.ratings.sorted(ascending: false) == ratings.sorted(by: >))
            #expect(Piece().ratings.average() as Double? == nil && Piece().ratings.sum() == 0)
        }
    }

    @Test func aFrozenListKeepsItsVersion() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            _ = try fill(realm)
            let piece = realm.object(ofType: Piece.self, forPrimaryKey: 1)!
            let frozen = piece.ratings.freeze()
            let before = Array(frozen)
            #expect(frozen.isFrozen && !piece.ratings.isFrozen)
            try realm.write { piece.ratings.append(42) }
            #expect(Array(frozen) == before)
            #expect(Array(piece.ratings) == before + [42])
        }
    }

    @Test func aListReportsItsOwnChanges() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            let piece = Piece()
            piece.id = 1
            piece.ratings.append(objectsIn: [1, 2, 3])
            try realm.write { realm.add(piece) }
            var seen: [String] = []
            let token = piece.ratings.observe { change in
                switch change {
                case .initial(let list): seen.append("initial \(Array(list))")
                case .update(let list, let d, let i, let m): seen.append("\(Array(list)) -\(d) +\(i) ~\(m)")
                case .error(let error): seen.append("error \(error)")
                }
            }
            defer { token.invalidate() }
            try realm.write { piece.ratings.append(4) }
            try realm.write { piece.ratings[0] = 10 }
            try realm.write { piece.ratings.remove(at: 1) }
            try realm.write { piece.title = "not the list" }
            try realm.write { realm.delete(piece) }
            #expect(seen == [
                "initial [1, 2, 3]",
                "[1, 2, 3, 4] -[] +[3] ~[]",
                "[10, 2, 3, 4] -[] +[] ~[0]",
                "[10, 3, 4] -[1] +[] ~[]",
                "[] -[0, 1, 2] +[] ~[]",
            ])
        }
    }
}


/// Generic code over any collection of pieces, as a data source would be written.
private func heavyTitles<C: RealmCollection>(_ pieces: C) -> [Int] where C.Element == Piece {
    pieces.where { $0.topics.weight > 3 }.sorted(byKeyPath: "id", ascending: true).map(\.id)
}

/// Aggregates by key path over any collection, as RealmSwift's collection tests call them.
private func idFigures(_ pieces: some RealmCollection<Piece>) -> (min: Int?, max: Int?, sum: Int, average: Double?) {
    (pieces.min(of: \.id), pieces.max(of: \.id), pieces.sum(of: \.id), pieces.average(of: \.id))
}

@Suite struct RealmCollectionTests {
    @Test func keyPathAggregatesWorkThroughTheProtocol() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            _ = try fill(realm)
            let holder = Piece()
            holder.id = 5000
            try realm.write {
                realm.add(holder)
                holder.related.append(objectsIn: realm.objects(Piece.self).where { $0.id >= 10 && $0.id < 20 })
            }
            let expected = (min: 10, max: 19, sum: (10..<20).reduce(0, +), average: 14.5)
            for figures in [idFigures(holder.related), idFigures(AnyRealmCollection(holder.related)), idFigures(holder.related.asResults!)] {
                #expect(figures.min == expected.min && figures.max == expected.max)
                #expect(figures.sum == expected.sum && figures.average == expected.average)
            }
            let none = idFigures(realm.objects(Piece.self).where { $0.id < 0 })
            #expect(none.min == nil && none.max == nil && none.sum == 0 && none.average == nil)
        }
    }

    /// RealmSwift's key-value coding on collections: values by key path, and the collection
    /// operators, with Swift values where RealmSwift gives NSNumbers.
    @Test func valuesAndCollectionOperatorsByKeyPath() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            let holder = Piece()
            holder.id = 100
            try realm.write {
                realm.add(holder)
                for id in 1...3 {
                    let piece = Piece()
                    piece.id = id
                    piece.title = id == 3 ? "one" : ["one", "two"][id - 1]
                    piece.author = id == 2 ? nil : realm.create(Columnist.self, value: ["id": "c\(id)", "name": "c\(id)"])
                    holder.related.append(piece)
                }
            }
            let collection = AnyRealmCollection(holder.related)
            #expect(collection.value(forKeyPath: "@count") as? Int == 3)
            #expect(collection.value(forKeyPath: "@min.id") as? Int == 1)
            #expect(collection.value(forKeyPath: "@max.id") as? Int == 3)
            #expect(collection.value(forKeyPath: "@sum.id") as? Int == 6)
            #expect(collection.value(forKeyPath: "@avg.id") as? Double == 2.0)
            #expect((collection.value(forKeyPath: "title") as? [Any?])?.map { $0 as? String } == ["one", "two", "one"])
            #expect((collection.value(forKeyPath: "@unionOfObjects.title") as? [Any?])?.map { $0 as? String } == ["one", "two", "one"])
            #expect((collection.value(forKeyPath: "@distinctUnionOfObjects.title") as? [Any?])?.map { $0 as? String } == ["one", "two"])
            #expect((collection.value(forKeyPath: "author.name") as? [Any?])?.map { $0 as? String } == ["c1", nil, "c3"])
            #expect(collection.value(forKey: "self").map { ($0 as? Piece)?.id } == [1, 2, 3])
            #expect(holder.value(forKeyPath: "related") is List<Piece>)
            // A list property given a collection of objects takes its objects, as RealmSwift's
            // init(value:) and create do.
            try realm.write {
                let copy = realm.create(Piece.self, value: ["id": 200, "related": realm.objects(Piece.self).where { $0.id <= 2 }])
                #expect(copy.related.map(\.id) == [1, 2])
                let unmanaged = Piece(value: ["id": 201, "related": holder.related])
                #expect(unmanaged.related.map(\.id) == [1, 2, 3])
                realm.add(unmanaged)
                let c1 = try #require(realm.object(ofType: Columnist.self, forPrimaryKey: "c1"))
                let fromBacklinks = realm.create(Piece.self, value: ["id": 202, "related": c1.pieces])
                #expect(fromBacklinks.related.map(\.id) == [1])
            }
            let empty = AnyRealmCollection(realm.objects(Piece.self).where { $0.id < 0 })
            #expect(empty.value(forKeyPath: "@count") as? Int == 0)
            #expect(empty.value(forKeyPath: "@max.id") == nil && empty.value(forKeyPath: "@avg.id") == nil)
            #expect(empty.value(forKeyPath: "@sum.id") as? Int == 0)
        }
    }

    @Test func resultsListsAndBacklinksAreOneKindOfCollection() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: collectionConfiguration(dir))
            let pieces = try fill(realm)
            let heavy = Set(pieces.filter { $0.topics.contains { topicWeight($0) > 3 } }.map(\.id))
            let t3 = realm.object(ofType: Topic.self, forPrimaryKey: "t3")!
            let withT3 = Set(pieces.filter { $0.topics.contains(3) }.map(\.id))

            #expect(heavyTitles(realm.objects(Piece.self)) == heavy.sorted())
            #expect(heavyTitles(t3.pieces) == heavy.intersection(withT3).sorted())
            let holder = Piece()
            holder.id = 5000
            try realm.write {
                realm.add(holder)
                holder.related.append(objectsIn: realm.objects(Piece.self).where { $0.id < 40 })
            }
            #expect(heavyTitles(holder.related) == heavy.filter { $0 < 40 }.sorted())

            // Erased: one stored property holds any of them.
            var shown = AnyRealmCollection(realm.objects(Piece.self))
            #expect(shown.count == pieces.count + 1)
            shown = AnyRealmCollection(t3.pieces)
            #expect(shown.count == withT3.count && Set(shown.map(\.id)) == withT3)
            #expect(heavyTitles(shown) == heavy.intersection(withT3).sorted())
            shown = AnyRealmCollection(holder.related)
            #expect(shown.map(\.id) == Array(0..<40))
            #expect(shown[3].id == 3 && shown.index(of: shown[7]) == 7)
            #expect(shown.sum(ofProperty: "id") == (0..<40).reduce(0, +))
            #expect(shown.filter("id >= %@", argumentArray: [35]).count == 5)
            var changes = 0
            let token = shown.observeAsResults { _ in changes += 1 }
            #expect(changes == 1, "the initial delivery")
            token.invalidate()
        }
    }
}
