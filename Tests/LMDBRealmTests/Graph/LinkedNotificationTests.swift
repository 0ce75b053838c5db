import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

@Suite struct LinkedNotificationTests {
    @Test func aChangeToAnObjectInAListModifiesItsOwners() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: listConfiguration(dir))
            let swift = Tag()
            swift.value = "swift"
            let posts = (1...3).map { id in
                let p = Post()
                p.id = id
                return p
            }
            posts[0].tags.append(swift)
            posts[2].tags.append(swift)
            try realm.write { for p in posts { realm.add(p) } }
            var deltas: [Delta] = []
            let token = realm.objects(Post.self).observe(keyPaths: ["tags.weight"]) { deltas.append(Delta($0)) }
            defer { token.invalidate() }
            try realm.write { swift.weight = 9 }
            #expect(deltas.map(\.modifications) == [[], [0, 2]])
        }
    }
}
