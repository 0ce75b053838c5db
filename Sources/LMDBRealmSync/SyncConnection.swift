#if Sync
    internal import Logging
    internal import PostgresNIO
    import Synchronization

    /// A connection to PostgreSQL whose queries end, with ``ConnectionEnded``, as soon as it
    /// closes.
    ///
    /// postgres-nio can drop a query written just as its connection closes, with the promise of
    /// its answer: the query's caller then waits for ever, and keeps what it holds (the client,
    /// and with it the realm file) for ever. Here a query runs on a task of its own, which holds
    /// only the connection; its caller is answered by the query or by the connection's closing,
    /// whichever comes first.
    final class SyncConnection: Sendable {
        let raw: PostgresConnection
        private let logger: Logger
        private let waiting = Mutex(Waiting())

        /// The queries waiting for an answer, each with what fails it when the connection closes.
        private struct Waiting {
            var closed = false
            var next = 0
            var queries: [Int: @Sendable () -> Void] = [:]
        }

        init(_ raw: PostgresConnection, logger: Logger) {
            self.raw = raw
            self.logger = logger
            raw.closeFuture.whenComplete { [weak self] _ in self?.closed() }
        }

        private func closed() {
            let queries = waiting.withLock { waiting in
                waiting.closed = true
                defer { waiting.queries = [:] }
                return Array(waiting.queries.values)
            }
            for fail in queries { fail() }
        }

        /// Runs `query`: its rows, or the error that stopped it (``ConnectionEnded`` if the
        /// connection closed first).
        @discardableResult
        func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
            try await withCheckedThrowingContinuation { continuation in
                let answer = Answer(continuation)
                let id = waiting.withLock { waiting -> Int? in
                    guard !waiting.closed else { return nil }
                    waiting.next += 1
                    waiting.queries[waiting.next] = { answer.resume(with: .failure(ConnectionEnded())) }
                    return waiting.next
                }
                guard let id else { return answer.resume(with: .failure(ConnectionEnded())) }
                let (raw, logger) = (raw, logger)
                Task {
                    let result: Result<PostgresRowSequence, any Error>
                    do {
                        result = .success(try await raw.query(query, logger: logger))
                    } catch {
                        result = .failure(error)
                    }
                    _ = self.waiting.withLock { $0.queries.removeValue(forKey: id) }
                    answer.resume(with: result)
                }
            }
        }

        /// Runs `query` and reads its rows to their end, for what it does: an error PostgreSQL
        /// raises after the first row (a statement that returns rows sends its errors among
        /// them) is thrown here, not lost with the rows.
        func execute(_ query: PostgresQuery) async throws {
            for try await _ in try await self.query(query) {}
        }

        /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
        func transaction<R: Sendable>(_ body: (SyncConnection) async throws -> R) async throws -> R {
            _ = try await query("BEGIN")
            do {
                let result = try await body(self)
                _ = try await query("COMMIT")
                return result
            } catch {
                _ = try? await query("ROLLBACK")
                throw error
            }
        }
    }

    /// The connection closed.
    struct ConnectionEnded: Error, CustomStringConvertible {
        var description: String { "the connection to PostgreSQL closed" }
    }

    /// A continuation resumed once, by the first of those that answer it.
    private final class Answer<T: Sendable>: Sendable {
        private let continuation: Mutex<CheckedContinuation<T, any Error>?>

        init(_ continuation: CheckedContinuation<T, any Error>) {
            self.continuation = Mutex(continuation)
        }

        func resume(with result: Result<T, any Error>) {
            let continuation = continuation.withLock { continuation in
                defer { continuation = nil }
                return continuation
            }
            continuation?.resume(with: result)
        }
    }
#endif
