internal import CHotPaths
internal import CLMDB
import Foundation

/// An open LMDB environment: one data file, its lock file, and the memory map over it.
///
/// **Rule 1: a file is open at most once per process.** LMDB forbids opening the same file
/// twice in one process (its POSIX locks would be lost when either handle closed). Every
/// `Environment` is therefore obtained through ``open(path:options:)``, which keeps a registry
/// keyed by the file's real path: opening a path that is already open returns the same
/// environment, and opening it with conflicting options throws ``LMDBError/optionsConflict``.
///
/// ```swift
/// let env = try Environment.open(path: "/var/lib/app/data.mdb")
/// let names = try env.createDatabase(named: "names")
/// try env.write { txn in try txn.put(Array("Ada".utf8), forKey: Array("1".utf8), in: names) }
/// let name = try env.read { txn in txn.get(Array("1".utf8), in: names) { String(decoding: $0, as: UTF8.self) } }
/// ```
///
/// Environments are always opened with `MDB_NOTLS`, so a read transaction is not tied to the
/// thread that began it, and stale reader slots left by dead processes are cleared on open
/// (`mdb_reader_check`).
public final class Environment: @unchecked Sendable {
    // @unchecked Sendable: the MDB_env is thread-safe for everything LMDB allows concurrently
    // (lmdb.h: "an environment may be used concurrently from multiple threads"); the mutable
    // Swift state below (databases, map size, active count) is only touched under `lock`.

    /// How an environment is opened.
    public struct Options: Sendable, Hashable {
        /// The map size to start with, in bytes. The map grows by itself on `MDB_MAP_FULL`.
        public var mapSize: Int = 1 << 20
        /// The largest the map may grow to; past it a write throws ``LMDBError/mapFull``.
        public var maximumMapSize: Int = 1 << 34
        /// Reader slots in the lock file (`mdb_env_set_maxreaders`).
        public var maxReaders: Int = 126
        /// Named databases the environment may hold (`mdb_env_set_maxdbs`).
        public var maxDatabases: Int = 32
        /// Open with `MDB_RDONLY`: no write transaction can begin.
        public var readOnly: Bool = false
        /// When commits reach the disk.
        public var durability: Durability = .full
        /// The path names a directory holding `data.mdb` and `lock.mdb` (LMDB's default)
        /// rather than the data file itself (`MDB_NOSUBDIR`).
        public var pathIsDirectory: Bool = false
        /// Permissions of files the environment creates.
        public var fileMode: UInt32 = 0o600
        /// Open without the lock file (`MDB_NOLOCK`): for a caller that holds the file's
        /// exclusive lock itself (see ``Environment/lockExclusively(path:)``).
        public var noLock: Bool = false

        public init() {}

        /// Whether `other` can share an environment opened with these options.
        func isCompatible(with other: Options) -> Bool {
            readOnly == other.readOnly && noLock == other.noLock && maxReaders == other.maxReaders
                && maxDatabases == other.maxDatabases && durability == other.durability
                && pathIsDirectory == other.pathIsDirectory && maximumMapSize == other.maximumMapSize
        }
    }

    /// When a commit is flushed to disk.
    public enum Durability: Sendable, Hashable {
        /// fsync data and meta page on every commit (LMDB's default).
        case full
        /// Skip the meta page flush (`MDB_NOMETASYNC`): a crash may lose the last commit,
        /// never integrity.
        case noMetaSync
        /// No flush at all (`MDB_NOSYNC`): the operating system writes when it wants to.
        case noSync
    }

    @usableFromInline let handle: OpaquePointer
    /// The canonical path the registry knows this environment by.
    public let path: String
    /// The options the environment was opened with.
    public let options: Options

    private let lock = NSCondition()
    private var databases: [String: Database] = [:]
    /// One past the largest handle published, guarded by `lock`: a transaction begun before a
    /// handle was opened cannot use it (LMDB sizes each transaction's table of handles when
    /// it begins and answers `EINVAL` for a later one).
    private var handleCeiling = MDB_dbi(2)  // after LMDB's two own handles
    private var activeTransactions = 0
    private var resizing = false
    private var currentMapSize: Int

    // MARK: - Opening

    /// Opens the environment at `path`, or returns the one this process already has open there.
    ///
    /// - Parameters:
    ///   - path: The data file (or, with ``Options/pathIsDirectory``, its directory).
    ///   - options: How to open it. A reopen must pass compatible options.
    /// - Returns: The process's one environment for that file.
    /// - Throws: ``LMDBError`` naming the file: not found, permission denied, not an LMDB file,
    ///   or ``LMDBError/optionsConflict``.
    public static func open(path: String, options: Options = Options()) throws -> Environment {
        let key = canonicalPath(path)
        return try registry.environment(for: key) {
            try Environment(path: key, options: options)
        } compatible: { $0.options.isCompatible(with: options) }
    }

    private init(path: String, options: Options) throws {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        // Owned from here on: deinit closes it even if the rest of the open throws.
        self.handle = env!
        self.path = path
        self.options = options
        self.currentMapSize = min(options.mapSize, options.maximumMapSize)

        // LMDB stops the process when a cursor meets a page that cannot be (its assertions
        // cannot be turned off); the message then names the file and the way to examine it.
        mdb_env_set_assert(handle) { env, message in
            var path: UnsafePointer<CChar>?
            if let env { mdb_env_get_path(env, &path) }
            let file = path.map { String(cString: $0) } ?? "?"
            let what = message.map { String(cString: $0) } ?? "?"
            FileHandle.standardError.write(
                Data("The file '\(file)' is damaged: LMDB stopped on one of its pages (\(what)). 'lmdbrealm verify \(file)' reports what is damaged.\n".utf8))
        }
        try check(mdb_env_set_maxreaders(handle, UInt32(options.maxReaders)), "mdb_env_set_maxreaders")
        try check(mdb_env_set_maxdbs(handle, MDB_dbi(options.maxDatabases)), "mdb_env_set_maxdbs")
        try check(mdb_env_set_mapsize(handle, currentMapSize), "mdb_env_set_mapsize")

        var flags = UInt32(MDB_NOTLS)
        if !options.pathIsDirectory { flags |= UInt32(MDB_NOSUBDIR) }
        if options.readOnly { flags |= UInt32(MDB_RDONLY) }
        if options.noLock { flags |= UInt32(MDB_NOLOCK) }
        switch options.durability {
        case .full: break
        case .noMetaSync: flags |= UInt32(MDB_NOMETASYNC)
        case .noSync: flags |= UInt32(MDB_NOSYNC)
        }
        try Environment.checkMetaPages(ofFile: options.pathIsDirectory ? path + "/data.mdb" : path)
        try check(lmdb("mdb_env_open") { mdb_env_open(handle, path, flags, mdb_mode_t(options.fileMode)) }, "opening \(path)")

        // Another process may have grown the map; adopt the size recorded in the file.
        var info = MDB_envinfo()
        try check(mdb_env_info(handle, &info), "mdb_env_info")
        currentMapSize = max(currentMapSize, info.me_mapsize)

        var dead: Int32 = 0
        try check(mdb_reader_check(handle, &dead), "mdb_reader_check on \(path)")
        staleReadersClearedAtOpen = Int(dead)
    }

    /// The reader slots of processes that died, cleared when the environment opened.
    public private(set) var staleReadersClearedAtOpen = 0

    /// Takes the lock every process holds on the lock file while it has the environment at
    /// `path` open (the first byte of `path`-lock, which LMDB locks shared), exclusively: it
    /// succeeds only when no other process has the file open, and until it is released
    /// (``unlockExclusively(_:)``) a process opening the file waits. This process must not
    /// have the file open.
    /// - Returns: The lock's file descriptor, or `nil` if another process has the file open.
    public static func lockExclusively(path: String) -> Int32? {
        let fd = Glibc.open(path + "-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        guard fcntl(fd, F_SETLK, &lock) == 0 else {
            Glibc.close(fd)
            return nil
        }
        return fd
    }

    /// Releases a lock taken by ``lockExclusively(path:)``.
    public static func unlockExclusively(_ fd: Int32) {
        Glibc.close(fd)
    }

    /// The registry's record of this environment; `nil` until the open succeeds.
    var slot: Registry.Slot?

    deinit {
        let handle = self.handle
        if let slot {
            Environment.registry.close(slot) { mdb_env_close(handle) }
        } else {
            // A failed open, still inside the registry's lock: nobody else knows this handle.
            mdb_env_close(handle)
        }
    }

    /// The real path of `path`: symbolic links and `.`/`..` resolved, so two spellings of one
    /// file share one environment. The file itself need not exist yet; if it does not, only
    /// its directory is resolved.
    static func canonicalPath(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        if let resolved = realpath(url.path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let directory = url.deletingLastPathComponent().path
        guard let resolved = realpath(directory, nil) else { return url.path }
        defer { free(resolved) }
        let dir = String(cString: resolved)
        return (dir == "/" ? "" : dir) + "/" + url.lastPathComponent
    }

    // MARK: - Facts about the environment

    /// The largest key LMDB accepts, in bytes (`mdb_env_get_maxkeysize`).
    public var maxKeySize: Int { Int(mdb_env_get_maxkeysize(handle)) }

    /// The current size of the memory map.
    public var mapSize: Int { lock.withLock { currentMapSize } }

    /// Facts about the file (`mdb_env_info` and `mdb_env_stat`).
    public struct Info: Sendable {
        public var mapSize: Int
        public var lastPageNumber: Int
        public var lastTransactionID: Int
        public var maxReaders: Int
        public var readersInUse: Int
        public var pageSize: Int
    }

    /// The corresponding LMDB functions are `mdb_env_info` and `mdb_env_stat`; they fail only
    /// for a null environment or argument, which this wrapper never passes.
    public func info() -> Info {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        let rc = mdb_env_info(handle, &info) | mdb_env_stat(handle, &stat)
        require(rc == MDB_SUCCESS, "mdb_env_info or mdb_env_stat failed on \(path): \(rc)")
        return Info(
            mapSize: info.me_mapsize, lastPageNumber: info.me_last_pgno,
            lastTransactionID: info.me_last_txnid, maxReaders: Int(info.me_maxreaders),
            readersInUse: Int(info.me_numreaders), pageSize: Int(stat.ms_psize))
    }

    /// The reader slots of the lock file held now, by any process: one per open read
    /// transaction, including reset ones that keep their slot for reuse. The corresponding
    /// LMDB function is `mdb_reader_list`.
    public func readerSlotsInUse() -> Int {
        readerList().filter { !$0.contains("no active readers") }.count
    }

    /// The versions (transaction IDs) the reader slots of the lock file hold now, by any
    /// process; a slot kept for reuse holds none. The corresponding LMDB function is
    /// `mdb_reader_list`.
    public func readerVersions() -> [Int] {
        readerList().compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.flatMap { Int($0) }
        }
    }

    /// The lines `mdb_reader_list` prints after its header ("pid thread txnid"): one per held
    /// slot, its version "-" when reset; "(no active readers)" when there is none.
    private func readerList() -> [Substring] {
        final class Lines { var text = "" }
        let lines = Lines()
        _ = mdb_reader_list(handle, { message, context in
            let lines = Unmanaged<Lines>.fromOpaque(context!).takeUnretainedValue()
            lines.text += String(cString: message!)
            return 0
        }, Unmanaged.passUnretained(lines).toOpaque())
        return Array(lines.text.split(separator: "\n").dropFirst())
    }

    /// The pages of the file on LMDB's free list as `transaction` sees it: pages the file
    /// holds that no version in use needs, and that later writes reuse.
    public func freePageCount(in transaction: borrowing Transaction) throws -> Int {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(transaction.handle, 0, &cursor), "mdb_cursor_open on the free list")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var total = 0
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == MDB_SUCCESS {
            // Each value is a page list whose first word is its length.
            if value.mv_size >= MemoryLayout<Int>.size { total += value.mv_data.loadUnaligned(as: Int.self) }
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get on the free list") }
        return total
    }

    /// Clears reader slots left by processes that died. The corresponding LMDB function is
    /// `mdb_reader_check`.
    /// - Returns: How many stale slots were cleared.
    @discardableResult
    public func clearStaleReaders() throws -> Int {
        var dead: Int32 = 0
        try check(mdb_reader_check(handle, &dead), "mdb_reader_check")
        return Int(dead)
    }

    /// Flushes buffered commits to disk, for environments opened with relaxed durability.
    /// The corresponding LMDB function is `mdb_env_sync`.
    public func sync() throws {
        try check(lmdb("mdb_env_sync") { mdb_env_sync(handle, 1) }, "mdb_env_sync on \(path)")
    }

    // MARK: - Named databases

    /// The named database `name`, or `nil` if the file has none by that name.
    ///
    /// Handles are opened once per environment and cached (lmdb.h: a handle opened in a
    /// committed transaction "will reside in the shared environment").
    public func database(named name: String) throws -> Database? {
        if let db = lock.withLock({ databases[name] }) { return db }
        return try openDatabase(named: name, flags: 0, create: false)
    }

    /// The named database `name`, created if the file has none by that name.
    ///
    /// Runs its own write transaction when the database must be created, so it must not be
    /// called while this thread is inside a write transaction of the same environment; use
    /// ``Transaction/createDatabase(named:flags:)`` there.
    public func createDatabase(named name: String, flags: Database.Flags = []) throws -> Database {
        if let db = lock.withLock({ databases[name] }) { return db }
        return try openDatabase(named: name, flags: flags.rawValue, create: true)!
    }

    private func openDatabase(named name: String, flags: UInt32, create: Bool) throws -> Database? {
        // lmdb.h: "A transaction that uses this function must finish (either commit or abort)
        // before any other transaction in the process may use this function." The short
        // transaction below runs under `dbiLock` for exactly that reason.
        if let owner = lock.withLock({ dbiLockOwner }), pthread_equal(owner, pthread_self()) != 0 {
            // lmdb.h: the write transaction on this thread has opened database handles that are
            // "private to the current transaction" until it commits; another transaction opening
            // one now would be handed the same slot.
            fatalError(
                "Environment.database(named:) was called while this thread's write transaction opens databases; use Transaction.openDatabase(named:) inside the write")
        }
        dbiLock.lock()
        defer { dbiLock.unlock() }
        if let db = lock.withLock({ databases[name] }) { return db }
        let txn = try Transaction(environment: self, readOnly: !create || options.readOnly)
        var dbi = MDB_dbi()
        let rc = lmdb("mdb_dbi_open") { mdb_dbi_open(txn.handle, name, flags | (create ? UInt32(MDB_CREATE) : 0), &dbi) }
        if rc == MDB_NOTFOUND {
            txn.abort()
            return nil
        }
        try check(rc, "opening database '\(name)' in \(path)")
        try useFastKeyOrder(txn.handle, dbi) { rc in try check(rc, "reading the flags of database '\(name)' in \(path)") }
        try txn.commit()
        return publish(Database(dbi: dbi, name: name))
    }

    let dbiLock = NSRecursiveLock()
    /// The thread whose write transaction holds `dbiLock`, guarded by `lock`.
    var dbiLockOwner: pthread_t?
    /// The thread whose top-level write transaction is open, guarded by `lock`: LMDB's write
    /// lock is not recursive, so a second write begun on that thread would wait for itself.
    var writerThread: pthread_t?

    /// Stops the process if this thread holds the write lock already: beginning another write
    /// would wait forever for the one this thread must end first.
    func checkNotWritingOnThisThread() {
        if let writer = lock.withLock({ writerThread }), pthread_equal(writer, pthread_self()) != 0 {
            fatalError(
                "This thread already has a write transaction open on '\(path)' (through another handle of the file): "
                    + "a second one would wait for it forever. Write through the handle that is writing, or end its write first.")
        }
    }

    func setWriterThread(_ thread: pthread_t?) {
        lock.withLock { writerThread = thread }
    }

    func setDBILockOwner(_ owner: pthread_t?) {
        lock.withLock { dbiLockOwner = owner }
    }

    func publish(_ db: Database) -> Database {
        lock.withLock {
            if let existing = databases[db.name] { return existing }
            databases[db.name] = db
            handleCeiling = max(handleCeiling, db.dbi + 1)
            return db
        }
    }

    /// One past the largest handle published so far: a transaction that reads it before it
    /// begins can use every handle below it.
    var publishedHandleCeiling: MDB_dbi { lock.withLock { handleCeiling } }

    /// The handle of the named database `name` if this process has opened it already; opens
    /// nothing.
    package func openedDatabase(named name: String) -> Database? {
        cachedDatabase(named: name)
    }

    func cachedDatabase(named name: String) -> Database? {
        lock.withLock { databases[name] }
    }

    // MARK: - Transaction accounting and map growth

    /// Records a transaction as active; waits while the map is being resized.
    func enterTransaction() {
        lock.lock()
        while resizing { lock.wait() }
        activeTransactions += 1
        lock.unlock()
    }

    func leaveTransaction() {
        lock.lock()
        activeTransactions -= 1
        if activeTransactions == 0 { lock.broadcast() }
        lock.unlock()
    }

    /// The number of transactions of this process that are open now.
    public var activeTransactionCount: Int { lock.withLock { activeTransactions } }

    /// Grows the map geometrically, or adopts the size another process set (`newSize` 0).
    ///
    /// lmdb.h, `mdb_env_set_mapsize`: "This function may only be called if no transactions
    /// are active in the current process." New transactions wait while `resizing` is set;
    /// this waits for the running ones to finish, up to `timeout`.
    func resizeMap(adoptingOtherProcess: Bool, timeout: TimeInterval = 10) throws {
        lock.lock()
        defer { lock.unlock() }
        if resizing {
            // Someone else is resizing; wait for them and let the caller retry.
            while resizing { lock.wait() }
            return
        }
        var newSize = 0
        if !adoptingOtherProcess {
            guard currentMapSize < options.maximumMapSize else {
                throw LMDBError(
                    code: MDB_MAP_FULL,
                    context: "writing to \(path): the map is at its maximum of \(options.maximumMapSize) bytes")
            }
            newSize = min(currentMapSize * 2, options.maximumMapSize)
        }
        resizing = true
        defer {
            resizing = false
            lock.broadcast()
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while activeTransactions > 0 {
            if !lock.wait(until: deadline) {
                throw LMDBError(
                    code: MDB_MAP_FULL,
                    context: "growing the map of \(path): \(activeTransactions) transaction(s) of this process stayed open")
            }
        }
        try check(lmdb("mdb_env_set_mapsize") { mdb_env_set_mapsize(handle, newSize) }, "mdb_env_set_mapsize on \(path)")
        var info = MDB_envinfo()
        try check(mdb_env_info(handle, &info), "mdb_env_info")
        currentMapSize = info.me_mapsize
    }
}
