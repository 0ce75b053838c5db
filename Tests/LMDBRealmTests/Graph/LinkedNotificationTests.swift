import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

@Suite struct LinkedNotificationTests {
    @Test func aChangeToALinkedObjectIsAModificationOfTheObjectsLinkingToIt() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let ada = Writer("w1", "Ada")
            let bob = Writer("w2", "Bob")
            try realm.write {
                try realm.add(Story("s1", title: "one", byline: ada))
                try realm.add(Story("s2", title: "two", byline: bob))
                try realm.add(Story("s3", title: "three", byline: ada))
            }
            let stories = realm.objects(Story.self)
            var all: [Delta] = []
            var titles: [Delta] = []
            var names: [Delta] = []
            let t1 = stories.observe { all.append(Delta($0)) }
            let t2 = stories.observe(keyPaths: ["title"]) { titles.append(Delta($0)) }
            let t3 = stories.observe(keyPaths: ["byline.name"]) { names.append(Delta($0)) }
            defer { [t1, t2, t3].forEach { $0.invalidate() } }

            try realm.write { ada.name = "Ada L." }
            try realm.write { bob.age = 40 }
            #expect(all.map(\.modifications) == [[], [0, 2], [1]])
            #expect(titles.map(\.modifications) == [[]], "a title observer hears no author change")
            #expect(names.map(\.modifications) == [[], [0, 2]], "byline.name: the rename, not the age")
        }
    }

    @Test func anObjectObserverHearsItsLinkedObjectsChange() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            let ada = Writer("w1", "Ada")
            let story = Story("s1", title: "one", byline: ada)
            try realm.write { try realm.add(story) }
            var heard: [[String]] = []
            var ages: [[String]] = []
            let t1 = story.observe { change in
                if case .change(_, let properties) = change { heard.append(properties.map(\.name)) }
            }
            let t2 = story.observe(keyPaths: ["byline.age"]) { change in
                if case .change(_, let properties) = change { ages.append(properties.map(\.name)) }
            }
            defer { [t1, t2].forEach { $0.invalidate() } }
            try realm.write { ada.name = "Ada L." }
            try realm.write { story.title = "One" }
            #expect(heard == [["byline"], ["title"]])
            #expect(ages.isEmpty, "byline.age did not change")
        }
    }

    @Test func linksAreFollowedFourLevelsDeep() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: linkConfiguration(dir))
            // p0 → p1 → … → p5, each the friend of the one before.
            let peers = (0...5).map { i in
                let p = Peer()
                p.name = "p\(i)"
                return p
            }
            for i in 0..<5 { peers[i].friend = peers[i + 1] }
            try realm.write { try realm.add(peers[0]) }
            let all = realm.objects(Peer.self)
            let order = all.map(\.name)
            var deltas: [Delta] = []
            let token = all.observe { deltas.append(Delta($0)) }
            defer { token.invalidate() }
            try realm.write { peers[5].name = "last" }
            let modified = deltas.last!.modifications.map { order[$0] }
            #expect(Set(modified) == ["p1", "p2", "p3", "p4", "p5"], "p0 is five links away")
        }
    }

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
            try realm.write { for p in posts { try realm.add(p) } }
            var deltas: [Delta] = []
            let token = realm.objects(Post.self).observe(keyPaths: ["tags.weight"]) { deltas.append(Delta($0)) }
            defer { token.invalidate() }
            try realm.write { swift.weight = 9 }
            #expect(deltas.map(\.modifications) == [[], [0, 2]])
        }
    }
}
