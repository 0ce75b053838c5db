internal import CLMDB

/// A named database (a B-tree of key/value pairs) inside an ``Environment``.
///
/// A `Database` is a handle, valid for the life of its environment. Get one from
/// ``Environment/database(named:)``, ``Environment/createDatabase(named:flags:)`` or, inside a
/// write, ``Transaction/createDatabase(named:flags:)``.
public struct Database: Sendable, Hashable {
    @usableFromInline package let dbi: UInt32
    /// The database's name in the environment.
    public let name: String

    /// The environment's unnamed main database, which also lists the named ones.
    public static let main = Database(dbi: 1, name: "")

    init(dbi: MDB_dbi, name: String) {
        self.dbi = dbi
        self.name = name
    }

    /// How keys and values are stored (`mdb_dbi_open` flags).
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// `MDB_REVERSEKEY`: compare keys from their last byte.
        public static let reverseKey = Flags(rawValue: UInt32(MDB_REVERSEKEY))
        /// `MDB_DUPSORT`: a key may hold several sorted values.
        public static let duplicateSort = Flags(rawValue: UInt32(MDB_DUPSORT))
        /// `MDB_INTEGERKEY`: keys are native unsigned integers of one size.
        public static let integerKey = Flags(rawValue: UInt32(MDB_INTEGERKEY))
        /// `MDB_DUPFIXED`: with `duplicateSort`, all values of a key have one size.
        public static let duplicateFixed = Flags(rawValue: UInt32(MDB_DUPFIXED))
    }

    /// Statistics of one database (`mdb_stat`).
    public struct Statistics: Sendable {
        /// Key/value pairs stored.
        public var entries: Int
        /// Height of the B-tree.
        public var depth: Int
        public var branchPages: Int
        public var leafPages: Int
        public var overflowPages: Int
    }
}

/// Flags for ``Transaction/put(_:forKey:in:flags:)``.
public struct PutFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `MDB_NOOVERWRITE`: fail with ``LMDBError/keyExists`` if the key is present.
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// `MDB_NODUPDATA`: with `duplicateSort`, fail if the key/value pair is present.
    public static let noDuplicateData = PutFlags(rawValue: UInt32(MDB_NODUPDATA))
    /// `MDB_APPEND`: the key sorts after every key present (fast bulk load).
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
    /// `MDB_APPENDDUP`: as `append`, for the values of a `duplicateSort` key.
    public static let appendDuplicate = PutFlags(rawValue: UInt32(MDB_APPENDDUP))
    /// `MDB_CURRENT`: with a cursor's put, replace the entry under the cursor (same key).
    public static let current = PutFlags(rawValue: UInt32(MDB_CURRENT))
}
