import Foundation
import LMDBRealmFormat

/// Points where a test can run code of its own inside the library, to reach an interleaving
/// that timing alone would reach only by chance. Each hook is `nil` outside tests, and a test
/// that sets one runs in a process of its own (an exit test), since hooks are process-wide.
@_spi(Testing) public enum TestHooks {
    /// A point in the life of the group-commit writer thread.
    public enum GroupCommitPoint: Sendable {
        /// Every member of a group was resumed with the commit's outcome; the writer has not
        /// touched the file since.
        case membersResumed
        /// The writer thread is about to end: nobody was waiting.
        case writerEnding
    }

    // An NSLock (a pthread mutex), not Synchronization's Mutex: ThreadSanitizer, which runs
    // the group-commit tests, sees the ordering a pthread mutex gives, not a bare futex's.
    private static let lock = NSLock()
    nonisolated(unsafe) private static var groupCommitHook: (@Sendable (GroupCommitPoint) -> Void)?
    // nonisolated(unsafe): `groupCommitHook` is only read or written while `lock` is held.

    /// Called on the group-commit writer thread at each ``GroupCommitPoint``.
    public static var groupCommit: (@Sendable (GroupCommitPoint) -> Void)? {
        get { lock.withLock { groupCommitHook } }
        set { lock.withLock { groupCommitHook = newValue } }
    }
}
