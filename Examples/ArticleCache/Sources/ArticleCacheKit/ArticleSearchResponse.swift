public import Foundation

/// A page of the Article Search v2 API:
/// `{"status": "OK", "response": {"docs": [...], "meta": {"hits": 1234, "offset": 0}}}`.
public struct ArticleSearchResponse: Decodable, Sendable {
    public var status: String
    public var docs: [ArticleDTO]
    /// The number of documents matching the query, over every page.
    public var hits: Int?

    private enum Keys: String, CodingKey { case status, response, fault }
    private enum ResponseKeys: String, CodingKey { case docs, meta }
    private enum MetaKeys: String, CodingKey { case hits }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        status = try c.decodeIfPresent(String.self, forKey: .status) ?? "missing"
        guard status == "OK" else {
            throw ServiceError.apiStatus(status)
        }
        let response = try c.nestedContainer(keyedBy: ResponseKeys.self, forKey: .response)
        docs = try response.decodeIfPresent([ArticleDTO].self, forKey: .docs) ?? []
        if let meta = try? response.nestedContainer(keyedBy: MetaKeys.self, forKey: .meta) {
            hits = try? meta.decodeIfPresent(Int.self, forKey: .hits)
        }
    }

    /// Decodes a response body; any failure is a ``ServiceError``.
    public static func decode(_ data: Data) throws(ServiceError) -> ArticleSearchResponse {
        do {
            return try JSONDecoder().decode(ArticleSearchResponse.self, from: data)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .decoding(String(describing: error))
        }
    }
}
