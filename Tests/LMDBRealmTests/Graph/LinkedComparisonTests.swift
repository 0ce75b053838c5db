import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

/// Changes to linked objects reach observers: found through the change log of this process's
/// commits, and, when the log is unknown (another process's commit), by comparing the linked
/// objects in both versions, with the same result. Each test runs with this process's logs
/// (`true`) and without (`false`, the way another process's commit is seen); one crosses a real
/// process boundary.
@Suite struct LinkedComparisonTests {
    private func configuration(_ config: Realm.Configuration, logs: Bool) -> Realm.Configuration {
        var config = config
        config.recordsChangeLogs = logs
        return config
    }

    @Test(arguments: [true, false])
    func resultsHearLinkedObjectsChange(logs: Bool) throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: configuration(linkConfiguration(dir), logs: logs))
            let ada = Writer("w1", "Ada")
            let bob = Writer("w2", "Bob")
            try realm.write {
                realm.add(Story("s1", title: "one", byline: ada))
                realm.add(Story("s2", title: "two", byline: bob))
                realm.add(Story("s3", title: "three", byline: ada))
            }
            let stories = realm.objects(Story.self).sorted(byKeyPath: "id")
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

    @Test(arguments: [true, false])
    func anObjectHearsItsLinkedObjectChange(logs: Bool) throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: configuration(linkConfiguration(dir), logs: logs))
            let ada = Writer("w1", "Ada")
            let story = Story("s1", title: "one", byline: ada)
            try realm.write { realm.add(story) }
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

    @Test(arguments: [true, false])
    func linksAreComparedFourLevelsDeep(logs: Bool) throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: configuration(linkConfiguration(dir), logs: logs))
            let peers = (0...5).map { i in
                let p = Peer()
                p.name = "p\(i)"
                return p
            }
            for i in 0..<5 { peers[i].friend = peers[i + 1] }
            try realm.write { realm.add(peers[0]) }
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

    /// A list of objects reports the positions (in the old list) of the objects that changed,
    /// as well as its own insertions and deletions.
    @Test(arguments: [true, false])
    func aListOfObjectsHearsItsObjectsChange(logs: Bool) throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: configuration(listConfiguration(dir), logs: logs))
            let post = Post()
            post.id = 1
            for value in ["a", "b", "c"] {
                let tag = Tag()
                tag.value = value
                post.tags.append(tag)
            }
            try realm.write { realm.add(post) }
            var deltas: [Delta] = []
            let token = post.tags.observe { deltas.append(Delta($0)) }
            defer { token.invalidate() }
            let b = post.tags[1]
            let c = post.tags[2]
            try realm.write { b.weight = 5 }
            try realm.write {
                post.tags.remove(at: 0)  // c moves from 2 to 1
                c.weight = 7
            }
            let other = Post()
            other.id = 2
            try realm.write { realm.add(other) }  // no object of the list changed
            #expect(deltas.count == 3)
            #expect(deltas.dropFirst().map(\.modifications) == [[1], [2]])
            #expect(deltas.last?.deletions == [0])
        }
    }

    /// Another process renames a team: the members linking to it, the team's list of members
    /// (whose objects link back to it) and a member's own observer hear it after a refresh.
    @Test func anotherProcessChangingALinkedObjectIsHeard() throws {
        let helper = builtExecutable(named: "RealmTestHelper")
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("teams.realm")
            let realm = try Realm(
                configuration: Realm.Configuration(fileURL: url, objectTypes: [Team.self, Member.self, CommitMark.self, TeamNote.self]))
            let team = Team()
            team.id = 1
            team.name = "one"
            for id in 1...3 {
                let member = Member()
                member.id = id
                member.team = team
                team.members.append(member)
            }
            let loner = Member()
            loner.id = 9
            try realm.write {
                realm.add(team)
                realm.add(loner)
            }
            var members: [Delta] = []
            var names: [Delta] = []
            var heard: [[String]] = []
            let members0 = realm.objects(Member.self).sorted(byKeyPath: "id")
            let t1 = members0.observe { members.append(Delta($0)) }
            let t2 = members0.observe(keyPaths: ["team.name"]) { names.append(Delta($0)) }
            let t3 = realm.object(ofType: Member.self, forPrimaryKey: 2)!.observe { change in
                if case .change(_, let properties) = change { heard.append(properties.map(\.name)) }
            }
            defer { [t1, t2, t3].forEach { $0.invalidate() } }
            let renamed = try run(helper, ["rename-team", url.path, "1", "uno"])
            #expect(renamed.status == 0, "\(renamed.output)")
            realm.refresh()
            #expect(members.map(\.modifications) == [[], [0, 1, 2]], "the loner (3) links to no team")
            #expect(names.map(\.modifications) == [[], [0, 1, 2]])
            #expect(heard == [["team"]])
            #expect(realm.object(ofType: Team.self, forPrimaryKey: 1)?.name == "uno")
        }
    }
}
