import Foundation
import LMDBRealm
import TestSupport
import Testing

@Suite struct InMemoryRealmTests {
    /// Handles with one identifier share data and notifications while any is open; once the
    /// last closes the data is gone, and no file is left behind.
    @Test func handlesShareDataUntilTheLastCloses() throws {
        let identifier = "cache \(UUID().uuidString)"
        var config = Realm.Configuration(inMemoryIdentifier: identifier)
        config.objectTypes = [Article.self]
        #expect(config.fileURL == nil)
        var backing: URL?
        do {
            let first = try Realm(configuration: config)
            let second = try Realm(configuration: config)
            backing = first.configuration.fileURL ?? nil
            var counts: [Int] = []
            let token = second.objects(Article.self).observe { change in
                switch change {
                case .initial(let results), .update(let results, _, _, _): counts.append(results.count)
                case .error: break
                }
            }
            defer { token.invalidate() }
            try first.write {
                first.add(Article(id: "a"))
                first.add(Article(id: "b"))
            }
            second.refresh()
            #expect(second.objects(Article.self).count == 2)
            #expect(counts == [0, 2])
            #expect(second.objects(Article.self).where { $0.id == "b" }.count == 1)
            var other = Realm.Configuration(inMemoryIdentifier: identifier + " other")
            other.objectTypes = [Article.self]
            #expect(try Realm(configuration: other).objects(Article.self).isEmpty, "another identifier, other data")
        }
        #expect(backing == nil, "the configuration names no file")
        let again = try Realm(configuration: config)
        #expect(again.objects(Article.self).isEmpty, "the data went with the last handle")
        // Setting a file clears the identifier, and the other way round.
        var switched = config
        switched.fileURL = URL(fileURLWithPath: "/tmp/x.realm")
        #expect(switched.inMemoryIdentifier == nil)
        switched.inMemoryIdentifier = "y"
        #expect(switched.fileURL == nil)
    }

    @Test func theBackingFileIsDeletedWithTheLastHandle() throws {
        let identifier = "gone-\(UUID().uuidString)"
        var config = Realm.Configuration(inMemoryIdentifier: identifier)
        config.objectTypes = [Article.self]
        let directories = ["/dev/shm", NSTemporaryDirectory()]
        func backingFiles() -> [String] {
            directories.flatMap { base in
                (try? FileManager.default.contentsOfDirectory(atPath: base + "/lmdbrealm-\(getuid())-\(getpid())")) ?? []
            }.filter { $0.contains(identifier.replacingOccurrences(of: "-", with: "_2d")) }
        }
        do {
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(Article(id: "a")) }
            #expect(backingFiles().count == 2, "\(backingFiles())")
        }
        #expect(backingFiles().isEmpty)
    }
}
