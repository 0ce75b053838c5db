import LMDBRealmFormat

/// What Storage tells the layer above about commits: the hook observation implements
/// (`CommitHub`), so that Storage never reaches up into it.
package protocol CommitAnnouncer: AnyObject, Sendable {
    /// Files what the write that will create `version` changed, before it commits, so that a
    /// handle refreshing to that version on another thread finds it.
    func stage(_ log: ChangeLog, version: Int)
    /// Forgets a staged log whose write failed to commit.
    func unstage(version: Int)
    /// Says that a commit of this process is durable (it may have changed nothing).
    func announceCommitted()
}
