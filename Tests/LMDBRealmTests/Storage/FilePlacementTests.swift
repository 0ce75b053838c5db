import Foundation
import LMDBRealmFormat
import LMDBRealmStorage
import TestSupport
import Testing

/// A file put in place arrives whole or not at all, and nothing is left beside it: the one
/// path by which compaction, `writeCopy(toFile:)` and seed files reach their names.
@Suite struct FilePlacementTests {
    /// The names in `directory`, sorted.
    static func names(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    @Test func replacingPutsTheNewContentsAndLeavesNothingBeside() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("file")
            try Data("old".utf8).write(to: url)
            let placed = try FilePlacement.place(at: url, purpose: "the test file", mode: .replacing) { temporary in
                #expect(!FileManager.default.fileExists(atPath: temporary.path))
                #expect(temporary.deletingLastPathComponent().standardizedFileURL == dir.standardizedFileURL)
                try Data("new".utf8).write(to: temporary)
            }
            #expect(placed)
            #expect(try Data(contentsOf: url) == Data("new".utf8))
            #expect(try Self.names(dir) == ["file"])
        }
    }

    @Test func aWriteThatThrowsChangesNothing() throws {
        struct Failed: Error {}
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("file")
            try Data("old".utf8).write(to: url)
            for mode in [FilePlacement.Mode.replacing, .new, .firstWins] {
                #expect(throws: Failed.self) {
                    try FilePlacement.place(at: url, purpose: "the test file", mode: mode) { temporary in
                        try Data("partial".utf8).write(to: temporary)
                        try Data().write(to: URL(fileURLWithPath: temporary.path + "-lock"))
                        throw Failed()
                    }
                }
                #expect(try Data(contentsOf: url) == Data("old".utf8))
                #expect(try Self.names(dir) == ["file"])
            }
        }
    }

    @Test func newRefusesAFileThatIsThereAndKeepsIt() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("file")
            try Data("old".utf8).write(to: url)
            let error = #expect(throws: RealmError.self) {
                try FilePlacement.place(at: url, purpose: "the test file", mode: .new) { try Data("new".utf8).write(to: $0) }
            }
            #expect(error?.code == .fileAccess)
            #expect(error?.localizedDescription.contains("Cannot put the test file in place at '\(url.path)'") == true)
            #expect(try Data(contentsOf: url) == Data("old".utf8))
            #expect(try Self.names(dir) == ["file"])
        }
    }

    @Test func firstWinsKeepsTheFirstFileAndSaysSo() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("file")
            let first = try FilePlacement.place(at: url, purpose: "the test file", mode: .firstWins) { try Data("first".utf8).write(to: $0) }
            let second = try FilePlacement.place(at: url, purpose: "the test file", mode: .firstWins) { try Data("second".utf8).write(to: $0) }
            #expect(first)
            #expect(!second)
            #expect(try Data(contentsOf: url) == Data("first".utf8))
            #expect(try Self.names(dir) == ["file"])
        }
    }

    @Test func aMissingDirectoryIsAClearError() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("missing/file")
            let error = #expect(throws: (any Error).self) {
                try FilePlacement.place(at: url, purpose: "the test file", mode: .replacing) { try Data("new".utf8).write(to: $0) }
            }
            #expect(error != nil)
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }
}
