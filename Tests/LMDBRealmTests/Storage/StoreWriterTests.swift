import Foundation
@_spi(Testing) import LMDBKit
import LMDBRealmFormat
import LMDBRealmStorage
import TestSupport
import Testing

@testable import LMDBRealm

/// Every change a write makes to the file passes through its `StoreWriter`, which moves the
/// realm's generation on first: a record borrowed before any kind of change is not read
/// afterwards (reading it stops the process with the documented message), and an accessor
/// looks its record up again and reads the new value.
@Suite struct StoreWriterTests {
    /// The kinds of change a writer makes.
    enum Change: String, Codable, CaseIterable {
        case put, delete, empty, cursorPut, cursorInsert, cursorDelete, batch
    }

    /// In a write on a new realm holding articles "a" and "b": borrows the record of "a", makes
    /// `change` through the session's writer, then reads the borrowed record at the realm's
    /// generation (which stops the process unless the change left the generation alone).
    static func readBorrowedRecord(after change: Change) throws {
        let config = makeConfiguration(try makeTemporaryDirectory(), types: [Article.self])
        let realm = try Realm(configuration: config)
        try realm.write {
            realm.add(Article(id: "a", wordCount: 1))
            realm.add(Article(id: "b", wordCount: 2))
        }
        realm.beginWrite()
        let session = try #require(realm.session)
        let table = try #require(try realm.binding(for: Article.self, create: false)).table
        let key = try keyOfArticle("a")
        let record = try #require(try key.withUnsafeBytes { try session.view.record(of: table, key: $0) })
        let borrowed = BorrowedRecord(record, at: realm.generation)
        let value = Array(record)
        let dbi = table.database.dbi
        try key.withUnsafeBytes { key in
            try value.withUnsafeBytes { value in
                switch change {
                case .put: try session.writer.put(dbi, key: key, value: value)
                case .delete: try session.writer.delete(dbi, key: key)
                case .empty: try session.writer.empty(dbi)
                case .batch:
                    let cursor = try UnsafeCursor(transaction: session.view.transaction, dbi: dbi)
                    try session.writer.batch { batch in _ = try batch.insert(value, at: cursor, forKey: key, flags: []) }
                case .cursorPut, .cursorInsert, .cursorDelete:
                    let cursor = try UnsafeCursor(transaction: session.view.transaction, dbi: dbi)
                    _ = try #require(try cursor.seek(exactly: key))
                    switch change {
                    case .cursorPut: try session.writer.put(value, at: cursor, forKey: key, flags: .current)
                    case .cursorInsert: _ = try session.writer.insert(value, at: cursor, forKey: key, flags: [])
                    default: try session.writer.deleteCurrent(of: cursor)
                    }
                }
            }
        }
        FileHandle.standardError.write(Data("changed\n".utf8))
        let count = borrowed.read(at: realm.generation) { $0.count }
        FileHandle.standardError.write(Data("read a stale record of \(count) bytes\n".utf8))
    }

    /// The table key of article `id`: the encoded primary key.
    static func keyOfArticle(_ id: String) throws -> [UInt8] {
        var key: [UInt8] = []
        Array(id.utf8).withUnsafeBytes { KeyEncoding.append($0, type: .string, to: &key) }
        return key
    }

    static func expectStop(_ result: ExitTest.Result?) {
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("changed"), "the change itself failed: \(stderr)")
        #expect(stderr.contains("A record was read after the version it was borrowed from changed"), "\(stderr)")
        #expect(!stderr.contains("read a stale record"), "\(stderr)")
    }

    /// Each kind of change, in a process of its own: the read of the record borrowed before
    /// it stops.
    @Test(arguments: Change.allCases)
    func aRecordBorrowedBeforeAChangeIsNotRead(_ change: Change) async {
        Self.expectStop(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [change] in
            try StoreWriterTests.readBorrowedRecord(after: change)
        })
    }

    /// What a user does in a write, each a path to the file through the writer.
    enum Edit: String, CaseIterable {
        case add, update, setProperty, delete, deleteAll, appendToList, create
    }

    /// After each kind of edit, an accessor taken before reads what the file holds now, and
    /// the generation has moved on.
    @Test(arguments: Edit.allCases)
    func anAccessorTakenBeforeAnEditReadsTheNewValues(_ edit: Edit) throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Article.self, WriterTestShelf.self]))
            try realm.write {
                realm.add(Article(id: "a", wordCount: 1))
                realm.add(WriterTestShelf())
            }
            try realm.write {
                let a = try #require(realm.object(ofType: Article.self, forPrimaryKey: "a"))
                let shelf = try #require(realm.objects(WriterTestShelf.self).first)
                #expect(a.wordCount == 1)
                let before = realm.generation
                switch edit {
                case .add: realm.add(Article(id: "b", wordCount: 2))
                case .update: realm.add(Article(id: "a", wordCount: 7), update: .modified)
                case .setProperty: a.wordCount = 7
                case .delete: realm.delete(a)
                case .deleteAll: realm.delete(realm.objects(Article.self))
                case .appendToList: shelf.articles.append(a)
                case .create: realm.create(Article.self, value: ["id": "a", "wordCount": 7], update: .modified)
                }
                #expect(realm.generation != before, "\(edit) left the generation at \(before)")
                switch edit {
                case .update, .setProperty, .create: #expect(a.wordCount == 7)
                case .delete, .deleteAll: #expect(a.isInvalidated)
                case .add, .appendToList: #expect(a.wordCount == 1)
                }
            }
        }
    }
}

/// A list of articles, for the list edits above.
final class WriterTestShelf: Object {
    @Persisted var articles: List<Article>
}
