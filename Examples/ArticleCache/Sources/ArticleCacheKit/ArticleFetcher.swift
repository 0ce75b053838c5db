import Foundation

/// What a fetch ended with.
public enum FetchOutcome: Sendable {
    /// The page was fetched and stored; these are the articles read back, newest first.
    case fetched([ArticleRecord])
    /// The fetch failed for `reason`; these are the articles cached before, newest first.
    case fallback(reason: any Error, cached: [ArticleRecord])

    public var articles: [ArticleRecord] {
        switch self {
        case .fetched(let articles), .fallback(_, let articles): articles
        }
    }
}

/// Fetches a page of articles into the cache, or falls back to what the cache holds.
public struct ArticleFetcher: Sendable {
    public var service: any Service
    public var store: ArticleStore

    public init(service: any Service, store: ArticleStore) {
        self.service = service
        self.store = store
    }

    /// Sends `search`'s request; on a background thread, decodes the page and replaces the
    /// cache with it in one write; then reads the cache back on another thread, through that
    /// thread's own realm handle.
    ///
    /// If any step fails, the cache is left as it was and its articles are returned with the
    /// reason.
    public func fetch(_ search: ArticleSearch) async -> FetchOutcome {
        let store = self.store
        do {
            let data = try await service.execute(search.request)
            try await onNewThread {
                let page = try ArticleSearchResponse.decode(data)
                try store.replaceAll(with: page.docs)
            }
            return .fetched(try await onNewThread { try store.articles() })
        } catch {
            let cached = (try? await onNewThread { try store.articles() }) ?? []
            return .fallback(reason: error, cached: cached)
        }
    }
}
