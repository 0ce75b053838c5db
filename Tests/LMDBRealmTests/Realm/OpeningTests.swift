import Foundation
import LMDBKit
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// Opening files the world can hand us: each bad case throws a coded error naming the file,
/// and never crashes or yields a silently empty database.
@Suite struct OpeningTests {
    func expectError(_ code: Realm.Error.Code, naming url: URL, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected Realm.Error.\(code)")
        } catch let error as Realm.Error {
            #expect(error.code == code, "\(error)")
            #expect(error.message.contains(url.path), "message does not name the file: \(error.message)")
            #expect(error.fileURL?.path == url.path)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func missingFileOpenedReadOnlyThrowsFileNotFound() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("missing.realm")
            expectError(.fileNotFound, naming: url) { _ = try Realm(configuration: Realm.Configuration(fileURL: url, readOnly: true)) }
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }

    @Test func missingDirectoryThrowsFileNotFound() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("no/such/dir/a.realm")
            expectError(.fileNotFound, naming: url) { _ = try Realm(configuration: Realm.Configuration(fileURL: url)) }
        }
    }

    @Test func directoryWithoutWriteAccessThrowsPermissionDenied() throws {
        try withTemporaryDirectory { dir in
            // Root ignores permission bits, so as root use a read-only file system instead.
            let url: URL
            if geteuid() == 0 {
                url = URL(fileURLWithPath: "/sys/lmdbrealm-test.realm")
            } else {
                let locked = dir.appendingPathComponent("locked")
                try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
                try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: locked.path)
                url = locked.appendingPathComponent("a.realm")
            }
            expectError(.filePermissionDenied, naming: url) { _ = try Realm(configuration: Realm.Configuration(fileURL: url)) }
        }
    }

    @Test func fileOfAnotherFormatThrowsInvalidDatabase() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("text.realm")
            try Data(String(repeating: "this is not a database\n", count: 5000).utf8).write(to: url)
            let before = try Data(contentsOf: url)
            expectError(.invalidDatabase, naming: url) { _ = try Realm(configuration: Realm.Configuration(fileURL: url)) }
            #expect((try? Data(contentsOf: url)) == before, "a failed open must not change the file")
        }
    }

    @Test func lmdbFileOfAnotherProgramThrowsInvalidDatabase() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("other.mdb")
            try makeForeignLMDBFile(at: url.path)
            expectError(.invalidDatabase, naming: url) { _ = try Realm(configuration: Realm.Configuration(fileURL: url)) }
        }
    }

    @Test func zeroLengthFileThrowsInvalidDatabase() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("empty.realm")
            _ = FileManager.default.createFile(atPath: url.path, contents: Data())
            expectError(.invalidDatabase, naming: url) { _ = try Realm(configuration: Realm.Configuration(fileURL: url)) }
            #expect((try? Data(contentsOf: url))?.isEmpty == true, "the empty file must stay as it was")
        }
    }

    @Test func truncatedFileThrowsInvalidDatabase() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            do {
                let realm = try Realm(configuration: config)
                try realm.write {
                    for i in 0..<2000 { realm.add(Article(id: "a\(i)", wordCount: i)) }
                }
            }
            let url = config.fileURL!
            let full = try Data(contentsOf: url)
            for cut in [full.count / 2, 8192 + 100, 3000] {
                try full.prefix(cut).write(to: url)
                expectError(.invalidDatabase, naming: url) { _ = try Realm(configuration: config) }
            }
        }
    }

    /// A meta page whose last page number is so large that the file's size would overflow an
    /// integer (found by the `verify` fuzz target, which stopped on the overflow).
    @Test func aMetaPageNamingAnImpossibleLastPageThrowsInvalidDatabase() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            do {
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Article(id: "a")) }
            }
            let url = config.fileURL!
            var bytes = try Data(contentsOf: url)
            // Both meta pages: mm_last_pg follows the page header (16 bytes), the magic and
            // version (8), the address and map size (16) and the two database records (96).
            for page in 0..<2 {
                let offset = page * 4096 + 136
                withUnsafeBytes(of: UInt64(1 << 62).littleEndian) { bytes.replaceSubrange(offset..<(offset + 8), with: $0) }
            }
            try bytes.write(to: url)
            expectError(.invalidDatabase, naming: url) { _ = try Realm(configuration: config) }
            #expect(throws: Realm.Error.self) {
                do {
                    _ = try Realm(configuration: config)
                } catch let error as Realm.Error {
                    #expect(error.message.contains("as its last"), "\(error.message)")
                    throw error
                }
            }
            #expect((try? Data(contentsOf: url)) == bytes, "a failed open must not change the file")
        }
    }

    @Test func directoryPathThrowsFileAccess() throws {
        try withTemporaryDirectory { dir in
            expectError(.fileAccess, naming: dir) { _ = try Realm(configuration: Realm.Configuration(fileURL: dir)) }
        }
    }

    @Test func createdFileIsPrivateToItsOwner() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            _ = try Realm(configuration: config)
            let mode = try FileManager.default.attributesOfItem(atPath: config.fileURL!.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
        }
    }

    @Test func readOnlyRealmReadsExistingData() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Article.self])
            do {
                let realm = try Realm(configuration: config)
                try realm.write { realm.add(Article(id: "kept")) }
            }
            var readOnly = config
            readOnly.readOnly = true
            let realm = try Realm(configuration: readOnly)
            #expect(realm.objects(Article.self).count == 1)
            #expect(realm.object(ofType: Article.self, forPrimaryKey: "kept")?.url == "https://example.com/kept")
        }
    }

    @Test func sameFileWithConflictingConfigurationThrows() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            let realm = try Realm(configuration: config)
            var other = config
            other.maximumFileSize = 1 << 20
            do {
                _ = try Realm(configuration: other)
                Issue.record("expected an error")
            } catch let error as Realm.Error {
                #expect(error.code == .fileAccess)
                #expect(error.message.contains("different configuration"))
            }
            withExtendedLifetime(realm) {}
        }
    }

    @Test func deleteFilesRemovesTheFileAndRefusesWhileOpen() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            do {
                let realm = try Realm(configuration: config)
                #expect(throws: Realm.Error.self) { try Realm.deleteFiles(for: config) }
                withExtendedLifetime(realm) {}
            }
            #expect(try Realm.deleteFiles(for: config))
            #expect(!FileManager.default.fileExists(atPath: config.fileURL!.path))
            #expect(!FileManager.default.fileExists(atPath: config.fileURL!.path + "-lock"))
            #expect(try !Realm.deleteFiles(for: config))
        }
    }

    /// LMDBRealm does not encrypt: a key gets a clear error, and no plaintext is written.
    @Test func anEncryptionKeyIsRefusedAndNothingIsWritten() throws {
        try withTemporaryDirectory { dir in
            var config = makeConfiguration(dir)
            config.encryptionKey = Data(repeating: 7, count: 64)
            do {
                _ = try Realm(configuration: config)
                Issue.record("a realm opened with an encryption key")
            } catch let error as Realm.Error {
                #expect(error.code == .encryptionNotSupported)
                #expect(error.message.contains(config.fileURL!.path) && error.message.contains("does not encrypt"), "\(error.message)")
            }
            #expect(!FileManager.default.fileExists(atPath: config.fileURL!.path))
            // The same key through RealmSwift's initialiser, and after a plain handle is open.
            let keyed = Realm.Configuration(fileURL: config.fileURL, encryptionKey: Data(count: 64))
            #expect(throws: Realm.Error.self) { try Realm(configuration: keyed) }
            let plain = makeConfiguration(dir)
            let realm = try Realm(configuration: plain)
            try realm.write { realm.add(Article(id: "a")) }
            #expect(throws: Realm.Error.self) { try Realm(configuration: keyed) }
            let copy = dir.appendingPathComponent("copy.realm")
            #expect(throws: Realm.Error.self) { try realm.writeCopy(toFile: copy, encryptionKey: Data(count: 64)) }
            #expect(!FileManager.default.fileExists(atPath: copy.path))
            #expect(throws: Realm.Error.self) { try schemaVersionAtURL(plain.fileURL!, encryptionKey: Data(count: 64)) }
        }
    }

    @Test func defaultConfigurationUsesDefaultRealmInTheCurrentDirectory() {
        let url = Realm.Configuration.defaultConfiguration.fileURL
        #expect(url?.lastPathComponent == "default.realm")
        // As in RealmSwift, a new configuration names a file, in the current directory.
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        #expect(Realm.Configuration().fileURL == cwd.appendingPathComponent("default.realm"))
        #expect(Realm.Configuration(inMemoryIdentifier: "m").fileURL == nil)
    }
}

/// Writes an LMDB file as some other program would: a named database of its own.
func makeForeignLMDBFile(at path: String) throws {
    let env = try Environment.open(path: path)
    let db = try env.createDatabase(named: "something-else")
    try env.write { txn in try txn.put(Array("value".utf8), forKey: Array("key".utf8), in: db) }
}
