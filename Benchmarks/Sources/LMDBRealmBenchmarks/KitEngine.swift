import Foundation
import LMDBKit

/// The floor: the same records as flat bytes in raw LMDB through LMDBKit, big-endian id keys,
/// a `duplicateSort` index section → id and an index (pubDate, id) → id, pubDate as the
/// big-endian bit pattern of a positive Double (which sorts as the number does). Each transaction's index
/// entries are sorted and appended. Durability `.full` (LMDB's default).
@MainActor final class KitEngine: Engine {
    nonisolated static let name = "LMDBKit"
    let env: Environment
    let articles: Database
    let bySection: Database
    let byDate: Database

    init(directory: URL) throws {
        var options = Environment.Options()
        options.mapSize = 1 << 30
        options.durability = .full
        env = try Environment.open(path: directory.appendingPathComponent("articles.mdb").path, options: options)
        articles = try env.createDatabase(named: "articles")
        bySection = try env.createDatabase(named: "section", flags: .duplicateSort)
        byDate = try env.createDatabase(named: "pubDate")
    }

    private static func key(_ id: Int64) -> [UInt8] { withUnsafeBytes(of: id.bigEndian) { Array($0) } }

    private static func record(_ row: Row, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        func append<T>(_ v: T) { withUnsafeBytes(of: v) { out.append(contentsOf: $0) } }
        append(row.id.littleEndian)
        append(UInt32(row.url.utf8.count).littleEndian)
        out.append(contentsOf: row.url.utf8)
        append(UInt32(row.lead.utf8.count).littleEndian)
        out.append(contentsOf: row.lead.utf8)
        append(UInt32(row.section.utf8.count).littleEndian)
        out.append(contentsOf: row.section.utf8)
        append(row.pubDate.timeIntervalSinceReferenceDate.bitPattern.littleEndian)
        append(Int64(row.wordCount).littleEndian)
    }

    private func put(_ rows: [Row], in txn: borrowing Transaction) throws {
        var buffer: [UInt8] = []
        var sectionEntries: [(String, Int64)] = []
        var dateEntries: [(UInt64, Int64)] = []
        sectionEntries.reserveCapacity(rows.count)
        dateEntries.reserveCapacity(rows.count)
        for row in rows {
            Self.record(row, into: &buffer)
            // Ids arrive in ascending order, above every id present.
            try txn.put(buffer, forKey: Self.key(row.id), in: articles, flags: .append)
            sectionEntries.append((row.section, row.id))
            dateEntries.append((row.pubDate.timeIntervalSinceReferenceDate.bitPattern, row.id))
        }
        // Index entries sorted per transaction, then written in key order. The section names
        // are ASCII, where String order is byte order.
        sectionEntries.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        dateEntries.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        try txn.withCursor(on: bySection) { cursor in
            for (section, id) in sectionEntries {
                var s = section
                try s.withUTF8 { k in try withUnsafeBytes(of: id.bigEndian) { v in try cursor.put(v, forKey: UnsafeRawBufferPointer(k)) } }
            }
        }
        try txn.withCursor(on: byDate) { cursor in
            for (bits, id) in dateEntries {
                let key = (bits.bigEndian, id.bigEndian)
                try withUnsafeBytes(of: key) { k in try withUnsafeBytes(of: id.bigEndian) { v in try cursor.put(v, forKey: k) } }
            }
        }
    }

    func insertBulk(_ rows: [Row]) throws {
        try env.write { txn in try put(rows, in: txn) }
    }

    func scanAll() throws -> Int {
        var sum = 0
        try env.read { txn in
            try txn.forEach(in: articles) { _, value in
                // id 8, then url, lead, section as (length, bytes), then date 8, wordCount 8.
                var at = 8
                for field in 0..<3 {
                    let n = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                    if field < 2 {
                        sum &+= String(decoding: UnsafeRawBufferPointer(rebasing: value[(at + 4)..<(at + 4 + n)]), as: UTF8.self).utf8.count
                    }
                    at += 4 + n
                }
                sum &+= Int(Int64(littleEndian: value.loadUnaligned(fromByteOffset: at + 8, as: Int64.self)))
                return true
            }
        }
        return sum
    }

    func get(_ ids: [Int64]) throws -> Int {
        var sum = 0
        try env.read { txn in
            for id in ids {
                sum &+= try txn.get(Self.key(id), in: articles) {
                    Int(Int64(littleEndian: $0.loadUnaligned(fromByteOffset: $0.count - 8, as: Int64.self)))
                } ?? 0
            }
        }
        return sum
    }

    func countFilter() throws -> Int {
        var count = 0
        try env.read { txn in
            try txn.forEach(in: articles) { _, value in
                if Int64(littleEndian: value.loadUnaligned(fromByteOffset: value.count - 8, as: Int64.self)) > 1800 { count += 1 }
                return true
            }
        }
        return count
    }

    func countSection(_ section: String) throws -> Int {
        try env.read { txn in
            try txn.withCursor(on: bySection) { cursor in
                var s = section
                return try s.withUTF8 { k in
                    try cursor.seek(exactly: UnsafeRawBufferPointer(k)) { _ in () } == nil ? 0 : cursor.valueCount()
                }
            }
        }
    }

    func top100() throws -> Int {
        try env.read { txn in
            try txn.withCursor(on: byDate) { cursor in
                var sum = 0
                var taken = 0
                func add(_ e: Cursor.Entry) {
                    sum &+= Int(Int64(bigEndian: e.value.loadUnaligned(as: Int64.self)))
                    taken += 1
                }
                var more = try cursor.last(add) != nil
                while more, taken < 100 {
                    more = try cursor.previous(add) != nil
                }
                return sum
            }
        }
    }

    func updateAll() throws {
        try env.write { txn in
            try txn.withCursor(on: articles) { cursor in
                var key: [UInt8] = []
                var value: [UInt8] = []
                func copy(_ e: Cursor.Entry) {
                    key.removeAll(keepingCapacity: true)
                    key.append(contentsOf: e.key)
                    value.removeAll(keepingCapacity: true)
                    value.append(contentsOf: e.value)
                }
                var more = try cursor.first(copy) != nil
                while more {
                    let at = value.count - 8
                    let wordCount = value.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: Int64.self)) }
                    value.withUnsafeMutableBytes { $0.storeBytes(of: (wordCount + 1).littleEndian, toByteOffset: at, as: Int64.self) }
                    try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try cursor.put(v, forKey: k) } }
                    more = try cursor.next(copy) != nil
                }
            }
        }
    }

    func smallTransactions(_ rows: [Row]) throws {
        for row in rows {
            try env.write { txn in try put([row], in: txn) }
        }
    }

    func deleteAll() throws {
        try env.write { txn in
            try txn.empty(articles)
            try txn.empty(bySection)
            try txn.empty(byDate)
        }
    }

    func settleFiles() throws {}

    func count() throws -> Int {
        try env.read { txn in try txn.statistics(of: articles).entries }
    }
}
