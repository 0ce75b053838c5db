public import Foundation
public import Testing

/// Holds what another thread produced until the waiting thread reads it.
private final class ResultBox<R>: @unchecked Sendable {
    // @unchecked Sendable: written by one thread before it signals a semaphore, read by the
    // other only after waiting on it.
    var result: Result<R, any Error>?
}

/// Runs `body` on a new thread, waits for it (at most `timeout` seconds), and returns its
/// result or rethrows its error.
public func onOtherThread<R>(
    timeout: TimeInterval = 60, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () throws -> R
) throws -> R {
    let box = ResultBox<R>()
    let done = DispatchSemaphore(value: 0)
    Thread {
        box.result = Result { try body() }
        done.signal()
    }.start()
    let finished = done.wait(timeout: .now() + timeout) == .success
    #expect(finished, "the other thread did not finish within \(timeout) s", sourceLocation: sourceLocation)
    guard finished, let result = box.result else { throw TimedOut() }
    return try result.get()
}

/// A wait that ran out of time.
public struct TimedOut: Error {}
