public import Foundation

/// An error the world can cause: a file, its schema, a value, a query.
///
/// Code names it `RealmError`, as RealmSwift code does; it is declared here, below every
/// layer, so that each of them can throw it. It is an open struct: match its ``code`` or use
/// the code directly in a `catch` pattern:
///
/// ```swift
/// do {
///     let realm = try Realm(configuration: config)
/// } catch RealmError.schemaMismatch {
///     // the file was written with another version of the model classes
/// } catch let error as RealmError {
///     print(error.code, error.localizedDescription)
/// }
/// ```
public struct RealmError: Swift.Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
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
        /// An encryption key was given: LMDBRealm does not encrypt files (LMDB 0.9 has no page
        /// encryption), and will not write in plaintext a file its user asked to encrypt.
        public static let encryptionNotSupported = Code(rawValue: "encryptionNotSupported")
        /// More versions of the file are pinned than
        /// `Realm.Configuration.maximumNumberOfActiveVersions` allows.
        public static let tooManyActiveVersions = Code(rawValue: "tooManyActiveVersions")

        /// RealmSwift's name for ``noSpace``.
        public static let outOfDiskSpace = noSpace
        /// RealmSwift's name for ``incompatibleVersion``.
        public static let unsupportedFileFormatVersion = incompatibleVersion
        /// RealmSwift's name for ``invalidValue``.
        public static let invalidInput = invalidValue
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

    public var description: String { "RealmError.\(code): \(message)" }
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
    public static let encryptionNotSupported = Code.encryptionNotSupported
    public static let tooManyActiveVersions = Code.tooManyActiveVersions
    public static let outOfDiskSpace = Code.outOfDiskSpace
    public static let unsupportedFileFormatVersion = Code.unsupportedFileFormatVersion
    public static let invalidInput = Code.invalidInput
}

/// Lets `catch RealmError.fileNotFound` match a ``RealmError`` with that code.
public func ~= (code: RealmError.Code, error: any Error) -> Bool {
    (error as? RealmError)?.code == code
}

extension RealmError {
    /// The error for an encryption key given for `url`.
    package static func encryptionNotSupported(at url: URL) -> RealmError {
        RealmError(
            .encryptionNotSupported,
            "An encryption key was given for '\(url.path)', but LMDBRealm does not encrypt files (LMDB 0.9 has no page encryption); nothing was written. Leave Realm.Configuration.encryptionKey nil and encrypt the volume the file lives on.",
            fileURL: url)
    }
}
