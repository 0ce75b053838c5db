import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

// The classes of RealmTestHelper's graph workload.
final class Team: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name = ""
    @Persisted var members: List<Member>
    @Persisted(deleteRule: .cascade) var notes: List<TeamNote>
    @Persisted var tags: MutableSet<String>
    @Persisted(originProperty: "team") var people: LinkingObjects<Member>

    /// Kept through every kill too: each team's entry holds a copy of it.
    override class func coveringIndexes() -> [[String]] { [["name", "id"]] }
}

final class Member: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var team: Team?
    @Persisted var mentor: Member?
    @Persisted var scores: Map<String, Int>
}

/// Notes a team owns: deleted with it.
final class TeamNote: Object {
    @Persisted(primaryKey: true) var id: Int
}

final class CommitMark: Object {
    @Persisted(primaryKey: true) var id: Int
}

/// A process killed at any instant of a graph write leaves every acknowledged commit, nothing
/// half-applied, and links and lists consistent with their indexes (no link or list element
/// naming a deleted object); a cascading delete, sets, maps and backlinks are whole too.
@Suite struct LinkCrashTests {
    let helper = builtExecutable(named: "RealmTestHelper")

    @Test func killedGraphWritesLeaveLinksAndTheirIndexesConsistent() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("graph.realm").path
            let config = Realm.Configuration(
                fileURL: URL(fileURLWithPath: path), objectTypes: [Team.self, Member.self, CommitMark.self, TeamNote.self])
            var acknowledged = -1
            for trial in 0..<6 {
                let process = Process()
                process.executableURL = helper
                process.arguments = ["graph", path]
                let pipe = Pipe()
                process.standardOutput = pipe
                try process.run()
                // Killed a few commits after the last trial's, at whatever point it then is.
                let target = acknowledged + 2 + trial * 3
                var output = ""
                var last = acknowledged
                func readAcks(_ data: Data) {
                    output += String(decoding: data, as: UTF8.self)
                    for line in output.split(separator: "\n") where line.hasPrefix("ack ") {
                        last = max(last, Int(line.dropFirst(4)) ?? last)
                    }
                }
                while last < target {
                    let chunk = pipe.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    readAcks(chunk)
                }
                kill(process.processIdentifier, SIGKILL)
                readAcks(pipe.fileHandleForReading.readDataToEndOfFile())
                process.waitUntilExit()
                #expect(process.terminationReason == .uncaughtSignal, "the helper ended early: \(output)")
                #expect(last >= target, "trial \(trial): \(output)")
                acknowledged = last

                let realm = try Realm(configuration: config)
                let marks = realm.objects(CommitMark.self).map(\.id)
                // Every acknowledged commit is there, and commits are whole: marks have no gaps,
                // and each mark's team and members came with it.
                #expect(marks.count >= acknowledged + 1 && marks == Array(0..<marks.count), "trial \(trial)")
                let newest = try #require(marks.last)
                #expect(realm.object(ofType: Member.self, forPrimaryKey: newest * 10 + 4) != nil)
                #expect(realm.indexProblems() == [], "trial \(trial)")
                // A link set in the file leads to a stored object: the index's count of set
                // links equals the links that read as an object.
                let members = realm.objects(Member.self)
                #expect(members.filter("team != nil").count == members.filter { $0.team != nil }.count)
                #expect(members.filter("mentor != nil").count == members.filter { $0.mentor != nil }.count)
                #expect(members.filter { $0.team?.id ?? -1 >= 0 }.allSatisfy { $0.team!.name == "team \($0.team!.id)" })
                // Every list element is a stored member (a deleted one left no place behind).
                let teams = realm.objects(Team.self)
                #expect(teams.allSatisfy { team in team.members.allSatisfy { !$0.isInvalidated } })
                #expect(teams.filter { $0.id == newest }.first?.members.count == (newest >= 3 && realm.object(ofType: Member.self, forPrimaryKey: (newest - 3) * 10 + 2) != nil ? 6 : 5))
                // A deleted team took its notes with it, in the same commit; sets, maps and
                // backlinks are whole.
                #expect(realm.objects(TeamNote.self).count == 2 * teams.count, "trial \(trial)")
                #expect(teams.allSatisfy { Set($0.tags) == ["all", "t\($0.id % 3)"] && $0.notes.count == 2 })
                #expect(members.allSatisfy { $0.scores["i"] == $0.id % 10 && $0.scores["n"] == $0.id / 10 })
                #expect(teams.allSatisfy { team in team.people.count == members.filter { $0.team?.id == team.id }.count })
            }
        }
    }
}
