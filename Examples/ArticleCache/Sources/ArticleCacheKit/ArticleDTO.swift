public import Foundation

/// One document of an Article Search response (`response.docs[]`), mapped with `Decodable`:
/// nested containers reach into `headline.main`, and the decoder turns the API's loose shapes
/// into plain values — `pub_date` with `Z` or `+0000`, `word_count` as a number or a string,
/// `multimedia` as an array or an object, absent and empty fields.
public struct ArticleDTO: Decodable, Sendable, Equatable {
    public var id: String
    public var webURL: String
    public var leadParagraph: String
    public var abstract: String?
    public var headline: String
    public var pubDate: Date
    public var sectionName: String
    public var wordCount: Int
    /// The URLs of the document's images, whichever shape `multimedia` had.
    public var multimediaURLs: [String]

    enum CodingKeys: String, CodingKey {
        case id = "_id"
        case webURL = "web_url"
        case leadParagraph = "lead_paragraph"
        case abstract
        case headline
        case pubDate = "pub_date"
        case sectionName = "section_name"
        case wordCount = "word_count"
        case multimedia
    }

    enum HeadlineKeys: String, CodingKey {
        case main
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        webURL = c.lenientString(.webURL) ?? ""
        // The primary key: `_id`, or the URL for a document that lacks one.
        guard let id = c.lenientString(.id) ?? (webURL.isEmpty ? nil : webURL) else {
            throw DecodingError.dataCorruptedError(
                forKey: .id, in: c, debugDescription: "a document has neither _id nor web_url")
        }
        self.id = id
        leadParagraph = c.lenientString(.leadParagraph) ?? ""
        abstract = c.lenientString(.abstract)
        // `headline` is an object with `main`; old documents carry an empty array instead.
        if let h = try? c.nestedContainer(keyedBy: HeadlineKeys.self, forKey: .headline) {
            headline = h.lenientString(.main) ?? ""
        } else {
            headline = ""
        }
        sectionName = c.lenientString(.sectionName) ?? ""
        if let text = c.lenientString(.pubDate) {
            guard let date = Self.parseDate(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .pubDate, in: c, debugDescription: "unreadable pub_date '\(text)'")
            }
            pubDate = date
        } else {
            pubDate = Date(timeIntervalSince1970: 0)
        }
        if let n = try? c.decodeIfPresent(Int.self, forKey: .wordCount) {
            wordCount = n
        } else if let s = c.lenientString(.wordCount), let n = Int(s) {
            wordCount = n
        } else {
            wordCount = 0
        }
        if let items = try? c.decodeIfPresent([Media].self, forKey: .multimedia) {
            multimediaURLs = items.compactMap(\.url)
        } else if let object = try? c.decodeIfPresent(MediaObject.self, forKey: .multimedia) {
            multimediaURLs = object.urls
        } else {
            multimediaURLs = []
        }
    }

    /// Parses `2015-07-05T18:12:44+0000`, `2015-07-05T18:12:44Z`, `…+00:00`, with or without
    /// fractional seconds.
    public static func parseDate(_ text: String) -> Date? {
        let formats = [
            "yyyy-MM-dd'T'HH:mm:ssZ", "yyyy-MM-dd'T'HH:mm:ssXXXXX",
            "yyyy-MM-dd'T'HH:mm:ss.SSSZ", "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX",
        ]
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        for format in formats {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

// MARK: - Multimedia

/// One image of the array form: `[{"url": "images/…", "subtype": "xlarge", …}]`.
private struct Media: Decodable {
    var url: String?
}

/// The object form: `{"default": {"url": …}, "thumbnail": {"url": …}}`, or an empty object.
private struct MediaObject: Decodable {
    var urls: [String]

    private enum Keys: String, CodingKey { case url, `default`, thumbnail }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        var urls: [String] = []
        if let url = c.lenientString(.url) { urls.append(url) }
        for key in [Keys.default, .thumbnail] {
            if let media = try? c.decodeIfPresent(Media.self, forKey: key), let url = media.url, !url.isEmpty {
                urls.append(url)
            }
        }
        self.urls = urls
    }
}

// MARK: - Lenient fields

extension KeyedDecodingContainer {
    /// The string at `key`, or nil when it is absent, null, empty or not a string.
    func lenientString(_ key: Key) -> String? {
        guard let s = try? decodeIfPresent(String.self, forKey: key), !s.isEmpty else { return nil }
        return s
    }
}
