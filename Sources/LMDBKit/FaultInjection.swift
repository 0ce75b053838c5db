import Foundation
import Synchronization

/// Makes chosen LMDB calls fail as the world can make them fail (a full map, a full reader
/// table, an I/O error), so that tests can reach every error path of the layers above.
///
/// ```swift
/// FaultInjection.fail("mdb_del", with: .mapFull)      // the next mdb_del returns MDB_MAP_FULL
/// ```
/// The failure is returned instead of calling LMDB, as the named function would return it;
/// the wrapper then handles it as any other return code (a write transaction is poisoned by
/// the codes that poison it). Injection is process-wide: a test that uses it runs in a process
/// of its own (an exit test). When nothing is armed, each wrapped call pays one relaxed atomic
/// load.
@_spi(Testing) public enum FaultInjection {
    private static let armed = Atomic<Bool>(false)
    // An NSLock (a pthread mutex), not Synchronization's Mutex, so that ThreadSanitizer sees
    // the ordering it gives.
    private static let lock = NSLock()
    nonisolated(unsafe) private static var plan: [String: Fault] = [:]
    // nonisolated(unsafe): `plan` is only read or written while `lock` is held.

    /// What happens at the chosen call of the whole sequence of wrapped calls.
    public enum Action: Sendable, Equatable {
        /// The call returns this error instead of running.
        case fail(LMDBError)
        /// The process ends with `SIGKILL` instead of making the call: a crash at that instant.
        case kill
    }

    private struct SequenceFault {
        /// Wrapped calls still to let through before the chosen one.
        var skip: Int
        /// Only calls of this function count, when set.
        var function: String?
        var action: Action
    }

    nonisolated(unsafe) private static var sequenceFault: SequenceFault?
    nonisolated(unsafe) private static var log: [String]?
    // nonisolated(unsafe): both are only read or written while `lock` is held.

    private struct Fault {
        var code: Int32
        /// Calls to let through before failing.
        var skip: Int
        /// Calls to fail, once `skip` reaches 0.
        var remaining: Int
    }

    /// Fails calls of the LMDB function `function` (`"mdb_put"`, `"mdb_txn_begin"`, …) with
    /// `error`: `times` calls in a row, after letting `after` calls through.
    public static func fail(_ function: String, with error: LMDBError, times: Int = 1, after: Int = 0) {
        lock.withLock { plan[function] = Fault(code: error.code, skip: after, remaining: times) }
        armed.store(true, ordering: .releasing)
    }

    /// Applies `action` at the `number`-th wrapped LMDB call from now (1 is the next one) of
    /// `function`, or of any function when it is `nil`: the way to reach every call of a
    /// workload in turn.
    public static func at(call number: Int, of function: String? = nil, _ action: Action) {
        precondition(number >= 1, "calls are numbered from 1")
        lock.withLock { sequenceFault = SequenceFault(skip: number - 1, function: function, action: action) }
        armed.store(true, ordering: .releasing)
    }

    /// Starts recording the name of every wrapped LMDB call, injecting nothing by itself.
    public static func startRecording() {
        lock.withLock { log = [] }
        armed.store(true, ordering: .releasing)
    }

    /// The names of the wrapped calls made since ``startRecording()``, in order; recording stops.
    public static func stopRecording() -> [String] {
        lock.withLock {
            defer { log = nil }
            return log ?? []
        }
    }

    /// Removes every planned failure and stops recording.
    public static func reset() {
        lock.withLock {
            plan.removeAll()
            sequenceFault = nil
            log = nil
        }
        armed.store(false, ordering: .releasing)
    }

    /// The return code planned for this call of `function`, if any: consumed by the call.
    @inline(__always)
    static func injected(_ function: StaticString) -> Int32? {
        guard _slowPath(armed.load(ordering: .relaxed)) else { return nil }
        return take(function.description)
    }

    private static func take(_ function: String) -> Int32? {
        lock.withLock {
            log?.append(function)
            if var fault = sequenceFault, fault.function == nil || fault.function == function {
                if fault.skip > 0 {
                    fault.skip -= 1
                    sequenceFault = fault
                } else {
                    sequenceFault = nil
                    switch fault.action {
                    case .fail(let error): return error.code
                    case .kill:
                        Foundation.kill(getpid(), SIGKILL)
                        // SIGKILL cannot be caught; this line is never reached.
                        fatalError("SIGKILL was not delivered")
                    }
                }
            }
            guard var fault = plan[function], fault.remaining > 0 else { return nil }
            if fault.skip > 0 {
                fault.skip -= 1
                plan[function] = fault
                return nil
            }
            fault.remaining -= 1
            plan[function] = fault
            return fault.code
        }
    }
}

/// Calls LMDB's `function` through `call`, unless a test planned its failure.
@inline(__always)
func lmdb(_ function: StaticString, _ call: () -> Int32) -> Int32 {
    if let code = FaultInjection.injected(function) { return code }
    return call()
}
