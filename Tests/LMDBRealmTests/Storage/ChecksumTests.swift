import CHotPaths
import LMDBRealmStorage
import Foundation
import TestSupport
import Testing

@testable import LMDBRealm

/// The CRC-32C of every record, and when reads check it.
@Suite struct ChecksumTests {
    /// CRC-32C one bit at a time, straight from the polynomial: what the fast routine must equal.
    static func reference(_ crc: UInt32, _ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c = ~crc
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = c & 1 == 1 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        }
        return ~c
    }

    @Test func theCRCIsCRC32CForEveryLengthAlignmentAndStart() {
        #expect(Array("123456789".utf8).withUnsafeBytes { lmdbrealm_crc32c(0, $0.baseAddress, $0.count) } == 0xE306_9283)
        let seed = SeededGenerator.testSeed()
        var random = SeededGenerator(state: seed)
        let bytes = (0..<16_400).map { _ in UInt8.random(in: 0...255, using: &random) }
        // Every length to past two rounds of three interleaved blocks (6 KiB each), at every
        // alignment of eight, from zero and from other starting values.
        for length in 0...12_400 {
            let offset = length % 8
            let start: UInt32 = length % 3 == 0 ? 0 : UInt32.random(in: 0...UInt32.max, using: &random)
            let slice = bytes[offset..<(offset + length)]
            let fast = bytes.withUnsafeBytes { lmdbrealm_crc32c(start, $0.baseAddress! + offset, length) }
            let expected = Self.reference(start, slice)
            guard fast == expected else {
                Issue.record("length \(length), offset \(offset), start \(start): \(fast) != \(expected) (seed \(seed))")
                return
            }
        }
        // Continuing from the CRC of a prefix gives the CRC of the whole.
        let whole = bytes.withUnsafeBytes { lmdbrealm_crc32c(0, $0.baseAddress, 4_000) }
        let split = bytes.withUnsafeBytes { lmdbrealm_crc32c(lmdbrealm_crc32c(0, $0.baseAddress, 1_234), $0.baseAddress! + 1_234, 4_000 - 1_234) }
        #expect(whole == split, "seed \(seed)")
    }

    /// A flipped bit that turns a match into a non-match stops the count: a filter checks the
    /// records it rejects too.
    @Test func aCountStopsOnADamagedRecordItsFilterWouldReject() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = try DamagedRecordTests.makeFile(in: try makeTemporaryDirectory())
            try DamagedRecordTests.damageRecord(ofArticle: "b", in: config, resealing: false) { DamagedRecordTests.flipBit(in: "Sports", of: &$0) }
            var checking = config
            checking.verifiesChecksums = true
            let realm = try Realm(configuration: checking)
            // Not the index: a full scan whose filter "Rports" fails.
            let count = realm.objects(Article.self).filter("section CONTAINS 'Spo'").count
            FileHandle.standardError.write(Data("counted \(count)\n".utf8))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("checksum") && stderr.contains("is damaged"), "\(stderr)")
        #expect(!stderr.contains("counted"), "the count answered: \(stderr)")
    }

    /// A scan that checked every record of a table spares later reads of the same version the
    /// check, and only them: a new version (another commit), and a write's own changes on top of
    /// the version it began from, are checked again or trusted as the write's own.
    @Test func aCompleteScanChecksATableOnceAVersion() throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir, types: [Article.self])
            config.verifiesChecksums = true
            let realm = try Realm(configuration: config)
            try realm.write {
                for i in 0..<600 { realm.add(Article(id: "a\(i)", section: i % 2 == 0 ? "Arts" : "World", wordCount: 100 + i)) }
            }
            let table = try #require(try realm.binding(for: Article.self, create: false)).table
            // The version the realm reads once it has taken the newest.
            realm.refresh()
            let version = realm.checkedVersion
            #expect(!table.isChecked(in: version))
            // A walk that stops early checked only the records it read (a batch of them).
            for article in realm.objects(Article.self) {
                #expect(article.wordCount >= 100)
                break
            }
            #expect(!table.isChecked(in: version))
            #expect(realm.objects(Article.self).filter("wordCount > 120").count == 579)
            #expect(table.isChecked(in: version))
            // A write begins from that version: what it has not changed is that version's bytes.
            realm.beginWrite()
            #expect(realm.checkedVersion == version)
            realm.object(ofType: Article.self, forPrimaryKey: "a1")!.wordCount = 7
            // A scan inside the write checks what it reads but marks nothing.
            #expect(realm.objects(Article.self).filter("wordCount > 120").count == 579)
            try realm.commitWrite()
            realm.refresh()
            #expect(realm.checkedVersion > version)
            #expect(!table.isChecked(in: realm.checkedVersion))
            #expect(realm.objects(Article.self).filter("section CONTAINS 'rt'").count == 300)
            #expect(table.isChecked(in: realm.checkedVersion))
            // So does a walk of every object.
            try realm.write { realm.add(Article(id: "z", section: "Arts", wordCount: 1)) }
            realm.refresh()
            #expect(!table.isChecked(in: realm.checkedVersion))
            var walked = 0
            for _ in realm.objects(Article.self) { walked += 1 }
            #expect(walked == 601)
            #expect(table.isChecked(in: realm.checkedVersion))
        }
    }
}
