public import Foundation
public import LMDBRealm

/// A note as LMDBRealm stores it: one per `POST /notes`, listed newest first by folder.
///
/// `folder` and `created` are indexed each, and together: "the newest fifty notes of a folder"
/// walks the compound index from the folder's newest note and stops after fifty, however many
/// notes the folder holds; the same plan as SQLite's over its index on `(folder, created)`.
public final class Note: Object {
    /// Generated when the note is made (an `ObjectId`'s time and counter: unique in the file).
    @Persisted(primaryKey: true) public var id: ObjectId
    @Persisted(indexed: true) public var folder: String
    @Persisted(indexed: true) public var created: Date
    @Persisted public var title: String
    @Persisted public var body: String

    override public class func compoundIndexes() -> [[String]] { [["folder", "created"]] }
}

/// A note as the service sends it: a value any task may hold, built inside the `read` or
/// `write` block that reads the stored note.
public struct NoteDTO: Codable, Sendable, Hashable {
    public var id: String
    public var folder: String
    public var created: Date
    public var title: String
    public var body: String

    public init(id: String, folder: String, created: Date, title: String, body: String) {
        self.id = id
        self.folder = folder
        self.created = created
        self.title = title
        self.body = body
    }

    /// The values of a stored note. Call where `note`'s realm may be read (inside the block).
    public init(_ note: Note) {
        self.init(id: note.id.stringValue, folder: note.folder, created: note.created, title: note.title, body: note.body)
    }
}

/// The body of `POST /notes`.
public struct NewNote: Codable, Sendable, Hashable {
    public var folder: String
    public var title: String
    public var body: String

    public init(folder: String, title: String, body: String) {
        self.folder = folder
        self.title = title
        self.body = body
    }
}
