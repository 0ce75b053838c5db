public import Foundation
public import LMDBRealm

/// The realm file that caches articles. A value that any thread may hold: each call opens a
/// realm handle of the calling thread's own.
public struct ArticleStore: Sendable {
    public let configuration: Realm.Configuration

    public init(fileURL: URL) {
        var configuration = Realm.Configuration(fileURL: fileURL)
        configuration.objectTypes = [Article.self, Author.self, Keyword.self, Multimedia.self]
        self.configuration = configuration
    }

    public var fileURL: URL { configuration.fileURL! }

    /// Replaces every cached article with `articles`, in one write: a reader sees either the
    /// old set or the new one, never a mix.
    @available(*, noasync, message: "opens a realm confined to the calling thread")
    public func replaceAll(with articles: [ArticleDTO]) throws {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            realm.deleteAll()
            // A page may list one document twice; the later copy wins.
            realm.add(articles.map(Article.init(dto:)), update: .modified)
        }
    }

    /// The cached articles, newest first, optionally only those of `section`, those whose
    /// headline or lead paragraph contains `search`, those carrying the keyword `keyword`, and
    /// those whose author's name contains `author` (each ignoring case; the texts diacritics
    /// too).
    ///
    /// A missing file is an empty cache (and is not created).
    @available(*, noasync, message: "opens a realm confined to the calling thread")
    public func articles(section: String? = nil, search: String? = nil, keyword: String? = nil, author: String? = nil) throws
        -> [ArticleRecord]
    {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return [] }
        let realm = try Realm(configuration: configuration)
        var results = realm.objects(Article.self)
        if let section {
            results = results.where { $0.section == section }
        }
        if let search, !search.isEmpty {
            let options: StringOptions = [.caseInsensitive, .diacriticInsensitive]
            results = results.where {
                $0.headline.contains(search, options: options) || $0.leadParagraph.contains(search, options: options)
            }
        }
        if let keyword, !keyword.isEmpty {
            // Through the list: ANY keywords.value ==[c] keyword.
            results = results.where { $0.keywords.value.equals(keyword, options: .caseInsensitive) }
        }
        if let author, !author.isEmpty {
            // Through the link: byline.name CONTAINS[cd] author.
            results = results.where { $0.byline.name.contains(author, options: [.caseInsensitive, .diacriticInsensitive]) }
        }
        return results.sorted(byKeyPath: "pubDate", ascending: false).map(ArticleRecord.init)
    }

    /// The number of cached articles.
    @available(*, noasync, message: "opens a realm confined to the calling thread")
    public func count() throws -> Int {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return 0 }
        return try Realm(configuration: configuration).objects(Article.self).count
    }
}
