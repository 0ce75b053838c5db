internal import LMDBKit
import Foundation
import LMDBRealmFormat

extension StoreFile {
    /// What compacting a file on launch did.
    package enum CompactionOutcome {
        /// Another process has the file open: it was left alone, and the question not asked.
        case inUse
        /// `shouldCompact` said no.
        case declined
        /// The file was rewritten from `before` bytes to `after`.
        case compacted(before: Int, after: Int)
    }

    /// Compacts the file at `url` if no other process has it open and `shouldCompact` (given
    /// the file's total and used bytes) says so: the file is locked exclusively (a process
    /// opening it meanwhile waits), copied compacted beside itself, and the copy renamed over
    /// it. This process must not have the file open.
    package static func compactIfAsked(_ options: Options, _ shouldCompact: (_ totalBytes: Int, _ usedBytes: Int) -> Bool) throws -> CompactionOutcome {
        let url = options.url
        guard let lock = Environment.lockExclusively(path: url.path) else { return .inUse }
        defer { Environment.unlockExclusively(lock) }
        do {
            var environmentOptions = Environment.Options()
            environmentOptions.mapSize = options.maximumFileSize
            environmentOptions.maximumMapSize = options.maximumFileSize
            environmentOptions.maxDatabases = StoreFile.maximumDatabases
            environmentOptions.noLock = true
            environmentOptions.readOnly = true
            let environment = try Environment.open(path: url.path, options: environmentOptions)
            let names = try environment.openAllDatabases()
            let txn = try Transaction(environment: environment, readOnly: true)
            let info = environment.info()
            // try?: a file that cannot be stat'ed is measured by the pages LMDB wrote.
            let total = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue
                ?? (info.lastPageNumber + 1) * info.pageSize
            let used = max(0, info.lastPageNumber + 1 - (try environment.freePageCount(in: txn))) * info.pageSize
            guard shouldCompact(total, used) else { return .declined }
            var copyOptions = Environment.Options()
            copyOptions.mapSize = options.maximumFileSize
            copyOptions.maximumMapSize = options.maximumFileSize
            copyOptions.maxDatabases = StoreFile.maximumDatabases
            copyOptions.fileMode = 0o600
            try FilePlacement.place(at: url, purpose: "the compacted realm", mode: .replacing) { temporary in
                guard try environment.writeCopy(of: txn.unsafe, names: names, to: temporary.path, options: copyOptions) else {
                    throw RealmError(.fileAccess, "Cannot compact the realm at '\(url.path)': its databases changed while copying", fileURL: url)
                }
            }
            // try?: the size is only reported.
            let after = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? 0
            return .compacted(before: total, after: after)
        } catch let error as LMDBError {
            throw RealmError(error, url: url, doing: "Cannot compact the realm at path")
        }
    }
}
