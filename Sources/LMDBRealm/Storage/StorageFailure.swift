import Foundation
internal import LMDBKit

/// A failure of the file underneath (an LMDB or operating-system error), classified for the
/// layers above Storage, which do not see LMDBKit: `Realm.Error` is made from it.
struct StorageFailure {
    enum Kind {
        case fileNotFound, permissionDenied, invalidDatabase, incompatibleVersion
        case mapFull, readersFull, noSpace, badValueSize, optionsConflict, other
    }

    let kind: Kind
    /// LMDB's or the system's own words for it.
    let reason: String

    /// The classification of `error`, or `nil` if it did not come from the file underneath.
    init?(_ error: any Error) {
        guard let error = error as? LMDBError else { return nil }
        reason = error.reason
        switch error {
        case LMDBError.fileNotFound: kind = .fileNotFound
        case LMDBError.permissionDenied, LMDBError.readOnlyFileSystem, LMDBError(code: EPERM): kind = .permissionDenied
        case LMDBError.invalid, LMDBError.corrupted, LMDBError.pageNotFound, LMDBError.panic: kind = .invalidDatabase
        case LMDBError.versionMismatch: kind = .incompatibleVersion
        case LMDBError.mapFull: kind = .mapFull
        case LMDBError.readersFull: kind = .readersFull
        case LMDBError.noSpace: kind = .noSpace
        case LMDBError.badValueSize: kind = .badValueSize
        case LMDBError.optionsConflict: kind = .optionsConflict
        default: kind = .other
        }
    }
}
