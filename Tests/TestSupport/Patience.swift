public import Foundation

/// How long a test waits for something that should happen: an observer's call, another
/// thread's or task's result, a file closing. A wait that succeeds ends when the event comes,
/// so this bounds only a failing test.
///
/// It is long because an event may wait its turn for minutes: CI runs the whole suite under a
/// sanitizer beside other builds on two cores, and a job for a task or an actor queues behind
/// every synchronous test that holds one of the concurrency pool's two threads.
public let eventTimeout: TimeInterval = 300
