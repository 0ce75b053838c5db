public import Foundation

/// Collects values from any thread; a test waits until enough have arrived, with a timeout.
public final class Collector<T>: @unchecked Sendable {
    // @unchecked Sendable: `items` is only touched while `condition` is locked.
    private let condition = NSCondition()
    private var items: [T] = []

    public init() {}

    public func append(_ item: T) {
        condition.lock()
        items.append(item)
        condition.broadcast()
        condition.unlock()
    }

    /// Everything collected so far.
    public var all: [T] {
        condition.lock()
        defer { condition.unlock() }
        return items
    }

    /// Waits until at least `count` values arrived; returns them, or `nil` after `timeout`
    /// seconds.
    public func wait(count: Int, timeout: TimeInterval = eventTimeout) -> [T]? {
        wait(timeout: timeout) { $0.count >= count }
    }

    /// Waits until `done` holds for the values collected; returns them, or `nil` after
    /// `timeout` seconds.
    public func wait(timeout: TimeInterval = eventTimeout, until done: ([T]) -> Bool) -> [T]? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !done(items) {
            if !condition.wait(until: deadline) { return done(items) ? items : nil }
        }
        return items
    }
}
