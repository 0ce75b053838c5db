import Foundation
@_spi(Testing) import LMDBKit
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// A writer whose posts are counted through their backlinks.
final class BacklinkedAuthor: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted(originProperty: "author") var posts: LinkingObjects<BacklinkedPost>
}

final class BacklinkedPost: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted var author: BacklinkedAuthor?
}

/// A read that fails while following backlinks is never an answer: an I/O error on the record
/// of an object that may link to the target stops the read with the file's error, where it
/// once read as "not linked" and the count came out short.
@Suite struct BacklinkReadFailureTests {
    /// Stores an author whose key is longer than an index key (so each backlink entry is
    /// checked against its owner's record) with one post; counts the author's posts, then counts
    /// again with the next `mdb_get` failing as a disk can make it fail.
    static func countWithAFailingRead(in dir: String) throws {
        let config = makeConfiguration(URL(fileURLWithPath: dir), types: [BacklinkedAuthor.self, BacklinkedPost.self])
        let realm = try Realm(configuration: config)
        let id = String(repeating: "a", count: 495)
        try realm.write {
            let author = BacklinkedAuthor()
            author.id = id
            let post = BacklinkedPost()
            post.id = "p1"
            post.author = author
            realm.add(post)
        }
        let author = try #require(realm.object(ofType: BacklinkedAuthor.self, forPrimaryKey: id))
        FileHandle.standardError.write(Data("counted \(author.posts.count) before\n".utf8))
        FaultInjection.fail("mdb_get", with: .ioError)
        let after = author.posts.count
        FileHandle.standardError.write(Data("counted \(after) after\n".utf8))
    }

    @Test func anIOErrorOnAnOwnersRecordStopsTheCountNamingTheFile() async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = dir.path as String] in
                try BacklinkReadFailureTests.countWithAFailingRead(in: path)
            }
            let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(stderr.contains("counted 1 before"), "\(stderr)")
            #expect(stderr.contains("Cannot read the links of 'BacklinkedPost' from the realm at '"), "\(stderr)")
            #expect(!stderr.contains("after"), "a failed read was counted: \(stderr)")
        }
    }
}
