import Foundation

/// How the command-line program prints articles.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// An aligned table and a summary line.
    case table
    /// One JSON object per line per article, nothing else.
    case json
}

extension OutputFormat {
    /// The lines to print for `articles`, cached in `path`.
    public func lines(for articles: [ArticleRecord], cachedIn path: String) -> [String] {
        switch self {
        case .table: Self.table(articles) + ["\(articles.count) \(articles.count == 1 ? "article" : "articles") cached in \(path)"]
        case .json: articles.map(Self.json)
        }
    }

    /// One JSON object: `id`, `url`, `headline`, `leadParagraph`, `section`, `pubDate`
    /// (ISO 8601), `wordCount`, `byline` (the author's name, when there is one), `keywords` (their
    /// values) and `multimedia` (`url`, `width`, `height`, `type`).
    public static func json(_ article: ArticleRecord) -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings, a date and an integer cannot fail.
        let data = try! encoder.encode(article)
        return String(decoding: data, as: UTF8.self)
    }

    /// A header, a rule, and one row per article: date, section, headline, words, url.
    public static func table(_ articles: [ArticleRecord]) -> [String] {
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone(identifier: "UTC")
        day.dateFormat = "yyyy-MM-dd"
        let header = ["DATE", "SECTION", "HEADLINE", "WORDS", "URL"]
        let rows = articles.map { a in
            [day.string(from: a.pubDate), clip(a.section, 16), clip(a.headline, 56), String(a.wordCount), a.url]
        }
        let widths = header.indices.map { i in ([header] + rows).map { $0[i].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.indices.map { i in
                let cell = cells[i]
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                if i == 3 { return pad + cell }                 // numbers align right
                return i == cells.count - 1 ? cell : cell + pad // no trailing blanks
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return [line(header), rule] + rows.map(line)
    }

    private static func clip(_ text: String, _ width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width - 1)) + "…"
    }
}
