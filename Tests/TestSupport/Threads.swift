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
    timeout: TimeInterval = eventTimeout, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () throws -> R
) throws -> R {
    let box = ResultBox<R>()
    let done = DispatchSemaphore(value: 0)
    startThread(body) { result in
        box.result = result
        done.signal()
    }
    let finished = done.wait(timeout: .now() + timeout) == .success
    #expect(finished, "the other thread did not finish within \(timeout) s", sourceLocation: sourceLocation)
    guard finished, let result = box.result else { throw TimedOut() }
    return try result.get()
}

/// A wait that ran out of time.
public struct TimedOut: Error {}

/// Runs `body(0)`, …, `body(count - 1)` on `count` new threads at once and joins them all
/// (`pthread_join`), so everything they held is released when this returns.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Work: @unchecked Sendable {
        // @unchecked Sendable: immutable; handed to one thread each.
        let index: Int
        let body: @Sendable (Int) -> Void
        init(_ index: Int, _ body: @escaping @Sendable (Int) -> Void) {
            self.index = index
            self.body = body
        }
    }
    var threads: [pthread_t] = []
    for i in 0..<count {
        var thread = pthread_t()
        let work = Unmanaged.passRetained(Work(i, body)).toOpaque()
        let rc = pthread_create(
            &thread, nil,
            { context in
                let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
                work.body(work.index)
                return nil
            }, work)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        threads.append(thread)
    }
    for thread in threads { pthread_join(thread, nil) }
}

/// Runs `body` on a new thread of its own and suspends until it returns, leaving the caller's
/// thread free meanwhile.
///
/// Use it for long synchronous work in an `async` test: a test that blocks a thread of the
/// concurrency pool (two threads on a two-core machine) for seconds starves every other
/// test's tasks, servers and timeouts for as long.
public func onNewThread<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
        startThread(body) { continuation.resume(with: $0) }
    }
}

/// Runs `body` on a new thread and hands its result to `done`, on that thread.
private func startThread<R>(
    _ body: @escaping @Sendable () throws -> R, then done: @escaping @Sendable (Result<R, any Error>) -> Void
) {
    Thread { done(Result { try body() }) }.start()
}

/// A task executor with a thread of its own: a task started with
/// `Task(executorPreference: executor)` runs there, not on the concurrency pool, so it goes on
/// however busy other tests keep the pool (two threads on a two-core machine; under a
/// sanitizer, for minutes). Keep the executor until its tasks end (a task does not retain
/// it); its thread ends when it is released.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: its state is the queue's, touched under the queue's lock.
    private final class Queue: @unchecked Sendable {
        // @unchecked Sendable: `jobs` and `stopped` are touched only under `condition`'s lock.
        let condition = NSCondition()
        var jobs: [UnownedJob] = []
        var stopped = false
    }

    private let queue = Queue()

    public init() {
        let queue = self.queue
        let executor = asUnownedTaskExecutor()
        let thread = Thread {
            while true {
                queue.condition.lock()
                while queue.jobs.isEmpty && !queue.stopped { queue.condition.wait() }
                if queue.jobs.isEmpty {
                    queue.condition.unlock()
                    return
                }
                let job = queue.jobs.removeFirst()
                queue.condition.unlock()
                job.runSynchronously(on: executor)
            }
        }
        thread.name = "ThreadExecutor"
        thread.start()
    }

    deinit {
        queue.condition.lock()
        queue.stopped = true
        queue.condition.signal()
        queue.condition.unlock()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        queue.condition.lock()
        queue.jobs.append(unowned)
        queue.condition.signal()
        queue.condition.unlock()
    }
}
