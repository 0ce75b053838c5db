internal import CLMDB
import Foundation

extension Environment {
    /// Opens every named database of the file (the keys of its main database) and returns
    /// their names. A transaction begun afterwards can read them all.
    package func openAllDatabases() throws -> [String] {
        var names: [String] = []
        do {
            let txn = try Transaction(environment: self, readOnly: true)
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn.handle, 1, &cursor), "mdb_cursor_open on the main database")
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val()
            var value = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
            while rc == MDB_SUCCESS {
                names.append(String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self))
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get on the main database") }
        }
        for name in names { _ = try database(named: name) }
        return names
    }

    /// Writes the named databases `names` (see ``openAllDatabases()``) of the version `source`
    /// reads into a new file at `path`, compacted: entries are appended in key order, so the
    /// copy's pages are full and hold no free space. The file at `path` must not exist; the
    /// copy is complete when this returns `true`. `options` open the copy.
    /// - Returns: `false`, writing nothing, if `source` began before one of the databases was
    ///   opened in this process and cannot read it (begin a new transaction and call again).
    package func writeCopy(of source: UnsafeTransaction, names: [String], to path: String, options: Options) throws -> Bool {
        require(!FileManager.default.fileExists(atPath: path), "writeCopy's destination must not exist")
        var sources: [(name: String, dbi: UInt32, flags: UInt32)] = []
        for name in names {
            guard let db = try database(named: name) else { continue }
            var flags: UInt32 = 0
            let rc = mdb_dbi_flags(source.handle, MDB_dbi(db.dbi), &flags)
            if rc == EINVAL { return false }
            try check(rc, "mdb_dbi_flags on \(name)")
            sources.append((name, db.dbi, flags))
        }
        let copy = try Environment.open(path: path, options: options)
        let txn = try Transaction(environment: copy, readOnly: false)
        for source0 in sources {
            let isDuplicateSort = source0.flags & UInt32(MDB_DUPSORT) != 0
            let to = try txn.createDatabase(named: source0.name, flags: Database.Flags(rawValue: source0.flags & UInt32(MDB_DUPSORT | MDB_DUPFIXED)))
            let unsafe = txn.unsafeWrite
            var previousKey: [UInt8]?
            try UnsafeCursor(transaction: source, dbi: source0.dbi).forEach { key, value in
                let sameKey = isDuplicateSort && previousKey.map { $0.elementsEqual(key) } == true
                _ = try unsafe.put(
                    to.dbi, key: key, value: value,
                    flags: sameKey ? PutFlags.appendDuplicate.rawValue : PutFlags.append.rawValue)
                if isDuplicateSort && !sameKey { previousKey = Array(key) }
                return true
            }
        }
        try txn.commit()
        return true
    }
}
