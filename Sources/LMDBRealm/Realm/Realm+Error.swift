public import Foundation

extension Realm {
    /// An error the world can cause: a file, its schema, a value, a query.
    ///
    /// `Realm.Error` is an open struct: match its ``code`` or use the code directly in a
    /// `catch` pattern, as in RealmSwift:
    ///
    /// ```swift
    /// do {
    ///     let realm = try Realm(configuration: config)
    /// } catch Realm.Error.schemaMismatch {
    ///     // the file was written with another version of the model classes
    /// } catch let error as Realm.Error {
    ///     print(error.code, error.localizedDescription)
    /// }
    /// ```
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
        /// What kind of error this is.
        public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }

            /// Something failed that has no more specific code.
            public static let fail = Code(rawValue: "fail")
            /// The file does not exist (and the configuration may not create it).
            public static let fileNotFound = Code(rawValue: "fileNotFound")
            /// The process may not read or write the file or its directory.
            public static let filePermissionDenied = Code(rawValue: "filePermissionDenied")
            /// The file could not be opened for another reason (it is open with another
            /// configuration, the disk failed, …).
            public static let fileAccess = Code(rawValue: "fileAccess")
            /// The file is not an LMDBRealm file, or it is damaged (empty, truncated, bad bytes).
            public static let invalidDatabase = Code(rawValue: "invalidDatabase")
            /// The file was written by a newer format version.
            public static let incompatibleVersion = Code(rawValue: "incompatibleVersion")
            /// The model classes differ from the schema stored in the file.
            public static let schemaMismatch = Code(rawValue: "schemaMismatch")
            /// `add(_:update: .error)` met an object with the same primary key.
            public static let primaryKeyExists = Code(rawValue: "primaryKeyExists")
            /// A query string could not be parsed or does not fit the schema.
            public static let invalidQuery = Code(rawValue: "invalidQuery")
            /// A value cannot be stored (a key too long, a malformed ObjectId string, …).
            public static let invalidValue = Code(rawValue: "invalidValue")
            /// The file reached `Configuration.maximumFileSize`.
            public static let mapFull = Code(rawValue: "mapFull")
            /// Every reader slot of the file is in use.
            public static let tooManyReaders = Code(rawValue: "tooManyReaders")
            /// The file was opened read-only.
            public static let readOnly = Code(rawValue: "readOnly")
            /// The disk is full.
            public static let noSpace = Code(rawValue: "noSpace")
            /// More versions of the file are pinned than
            /// ``Realm/Configuration/maximumNumberOfActiveVersions`` allows.
            public static let tooManyActiveVersions = Code(rawValue: "tooManyActiveVersions")
        }

        /// What kind of error this is.
        public let code: Code
        /// What went wrong and where: the file, class, property or query position.
        public let message: String
        /// The file concerned, when there is one.
        public let fileURL: URL?

        public init(_ code: Code, _ message: String, fileURL: URL? = nil) {
            self.code = code
            self.message = message
            self.fileURL = fileURL
        }

        public var description: String { "Realm.Error.\(code): \(message)" }
        public var errorDescription: String? { message }

        // MARK: Matching codes in `catch`

        public static let fail = Code.fail
        public static let fileNotFound = Code.fileNotFound
        public static let filePermissionDenied = Code.filePermissionDenied
        public static let fileAccess = Code.fileAccess
        public static let invalidDatabase = Code.invalidDatabase
        public static let incompatibleVersion = Code.incompatibleVersion
        public static let schemaMismatch = Code.schemaMismatch
        public static let primaryKeyExists = Code.primaryKeyExists
        public static let invalidQuery = Code.invalidQuery
        public static let invalidValue = Code.invalidValue
        public static let mapFull = Code.mapFull
        public static let tooManyReaders = Code.tooManyReaders
        public static let readOnly = Code.readOnly
        public static let noSpace = Code.noSpace
        public static let tooManyActiveVersions = Code.tooManyActiveVersions
    }
}

/// Lets `catch Realm.Error.fileNotFound` match a ``Realm/Error`` with that code.
public func ~= (code: Realm.Error.Code, error: any Error) -> Bool {
    (error as? Realm.Error)?.code == code
}

extension Realm.Error {
    /// `error` as a ``Realm/Error``: itself if it is one, translated if it came from the file
    /// underneath (an I/O error otherwise), its message saying `what` was being done to `url`.
    init(_ error: any Error, url: URL, doing what: String) {
        if let error = error as? Realm.Error {
            self = error
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
        case .noSpace: code = .noSpace
        case .badValueSize: code = .invalidValue
        case .optionsConflict:
            code = .fileAccess
            detail = "the file is already open in this process with a different configuration"
        case .other, nil: code = .fileAccess
        }
        self.init(code, "\(what) '\(url.path)': \(detail)", fileURL: url)
    }
}
