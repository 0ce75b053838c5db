import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct StatisticsTests {
    /// The figures a metrics endpoint reads: sizes that grow with data and show the space
    /// deletions free, readers, and a frozen realm holding an old version.
    @Test func statisticsReportSizesReadersAndPinnedVersions() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self]))
            let empty = try realm.statistics
            #expect(empty.fileSize > 0 && empty.usedSize <= empty.fileSize && empty.mapSize >= empty.fileSize)
            try realm.write {
                for i in 0..<5_000 { realm.add(Article(id: "a\(i)", wordCount: i)) }
            }
            let full = try realm.statistics
            #expect(full.usedSize > empty.usedSize + 5_000 * 10)
            #expect(full.currentVersion > empty.currentVersion)
            let frozen = realm.freeze()
            try realm.write { realm.delete(realm.objects(Article.self)) }
            try realm.write { realm.add(Article(id: "last")) }
            let after = try realm.statistics
            #expect(after.oldestPinnedVersion == full.currentVersion, "the frozen realm holds the full version")
            #expect(after.readers >= 1)
            #expect(after.currentVersion == full.currentVersion + 2)
            #expect(frozen.objects(Article.self).count == 5_000)
            #expect(after.fileSize >= full.fileSize)
            #expect("\(after)".contains("oldestPinnedVersion \(full.currentVersion)"))
        }
    }
}
