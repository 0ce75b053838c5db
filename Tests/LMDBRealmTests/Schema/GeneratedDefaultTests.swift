import Foundation
import LMDBRealm
import TestSupport
import Testing

final class Ticket: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var token: UUID
    @Persisted var note = ""
}

@Suite struct GeneratedDefaultTests {
    /// RealmSwift's most common key: each new object gets `ObjectId.generate()`, and a `UUID`
    /// property `UUID()`, so objects added without setting them do not collide; a stored
    /// object reads back the values it was stored with.
    @Test func newObjectsGetGeneratedIdentifiersAndStoredOnesKeepTheirs() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Ticket.self]))
            let first = Ticket()
            let second = Ticket()
            #expect(first._id != second._id && first._id != ObjectId())
            #expect(first.token != second.token)
            try realm.write {
                realm.add(first)
                realm.add(second)
                realm.add(Ticket())
            }
            #expect(realm.objects(Ticket.self).count == 3)
            let id = first._id
            let token = first.token
            let read = try #require(realm.object(ofType: Ticket.self, forPrimaryKey: id))
            #expect(read._id == id && read.token == token)
            #expect(Set(realm.objects(Ticket.self).map(\._id)).count == 3)
            #expect(realm.objects(Ticket.self).where { $0.token == token }.count == 1)
        }
    }
}
