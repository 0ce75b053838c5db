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
    public var multimediaURLs: [String] { multimedia.map(\.url) }
    /// The document's images: `multimedia[]` (or the URLs of its object form, with no size).
    public var multimedia: [MediaDTO]
    /// The byline: `byline.original` and the people of `byline.person[]`.
    public var byline: BylineDTO?
    /// The keywords: `keywords[]`, each with its `name` (subject, persons, …) and `value`.
    public var keywords: [KeywordDTO]

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
        case byline
        case keywords
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
            multimedia = items.compactMap { m in
                m.url.map { MediaDTO(url: $0, width: m.width ?? 0, height: m.height ?? 0, type: m.type ?? "") }
            }
        } else if let object = try? c.decodeIfPresent(MediaObject.self, forKey: .multimedia) {
            multimedia = object.urls.map { MediaDTO(url: $0, width: 0, height: 0, type: "image") }
        } else {
            multimedia = []
        }
        // `byline` is an object; some old documents carry an empty array or a string instead.
        byline = try? c.decodeIfPresent(BylineDTO.self, forKey: .byline)
        if byline?.original == nil && byline?.people.isEmpty != false { byline = nil }
        // A keyword without a value is passed over, not the whole document.
        keywords = ((try? c.decodeIfPresent([Lenient<KeywordDTO>].self, forKey: .keywords)) ?? []).compactMap(\.value)
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

/// One image of the array form: `[{"url": "images/…", "width": 600, "type": "image", …}]`.
private struct Media: Decodable {
    var url: String?
    var width: Int?
    var height: Int?
    var type: String?

    private enum Keys: String, CodingKey { case url, width, height, type }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        url = c.lenientString(.url)
        width = try? c.decodeIfPresent(Int.self, forKey: .width)
        height = try? c.decodeIfPresent(Int.self, forKey: .height)
        type = c.lenientString(.type)
    }
}

/// One image of a document, as the API gives it (the URL may be relative to nytimes.com).
public struct MediaDTO: Sendable, Equatable {
    public var url: String
    public var width: Int
    public var height: Int
    public var type: String

    public init(url: String, width: Int, height: Int, type: String) {
        self.url = url
        self.width = width
        self.height = height
        self.type = type
    }

    /// The URL made absolute: `images/…` is on `https://www.nytimes.com/`.
    public var absoluteURL: String {
        url.hasPrefix("http://") || url.hasPrefix("https://") ? url : "https://www.nytimes.com/" + url
    }
}

/// A document's byline: `{"original": "By A and B", "person": [{"firstname": …}]}`.
public struct BylineDTO: Decodable, Sendable, Equatable {
    public var original: String?
    public var people: [Person]

    /// One person of `byline.person[]`.
    public struct Person: Decodable, Sendable, Equatable {
        public var firstname: String?
        public var middlename: String?
        public var lastname: String?

        /// "Firstname Middlename Lastname", the parts there are.
        public var name: String {
            [firstname, middlename, lastname].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: " ")
        }
    }

    private enum Keys: String, CodingKey { case original, person }

    public init(original: String?, people: [Person]) {
        self.original = original
        self.people = people
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        original = c.lenientString(.original)
        people = ((try? c.decodeIfPresent([Person].self, forKey: .person)) ?? []).filter { !$0.name.isEmpty }
    }

    /// Who the byline names first: its first person, or its text without the leading "By ".
    public var author: (key: String, name: String)? {
        let name: String
        if let first = people.first {
            name = first.name
        } else if let original {
            name = original.hasPrefix("By ") ? String(original.dropFirst(3)) : original
        } else {
            return nil
        }
        // A stable key: the name folded to lowercase words joined by dashes, so the same
        // person is one author whichever article names them.
        let key = name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .split { !$0.isLetter && !$0.isNumber }.joined(separator: "-")
        return key.isEmpty ? nil : (key, name)
    }
}

/// A value decoded if it can be, `nil` otherwise, so one bad element spares its array.
private struct Lenient<T: Decodable>: Decodable {
    var value: T?
    init(from decoder: any Decoder) throws { value = try? T(from: decoder) }
}

/// One entry of `keywords[]`: `{"name": "subject", "value": "Basketball", …}`.
public struct KeywordDTO: Decodable, Sendable, Equatable {
    public var name: String
    public var value: String

    private enum Keys: String, CodingKey { case name, value }

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        guard let value = c.lenientString(.value) else {
            throw DecodingError.dataCorruptedError(forKey: .value, in: c, debugDescription: "a keyword without a value")
        }
        self.value = value
        name = c.lenientString(.name) ?? ""
    }
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
