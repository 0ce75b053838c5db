import Foundation
import LMDBRealm
import TestSupport
import Testing

/// Who may open a realm's file: what LMDBRealm creates is private to its owner, another user is
/// refused with `filePermissionDenied`, and a read-only realm reads a file it may not write in a
/// directory it may not write. Root ignores permission bits, so as root the opens that must be
/// refused or restricted run in a helper process that becomes user `nobody` first.
@Suite struct PermissionTests {
    let helper = builtExecutable(named: "RealmTestHelper")
    static let isRoot = geteuid() == 0

    /// (The data file's mode is checked by `OpeningTests.createdFileIsPrivateToItsOwner`.)
    @Test func theLockFileIsPrivateToItsOwner() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir)
            _ = try Realm(configuration: config)
            let lock = config.fileURL!.path + "-lock"
            let mode = try FileManager.default.attributesOfItem(atPath: lock)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
        }
    }

    @Test(.enabled(if: isRoot, "needs root, to leave a file to another user and to become that user"))
    func anotherUsersFileIsRefused() throws {
        try withTemporaryDirectory { dir in
            try setMode(0o755, dir)
            // Root's file, mode 0600 as LMDBRealm creates it, in a directory anyone may enter.
            let url = dir.appendingPathComponent("private.realm")
            #expect(try run(helper, ["write", url.path, "0", "3"]).status == 0)
            for mode in [[], ["read-only"]] {
                let opened = try run(helper, ["open-as-nobody", url.path] + mode)
                #expect(opened.output.hasPrefix("error filePermissionDenied: "), "\(mode): \(opened.output)")
                #expect(opened.output.contains(url.path) && opened.output.contains("may not read"), "\(opened.output)")
            }
            // A readable file in a directory the other user may not enter.
            let closed = dir.appendingPathComponent("closed")
            try FileManager.default.createDirectory(at: closed, withIntermediateDirectories: false)
            let inside = closed.appendingPathComponent("inside.realm")
            #expect(try run(helper, ["write", inside.path, "0", "3"]).status == 0)
            try setMode(0o644, inside)
            try setMode(0o700, closed)
            let refused = try run(helper, ["open-as-nobody", inside.path, "read-only"])
            #expect(refused.output.hasPrefix("error filePermissionDenied: "), "\(refused.output)")
        }
    }

    @Test(.enabled(if: !isRoot, "as root permission bits do not apply; anotherUsersFileIsRefused covers this as user nobody"))
    func aFileThisUserMayNotReadIsRefused() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [Person.self])
            _ = try Realm(configuration: config)
            try setMode(0o000, config.fileURL!)
            defer { try? setMode(0o600, config.fileURL!) }
            for readOnly in [false, true] {
                var opening = config
                opening.readOnly = readOnly
                #expect {
                    _ = try Realm(configuration: opening)
                } throws: { error in
                    (error as? Realm.Error)?.code == .filePermissionDenied && "\(error)".contains(config.fileURL!.path)
                }
            }
        }
    }

    /// A file shipped in a read-only directory, with no lock file beside it: a read-only realm
    /// reads it, although LMDB cannot create the lock file there.
    @Test func aReadOnlyRealmReadsAFileInADirectoryItMayNotWrite() throws {
        try withTemporaryDirectory { dir in
            try setMode(0o755, dir)
            let shelf = dir.appendingPathComponent("shelf")
            try FileManager.default.createDirectory(at: shelf, withIntermediateDirectories: false)
            let url = shelf.appendingPathComponent("shipped.realm")
            #expect(try run(helper, ["write", url.path, "0", "3"]).status == 0)
            try FileManager.default.removeItem(atPath: url.path + "-lock")
            try setMode(0o444, url)
            try setMode(0o555, shelf)
            defer { try? setMode(0o755, shelf) }
            if Self.isRoot {
                let opened = try run(helper, ["open-as-nobody", url.path, "read-only"])
                #expect(opened.output == "opened count=3\n", "\(opened.output)")
                #expect(!FileManager.default.fileExists(atPath: url.path + "-lock"))
                // A writable open there is refused, naming the lock file it cannot create.
                let writable = try run(helper, ["open-as-nobody", url.path])
                #expect(writable.output.hasPrefix("error filePermissionDenied: "), "\(writable.output)")
            } else {
                var config = Realm.Configuration(fileURL: url, objectTypes: [Person.self])
                config.readOnly = true
                let realm = try Realm(configuration: config)
                #expect(realm.objects(Person.self).count == 3)
            }
        }
    }

    /// A lock file the reader may not write means another user's processes may be writing the
    /// file: a read-only realm cannot do without it then, and says why.
    @Test(.enabled(if: isRoot, "needs root, to leave a lock file to another user and to become that user"))
    func aReadOnlyRealmNeedsALockFileThatIsThere() throws {
        try withTemporaryDirectory { dir in
            try setMode(0o755, dir)
            let url = dir.appendingPathComponent("shared.realm")
            #expect(try run(helper, ["write", url.path, "0", "3"]).status == 0)
            try setMode(0o644, url)
            let opened = try run(helper, ["open-as-nobody", url.path, "read-only"])
            #expect(opened.output.hasPrefix("error filePermissionDenied: "), "\(opened.output)")
            #expect(opened.output.contains("lock file '\(url.path)-lock'"), "\(opened.output)")
        }
    }

    private func setMode(_ mode: Int, _ url: URL) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
    }
}
