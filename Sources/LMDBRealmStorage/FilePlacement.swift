package import Foundation
import LMDBRealmFormat

/// A whole file put at a path in one step: written beside it under a name of its own, flushed
/// to the disk, then given its name, and the directory flushed, so that after a crash the path
/// holds the old file or the whole new one, never part of one. Compaction, copies of a realm
/// and seed files all arrive this way.
package enum FilePlacement {
    /// How the new file takes its name.
    package enum Mode {
        /// Replaces whatever is at the path (`rename(2)`).
        case replacing
        /// Takes the path only if nothing is there (`link(2)`, which never replaces a file);
        /// a file already there is an error.
        case new
        /// Takes the path only if nothing is there; a file already there is kept, and
        /// ``FilePlacement/place(at:purpose:mode:write:)`` returns `false` (the first of
        /// several processes wins).
        case firstWins
    }

    /// Writes a file with `write` (given the temporary path, which does not exist yet) and puts
    /// it at `url` as `mode` says. The temporary file (and an LMDB lock file beside it) is
    /// removed whatever happens; when `write` throws, nothing at `url` changes.
    /// - Parameter purpose: What the file is, for errors and the temporary name: "the
    ///   compacted realm", "the copy of the realm".
    /// - Returns: `false` only in ``Mode/firstWins`` when a file was at `url` already.
    /// - Throws: What `write` throws, or ``RealmError/Code/fileAccess`` naming `url` and the
    ///   reason when the file cannot be put in place.
    @discardableResult
    package static func place(at url: URL, purpose: String, mode: Mode, write: (URL) throws -> Void) throws -> Bool {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            ".\(url.lastPathComponent).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer {
            unlink(temporary.path)
            unlink(temporary.path + "-lock")
        }
        try write(temporary)
        // The contents reach the disk before the name does.
        try flush(temporary.path, purpose: purpose, url: url)
        let placed: Bool
        switch mode {
        case .replacing:
            guard rename(temporary.path, url.path) == 0 else { throw failure(purpose, url) }
            placed = true
        case .new:
            guard link(temporary.path, url.path) == 0 else { throw failure(purpose, url) }
            placed = true
        case .firstWins:
            if link(temporary.path, url.path) == 0 {
                placed = true
            } else if errno == EEXIST {
                return false
            } else {
                throw failure(purpose, url)
            }
        }
        // And the name reaches the disk before this returns.
        try flush(directory.path, purpose: purpose, url: url)
        return placed
    }

    /// `fsync(2)` on the file or directory at `path`.
    private static func flush(_ path: String, purpose: String, url: URL) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(purpose, url, doing: "open '\(path)' to flush it") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure(purpose, url, doing: "flush '\(path)' to the disk") }
    }

    private static func failure(_ purpose: String, _ url: URL, doing: String? = nil) -> RealmError {
        let reason = String(cString: strerror(errno))
        let step = doing.map { " (cannot \($0))" } ?? ""
        return RealmError(.fileAccess, "Cannot put \(purpose) in place at '\(url.path)'\(step): \(reason)", fileURL: url)
    }
}
