import ArticleCacheKit
import Foundation
import LMDBRealm
import Synchronization
import Testing
import TestSupport

/// `fetch` against a real HTTP server on 127.0.0.1.
@Suite struct ArticleFetcherTests {
    /// The bundled 10-document page.
    private static func samplePage() async throws -> Data {
        try await BundledSampleService().execute(ArticleSearch().request)
    }

    /// The sample page cut to its first `count` documents.
    private static func page(of count: Int) async throws -> Data {
        var json = try JSONSerialization.jsonObject(with: try await samplePage()) as! [String: Any]
        var response = json["response"] as! [String: Any]
        response["docs"] = Array((response["docs"] as! [Any]).prefix(count))
        json["response"] = response
        return try JSONSerialization.data(withJSONObject: json)
    }

    private static func fetcher(_ baseURL: URL, _ dir: URL) -> ArticleFetcher {
        ArticleFetcher(service: URLSessionService(baseURL: baseURL, maxAttempts: 2, retryDelay: 0.01),
                       store: ArticleStore(fileURL: dir.appendingPathComponent("articles.realm")))
    }

    private static let search = ArticleSearch(
        query: "basketball", beginDate: ArticleSearch.parseDay("20150701"),
        endDate: ArticleSearch.parseDay("20150707"), apiKey: "test-key", timeout: 30)

    @Test func requestCarriesPathAndQueryItems() async throws {
        try await withTemporaryDirectory { dir in
            let server = try await FixtureServer.start(replying: .body(try await Self.samplePage()))
            _ = await Self.fetcher(server.baseURL, dir).fetch(Self.search)
            let received = server.received
            await server.stop()
            try #require(received.count == 1)
            #expect(received[0].path == "/svc/search/v2/articlesearch.json")
            #expect(received[0].query == ["q": "basketball", "begin_date": "20150701", "end_date": "20150707",
                                          "page": "0", "api-key": "test-key"])
        }
    }

    @Test func fullPageIsStoredAndReadBack() async throws {
        try await withTemporaryDirectory { dir in
            let server = try await FixtureServer.start(replying: .body(try await Self.samplePage()))
            let fetcher = Self.fetcher(server.baseURL, dir)
            let outcome = await fetcher.fetch(Self.search)
            await server.stop()
            guard case .fetched(let articles) = outcome else {
                Issue.record("expected a fetch, got \(outcome)")
                return
            }
            let page = try ArticleSearchResponse.decode(try await Self.samplePage())
            #expect(articles.count == 10)
            #expect(Set(articles.map(\.id)) == Set(page.docs.map(\.id)))
            #expect(articles.map(\.pubDate) == articles.map(\.pubDate).sorted(by: >))
            let first = try #require(page.docs.first)
            let stored = try #require(articles.first { $0.id == first.id })
            #expect(stored.url == first.webURL && stored.headline == first.headline)
            #expect(stored.leadParagraph == first.leadParagraph && stored.abstract == first.abstract)
            #expect(stored.section == first.sectionName && stored.pubDate == first.pubDate)
            #expect(stored.wordCount == first.wordCount)
            // Another handle, on yet another thread, reads the same.
            let store = fetcher.store
            #expect(try onOtherThread { try store.articles() } == articles)
            #expect(try onOtherThread { try store.articles(section: "Sports").count } == 8)
            #expect(try onOtherThread { try store.articles(search: "brooklyn").map(\.section) } == ["N.Y. / Region"])

            // Through the links: keywords and authors, each stored once.
            let byKeyword = try onOtherThread { try store.articles(keyword: "dallas mavericks") }
            let expected = page.docs.filter { $0.keywords.contains { $0.value == "Dallas Mavericks" } }
            #expect(Set(byKeyword.map(\.id)) == Set(expected.map(\.id)) && !expected.isEmpty)
            #expect(byKeyword.allSatisfy { $0.keywords.contains("Dallas Mavericks") })
            let byAuthor = try onOtherThread { try store.articles(author: "whitfield") }
            #expect(Set(byAuthor.map(\.id)) == Set(page.docs.filter { $0.byline?.author?.name == "Dana Whitfield" }.map(\.id)))
            #expect(byAuthor.count > 1 && byAuthor.allSatisfy { $0.byline == "Dana Whitfield" })
            #expect(stored.multimedia.map(\.url) == first.multimedia.map(\.absoluteURL))
            #expect(stored.keywords == first.keywords.map(\.value))
            let json = OutputFormat.json(stored)
            #expect(json.contains(#""byline":"Dana Whitfield""#) && json.contains(#""keywords":["Basketball""#))
            #expect(json.contains(#""multimedia":[{"height":400,"type":"image","url":"https://www.nytimes.com/images/"#))
            let counts = try onOtherThread { () -> [Int] in
                let realm = try Realm(configuration: store.configuration)
                return [realm.objects(Author.self).count, realm.objects(Keyword.self).count,
                        realm.object(ofType: Keyword.self, forPrimaryKey: "Free Agents (Sports)")?.articles.count ?? -1]
            }
            let authorKeys: Set<String> = Set(page.docs.compactMap { $0.byline?.author?.key })
            let keywordValues: Set<String> = Set(page.docs.flatMap { doc in doc.keywords.map(\.value) })
            let freeAgents: Int = page.docs.filter { doc in doc.keywords.contains { $0.value == "Free Agents (Sports)" } }.count
            #expect(counts == [authorKeys.count, keywordValues.count, freeAgents])
        }
    }

    enum Failure: String, CaseIterable, Sendable { case serverError, connectionRefused, malformedBody, notOK }

    @Test(arguments: Failure.allCases)
    func failureKeepsTheCacheAndFallsBackToIt(_ failure: Failure) async throws {
        try await withTemporaryDirectory { dir in
            let server = try await FixtureServer.start(replying: .body(try await Self.samplePage()))
            let seeded = await Self.fetcher(server.baseURL, dir).fetch(Self.search)
            guard case .fetched(let before) = seeded else {
                Issue.record("seeding failed: \(seeded)")
                await server.stop()
                return
            }
            var baseURL = server.baseURL
            switch failure {
            case .serverError: server.setReply(.status(500))
            case .malformedBody: server.setReply(.body(Data(#"{"status":"OK","response":{"docs":[{"_id":"#.utf8)))
            case .notOK: server.setReply(.body(Data(#"{"status":"ERROR","errors":["Invalid api-key"]}"#.utf8)))
            case .connectionRefused: baseURL = URL(string: "http://127.0.0.1:\(try unusedPort())")!
            }
            let outcome = await Self.fetcher(baseURL, dir).fetch(Self.search)
            let received = server.received.count
            await server.stop()
            guard case .fallback(let reason, let cached) = outcome else {
                Issue.record("expected a fallback, got \(outcome)")
                return
            }
            #expect(cached == before)
            let error = try #require(reason as? ServiceError)
            switch failure {
            case .serverError:
                #expect(error == .httpStatus(500))
                #expect(received == 3, "the seed, then a first try and one retry")
            case .connectionRefused:
                guard case .transport = error else { Issue.record("\(error)"); return }
            case .malformedBody:
                guard case .decoding = error else { Issue.record("\(error)"); return }
                #expect(received == 2, "a body that does not decode is not retried")
            case .notOK:
                #expect(error == .apiStatus("ERROR"))
            }
            let store = ArticleStore(fileURL: dir.appendingPathComponent("articles.realm"))
            #expect(try onOtherThread { try store.articles() } == before)
        }
    }

    @Test func failureWithAnEmptyCacheHasNothingToShow() async throws {
        try await withTemporaryDirectory { dir in
            let baseURL = URL(string: "http://127.0.0.1:\(try unusedPort())")!
            let outcome = await Self.fetcher(baseURL, dir).fetch(Self.search)
            guard case .fallback(_, let cached) = outcome else {
                Issue.record("expected a fallback, got \(outcome)")
                return
            }
            #expect(cached.isEmpty)
        }
    }

    @Test func refetchReplacesTheCacheAtomically() async throws {
        try await withTemporaryDirectory { dir in
            let server = try await FixtureServer.start(replying: .body(try await Self.samplePage()))
            let fetcher = Self.fetcher(server.baseURL, dir)
            #expect(await fetcher.fetch(Self.search).articles.count == 10)
            server.setReply(.body(try await Self.page(of: 3)))

            // A reader on its own thread polls the count through its own handle while the
            // second fetch replaces the cache.
            let flags = ReaderFlags()
            let configuration = fetcher.store.configuration
            async let seen: [Int] = onNewThread {
                let realm = try Realm(configuration: configuration)
                var counts: [Int] = []
                repeat {
                    _ = realm.refresh()
                    counts.append(realm.objects(Article.self).count)
                    flags.started.store(true, ordering: .releasing)
                } while !flags.stop.load(ordering: .acquiring)
                _ = realm.refresh()
                counts.append(realm.objects(Article.self).count)
                return counts
            }
            while !flags.started.load(ordering: .acquiring) { await Task.yield() }
            let outcome = await fetcher.fetch(Self.search)
            flags.stop.store(true, ordering: .releasing)
            let counts = try await seen
            await server.stop()

            #expect(outcome.articles.count == 3)
            #expect(counts.first == 10)
            #expect(counts.last == 3)
            #expect(counts.allSatisfy { $0 == 10 || $0 == 3 }, "a reader saw a half-replaced cache: \(Set(counts))")
            // Once the new set is seen, the old one never comes back.
            let firstNew = try #require(counts.firstIndex(of: 3))
            #expect(counts[firstNew...].allSatisfy { $0 == 3 })
        }
    }
}

private final class ReaderFlags: Sendable {
    let started = Atomic<Bool>(false)
    let stop = Atomic<Bool>(false)
}
