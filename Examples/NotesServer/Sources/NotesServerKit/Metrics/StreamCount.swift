import Synchronization

/// A count of things open now (the event streams of a service), that a task can wait on.
package final class StreamCount: Sendable {
    private struct State {
        var count = 0
        var nextWaiter = 0
        var waiters: [Int: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    }

    private let state = Mutex(State())
    private let didChange: @Sendable (Int) -> Void

    /// A count starting at 0 that calls `didChange` with each new value.
    init(didChange: @escaping @Sendable (Int) -> Void) {
        self.didChange = didChange
    }

    /// The count now.
    package var current: Int { state.withLock { $0.count } }

    func open() { change(by: 1) }
    func close() { change(by: -1) }

    private func change(by delta: Int) {
        let (count, ready) = state.withLock { state in
            state.count += delta
            let count = state.count
            let ready = state.waiters.filter { $0.value.count == count }
            for id in ready.keys { state.waiters[id] = nil }
            return (count, ready.values.map(\.continuation))
        }
        didChange(count)
        for continuation in ready { continuation.resume() }
    }

    /// Returns once the count is `count` (at once if it is), or when the task is cancelled.
    package func wait(until count: Int) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.count == count || Task.isCancelled { return true }
                    state.waiters[id] = (count, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}
