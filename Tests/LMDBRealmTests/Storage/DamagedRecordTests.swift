import Foundation
@_spi(Testing) import LMDBKit
import TestSupport
import Testing

@testable import LMDBRealm

/// A record damaged on disk is never read as a wrong value: reading it stops the process with
/// a message that names the file and the class and says the realm is damaged, while the
/// objects around it read as before. The damage is done behind the realm's back, through
/// LMDBKit, on a closed file; the crashes run in child processes.
@Suite struct DamagedRecordTests {
    struct SetupFailed: Error, CustomStringConvertible {
        var description: String
    }

    // MARK: - Helpers

    /// Writes articles "a", "b" and "c" (101, 102 and 103 words) to a new realm file in
    /// `directory` and closes it.
    static func makeFile(in directory: URL) throws -> Realm.Configuration {
        let config = makeConfiguration(directory, types: [Article.self])
        do {
            let realm = try Realm(configuration: config)
            try realm.write {
                realm.add(Article(id: "a", section: "Arts", wordCount: 101))
                realm.add(Article(id: "b", section: "Sports", wordCount: 102))
                realm.add(Article(id: "c", section: "World", wordCount: 103))
            }
        }
        try waitUntilClosed(directory)
        return config
    }

    /// Waits until this process has nothing open in `directory`, so that the file can be
    /// opened again with other options (one environment per file per process).
    static func waitUntilClosed(_ directory: URL) throws {
        let open = Environment.waitUntilClosed(under: directory.path + "/", timeout: eventTimeout)
        guard open.isEmpty else { throw SetupFailed(description: "still open: \(open)") }
    }

    /// Replaces the record of article `id` in the closed file of `config` with what `damage`
    /// makes of it, writing through LMDBKit as another program could, and closes the file.
    ///
    /// - Returns: The record as it was.
    @discardableResult
    static func damageRecord(
        ofArticle id: String, in config: Realm.Configuration, resealing: Bool = true, _ damage: (inout [UInt8]) -> Void
    ) throws -> [UInt8] {
        // The table's key is the encoded primary key: a tag byte, then the string's UTF-8.
        var key: [UInt8] = []
        Array(id.utf8).withUnsafeBytes { KeyEncoding.append($0, type: .string, to: &key) }
        let original: [UInt8]
        do {
            let environment = try Environment.open(path: config.fileURL!.path)
            guard let table = try environment.database(named: "class_Article") else {
                throw SetupFailed(description: "the file has no database class_Article")
            }
            original = try environment.write { txn in
                guard let record = try txn.get(key, in: table, { Array($0) }) else {
                    throw SetupFailed(description: "no record under \(key)")
                }
                var damaged = record
                damage(&damaged)
                // The checksum made again: these are a writer's mistakes, which the checks behind
                // the checksum find (a checksum that does not match is tested on its own).
                try txn.put(resealing ? Record.resealed(damaged) : damaged, forKey: key, in: table)
                return record
            }
        }
        try waitUntilClosed(config.fileURL!.deletingLastPathComponent())
        return original
    }

    /// Flips the lowest bit of the first byte of `text` in `record`, as a disk might.
    static func flipBit(in text: String, of record: inout [UInt8]) {
        let needle = Array(text.utf8)
        let at = (0...(record.count - needle.count)).first { Array(record[$0..<($0 + needle.count)]) == needle }!
        record[at] ^= 1
    }

    /// The column count a record's header states.
    static func columnCount(of record: [UInt8]) -> Int { Int(record[2]) | Int(record[3]) << 8 }

    /// Makes `record`'s header state `columns` columns.
    static func setColumnCount(_ columns: Int, of record: inout [UInt8]) {
        record[2] = UInt8(truncatingIfNeeded: columns)
        record[3] = UInt8(truncatingIfNeeded: columns >> 8)
    }

    /// Makes the last column of `record` end 100 bytes past the end of its data area.
    static func pointLastColumnPastTheEnd(of record: inout [UInt8]) {
        let columns = columnCount(of: record)
        let dataSize = record.count - (4 + 4 * columns)
        let entry = UInt32(dataSize + 100).littleEndian
        withUnsafeBytes(of: entry) { record.replaceSubrange((4 * columns)..<(4 * columns + 4), with: $0) }
    }

    /// Tells the parent process which file the child damaged, which it cannot know otherwise
    /// (an exit test captures nothing, and the child makes its own directory).
    static func announce(_ config: Realm.Configuration) {
        FileHandle.standardError.write(Data("realm file: \(config.fileURL!.path)\n".utf8))
    }

    /// Tells the parent process that `article` was read, and what it held.
    static func announce(_ article: Article) {
        FileHandle.standardError.write(Data("read \(article.id): \(article.wordCount) words, \(article.section)\n".utf8))
    }

    /// Checks that the child process stopped with a message naming the file it announced, the
    /// class `Article`, `problem` and damage, after reading each of `reads`.
    static func expectDamageReported(
        _ problem: String, after reads: [String], _ result: ExitTest.Result?, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let lines = stderr.split(separator: "\n").map(String.init)
        guard let path = lines.first(where: { $0.hasPrefix("realm file: ") })?.dropFirst("realm file: ".count) else {
            Issue.record("the child announced no file; stderr was: \(stderr)", sourceLocation: sourceLocation)
            return
        }
        for read in reads {
            #expect(lines.contains(read), "expected '\(read)'; stderr was: \(stderr)", sourceLocation: sourceLocation)
        }
        let message = lines.first { $0.contains("damaged") } ?? ""
        #expect(message.contains("The realm at '\(path)' is damaged"), "stderr was: \(stderr)", sourceLocation: sourceLocation)
        #expect(message.contains("'Article'"), "stderr was: \(stderr)", sourceLocation: sourceLocation)
        #expect(message.contains(problem), "stderr was: \(stderr)", sourceLocation: sourceLocation)
    }

    // MARK: - Tests

    @Test func theNeighboursOfADamagedRecordReadAsBefore() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            let original = try Self.damageRecord(ofArticle: "b", in: config) { Self.setColumnCount(3, of: &$0) }
            #expect(Self.columnCount(of: original) == 7, "Article has seven stored columns")
            let realm = try Realm(configuration: config)
            for (id, words, section) in [("a", 101, "Arts"), ("c", 103, "World")] {
                let article = try #require(realm.object(ofType: Article.self, forPrimaryKey: id))
                #expect(article.id == id)
                #expect(article.wordCount == words)
                #expect(article.section == section)
                #expect(article.url == "https://example.com/\(id)")
                #expect(article.leadParagraph == "Lead of \(id)")
                #expect(article.abstract == nil)
                #expect(article.pubDate == Date(timeIntervalSince1970: 1_435_708_800))
            }
        }
    }

    @Test func anUndamagedRecordWrittenBackReadsAsBefore() throws {
        // The helper itself changes nothing but what `damage` changes.
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damageRecord(ofArticle: "b", in: config) { _ in }
            let realm = try Realm(configuration: config)
            let article = try #require(realm.object(ofType: Article.self, forPrimaryKey: "b"))
            #expect(article.wordCount == 102 && article.section == "Sports")
        }
    }

    @Test func readingARecordWithAnotherColumnCountStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = try DamagedRecordTests.makeFile(in: try makeTemporaryDirectory())
            try DamagedRecordTests.damageRecord(ofArticle: "b", in: config) { DamagedRecordTests.setColumnCount(3, of: &$0) }
            DamagedRecordTests.announce(config)
            let realm = try Realm(configuration: config)
            DamagedRecordTests.announce(realm.object(ofType: Article.self, forPrimaryKey: "a")!)
            DamagedRecordTests.announce(realm.object(ofType: Article.self, forPrimaryKey: "b")!)
        }
        Self.expectDamageReported("record has 3 columns, the schema 7", after: ["read a: 101 words, Arts"], result)
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!stderr.contains("read b:"), "the damaged record was read: \(stderr)")
    }

    @Test func readingAFieldThatPointsPastItsRecordStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = try DamagedRecordTests.makeFile(in: try makeTemporaryDirectory())
            try DamagedRecordTests.damageRecord(ofArticle: "b", in: config) { DamagedRecordTests.pointLastColumnPastTheEnd(of: &$0) }
            DamagedRecordTests.announce(config)
            let realm = try Realm(configuration: config)
            DamagedRecordTests.announce(realm.object(ofType: Article.self, forPrimaryKey: "a")!)
            // The header is sound, so the object is found; its last field is not.
            let b = realm.object(ofType: Article.self, forPrimaryKey: "b")!
            FileHandle.standardError.write(Data("found \(b.id)\n".utf8))
            DamagedRecordTests.announce(b)
        }
        Self.expectDamageReported("column 6 spans bytes", after: ["read a: 101 words, Arts", "found b"], result)
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!stderr.contains("read b:"), "the damaged field was read: \(stderr)")
    }

    @Test func iteratingOntoARecordShorterThanItsHeaderStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = try DamagedRecordTests.makeFile(in: try makeTemporaryDirectory())
            try DamagedRecordTests.damageRecord(ofArticle: "b", in: config) { $0.removeLast($0.count - 2) }
            DamagedRecordTests.announce(config)
            let realm = try Realm(configuration: config)
            // In key order: "a", then the damaged "b".
            for article in realm.objects(Article.self) { DamagedRecordTests.announce(article) }
        }
        Self.expectDamageReported("record of 2 bytes is shorter than its header", after: ["read a: 101 words, Arts"], result)
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!stderr.contains("read b:") && !stderr.contains("read c:"), "read past the damaged record: \(stderr)")
    }

    @Test func readingARecordWithAFlippedBitStopsOnItsChecksum() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = try DamagedRecordTests.makeFile(in: try makeTemporaryDirectory())
            try DamagedRecordTests.damageRecord(ofArticle: "b", in: config, resealing: false) { DamagedRecordTests.flipBit(in: "Sports", of: &$0) }
            DamagedRecordTests.announce(config)
            var checking = config
            checking.verifiesChecksums = true
            let realm = try Realm(configuration: checking)
            for article in realm.objects(Article.self) { DamagedRecordTests.announce(article) }
        }
        Self.expectDamageReported("checksum", after: ["read a: 101 words, Arts"], result)
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!stderr.contains("read b:") && !stderr.contains("Rports"), "the damaged record was read: \(stderr)")
    }

    /// Without checksums on reads (the default), the flipped bit reads as another value (LMDB
    /// has no checksums); `verify` checks them whatever the configuration.
    @Test func withoutChecksumsOnReadsAFlippedBitReadsAsAnotherValueAndVerifyFindsIt() throws {
        try withTemporaryDirectory { dir in
            let config = try Self.makeFile(in: dir)
            try Self.damageRecord(ofArticle: "b", in: config, resealing: false) { Self.flipBit(in: "Sports", of: &$0) }
            #expect(!config.verifiesChecksums, "off by default")
            let realm = try Realm(configuration: config)
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "b")?.section == "Rports")
            let report = try realm.verify()
            #expect(report.findings.count == 1, "\(report)")
            #expect(report.findings.first?.kind == .damagedRecord && report.findings.first?.message.contains("checksum") == true, "\(report)")
        }
    }
}
