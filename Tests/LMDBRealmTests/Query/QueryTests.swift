import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// Objects for query tests: every section, a spread of word counts, some optionals.
func loadArticles(_ realm: Realm, count: Int = 200) throws {
    let sections = ["Sports", "World", "Arts", "Business", "Science"]
    try realm.write {
        for i in 0..<count {
            let a = Article(id: String(format: "a%04d", i), section: sections[i % 5], wordCount: (i * 37) % 1000)
            a.pubDate = Date(timeIntervalSince1970: 1_435_708_800 + Double((i * 7919) % 10_000))
            a.abstract = i % 3 == 0 ? nil : "Abstract \(i)"
            a.url = i % 2 == 0 ? "https://example.com/\(i)" : "http://example.org/\(i)"
            realm.add(a)
        }
    }
}

@Suite struct QueryTests {
    /// As in RealmSwift, `filter(_:_:)` does not throw: a query written in the program that
    /// cannot be parsed stops the process, saying what is wrong and where.
    @Test func aMalformedLiteralQueryStopsTheProcessWithItsPosition() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = try Realm(configuration: makeConfiguration(try makeTemporaryDirectory()))
            _ = realm.objects(Article.self).filter("wordCont > %@", 3).count
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("wordCont") && stderr.contains("offset 0"), "\(stderr)")
    }

    /// `filter(checking:)`, for query strings from users, throws instead.
    @Test func aQueryStringFromAUserThrowsWhenItCannotBeParsed() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try loadArticles(realm, count: 20)
            let articles = realm.objects(Article.self)
            do {
                _ = try articles.filter(checking: "section == 'Sports' AND wordCount >")
                Issue.record("accepted")
            } catch let error as Realm.Error {
                #expect(error.code == .invalidQuery, "\(error)")
            }
            #expect(throws: Realm.Error.self) { try articles.filter(checking: "nope == %@", argumentArray: [1]) }
            let checked = try articles.filter(checking: "section == %@", "Sports")
            #expect(checked.map(\.id) == articles.filter("section == %@", "Sports").map(\.id))
            #expect(checked.count == 4)
        }
    }

    @Test func whereFiltersWithEveryOperator() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try loadArticles(realm)
            let all = Array(realm.objects(Article.self))
            let articles = realm.objects(Article.self)
            func check(_ results: Results<Article>, _ expected: (Article) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(results.map(\.id) == all.filter(expected).map(\.id), sourceLocation: sourceLocation)
                #expect(results.count == all.filter(expected).count, sourceLocation: sourceLocation)
            }
            check(articles.where { $0.section == "Sports" }) { $0.section == "Sports" }
            check(articles.where { $0.section != "Sports" }) { $0.section != "Sports" }
            check(articles.where { $0.wordCount > 500 }) { $0.wordCount > 500 }
            check(articles.where { $0.wordCount >= 500 && $0.wordCount <= 700 }) { $0.wordCount >= 500 && $0.wordCount <= 700 }
            check(articles.where { $0.wordCount < 100 || $0.section == "Arts" }) { $0.wordCount < 100 || $0.section == "Arts" }
            check(articles.where { !($0.section == "Arts") }) { $0.section != "Arts" }
            check(articles.where { $0.section.in(["Arts", "World"]) }) { ["Arts", "World"].contains($0.section) }
            check(articles.where { $0.wordCount.contains(200...400) }) { (200...400).contains($0.wordCount) }
            check(articles.where { $0.wordCount.contains(200..<400) }) { (200..<400).contains($0.wordCount) }
            check(articles.where { $0.abstract == nil }) { $0.abstract == nil }
            check(articles.where { $0.abstract != nil }) { $0.abstract != nil }
            check(articles.where { $0.url.starts(with: "https") }) { $0.url.hasPrefix("https") }
            check(articles.where { $0.url.ends(with: "7") }) { $0.url.hasSuffix("7") }
            check(articles.where { $0.url.contains("example.org") }) { $0.url.contains("example.org") }
            check(articles.where { $0.url.like("http://*/1?") }) { $0.url.hasPrefix("http://") && $0.url.split(separator: "/").last!.count == 2 && $0.url.split(separator: "/").last!.hasPrefix("1") }
            check(articles.where { $0.section.starts(with: "SP", options: .caseInsensitive) }) { $0.section == "Sports" }
            check(articles.where { $0.section.equals("arts", options: .caseInsensitive) }) { $0.section == "Arts" }
            check(articles.where { $0.pubDate > Date(timeIntervalSince1970: 1_435_713_800) }) { $0.pubDate > Date(timeIntervalSince1970: 1_435_713_800) }
        }
    }

    @Test func unicodeCaseAndDiacriticFoldingBeyondLatin() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            let words = ["Ἀθῆναι", "ΑΘΗΝΑΙ", "Straße", "STRASSE", "Ελληνικά", "ελληνικα", "Cœur", "café", "CAFE", "Дом", "ДОМ"]
            try realm.write {
                for (i, w) in words.enumerated() {
                    let a = Article(id: "w\(i)")
                    a.leadParagraph = w
                    realm.add(a)
                }
            }
            let articles = realm.objects(Article.self)
            #expect(Set(articles.where { $0.leadParagraph.equals("дом", options: .caseInsensitive) }.map(\.leadParagraph)) == ["Дом", "ДОМ"])
            #expect(Set(articles.where { $0.leadParagraph.equals("strasse", options: .caseInsensitive) }.map(\.leadParagraph)) == ["Straße", "STRASSE"])
            #expect(Set(articles.where { $0.leadParagraph.equals("ελληνικα", options: [.caseInsensitive, .diacriticInsensitive]) }.map(\.leadParagraph)) == ["Ελληνικά", "ελληνικα"])
            #expect(Set(articles.where { $0.leadParagraph.equals("αθηναι", options: [.caseInsensitive, .diacriticInsensitive]) }.map(\.leadParagraph)) == ["Ἀθῆναι", "ΑΘΗΝΑΙ"])
            #expect(Set(articles.where { $0.leadParagraph.contains("AF", options: .caseInsensitive) }.map(\.leadParagraph)) == ["café", "CAFE"])
            #expect(articles.where { $0.leadParagraph.contains("AF") }.map(\.leadParagraph) == ["CAFE"])
        }
    }

    @Test func sortingIsStableWithNilsFirstAndSeveralKeys() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try loadArticles(realm)
            let all = Array(realm.objects(Article.self))
            let byAbstract = realm.objects(Article.self).sorted(byKeyPath: "abstract")
            let expected = all.enumerated().sorted { a, b in
                switch (a.element.abstract, b.element.abstract) {
                case (nil, nil): return a.offset < b.offset
                case (nil, _): return true
                case (_, nil): return false
                case (let x?, let y?): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8)) || (x == y && a.offset < b.offset)
                }
            }.map(\.element.id)
            #expect(byAbstract.map(\.id) == expected)
            let two = realm.objects(Article.self).sorted(by: [SortDescriptor(keyPath: "section"), SortDescriptor(keyPath: "wordCount", ascending: false)])
            let expectedTwo = all.sorted { ($0.section, -$0.wordCount, $0.id) < ($1.section, -$1.wordCount, $1.id) }.map(\.id)
            #expect(two.map(\.id) == expectedTwo)
            let byKeyPath = realm.objects(Article.self).sorted(by: \.pubDate, ascending: false)
            #expect(byKeyPath.map(\.pubDate) == all.map(\.pubDate).sorted(by: >))
        }
    }

    @Test func limitDistinctIndexOfAndAggregates() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try loadArticles(realm)
            let all = Array(realm.objects(Article.self))
            let articles = realm.objects(Article.self)
            let top = articles.sorted(byKeyPath: "wordCount", ascending: false).limit(5)
            #expect(top.count == 5)
            #expect(top.map(\.wordCount) == Array(all.map(\.wordCount).sorted(by: >).prefix(5)))
            #expect(articles.limit(0).isEmpty)
            #expect(articles.limit(1000).count == 200)
            let firstPerSection = articles.sorted(byKeyPath: "wordCount").distinct(by: ["section"])
            #expect(firstPerSection.count == 5)
            #expect(Set(firstPerSection.map(\.section)).count == 5)
            let sports = articles.where { $0.section == "Sports" }
            let third = sports[2]
            #expect(sports.index(of: third) == 2)
            #expect(articles.where { $0.section == "Arts" }.index(of: third) == nil)
            #expect(articles.min(ofProperty: "wordCount") as Int? == all.map(\.wordCount).min())
            #expect(articles.max(of: \.wordCount) == all.map(\.wordCount).max())
            #expect(articles.sum(ofProperty: "wordCount") as Int == all.map(\.wordCount).reduce(0, +))
            #expect(sports.sum(of: \.wordCount) == all.filter { $0.section == "Sports" }.map(\.wordCount).reduce(0, +))
            let mean: Double? = articles.average(ofProperty: "wordCount")
            #expect(mean == Double(all.map(\.wordCount).reduce(0, +)) / 200)
            #expect(articles.where { $0.wordCount > 5000 }.min(ofProperty: "wordCount") as Int? == nil)
            #expect(articles.min(of: \.abstract) == all.compactMap(\.abstract).min { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            #expect(articles.max(of: \.pubDate) == all.map(\.pubDate).max())
        }
    }

    @Test func limitStaysLive() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            let newest = realm.objects(Article.self).sorted(byKeyPath: "wordCount", ascending: false).limit(2)
            #expect(newest.isEmpty)
            try realm.write { realm.add([Article(id: "a", wordCount: 1), Article(id: "b", wordCount: 5)]) }
            #expect(newest.map(\.id) == ["b", "a"])
            try realm.write { realm.add(Article(id: "c", wordCount: 9)) }
            #expect(newest.map(\.id) == ["c", "b"])
        }
    }

    @Test func plannerUsesIndexesAndSaysSo() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try loadArticles(realm)
            let articles = realm.objects(Article.self)
            #expect(articles.where { $0.section == "Sports" }.explain() == "index equality on Article.section (1 key), count from index")
            #expect(articles.where { $0.section.in(["Arts", "Sports"]) }.explain().hasPrefix("index equality on Article.section (2 keys)"))
            #expect(articles.where { $0.section > "B" }.explain().hasPrefix("index range on Article.section"))
            #expect(articles.where { $0.section.starts(with: "Sp") }.explain().hasPrefix("index prefix range on Article.section"))
            #expect(articles.where { $0.id == "a0007" }.explain().hasPrefix("primary-key lookup"))
            #expect(articles.where { $0.wordCount > 3 }.explain() == "full scan of Article, filtered")
            #expect(articles.sorted(byKeyPath: "section").limit(3).explain().hasPrefix("index-ordered scan of Article.section ascending"))
            #expect(articles.sorted(byKeyPath: "wordCount").limit(3).explain().contains("then sort by wordCount ascending"))
            // The plan is the whole chain, and what explain prints is what runs.
            let chain = articles.where { $0.section == "Sports" }.sorted(byKeyPath: "wordCount", ascending: false)
                .distinct(by: ["wordCount"]).filter("wordCount > 100").limit(2)
            #expect(
                chain.explain()
                    == "index equality on Article.section (1 key), count from index; then sort by wordCount descending; "
                    + "then distinct by wordCount; then filter wordCount > 100; then limit 2")
            let expected = Array(Set(articles.filter { $0.section == "Sports" && $0.wordCount > 100 }.map(\.wordCount)).sorted(by: >).prefix(2))
            #expect(chain.map(\.wordCount) == expected)
            #expect(articles.sorted(byKeyPath: "section").limit(3).explain().hasSuffix("; stop after 3"))
            #expect(articles.limit(5).explain() == "full scan of Article; stop after 5")
            // Index answers agree with a scan.
            #expect(articles.where { $0.section == "Sports" }.count == 40)
            #expect(articles.where { $0.id == "a0007" }.map(\.wordCount) == [259])
            #expect(articles.where { $0.section.starts(with: "S") }.count == 80)
            #expect(articles.sorted(byKeyPath: "section", ascending: false).limit(3).map(\.section) == ["World", "World", "World"])
            #expect(articles.sorted(byKeyPath: "section", ascending: false).limit(3).map(\.id) == ["a0001", "a0006", "a0011"], "stable: ties in key order")
        }
    }

    @Test func indexesStayConsistentThroughEveryChange() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try loadArticles(realm)
            #expect(realm.indexProblems() == [])
            try realm.write {
                for a in realm.objects(Article.self).where({ $0.wordCount < 300 }) { a.section = "Changed" }
            }
            #expect(realm.indexProblems() == [])
            #expect(realm.objects(Article.self).where { $0.section == "Changed" }.count == realm.objects(Article.self).where { $0.wordCount < 300 }.count)
            try realm.write { realm.delete(realm.objects(Article.self).where { $0.section == "Arts" }) }
            #expect(realm.indexProblems() == [])
            #expect(realm.objects(Article.self).where { $0.section == "Arts" }.isEmpty)
            try realm.write { realm.add(Article(id: "a0002", section: "Replaced"), update: .modified) }
            #expect(realm.indexProblems() == [])
            #expect(realm.objects(Article.self).where { $0.section == "Replaced" }.count == 1)
            realm.beginWrite()
            for a in realm.objects(Article.self) { a.section = "Cancelled" }
            realm.add(Article(id: "zz", section: "Cancelled"))
            realm.cancelWrite()
            #expect(realm.indexProblems() == [])
            #expect(realm.objects(Article.self).where { $0.section == "Cancelled" }.isEmpty)
            try realm.write { realm.deleteAll() }
            #expect(realm.indexProblems() == [])
            #expect(realm.objects(Article.self).where { $0.section == "Sports" }.isEmpty)
        }
    }
}

// Same model as Article with the index moved from section to wordCount.
final class ArticleReindexed: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted var url: String
    @Persisted var leadParagraph: String
    @Persisted var abstract: String?
    @Persisted var section: String
    @Persisted var pubDate: Date
    @Persisted(indexed: true) var wordCount: Int
    override class func className() -> String { "Article" }
}

@Suite struct IndexSchemaTests {
    @Test func addingAndRemovingAnIndexBuildsAndDropsIt() throws {
        try withTemporaryDirectory { dir in
            do {
                let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
                try loadArticles(realm)
            }
            let realm = try Realm(configuration: makeConfiguration(dir, types: [ArticleReindexed.self]))
            let articles = realm.objects(ArticleReindexed.self)
            #expect(articles.where { $0.wordCount == 259 }.explain().hasPrefix("index equality on Article.wordCount"))
            #expect(articles.where { $0.section == "Sports" }.explain().hasPrefix("full scan"))
            #expect(articles.where { $0.wordCount == 259 }.map(\.id) == ["a0007"])
            #expect(realm.indexProblems() == [])
            try realm.write { articles.first!.wordCount = 12345 }
            #expect(articles.where { $0.wordCount == 12345 }.count == 1)
            #expect(realm.indexProblems() == [])
        }
    }

    @Test func aFrozenRealmOfTheOldCatalogDoesNotLeakOldTablesToLiveHandles() throws {
        try withTemporaryDirectory { dir in
            let before = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            try loadArticles(before)
            let frozen = before.freeze()
            // Another handle moves the index from section to wordCount.
            let realm = try Realm(configuration: makeConfiguration(dir, types: [ArticleReindexed.self]))
            // The frozen realm, on the old catalog, reads the class after the change...
            #expect(frozen.objects(Article.self).where { $0.section == "Sports" }.count == 40)
            #expect(frozen.objects(Article.self).where { $0.section == "Sports" }.explain().hasPrefix("index equality on Article.section"))
            // ...and live handles still maintain the new index.
            let live = try Realm(configuration: makeConfiguration(dir, types: [ArticleReindexed.self]))
            try live.write { live.objects(ArticleReindexed.self).first!.wordCount = 54321 }
            #expect(live.indexProblems() == [])
            #expect(live.objects(ArticleReindexed.self).where { $0.wordCount == 54321 }.count == 1)
            realm.refresh()
            #expect(realm.indexProblems() == [])
        }
    }
}
