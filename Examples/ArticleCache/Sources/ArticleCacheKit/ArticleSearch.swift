public import Foundation

/// What to ask the Article Search API for; it makes the ``Request``.
public struct ArticleSearch: Sendable, Equatable {
    public static let path = "/svc/search/v2/articlesearch.json"
    /// The real API's base URL.
    public static let nytBaseURL = URL(string: "https://api.nytimes.com")!

    public var query: String?
    public var beginDate: Date?
    public var endDate: Date?
    public var page: Int
    public var apiKey: String?
    public var timeout: TimeInterval

    public init(query: String? = nil, beginDate: Date? = nil, endDate: Date? = nil, page: Int = 0,
                apiKey: String? = nil, timeout: TimeInterval = 15) {
        self.query = query
        self.beginDate = beginDate
        self.endDate = endDate
        self.page = page
        self.apiKey = apiKey
        self.timeout = timeout
    }

    /// The request: `q`, `begin_date` and `end_date` as `yyyyMMdd` in UTC, `page`, `api-key`.
    public var request: Request {
        var items: [URLQueryItem] = []
        if let query, !query.isEmpty { items.append(URLQueryItem(name: "q", value: query)) }
        if let beginDate { items.append(URLQueryItem(name: "begin_date", value: Self.formatDay(beginDate))) }
        if let endDate { items.append(URLQueryItem(name: "end_date", value: Self.formatDay(endDate))) }
        items.append(URLQueryItem(name: "page", value: String(page)))
        if let apiKey, !apiKey.isEmpty { items.append(URLQueryItem(name: "api-key", value: apiKey)) }
        return Request(path: Self.path, queryItems: items, timeout: timeout)
    }

    /// `date` as `yyyyMMdd`, in UTC.
    public static func formatDay(_ date: Date) -> String {
        dayFormatter().string(from: date)
    }

    /// The UTC midnight that starts the day `yyyyMMdd`, or nil if `text` is not such a day.
    public static func parseDay(_ text: String) -> Date? {
        guard text.count == 8, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) else { return nil }
        return dayFormatter().date(from: text)
    }

    private static func dayFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd"
        return formatter
    }
}
