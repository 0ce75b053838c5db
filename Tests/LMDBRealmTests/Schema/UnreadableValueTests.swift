import Foundation
import LMDBRealm
import TestSupport
import Testing

enum StoredMood: Int, PersistableEnum {
    case calm = 1
    case angry = 2
}

final class Moody: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var mood: StoredMood
    @Persisted var maybe: StoredMood?
}

/// A stored value the app's types cannot hold (an enum raw value a newer version of the app
/// wrote): an optional property reads it as `nil`; a required one stops the process with a
/// message naming the file, the class, the property and the value.
@Suite struct UnreadableValueTests {
    /// Stores 7, which is no case of `StoredMood`, in both properties through the dynamic API.
    static func storeAnUnknownCase(in dir: URL) throws -> Realm {
        let realm = try Realm(configuration: makeConfiguration(dir, types: [Moody.self]))
        try realm.write {
            realm.add(Moody(value: ["id": 1, "mood": StoredMood.calm, "maybe": StoredMood.angry] as [String: Any]))
            let dynamic = try #require(realm.dynamicObject(ofType: "Moody", forPrimaryKey: 1))
            dynamic["mood"] = 7
            dynamic["maybe"] = 7
        }
        return realm
    }

    @Test func anOptionalEnumReadsAnUnknownCaseAsNil() throws {
        try withTemporaryDirectory { dir in
            let realm = try Self.storeAnUnknownCase(in: dir)
            let moody = try #require(realm.object(ofType: Moody.self, forPrimaryKey: 1))
            #expect(moody.maybe == nil)
        }
    }

    @Test func aRequiredEnumStopsNamingFileClassPropertyAndValue() async throws {
        _ = try await withTemporaryDirectory { dir in
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = dir.path as String] in
                let realm = try UnreadableValueTests.storeAnUnknownCase(in: URL(fileURLWithPath: path))
                let moody = realm.object(ofType: Moody.self, forPrimaryKey: 1)!
                FileHandle.standardError.write(Data("read \(moody.mood)\n".utf8))
            }
            let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(
                stderr.contains("The realm at '") && stderr.contains("' holds a value of 'Moody.mood' this app cannot read: the stored value 7 is not a case of StoredMood"),
                "\(stderr)")
            #expect(!stderr.contains("read "), "\(stderr)")
        }
    }
}
