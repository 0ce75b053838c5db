import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// A realm's write state, in one value: the session of the current write, the thread it
/// began on, its first failure, and what writes keep between them (scratch space, the queue of
/// asynchronous writes, what the last nested write left for its group's commit). A write
/// begins in one place, ``Realm/startWrite(_:)``, and ends in one, `endWrite()`.
struct WriteState {
    /// The current write, from `beginWrite` to its end (`nil` in a write that failed to begin).
    var session: WriteSession?
    /// The thread of the current write; set from `beginWrite` to its end, also when the write
    /// failed to begin.
    var thread: pthread_t?
    /// The first error the world caused in the current write (a full map, an I/O error, a
    /// write lock that could not be taken). From then on the write changes nothing more, and
    /// `commitWrite` rolls it back and throws this error.
    var failure: Realm.Error?
    /// The blocks of `beginAsyncWrite` and the commits of `commitAsyncWrite` not done yet.
    var asyncWrites: Realm.AsyncWriteQueue?
    /// Scratch space every write of this realm reuses.
    let buffers = WriteBuffers()
    /// What `add` collects while it adds a graph, kept between adds (see `insertGraph`).
    var graphScratch = Realm.GraphInsertion()
    /// The catalog changes of the last nested write (of an `asyncWrite`), published once its
    /// group's commit is durable.
    var catalogChangesOfLastNestedWrite = CatalogChanges()
    /// What the last nested write (of an `asyncWrite`) changed, for its group's change log.
    var changeLogOfLastNestedWrite: ChangeLog?
}

extension Realm {
    /// Where a write's transaction comes from.
    enum WriteSource {
        /// A write transaction of its own on the file.
        case file
        /// A transaction nested in a group commit's (see `asyncWrite`).
        case group(GroupCommitter.Turn)
    }

    /// The one place a write begins: takes the write's transaction from `source` and makes it
    /// the realm's current write. The snapshot is released, the generation moves on (every
    /// accessor looks its record up again, in the write's view) and the catalog is brought to
    /// the write's.
    /// - Throws: The error the transaction could not begin with (the caller decides whether it
    ///   becomes a failed write, see `beginFailedWrite`, or is thrown).
    func startWrite(_ source: WriteSource) throws {
        // A shared snapshot needs a reader slot for the realm's next read: reserved first, so
        // that a write that cannot have one fails before it begins.
        let standby = try standbyForSharedSnapshot()
        let session =
            switch source {
            case .file: try WriteSession.begin(file, recording: recordsChangeLogs, buffers: writing.buffers, observer: self)
            case .group(let turn):
                try WriteSession.begin(nestedIn: turn, recording: recordsChangeLogs, buffers: writing.buffers, observer: self)
            }
        try releaseSnapshot(standby: standby)
        writing.session = session
        writing.thread = pthread_self()
        generation &+= 1
        syncCatalog(session.view)
    }
}
