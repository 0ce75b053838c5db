public import Foundation
public import LMDBRealm

/// One cached article: the persisted form of an ``ArticleDTO``, linked to its author, its
/// keywords and its images.
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
    /// The first person of the byline (or the byline's text): one ``Author`` for every
    /// article that names them.
    @Persisted public var byline: Author?
    @Persisted public var keywords: List<Keyword>
    /// The article's images, owned by it.
    @Persisted public var multimedia: List<Multimedia>

    /// A new, unmanaged article with the values of `dto`, its author and keywords unmanaged
    /// too (`add(_:update: .modified)` stores each once, under its key).
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
        if let author = dto.byline?.author {
            byline = Author(id: author.key, name: author.name)
        }
        var seen = Set<String>()
        for keyword in dto.keywords where seen.insert(keyword.value).inserted {
            keywords.append(Keyword(value: keyword.value, kind: keyword.name))
        }
        for media in dto.multimedia {
            multimedia.append(Multimedia(url: media.absoluteURL, width: media.width, height: media.height, type: media.type))
        }
    }
}

/// A writer, keyed by their folded name (`dana-whitfield`).
public final class Author: Object {
    @Persisted(primaryKey: true) public var id: String
    @Persisted(indexed: true) public var name: String
    /// The articles whose byline names this author.
    @Persisted(originProperty: "byline") public var articles: LinkingObjects<Article>

    public convenience init(id: String, name: String) {
        self.init()
        self.id = id
        self.name = name
    }
}

/// A keyword of the Article Search API: its value (`Basketball`) and kind (`subject`,
/// `persons`, `organizations`, `glocations`, …).
public final class Keyword: Object {
    @Persisted(primaryKey: true) public var value: String
    @Persisted public var kind: String
    /// The articles that carry this keyword.
    @Persisted(originProperty: "keywords") public var articles: LinkingObjects<Article>

    public convenience init(value: String, kind: String) {
        self.init()
        self.value = value
        self.kind = kind
    }
}

/// One image of an article, stored with it and deleted with it.
public final class Multimedia: EmbeddedObject {
    /// Absolute: the API's relative `images/…` paths are on `https://www.nytimes.com/`.
    @Persisted public var url: String
    @Persisted public var width: Int
    @Persisted public var height: Int
    @Persisted public var type: String

    public convenience init(url: String, width: Int, height: Int, type: String) {
        self.init()
        self.url = url
        self.width = width
        self.height = height
        self.type = type
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
    /// The byline's author name, if any.
    public var byline: String?
    /// The keywords' values, in the article's order.
    public var keywords: [String]
    public var multimedia: [Image]

    /// An image of ``ArticleRecord/multimedia``.
    public struct Image: Sendable, Equatable, Encodable {
        public var url: String
        public var width: Int
        public var height: Int
        public var type: String
    }

    public init(_ article: Article) {
        id = article.id
        url = article.url
        headline = article.headline
        leadParagraph = article.leadParagraph
        abstract = article.abstract
        section = article.section
        pubDate = article.pubDate
        wordCount = article.wordCount
        byline = article.byline?.name
        keywords = article.keywords.map(\.value)
        multimedia = article.multimedia.map { Image(url: $0.url, width: $0.width, height: $0.height, type: $0.type) }
    }

    // The keys of the JSON output: everything but the abstract.
    private enum CodingKeys: String, CodingKey {
        case id, url, headline, leadParagraph, section, pubDate, wordCount, byline, keywords, multimedia
    }
}
