public import ArgumentParser
public import ArticleCacheKit
import Foundation

@main
struct ArticleCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ArticleCache",
        abstract: "Fetch New York Times articles into a local realm and read them back.",
        subcommands: [Fetch.self, List.self, Watch.self],
        defaultSubcommand: Fetch.self
    )
}

extension OutputFormat: ExpressibleByArgument {}

/// Options shared by the subcommands.
struct StoreOptions: ParsableArguments {
    @Option(help: "The realm file that caches the articles.")
    var database: String = "articles.realm"

    @Option(help: "table or json (one object per line).")
    var format: OutputFormat = .table

    var store: ArticleStore { ArticleStore(fileURL: URL(fileURLWithPath: database)) }

    func print(_ articles: [ArticleRecord]) {
        for line in format.lines(for: articles, cachedIn: database) { Swift.print(line) }
    }
}

struct Fetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch a page of articles, replace the cache with it, and print it.",
        discussion: """
            Without an API key (--api-key or NYT_API_KEY) and without --base-url, the bundled \
            sample page is used. If the fetch fails, the cached articles are printed instead and \
            the reason goes to standard error; the exit status is 1 only if the cache is empty.
            """
    )

    @Option(help: "Search terms.")
    var query: String?

    @Option(help: "The first day, yyyyMMdd (UTC).", transform: parseDay)
    var beginDate: Date?

    @Option(help: "The last day, yyyyMMdd (UTC).", transform: parseDay)
    var endDate: Date?

    @Option(help: "The result page, 10 articles each.")
    var page: Int = 0

    @Option(help: "The Article Search API key (default: $NYT_API_KEY).")
    var apiKey: String?

    @Option(help: "A server that speaks the Article Search API (default: https://api.nytimes.com).")
    var baseURL: String?

    @Option(help: "Seconds to wait for each answer.")
    var timeout: Double = 15

    @OptionGroup var options: StoreOptions

    func run() async throws {
        let key = apiKey ?? ProcessInfo.processInfo.environment["NYT_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        let service: any Service
        if key == nil && baseURL == nil {
            service = BundledSampleService()
        } else {
            guard let url = URL(string: baseURL ?? ArticleSearch.nytBaseURL.absoluteString), url.scheme != nil else {
                throw ValidationError("--base-url is not a URL: \(baseURL ?? "")")
            }
            service = URLSessionService(baseURL: url)
        }
        let search = ArticleSearch(query: query, beginDate: beginDate, endDate: endDate, page: page,
                                   apiKey: key, timeout: timeout)
        let outcome = await ArticleFetcher(service: service, store: options.store).fetch(search)
        if case .fallback(let reason, let cached) = outcome {
            let what = cached.isEmpty ? "and the cache is empty" : "showing the \(cached.count) cached articles"
            FileHandle.standardError.write(Data("fetch failed: \(reason); \(what)\n".utf8))
            options.print(cached)
            if cached.isEmpty { throw ExitCode.failure }
            return
        }
        options.print(outcome.articles)
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the cached articles, newest first.")

    @Option(help: "Only the articles of this section (exact name, such as Sports).")
    var section: String?

    @Option(help: "Only the articles whose headline or lead paragraph contains this text.")
    var search: String?

    @Option(help: "Only the articles carrying this keyword (its whole value, such as \"Dallas Mavericks\").")
    var keyword: String?

    @Option(help: "Only the articles whose author's name contains this text.")
    var author: String?

    @OptionGroup var options: StoreOptions

    func run() async throws {
        let store = options.store
        let (section, search, keyword, author) = (self.section, self.search, self.keyword, self.author)
        let articles = try await readOnNewThread {
            try store.articles(section: section, search: search, keyword: keyword, author: author)
        }
        options.print(articles)
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print changes to the cache as another process fetches, until interrupted.",
        discussion: """
            Lines start with + (added), - (removed) or ~ (changed). With --sync, the cache is kept \
            in step with other caches through PostgreSQL meanwhile: another machine's fetch is \
            printed too.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(help: "Stop after this many batches of changes.")
    var batches: Int?

    #if Sync
        @OptionGroup var sync: SyncOptions
    #endif

    func run() async throws {
        #if Sync
            let syncing = try await sync.start(options.store.configuration)
            defer { syncing?.cancel() }
        #endif
        let watcher = ArticleWatcher(store: options.store)
        let limit = batches
        let database = options.database
        var seen = 0
        try await watcher.run {
            // Once the articles that later changes are compared with are read.
            FileHandle.standardError.write(Data("Watching \(database) (Ctrl-C to stop)\n".utf8))
        } _: { changes in
            // Written straight to the descriptor: a pipe sees each batch as it happens.
            FileHandle.standardOutput.write(Data(changes.map { "\($0)\n" }.joined().utf8))
            seen += 1
            return limit.map { seen < $0 } ?? true
        }
    }
}

/// A realm handle belongs to the thread that opens it: the reads run on a thread of their own.
func readOnNewThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

func parseDay(_ text: String) throws -> Date {
    guard let date = ArticleSearch.parseDay(text) else {
        throw ValidationError("'\(text)' is not a day in the form yyyyMMdd")
    }
    return date
}
