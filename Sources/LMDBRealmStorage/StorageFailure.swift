package import Foundation
internal import LMDBKit
package import LMDBRealmFormat

/// A failure of the file underneath (an LMDB or operating-system error), classified for the
/// layers above Storage, which do not see LMDBKit: `RealmError` is made from it.
package struct StorageFailure {
    package enum Kind {
        case fileNotFound, permissionDenied, invalidDatabase, incompatibleVersion
        case mapFull, readersFull, noSpace, badValueSize, optionsConflict, other
    }

    package let kind: Kind
    /// LMDB's or the system's own words for it.
    package let reason: String

    /// The classification of `error`, or `nil` if it did not come from the file underneath.
    package init?(_ error: any Error) {
        guard let error = error as? LMDBError else { return nil }
        reason = error.reason
        switch error {
        case LMDBError.fileNotFound: kind = .fileNotFound
        case LMDBError.permissionDenied, LMDBError.readOnlyFileSystem, LMDBError(code: EPERM): kind = .permissionDenied
        case LMDBError.invalid, LMDBError.corrupted, LMDBError.pageNotFound, LMDBError.panic: kind = .invalidDatabase
        case LMDBError.versionMismatch: kind = .incompatibleVersion
        case LMDBError.mapFull: kind = .mapFull
        case LMDBError.readersFull: kind = .readersFull
        case LMDBError.noSpace, LMDBError(code: EFBIG): kind = .noSpace
        case LMDBError.badValueSize: kind = .badValueSize
        case LMDBError.optionsConflict: kind = .optionsConflict
        default: kind = .other
        }
    }
}

/// Bytes read from the file that fail their checksum or do not parse: thrown by reads that
/// check them, reported as `invalidDatabase`.
package struct DamagedValue: Error, CustomStringConvertible {
    package let description: String
}

extension RealmError {
    /// `error` as a ``RealmError``: itself if it is one, translated if it came from the file
    /// underneath (an I/O error otherwise), its message saying `what` was being done to `url`.
    package init(_ error: any Error, url: URL, doing what: String) {
        if let error = error as? RealmError {
            self = error
            return
        }
        if let damage = error as? DamagedValue {
            self.init(.invalidDatabase, "\(what) '\(url.path)': it is damaged: \(damage) (`lmdbrealm verify` tells the extent)", fileURL: url)
            return
        }
        let failure = StorageFailure(error)
        let code: Code
        var detail = failure?.reason ?? "\(error)"
        switch failure?.kind {
        case .fileNotFound: code = .fileNotFound
        case .permissionDenied: code = .filePermissionDenied
        case .invalidDatabase:
            code = .invalidDatabase
            detail = "not a valid LMDBRealm file (\(detail))"
        case .incompatibleVersion: code = .incompatibleVersion
        case .mapFull:
            code = .mapFull
            detail = "the file reached its maximum size (Realm.Configuration.maximumFileSize)"
        case .readersFull:
            code = .tooManyReaders
            detail = "every reader slot is in use (Realm.Configuration.maximumNumberOfReaders)"
        case .noSpace:
            code = .noSpace
            detail = "the file cannot grow: the disk is full, or the process's file size limit is reached (\(detail))"
        case .badValueSize: code = .invalidValue
        case .optionsConflict:
            code = .fileAccess
            detail = "the file is already open in this process with a different configuration"
        case .other, nil: code = .fileAccess
        }
        self.init(code, "\(what) '\(url.path)': \(detail)", fileURL: url)
    }
}
