import Foundation
import LMDBRealm

/// Every property kind, required and optional.
final class AllTypes: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double: Double = 0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Persisted var objectId = ObjectId()
    @Persisted var decimal: Decimal = 0
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optInt8: Int8?
    @Persisted var optInt16: Int16?
    @Persisted var optInt32: Int32?
    @Persisted var optInt64: Int64?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optUUID: UUID?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optDecimal: Decimal?
}

final class Article: Object {
    @Persisted(primaryKey: true) var id: String
    @Persisted var url: String
    @Persisted var leadParagraph: String
    @Persisted var abstract: String?
    @Persisted(indexed: true) var section: String
    @Persisted var pubDate: Date
    @Persisted var wordCount: Int

    convenience init(id: String, section: String = "Sports", wordCount: Int = 100) {
        self.init()
        self.id = id
        self.url = "https://example.com/\(id)"
        self.leadParagraph = "Lead of \(id)"
        self.section = section
        self.pubDate = Date(timeIntervalSince1970: 1_435_708_800)
        self.wordCount = wordCount
    }
}

/// No primary key: objects get auto-assigned keys in insertion order.
final class LogEntry: Object {
    @Persisted var message = ""
    @Persisted var level = 0
}

final class IntKeyed: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
}

final class Int64Keyed: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var name = ""
}

final class UUIDKeyed: Object {
    @Persisted(primaryKey: true) var id: UUID
    @Persisted var name = ""
}

final class ObjectIdKeyed: Object {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted var name = ""
}

final class OptionalStringKeyed: Object {
    @Persisted(primaryKey: true) var id: String?
    @Persisted var name = ""
}

final class OptionalIntKeyed: Object {
    @Persisted(primaryKey: true) var id: Int?
    @Persisted var name = ""
}

/// Shared with the helper executable, which declares the same class.
final class Person: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
    @Persisted var age = 0
}

/// A subclass chain: properties of every level are stored.
class Animal: Object {
    @Persisted var name = ""
}

final class Cat: Animal {
    @Persisted var lives = 9
}

func makeConfiguration(_ directory: URL, _ name: String = "test.realm", types: [Object.Type]? = nil) -> Realm.Configuration {
    var config = Realm.Configuration(fileURL: directory.appendingPathComponent(name))
    config.objectTypes = types
    return config
}

/// A handle of `config` confined to a serial queue of its own: each call opens another handle
/// of the file, as each thread or queue of a program does. Use the handle on `queue`.
func openOnQueue(_ config: Realm.Configuration) throws -> (realm: Realm, queue: DispatchQueue) {
    let queue = DispatchQueue(label: "handle-\(UUID().uuidString)")
    let realm = try queue.sync { try Realm(configuration: config, queue: queue) }
    return (realm, queue)
}
