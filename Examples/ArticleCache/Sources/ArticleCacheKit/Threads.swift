import Foundation

/// Runs `body` on a new thread of its own and returns its result: a realm opened in `body`
/// belongs to that thread, and is closed when `body` returns.
func onNewThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try body() })
        }.start()
    }
}
