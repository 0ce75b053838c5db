internal import CLMDB
import Foundation

extension Environment {
    /// Writes every named database of the version `source` reads into a new file at `path`,
    /// compacted: entries are appended in key order, so the copy's pages are full and hold no
    /// free space. The file at `path` must not exist; the copy is complete when this returns.
    /// `options` open the copy (its map must hold the data).
    package func writeCopy(of source: UnsafeTransaction, to path: String, options: Options) throws {
        require(!FileManager.default.fileExists(atPath: path), "writeCopy's destination must not exist")
        // The names of the databases: the keys of the main database.
        var names: [String] = []
        do {
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(source.handle, 1, &cursor), "mdb_cursor_open on the main database")
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
        let copy = try Environment.open(path: path, options: options)
        let txn = try Transaction(environment: copy, readOnly: false)
        for name in names {
            guard let from = try database(named: name) else { continue }
            var flags: UInt32 = 0
            try check(mdb_dbi_flags(source.handle, MDB_dbi(from.dbi), &flags), "mdb_dbi_flags on \(name)")
            let isDuplicateSort = flags & UInt32(MDB_DUPSORT) != 0
            let to = try txn.createDatabase(named: name, flags: Database.Flags(rawValue: flags & UInt32(MDB_DUPSORT | MDB_DUPFIXED)))
            let unsafe = txn.unsafe
            var previousKey: [UInt8]?
            try UnsafeCursor(transaction: source, dbi: from.dbi).forEach { key, value in
                let sameKey = isDuplicateSort && previousKey.map { $0.elementsEqual(key) } == true
                _ = try unsafe.put(
                    to.dbi, key: key, value: value,
                    flags: sameKey ? PutFlags.appendDuplicate.rawValue : PutFlags.append.rawValue)
                if isDuplicateSort && !sameKey { previousKey = Array(key) }
                return true
            }
        }
        try txn.commit()
    }
}
