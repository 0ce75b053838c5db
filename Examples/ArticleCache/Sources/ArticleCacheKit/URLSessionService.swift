public import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Service`` over `URLSession`: each request is sent to `baseURL` + its path with its own
/// timeout, and tried again (at most `maxAttempts` times in all, waiting `retryDelay`, then
/// twice as long, …) while the failure is transient.
public struct URLSessionService: Service {
    public var baseURL: URL
    public var maxAttempts: Int
    public var retryDelay: TimeInterval

    public init(baseURL: URL, maxAttempts: Int = 3, retryDelay: TimeInterval = 0.5) {
        precondition(maxAttempts >= 1, "maxAttempts must be at least 1")
        self.baseURL = baseURL
        self.maxAttempts = maxAttempts
        self.retryDelay = retryDelay
    }

    /// The URL `request` is sent to.
    public func url(for request: Request) -> URL? {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else { return nil }
        let basePath = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.path = basePath + (request.path.hasPrefix("/") ? request.path : "/" + request.path)
        components.queryItems = request.queryItems.isEmpty ? nil : request.queryItems
        return components.url
    }

    public func execute(_ request: Request) async throws(ServiceError) -> Data {
        guard let url = url(for: request) else {
            throw .transport("cannot make a URL of \(baseURL) and \(request.path)")
        }
        var attempt = 1
        while true {
            do {
                return try await send(url: url, timeout: request.timeout)
            } catch where error.isTransient && attempt < maxAttempts {
                let delay = retryDelay * Double(1 << (attempt - 1))
                try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
                attempt += 1
            }
        }
    }

    private func send(url: URL, timeout: TimeInterval) async throws(ServiceError) -> Data {
        var urlRequest = URLRequest(url: url, timeoutInterval: timeout)
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let result: Result<(Data, URLResponse), ServiceError> = await withCheckedContinuation { continuation in
            let task = session.dataTask(with: urlRequest) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(.transport(error.localizedDescription)))
                } else if let data, let response {
                    continuation.resume(returning: .success((data, response)))
                } else {
                    continuation.resume(returning: .failure(.transport("an empty response")))
                }
            }
            task.resume()
        }
        let (data, response) = try result.get()
        if let http = response as? HTTPURLResponse, !(200...299).contains(http.statusCode) {
            throw .httpStatus(http.statusCode)
        }
        return data
    }
}
