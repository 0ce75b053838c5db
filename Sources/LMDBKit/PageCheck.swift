internal import CLMDB
import Foundation

// A check of the file's B-tree pages as bytes, before any cursor reads them. LMDB trusts its
// pages: a zeroed or misplaced page makes a cursor follow a wrong pointer (SIGSEGV) or stop on
// one of its assertions. This walk reads the file with pread(2), never through the map, so a
// short file cannot raise SIGBUS, and checks what LMDB would rely on: both meta pages, then
// from the newest one every page of every database — its number in its header, its kind at
// its depth, its bounds, its nodes inside it, its keys in order and within the range its
// parent gives, overflow chains inside the file, and no page reached twice.
//
// The layout is LMDB 0.9's (lmdb.h does not publish it; mdb.c defines it): a 16-byte page
// header (page number, pad, flags, lower and upper bounds of the free space, or the count of
// an overflow run), an array of 16-bit node offsets, nodes of 8 header bytes (data size or
// child page number, flags, key size) followed by key and data.

/// A problem with the file's pages, in words.
package struct PageProblem: Sendable, Hashable, CustomStringConvertible {
    /// The database concerned (`nil`: the meta pages, the main or the free-page database).
    package let database: String?
    package let page: Int?
    package let message: String

    package var description: String {
        var text = ""
        if let database { text += "database '\(database)': " }
        if let page { text += "page \(page): " }
        return text + message
    }
}

extension Environment {
    /// Checks the pages of the newest committed version, as bytes; returns what is wrong (at
    /// most `limit` problems), empty if nothing is. With `only`, the named databases of those
    /// names are walked whole and the others' roots are only checked to lie inside the version.
    ///
    /// Run it before reading a file that may be damaged: a cursor on a damaged page can stop
    /// the process, this never does. The version walked is pinned by a read transaction for
    /// the walk, so other processes' commits cannot reuse its pages meanwhile.
    package func checkPages(limit: Int = 100, only: Set<String>? = nil) throws -> [PageProblem] {
        var fd: Int32 = -1
        try check(mdb_env_get_fd(handle, &fd), "mdb_env_get_fd on \(path)")
        for _ in 0..<3 {
            let found: [PageProblem]? = try read { txn in
                var walker = PageWalker(fd: fd, dataFile: dataFilePath, limit: limit)
                walker.onlyDatabases = only
                // The meta page of the pinned version was overwritten already: pin a newer one.
                guard walker.run(version: UInt64(UInt(bitPattern: txn.id))) else { return nil }
                return walker.problems
            }
            if let found { return found }
        }
        return []
    }

    /// The data file: the path itself, or `data.mdb` in it when the path is a directory.
    var dataFilePath: String { options.pathIsDirectory ? path + "/data.mdb" : path }

    /// Checks the two meta pages of the data file at `path`, if it exists, before LMDB reads
    /// them: each where it belongs, with a possible page size, and each transaction in the page
    /// LMDB reads it from. LMDB trusts them (a page size of 0 divides by zero inside
    /// `mdb_env_open`). Two small reads, at every open.
    static func checkMetaPages(ofFile path: String) throws {
        // A file that is not there is created by LMDB; one that cannot be opened, LMDB reports.
        guard let file = FileHandle(forReadingAtPath: path) else { return }
        // An empty file is a new environment to LMDB, which writes its meta pages.
        if (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue == 0 { return }
        defer { try? file.close() }
        var walker = PageWalker(fd: file.fileDescriptor, dataFile: path, limit: 1)
        _ = walker.checkMetas()
        if let problem = walker.problems.first {
            throw LMDBError(code: MDB_INVALID, context: "opening \(path)", finding: "\(problem)")
        }
    }
}

private struct PageWalker {
    static let header = 16
    static let branch: UInt16 = 0x01, leaf: UInt16 = 0x02, overflow: UInt16 = 0x04, meta: UInt16 = 0x08
    static let leaf2: UInt16 = 0x20, subpage: UInt16 = 0x40
    static let bigData: UInt16 = 0x01, subData: UInt16 = 0x02, dupData: UInt16 = 0x04
    static let invalidPage = UInt64.max
    static let metaMagic: UInt32 = 0xBEEF_C0DE

    let fd: Int32
    /// The path of the data file, for its size.
    let dataFile: String
    let limit: Int
    var problems: [PageProblem] = []
    var fileSize = 0
    var pageSize = 4_096
    var lastPage = 0
    var seen: [UInt64] = []
    var database: String?

    init(fd: Int32, dataFile: String, limit: Int) {
        self.fd = fd
        self.dataFile = dataFile
        self.limit = limit
    }

    var full: Bool { problems.count >= limit }

    mutating func report(_ page: Int?, _ message: String) {
        if !full { problems.append(PageProblem(database: database, page: page, message: message)) }
    }

    func read(offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= fileSize else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if n <= 0 { return nil }
            done += n
        }
        return bytes
    }

    /// The named databases walked whole (`nil`: all of them).
    var onlyDatabases: Set<String>?

    /// Walks the version `version`; false if its meta page is no longer in the file (two
    /// newer commits replaced it), true with ``problems`` otherwise.
    mutating func run(version: UInt64) -> Bool {
        guard let newest = checkMetas(version: version) else { return problems.isEmpty ? false : true }
        lastPage = Int(newest.u64(136))
        guard (lastPage + 1) * pageSize <= fileSize else {
            report(nil, "the newest version uses \(lastPage + 1) pages; the file holds \(fileSize / pageSize) (it was cut short)")
            return true
        }
        seen = [UInt64](repeating: 0, count: (lastPage + 64) / 64)
        database = nil
        walkDatabase(newest, at: 40, name: "(free pages)", isMain: false)
        walkDatabase(newest, at: 88, name: nil, isMain: true)
        return true
    }

    /// Checks both meta pages; returns the first bytes of the one of transaction `version`
    /// (the newest when `nil`), or nil (with problems, or without when no meta page holds it).
    mutating func checkMetas(version: UInt64? = nil) -> [UInt8]? {
        guard let size = try? FileManager.default.attributesOfItem(atPath: dataFile)[.size] as? NSNumber else {
            report(nil, "the file's size cannot be read")
            return nil
        }
        fileSize = size.intValue
        // The meta pages: page 0 and page 1 (at the page size page 0 records).
        guard let first = read(offset: 0, count: 160) else {
            report(0, "the file is shorter than its first meta page")
            return nil
        }
        pageSize = Int(first.u32(40))
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else {
            report(0, "the meta page gives an impossible page size \(pageSize)")
            return nil
        }
        var metas: [(txnid: UInt64, bytes: [UInt8])] = []
        for index in 0..<2 {
            guard let bytes = read(offset: index * pageSize, count: 160) else {
                report(index, "the file is shorter than meta page \(index)")
                continue
            }
            let txnid = bytes.u64(144)
            if bytes.u64(0) != UInt64(index) {
                report(index, "meta page \(index) says it is page \(bytes.u64(0))")
            } else if bytes.u16(10) & Self.meta == 0 || bytes.u32(16) != Self.metaMagic {
                report(index, "meta page \(index) is not a meta page")
            } else if Int(bytes.u32(40)) != pageSize {
                // LMDB takes the page size from the newer meta page, and divides by it.
                report(index, "meta page \(index) gives the page size \(bytes.u32(40)), meta page 0 \(pageSize)")
            } else if txnid > UInt64(Int.max) {
                // No file reaches it (a commit a nanosecond for 290 years), and LMDB's `size_t`
                // transaction IDs, read as Swift's `Int`, would be negative.
                report(index, "meta page \(index) holds transaction \(txnid), more than any file has committed")
            } else if txnid != 0 && txnid & 1 != UInt64(index) {
                // LMDB writes the meta of transaction t at page t % 2, and a reader picks it by
                // that rule: a meta in the other place would show it an older version.
                report(index, "meta page \(index) holds transaction \(txnid), which belongs in meta page \(txnid & 1)")
            } else {
                metas.append((txnid, bytes))
            }
        }
        guard problems.isEmpty else { return nil }
        if let version { return metas.first { $0.txnid == version }?.bytes }
        return metas.max(by: { $0.txnid < $1.txnid })?.bytes
    }

    /// Walks the database whose 48-byte record is at `offset` of `bytes`.
    mutating func walkDatabase(_ bytes: [UInt8], at offset: Int, name: String?, isMain: Bool) {
        let flags = bytes.u16(offset + 4)
        let depth = Int(bytes.u16(offset + 6))
        let root = bytes.u64(offset + 40)
        let previous = database
        database = name
        defer { database = previous }
        if root == Self.invalidPage { return }
        guard depth >= 1, depth <= 64 else { return report(nil, "its record gives an impossible depth \(depth)") }
        // Keys compare byte by byte unless the database declares integer or reversed keys.
        let ordered = name != "(free pages)" && flags & UInt16(MDB_INTEGERKEY | MDB_REVERSEKEY) == 0
        let duplicatesOrdered = flags & UInt16(MDB_INTEGERDUP | MDB_REVERSEDUP) == 0
        walk(
            page: root, level: 1, depth: depth, lower: nil, upper: nil, ordered: ordered, isMain: isMain, dupSort: flags & UInt16(MDB_DUPSORT) != 0,
            duplicatesOrdered: duplicatesOrdered)
    }

    /// Marks `page` as reached; false (with a problem) if it is outside the version or was
    /// reached before.
    mutating func visit(_ page: UInt64, from: String) -> Bool {
        guard page >= 2, page <= UInt64(lastPage) else {
            report(nil, "\(from) names page \(page), outside the version's pages 2...\(lastPage)")
            return false
        }
        let (word, bit) = (Int(page / 64), page % 64)
        if seen[word] & (1 << bit) != 0 {
            report(Int(page), "reached twice (\(from))")
            return false
        }
        seen[word] |= 1 << bit
        return true
    }

    mutating func walk(
        page number: UInt64, level: Int, depth: Int, lower: [UInt8]?, upper: [UInt8]?, ordered: Bool, isMain: Bool, dupSort: Bool,
        duplicatesOrdered: Bool
    ) {
        guard !full, visit(number, from: level == 1 ? "the database's root" : "a branch page") else { return }
        let pageNumber = Int(number)
        guard let page = read(offset: pageNumber * pageSize, count: pageSize) else { return report(pageNumber, "cannot be read") }
        if page.u64(0) != number { return report(pageNumber, "its header says it is page \(page.u64(0)) (a page out of place, or zeroed)") }
        let flags = page.u16(10)
        let isLeaf = level == depth
        let expected = isLeaf ? Self.leaf : Self.branch
        guard flags & (Self.branch | Self.leaf | Self.overflow | Self.meta) == expected else {
            return report(
                pageNumber,
                "at depth \(level) of \(depth) it should be a \(isLeaf ? "leaf" : "branch") page; its flags are \(String(flags, radix: 16))")
        }
        let nodes = checkBounds(page, pageNumber, size: pageSize)
        guard let nodes else { return }
        if flags & Self.leaf2 != 0 { return checkLeaf2(page, pageNumber, count: nodes, base: 0, keySize: Int(page.u16(8)), ordered: ordered) }
        var previousKey: [UInt8]? = nil
        for index in 0..<nodes {
            let offset = Int(page.u16(Self.header + 2 * index))
            guard offset >= Self.header + 2 * nodes, offset + 8 <= pageSize else {
                return report(pageNumber, "node \(index) starts at \(offset), outside the page's nodes")
            }
            let low = UInt64(page.u16(offset))
            let high = UInt64(page.u16(offset + 2))
            let nodeFlags = page.u16(offset + 4)
            let keySize = Int(page.u16(offset + 6))
            guard offset + 8 + keySize <= pageSize else { return report(pageNumber, "node \(index)'s key runs past the page") }
            let key = Array(page[(offset + 8)..<(offset + 8 + keySize)])
            // A branch page's first key is not used: its child holds everything below the second.
            let keyCounts = isLeaf || index > 0
            if ordered && keyCounts {
                if let previousKey, !previousKey.lexicographicallyPrecedes(key) {
                    report(pageNumber, "node \(index)'s key is not above the one before it")
                }
                if let lower, key.lexicographicallyPrecedes(lower) { report(pageNumber, "node \(index)'s key is below the range its parent gives") }
                if let upper, !key.lexicographicallyPrecedes(upper) { report(pageNumber, "node \(index)'s key is above the range its parent gives") }
                previousKey = key
            }
            if !isLeaf {
                let child = low | high << 16 | UInt64(nodeFlags) << 32
                var childLower = keyCounts ? key : lower
                var childUpper = upper
                if index + 1 < nodes, let next = nodeKey(page, index: index + 1) { childUpper = next }
                if !ordered {
                    childLower = nil
                    childUpper = nil
                }
                walk(
                    page: child, level: level + 1, depth: depth, lower: childLower, upper: childUpper, ordered: ordered, isMain: isMain,
                    dupSort: dupSort, duplicatesOrdered: duplicatesOrdered)
                continue
            }
            let dataSize = Int(low | high << 16)
            let dataOffset = offset + 8 + keySize
            // Which kinds of value a node may hold depends on its database: LMDB trusts the
            // flags, so a flag that does not belong is damage.
            if let problem = Self.flagProblem(nodeFlags, isMain: isMain, dupSort: dupSort) {
                report(pageNumber, "node \(index) \(problem)")
                continue
            }
            if nodeFlags & Self.bigData != 0 {
                guard dataOffset + 8 <= pageSize else { return report(pageNumber, "node \(index)'s overflow page number runs past the page") }
                checkOverflow(page.u64(dataOffset), size: dataSize, from: pageNumber)
                continue
            }
            guard dataOffset + dataSize <= pageSize else {
                return report(pageNumber, "node \(index)'s value of \(dataSize) bytes runs past the page")
            }
            if nodeFlags & Self.subData != 0 {
                guard dataSize == 48 else { return report(pageNumber, "node \(index)'s database record has \(dataSize) bytes, not 48") }
                if isMain && nodeFlags & Self.dupData == 0 {
                    let name = String(decoding: key, as: UTF8.self)
                    if let only = onlyDatabases, !only.contains(name) {
                        let root = page.u64(dataOffset + 40)
                        if root != Self.invalidPage && (root < 2 || root > UInt64(lastPage)) {
                            database = name
                            report(pageNumber, "the database's root is page \(root), outside the version's pages 2...\(lastPage)")
                            database = nil
                        }
                        continue
                    }
                    walkDatabase(page, at: dataOffset, name: name, isMain: false)
                } else {
                    // The values of one key, in a tree of their own.
                    let record = Array(page[dataOffset..<(dataOffset + 48)])
                    let subDepth = Int(record.u16(6))
                    let root = record.u64(40)
                    if root != Self.invalidPage {
                        walk(
                            page: root, level: 1, depth: max(1, subDepth), lower: nil, upper: nil, ordered: duplicatesOrdered, isMain: false,
                            dupSort: false, duplicatesOrdered: duplicatesOrdered)
                    }
                }
            } else if nodeFlags & Self.dupData != 0 {
                // The values of one key, in a page inside this node.
                let sub = Array(page[dataOffset..<(dataOffset + dataSize)])
                guard sub.count >= Self.header else {
                    report(pageNumber, "node \(index)'s values take \(dataSize) bytes, fewer than a page header")
                    continue
                }
                guard let count = checkBounds(sub, pageNumber, size: dataSize) else { continue }
                // LMDB reads the values' page as a leaf (mdb.c makes it `P_LEAF|P_SUBP`).
                guard sub.u16(10) & (Self.branch | Self.leaf | Self.overflow | Self.meta) == Self.leaf else {
                    report(pageNumber, "node \(index)'s values are not a leaf page; its flags are \(String(sub.u16(10), radix: 16))")
                    continue
                }
                if sub.u16(10) & Self.leaf2 != 0 {
                    checkLeaf2(sub, pageNumber, count: count, base: 0, keySize: Int(sub.u16(8)), ordered: duplicatesOrdered)
                } else {
                    var previous: [UInt8]? = nil
                    for subIndex in 0..<count {
                        let at = Int(sub.u16(Self.header + 2 * subIndex))
                        guard at >= Self.header + 2 * count, at + 8 <= sub.count else {
                            report(pageNumber, "node \(index)'s values: value \(subIndex) starts outside them")
                            break
                        }
                        // A value here is a node's key alone, with no flags: the cursor LMDB
                        // walks these values with has no values below it, and a node flagged
                        // as holding some made it dereference a null pointer.
                        let valueFlags = sub.u16(at + 4)
                        guard valueFlags == 0 else {
                            report(
                                pageNumber,
                                "node \(index)'s values: value \(subIndex) has flags \(String(valueFlags, radix: 16)), where a value has none")
                            break
                        }
                        let size = Int(sub.u16(at + 6))
                        guard at + 8 + size <= sub.count else {
                            report(pageNumber, "node \(index)'s values: value \(subIndex) runs past them")
                            break
                        }
                        let value = Array(sub[(at + 8)..<(at + 8 + size)])
                        if duplicatesOrdered, let previous, !previous.lexicographicallyPrecedes(value) {
                            report(pageNumber, "node \(index)'s values are not in order")
                        }
                        previous = value
                    }
                }
            }
        }
    }

    /// What is wrong with a leaf node's flags in a database that is the main one (whose
    /// values are other databases' records) or sorts duplicates (`dupSort`), or `nil`.
    static func flagProblem(_ flags: UInt16, isMain: Bool, dupSort: Bool) -> String? {
        if flags & ~(bigData | subData | dupData) != 0 { return "has unknown flags \(String(flags, radix: 16))" }
        if flags & bigData != 0 && flags & (subData | dupData) != 0 { return "is marked both as a large value and as a database" }
        if flags & dupData != 0 && !dupSort { return "is marked as holding several values, in a database of single values" }
        if flags & subData != 0 && flags & dupData == 0 && !isMain { return "is marked as a database's record outside the list of databases" }
        return nil
    }

    /// The key of node `index` of a page whose bounds were checked, if it lies inside the page.
    func nodeKey(_ page: [UInt8], index: Int) -> [UInt8]? {
        let offset = Int(page.u16(Self.header + 2 * index))
        guard offset + 8 <= page.count else { return nil }
        let size = Int(page.u16(offset + 6))
        guard offset + 8 + size <= page.count else { return nil }
        return Array(page[(offset + 8)..<(offset + 8 + size)])
    }

    /// Checks a page's free-space bounds; returns its node count, or nil (with a problem).
    mutating func checkBounds(_ page: [UInt8], _ number: Int, size: Int) -> Int? {
        let lower = Int(page.u16(12))
        let upper = Int(page.u16(14))
        guard lower >= Self.header, lower <= upper, upper <= size else {
            report(number, "its free space \(lower)..<\(upper) is impossible in \(size) bytes")
            return nil
        }
        return (lower - Self.header) / 2
    }

    /// Fixed-size keys laid end to end after the header.
    mutating func checkLeaf2(_ page: [UInt8], _ number: Int, count: Int, base: Int, keySize: Int, ordered: Bool) {
        guard keySize > 0, Self.header + count * keySize <= page.count else {
            return report(number, "its \(count) fixed-size values of \(keySize) bytes do not fit in it")
        }
        guard ordered else { return }
        for index in 1..<max(1, count) {
            let a = page[(Self.header + (index - 1) * keySize)..<(Self.header + index * keySize)]
            let b = page[(Self.header + index * keySize)..<(Self.header + (index + 1) * keySize)]
            if !a.lexicographicallyPrecedes(b) { return report(number, "its fixed-size values are not in order") }
        }
    }

    /// An overflow run holding a value of `size` bytes.
    mutating func checkOverflow(_ first: UInt64, size: Int, from: Int) {
        guard visit(first, from: "a value on page \(from)") else { return }
        guard let page = read(offset: Int(first) * pageSize, count: Self.header) else { return report(Int(first), "cannot be read") }
        if page.u64(0) != first { return report(Int(first), "its header says it is page \(page.u64(0)) (an overflow page out of place, or zeroed)") }
        guard page.u16(10) & Self.overflow != 0 else { return report(Int(first), "should start an overflow run for page \(from)'s value") }
        let count = Int(page.u32(12))
        guard count >= 1, (count * pageSize) - Self.header >= size, Int(first) + count - 1 <= lastPage else {
            return report(Int(first), "its overflow run of \(count) pages cannot hold a value of \(size) bytes inside the version")
        }
        for next in (first + 1)..<(first + UInt64(count)) where !visit(next, from: "the overflow run at page \(first)") { return }
    }
}

extension [UInt8] {
    fileprivate func u16(_ offset: Int) -> UInt16 {
        guard offset + 2 <= count else { return 0 }
        return UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }
    fileprivate func u32(_ offset: Int) -> UInt32 {
        guard offset + 4 <= count else { return 0 }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(self[offset + $1]) << (8 * $1) }
    }
    fileprivate func u64(_ offset: Int) -> UInt64 {
        guard offset + 8 <= count else { return 0 }
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(self[offset + $1]) << (8 * $1) }
    }
}
