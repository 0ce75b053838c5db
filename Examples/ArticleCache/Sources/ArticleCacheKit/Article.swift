public import Foundation
public import LMDBRealm

/// One cached article: the persisted form of an ``ArticleDTO``.
public final class Article: Object {
    /// The NYT `_id`, such as `nyt://article/6c1b…`.
    @Persisted(primaryKey: true) public var id: String
    @Persisted public var url: String
    @Persisted public var headline: String
    @Persisted public var leadParagraph: String
    @Persisted public var abstract: String?
    @Persisted(indexed: true) public var section: String
    @Persisted(indexed: true) public var pubDate: Date
    @Persisted public var wordCount: Int

    /// A new, unmanaged article with the values of `dto`.
    public convenience init(dto: ArticleDTO) {
        self.init()
        id = dto.id
        url = dto.webURL
        headline = dto.headline
        leadParagraph = dto.leadParagraph
        abstract = dto.abstract
        section = dto.sectionName
        pubDate = dto.pubDate
        wordCount = dto.wordCount
    }
}

/// A plain copy of an ``Article``'s values, free to cross threads (a managed `Article`
/// belongs to the thread of its realm).
public struct ArticleRecord: Sendable, Equatable, Encodable {
    public var id: String
    public var url: String
    public var headline: String
    public var leadParagraph: String
    public var abstract: String?
    public var section: String
    public var pubDate: Date
    public var wordCount: Int

    public init(_ article: Article) {
        id = article.id
        url = article.url
        headline = article.headline
        leadParagraph = article.leadParagraph
        abstract = article.abstract
        section = article.section
        pubDate = article.pubDate
        wordCount = article.wordCount
    }

    // The keys of the JSON output: everything but the abstract.
    private enum CodingKeys: String, CodingKey {
        case id, url, headline, leadParagraph, section, pubDate, wordCount
    }
}
