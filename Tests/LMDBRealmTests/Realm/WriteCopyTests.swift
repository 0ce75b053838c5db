import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

@Suite struct WriteCopyTests {
    /// The copy holds the version the realm reads (not later commits), every object, index,
    /// link and list, in fewer bytes once deletions left free pages; it refuses to replace a
    /// file.
    @Test func aCopyIsCompactedConsistentAndOfThisVersion() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Post.self, Tag.self])
            let realm = try Realm(configuration: config)
            try realm.write {
                for i in 0..<3_000 {
                    let post = Post()
                    post.id = i
                    post.title = "post \(i) with a title of some length"
                    post.scores.append(objectsIn: [Double(i), 1])
                    if i % 3 == 0 {
                        let tag = Tag()
                        tag.value = "t\(i)"
                        post.tags.append(tag)
                    }
                    realm.add(post)
                }
            }
            try realm.write { realm.delete(realm.objects(Post.self).where { $0.id >= 1_000 }) }
            let frozen = realm.freeze()
            try realm.write { realm.delete(realm.objects(Post.self).where { $0.id < 10 }) }

            let copyURL = dir.appendingPathComponent("copy.realm")
            try frozen.writeCopy(toFile: copyURL)
            var copyConfig = config
            copyConfig.fileURL = copyURL
            let copy = try Realm(configuration: copyConfig)
            #expect(copy.objects(Post.self).count == 1_000, "the frozen version, before the last delete")
            #expect(copy.objects(Post.self).where { $0.id == 3 }.first?.tags.first?.value == "t3")
            #expect(Array(copy.object(ofType: Post.self, forPrimaryKey: 999)!.scores) == [999, 1])
            #expect(copy.objects(Tag.self).count == 1_000)
            #expect(copy.indexProblems() == [])
            let original = try realm.statistics
            let compacted = try copy.statistics
            #expect(compacted.fileSize < original.fileSize, "\(compacted.fileSize) vs \(original.fileSize)")
            #expect(!FileManager.default.fileExists(atPath: copyURL.path + ".copy"))

            #expect(throws: Realm.Error.self) { try realm.writeCopy(toFile: copyURL) }
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
            #expect(left.isEmpty, "\(left)")
        }
    }
}
