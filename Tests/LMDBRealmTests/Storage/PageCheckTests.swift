import Foundation
import TestSupport
import Testing

@testable import LMDBRealm

final class PagedNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var topic = ""
    @Persisted var text = ""
}

/// Damage LMDB itself would trust — a page out of place, a zeroed page, swapped meta pages, a
/// file cut short — is found by reading the pages as bytes: at open (the meta pages) or by
/// `verify` before any cursor touches them, never by a crash of the process.
@Suite struct PageCheckTests {
    static let pageSize = 4_096

    /// A compacted file of 600 notes (most of its pages hold data), closed; its bytes.
    func writeFile(in dir: URL) throws -> (URL, Data) {
        let written = dir.appendingPathComponent("written.realm")
        let url = dir.appendingPathComponent("notes.realm")
        let realm = try Realm(configuration: Realm.Configuration(fileURL: written, objectTypes: [PagedNote.self]))
        try realm.write {
            for id in 0..<600 {
                let note = PagedNote()
                note.id = id
                note.topic = "topic \(id % 17)"
                note.text = String(repeating: "note \(id) ", count: 12)
                realm.add(note)
            }
        }
        try realm.writeCopy(toFile: url)
        return (url, try Data(contentsOf: url))
    }

    func open(_ url: URL) throws -> Realm {
        try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [PagedNote.self]))
    }

    @Test func swappedMetaPagesAreRefusedAtOpenNamingTheFile() throws {
        try withTemporaryDirectory { dir in
            let (url, bytes) = try writeFile(in: dir)
            var damaged = bytes
            damaged.replaceSubrange(0..<Self.pageSize, with: bytes[Self.pageSize..<2 * Self.pageSize])
            damaged.replaceSubrange(Self.pageSize..<2 * Self.pageSize, with: bytes[0..<Self.pageSize])
            try damaged.write(to: url)
            let error = try #require(throws: Realm.Error.self) { try open(url) }
            #expect(error.code == .invalidDatabase)
            #expect(error.description.contains(url.path) && error.description.contains("meta page"), "\(error)")
        }
    }

    /// LMDB divides by the page size its first meta page gives: 0 stopped the process with
    /// SIGFPE inside `mdb_env_open` (found by the verify fuzz target).
    @Test func aMetaPageOfPageSizeZeroIsRefusedBeforeLMDBReadsIt() throws {
        try withTemporaryDirectory { dir in
            let (url, bytes) = try writeFile(in: dir)
            var damaged = bytes
            damaged.replaceSubrange(40..<44, with: [0, 0, 0, 0])
            try damaged.write(to: url)
            let error = try #require(throws: Realm.Error.self) { try open(url) }
            #expect(error.code == .invalidDatabase && error.description.contains("page size"), "\(error)")
        }
    }

    /// A transaction ID past `Int.max` (2^63 + 2, in meta page 0 where even IDs belong):
    /// reading it as a Swift `Int` made it negative and stopped the process (found by the
    /// verify fuzz target).
    @Test func aMetaPageOfAnImpossibleTransactionIsRefusedAtOpen() throws {
        try withTemporaryDirectory { dir in
            let (url, bytes) = try writeFile(in: dir)
            var damaged = bytes
            withUnsafeBytes(of: (UInt64(1) << 63 + 2).littleEndian) { damaged.replaceSubrange(144..<152, with: $0) }
            try damaged.write(to: url)
            let error = try #require(throws: Realm.Error.self) { try open(url) }
            #expect(error.code == .invalidDatabase && error.description.contains("more than any file has committed"), "\(error)")
        }
    }

    @Test func aFileCutShortIsRefusedAtOpenOrFoundByVerify() throws {
        try withTemporaryDirectory { dir in
            let (url, bytes) = try writeFile(in: dir)
            try bytes.prefix(bytes.count - Self.pageSize * 3).write(to: url)
            do {
                let report = try open(url).verify()
                #expect(report.findings.contains { $0.kind == .damagedDatabase && $0.message.contains("cut short") }, "\(report)")
            } catch let error as Realm.Error {
                #expect(error.code == .invalidDatabase)
            }
        }
    }

    /// Every page after the meta pages in turn, zeroed or replaced by its neighbour: verify
    /// reports it (or it was not a page the newest version uses), and never stops the process.
    @Test(arguments: ["zeroed", "copied"]) func damagedPagesAreFindingsNotCrashes(_ damage: String) throws {
        try withTemporaryDirectory { dir in
            let (_, bytes) = try writeFile(in: dir)
            let pages = bytes.count / Self.pageSize
            var found = 0
            for page in 2..<pages {
                var damaged = bytes
                let range = page * Self.pageSize..<(page + 1) * Self.pageSize
                if damage == "zeroed" {
                    damaged.replaceSubrange(range, with: Data(count: Self.pageSize))
                } else {
                    let source = page == 2 ? 3 : page - 1
                    damaged.replaceSubrange(range, with: bytes[source * Self.pageSize..<(source + 1) * Self.pageSize])
                }
                let copy = dir.appendingPathComponent("\(damage)-\(page).realm")
                try damaged.write(to: copy)
                do {
                    let report = try open(copy).verify()
                    if report.findings.contains(where: { $0.kind == .damagedDatabase && $0.message.contains("page \(page)") }) { found += 1 }
                } catch let error as Realm.Error {
                    #expect(error.code == .invalidDatabase, "page \(page): \(error)")
                    found += 1
                }
            }
            // A compacted file has no free pages: every page is part of the newest version.
            #expect(found == pages - 2, "\(found) of \(pages - 2) damaged pages were found")
        }
    }
    /// A node marked as holding a page of several values in a database of single values (one
    /// flipped bit): LMDB followed it into the node's few bytes and dereferenced a null
    /// pointer (found by corruption injection). Every leaf node's flags are checked against its
    /// database.
    @Test func aLeafNodeWithFlagsItsDatabaseCannotHaveIsAFinding() throws {
        try withTemporaryDirectory { dir in
            let (_, bytes) = try writeFile(in: dir)
            var tried = 0
            for page in 2..<(bytes.count / Self.pageSize) {
                let start = page * Self.pageSize
                func u16(_ at: Int) -> Int { Int(bytes[start + at]) | Int(bytes[start + at + 1]) << 8 }
                // A leaf page (not of fixed-size values) whose first node has no flags.
                guard u16(10) & 0x22 == 0x02, u16(12) > 16 else { continue }
                let node = u16(16)
                guard u16(node + 4) == 0 else { continue }
                var damaged = bytes
                damaged[start + node + 4] = 0x04
                let copy = dir.appendingPathComponent("flags-\(page).realm")
                try damaged.write(to: copy)
                tried += 1
                do {
                    let report = try open(copy).verify()
                    #expect(
                        report.findings.contains { $0.kind == .damagedDatabase && $0.message.contains("page \(page)") }, "page \(page): \(report)")
                } catch let error as Realm.Error {
                    #expect(error.code == .invalidDatabase, "page \(page): \(error)")
                }
            }
            #expect(tried > 10, "only \(tried) leaf pages were damaged")
        }
    }

    /// A value in the page of values of an index key (a duplicate-sorted database) flagged as
    /// holding values of its own (one flipped bit): LMDB's cursor over those values has none
    /// below it and dereferenced a null pointer in `verify`'s index check (found by corruption
    /// injection). The values' flags are checked too.
    @Test func aValueOfAnIndexKeyWithFlagsIsAFinding() throws {
        try withTemporaryDirectory { dir in
            let (_, bytes) = try writeFile(in: dir)
            var tried = 0
            for page in 2..<(bytes.count / Self.pageSize) {
                let start = page * Self.pageSize
                func u16(_ at: Int) -> Int { Int(bytes[start + at]) | Int(bytes[start + at + 1]) << 8 }
                // A leaf page (not of fixed-size values) whose first node holds a page of values.
                guard u16(10) & 0x22 == 0x02, u16(12) > 16 else { continue }
                let node = u16(16)
                guard u16(node + 4) == 0x04 else { continue }
                let values = node + 8 + u16(node + 6)
                // The values' page is not of fixed-size values; its first value has no flags.
                guard u16(values + 10) & 0x20 == 0, u16(values + 12) > 16 else { continue }
                let value = values + u16(values + 16)
                guard u16(value + 4) == 0 else { continue }
                var damaged = bytes
                damaged[start + value + 4] = 0x04
                let copy = dir.appendingPathComponent("value-flags-\(page).realm")
                try damaged.write(to: copy)
                tried += 1
                do {
                    let report = try open(copy).verify()
                    #expect(
                        report.findings.contains { $0.kind == .damagedDatabase && $0.message.contains("page \(page)") }, "page \(page): \(report)")
                } catch let error as Realm.Error {
                    #expect(error.code == .invalidDatabase, "page \(page): \(error)")
                }
            }
            #expect(tried > 0, "no page of an index key's values was damaged")
        }
    }
}
