import Foundation

#if canImport(Glibc)
import Glibc
import LMDBRealmFormat
import LMDBRealmStorage
#endif

/// Learns of other processes' commits for every file this process watches: one inotify
/// instance and one thread, blocked in `read` until a watched file is written, for the whole
/// process.
///
/// LMDB writes a commit's meta page with `pwrite`, which inotify reports as `IN_MODIFY`; the
/// thread then tells the file's ``CommitHub``. Files are watched and unwatched by adding and
/// removing inotify watches on the one instance: nothing is registered with libdispatch's event
/// loop (on Linux, read sources made and cancelled on many threads at once can leave it holding
/// freed bookkeeping, and its manager thread then crashes).
final class FileWatcher: @unchecked Sendable {
    // @unchecked Sendable: `hubs` and `started` are touched only under `lock`; `descriptor`
    // is set once, in init.

    static let shared = FileWatcher()

    /// The inotify instance, or -1 if the system gave none (then other processes' commits
    /// are not noticed, as before any watch).
    private let descriptor: Int32
    private let lock = NSLock()
    private var started = false
    /// The hubs of each watch. Two paths of one file (links) share a watch.
    private var hubs: [Int32: [ObjectIdentifier: WeakHub]] = [:]

    private struct WeakHub { weak var hub: CommitHub? }

    private init() {
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
    }

    /// Starts telling `hub` of writes to `path`; returns the watch to give ``unwatch(_:for:)``,
    /// or `nil` if the file cannot be watched.
    func watch(_ path: String, for hub: CommitHub) -> Int32? {
        guard descriptor >= 0 else { return nil }
        return lock.withLock {
            let watch = inotify_add_watch(descriptor, path, UInt32(IN_MODIFY))
            guard watch >= 0 else { return nil }
            hubs[watch, default: [:]][ObjectIdentifier(hub)] = WeakHub(hub: hub)
            if !started {
                started = true
                let thread = Thread { [self] in run() }
                thread.name = "LMDBRealm.commits"
                thread.start()
            }
            return watch
        }
    }

    /// Stops telling `hub` of writes through `watch`; the watch goes once no hub needs it.
    func unwatch(_ watch: Int32, for hub: CommitHub) {
        lock.withLock {
            hubs[watch]?[ObjectIdentifier(hub)] = nil
            if hubs[watch]?.isEmpty == true {
                hubs[watch] = nil
                // Fails harmlessly if the kernel dropped the watch already (the file was deleted).
                inotify_rm_watch(descriptor, watch)
            }
        }
    }

    /// The thread's loop: reads events, tells the hubs of the files written.
    private func run() {
        // Room for many events: each is 16 bytes (no names: the watches are on files).
        var buffer = [UInt8](repeating: 0, count: 16 * 256)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            var written = Set<Int32>()
            var gone = Set<Int32>()
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + 16 <= count {
                    let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let nameLength = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    if mask & UInt32(IN_MODIFY) != 0 { written.insert(watch) }
                    if mask & UInt32(IN_IGNORED) != 0 { gone.insert(watch) }
                    offset += 16 + nameLength
                }
            }
            let toTell: [CommitHub] = lock.withLock {
                let found = written.flatMap { hubs[$0]?.values.compactMap(\.hub) ?? [] }
                // A watch the kernel dropped (its file deleted) may be numbered again later.
                for watch in gone { hubs[watch] = nil }
                return found
            }
            for hub in toTell { hub.fileWritten() }
        }
    }
}
