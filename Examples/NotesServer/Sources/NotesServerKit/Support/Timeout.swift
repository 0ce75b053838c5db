import Synchronization

/// The time a wait may take ran out.
package struct TimedOut: Error, CustomStringConvertible {
    package let what: String
    package let after: Duration
    package var description: String { "Timed out after \(after) waiting for \(what)" }
}

/// Runs `operation` and returns its value, or throws ``TimedOut`` once `timeout` has passed: a
/// bound on a wait for a real event, for the tests and the benchmark client.
///
/// On time out `operation` is cancelled and left to end on its own: the caller goes on even if
/// it ignores cancellation (a wait on a continuation does), so a missing event fails a test
/// instead of hanging it.
package func withTimeout<T: Sendable>(
    _ timeout: Duration, waitingFor what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = Outcome<T>()
    let work = Task {
        do {
            outcome.settle(.success(try await operation()))
        } catch {
            outcome.settle(.failure(error))
        }
    }
    let timer = Task {
        do {
            try await Task.sleep(for: timeout)
        } catch {
            return  // The operation ended first.
        }
        outcome.settle(.failure(TimedOut(what: what, after: timeout)))
        work.cancel()
    }
    defer { timer.cancel() }
    return try await withTaskCancellationHandler {
        try await outcome.value
    } onCancel: {
        work.cancel()
    }
}

/// A result settled once, by whichever comes first, and awaited by one task.
private final class Outcome<T: Sendable>: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<T, any Error>)
        case settled(Result<T, any Error>)
        case delivered
    }

    private let state = Mutex(State.pending)

    /// Settles the outcome with `result` unless it is settled already.
    func settle(_ result: Result<T, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
            switch state {
            case .pending:
                state = .settled(result)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .settled, .delivered:
                return nil
            }
        }
        waiter?.resume(with: result)
    }

    /// The settled result, once there is one. Await it from one task only.
    var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let settled = state.withLock { state -> Result<T, any Error>? in
                    switch state {
                    case .pending:
                        state = .waiting(continuation)
                        return nil
                    case .settled(let result):
                        state = .delivered
                        return result
                    case .waiting, .delivered:
                        preconditionFailure("An outcome is awaited once")
                    }
                }
                if let settled { continuation.resume(with: settled) }
            }
        }
    }
}
