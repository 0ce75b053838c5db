import Foundation
import LMDBRealm
@testable import NotesServerKit
import Testing

/// The LMDBRealm backend's queries, below HTTP.
@Suite struct RealmNotesBackendTests {
    /// "The newest notes of a folder" walks the `(folder, created)` index and stops at the
    /// limit, and lists what a plain sort would.
    @Test func newestOfAFolderWalksTheCompoundIndex() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("NotesServerTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let backend = try await RealmNotesBackend(fileURL: directory.appendingPathComponent("notes.realm"))
        try await backend.seed(notes: 500, folders: 5, batchSize: 100)

        let plan = try await backend.store.read { realm in
            RealmNotesBackend.folder("folder-2", in: realm).sorted(byKeyPath: "created", ascending: false).limit(10).explain()
        }
        #expect(plan.contains("compound index (Note.folder, Note.created)") && plan.contains("stop after 10"), "\(plan)")

        let newest = try await backend.newest(in: "folder-2", limit: 10)
        #expect(newest.map(\.title) == stride(from: 497, to: 447, by: -5).map { "Note \($0)" })
        #expect(try await backend.count(in: "folder-2") == 100)
    }
}
