public import Foundation

/// One call to the API: a path under the service's base URL, its query items and how long to
/// wait for an answer.
public struct Request: Sendable, Equatable {
    public var path: String
    public var queryItems: [URLQueryItem]
    public var timeout: TimeInterval

    public init(path: String, queryItems: [URLQueryItem] = [], timeout: TimeInterval = 15) {
        self.path = path
        self.queryItems = queryItems
        self.timeout = timeout
    }
}

/// Something that answers a ``Request`` with the body of a successful response.
public protocol Service: Sendable {
    func execute(_ request: Request) async throws(ServiceError) -> Data
}

/// Why a request has no usable answer.
public enum ServiceError: Error, Equatable, CustomStringConvertible {
    /// The server answered with a status other than 2xx.
    case httpStatus(Int)
    /// No answer: the connection failed, timed out or was lost.
    case transport(String)
    /// The body is not an Article Search response.
    case decoding(String)
    /// The body is a response whose `status` is not "OK".
    case apiStatus(String)
    /// The bundled sample is missing from the build.
    case missingSample

    public var description: String {
        switch self {
        case .httpStatus(let code): "the server answered HTTP \(code)"
        case .transport(let reason): "no answer from the server: \(reason)"
        case .decoding(let reason): "the response is not an article page: \(reason)"
        case .apiStatus(let status): "the API answered with status \"\(status)\""
        case .missingSample: "the bundled sample response is missing"
        }
    }

    /// Whether trying again may help: transport failures, 429 and 5xx.
    public var isTransient: Bool {
        switch self {
        case .transport: true
        case .httpStatus(let code): code == 429 || (500...599).contains(code)
        default: false
        }
    }
}

/// Answers every request with the sample page bundled with this module, so the program runs
/// without a network or an API key.
public struct BundledSampleService: Service {
    public init() {}

    public func execute(_ request: Request) async throws(ServiceError) -> Data {
        guard let url = Bundle.module.url(forResource: "sample-articles", withExtension: "json"),
              let data = try? Data(contentsOf: url)
        else { throw .missingSample }
        return data
    }
}
