import Foundation
import LMDBRealm

// The battery's workload: flat objects with indexes and a conserved sum, and a graph of teams
// and members with links, lists, sets, maps, backlinks and a cascading delete. Commit `n` is a
// deterministic function of `n` and of what the file holds, so a reopened file can be checked
// against what its commits must have left.

/// One of `accountCount` accounts; every commit moves money between two of them, so the sum
/// of balances is the same after every commit.
final class Account: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var balance = 0
    @Persisted(indexed: true) var owner = ""
    @Persisted(indexed: true) var tier = 0
}

/// One entry per commit, indexed by category; the entry of commit `n - 7` is deleted by commit
/// `n` when `n` is a multiple of 5.
final class Entry: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted(indexed: true) var category = ""
    @Persisted var text = ""
}

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

/// Left by every commit, as its last change.
final class CommitMark: Object {
    @Persisted(primaryKey: true) var id: Int
}

enum Workload {
    static let accountCount = 100
    static let initialBalance = 1_000
    static let objectTypes: [Object.Type] = [Account.self, Entry.self, Team.self, Member.self, TeamNote.self, CommitMark.self]

    static func configuration(_ path: String) -> Realm.Configuration {
        Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: objectTypes)
    }

    /// The number of the next commit: one past the newest mark.
    static func nextCommit(in realm: Realm) -> Int {
        (realm.objects(CommitMark.self).max(ofProperty: "id") as Int?).map { $0 + 1 } ?? 0
    }

    /// Commit `n`'s changes, inside a write of `realm`.
    static func apply(_ n: Int, in realm: Realm) {
        if n == 0 {
            for id in 0..<accountCount {
                let account = Account()
                account.id = id
                account.balance = initialBalance
                account.owner = "owner \(id % 10)"
                account.tier = id % 4
                realm.add(account)
            }
        }
        // Money moves between two accounts; owners and tiers change, so their indexes do.
        // After a failed change the write reads as if nothing more were there (the failure is
        // thrown by `write` when the block returns), so nothing here assumes an object exists.
        guard let from = realm.object(ofType: Account.self, forPrimaryKey: (n * 7) % accountCount),
            let to = realm.object(ofType: Account.self, forPrimaryKey: (n * 13 + 1) % accountCount)
        else { return }
        let amount = n % 50 + 1
        from.balance -= amount
        to.balance += amount
        from.owner = "owner \(n % 10)"
        to.tier = n % 4

        let entry = Entry()
        entry.id = n
        entry.category = "c\(n % 6)"
        entry.text = String(repeating: "x", count: n % 300)
        realm.add(entry)
        if n % 5 == 0, let old = realm.object(ofType: Entry.self, forPrimaryKey: n - 7) { realm.delete(old) }

        let team = Team()
        team.id = n
        team.name = "team \(n)"
        team.tags.insert(objectsIn: ["all", "t\(n % 3)"])
        for k in 0..<2 {
            let note = TeamNote()
            note.id = n * 10 + k
            team.notes.append(note)
        }
        realm.add(team)
        var previous: Member?
        for i in 0..<5 {
            let member = Member()
            member.id = n * 10 + i
            member.scores["i"] = i
            member.scores["n"] = n
            member.team = team
            member.mentor = previous ?? realm.object(ofType: Member.self, forPrimaryKey: (n - 1) * 10)
            team.members.append(member)
            previous = member
        }
        if n >= 3, let old = realm.object(ofType: Member.self, forPrimaryKey: (n - 3) * 10 + 2) {
            old.team = team
            team.members.insert(old, at: 1)
            if let older = realm.object(ofType: Team.self, forPrimaryKey: n - 3), !older.members.isEmpty { older.members.remove(at: 0) }
        }
        if n % 3 == 0, let doomed = realm.object(ofType: Team.self, forPrimaryKey: n - 2) { realm.delete(doomed) }
        if n % 4 == 1, let doomed = realm.object(ofType: Member.self, forPrimaryKey: (n - 1) * 10 + 1) { realm.delete(doomed) }

        let mark = CommitMark()
        mark.id = n
        realm.add(mark)
        // After a failure earlier in the write, `add` left the team unmanaged: it and its
        // members link to each other, a cycle that would keep them (and the managed mentor, and
        // so the realm and its file) alive. Breaking it is the caller's part.
        if team.realm == nil {
            team.members.removeAll()
            team.notes.removeAll()
        }
    }

    /// What is wrong with the file `realm` reads, given that every commit up to `acknowledged`
    /// returned: empty when nothing is.
    static func problems(in realm: Realm, acknowledged: Int) throws -> [String] {
        var problems: [String] = []
        let marks = Array(realm.objects(CommitMark.self).sorted(byKeyPath: "id").map(\.id))
        if marks != Array(0..<marks.count) { problems.append("commit marks have gaps: \(marks.prefix(20))…") }
        if marks.count < acknowledged + 1 {
            problems.append("acknowledged commit \(acknowledged) is missing: the newest mark is \(marks.last ?? -1)")
        }
        let newest = marks.count - 1
        guard newest >= 0 else { return problems }
        // Half a commit would break the conserved sum, or leave a mark without its entry or team.
        let total: Int = realm.objects(Account.self).sum(ofProperty: "balance")
        if total != accountCount * initialBalance { problems.append("the balances sum to \(total), not \(accountCount * initialBalance)") }
        if realm.object(ofType: Entry.self, forPrimaryKey: newest) == nil { problems.append("commit \(newest)'s entry is missing") }
        if realm.object(ofType: Member.self, forPrimaryKey: newest * 10 + 4) == nil { problems.append("commit \(newest)'s last member is missing") }
        let expectedEntries = (0...newest).filter { k in !(k + 7 <= newest && (k + 7) % 5 == 0) }.count
        if realm.objects(Entry.self).count != expectedEntries {
            problems.append("\(realm.objects(Entry.self).count) entries, not \(expectedEntries)")
        }
        for category in 0..<6 {
            let indexed = realm.objects(Entry.self).where { $0.category == "c\(category)" }.count
            let scanned = realm.objects(Entry.self).filter { $0.category == "c\(category)" }.count
            if indexed != scanned { problems.append("the category index finds \(indexed) entries of c\(category), a scan \(scanned)") }
        }
        let members = realm.objects(Member.self)
        let teams = realm.objects(Team.self)
        if realm.objects(TeamNote.self).count != 2 * teams.count { problems.append("notes outlived their team") }
        if !teams.allSatisfy({ Set($0.tags) == ["all", "t\($0.id % 3)"] && $0.notes.count == 2 }) {
            problems.append("a team's tags or notes are not whole")
        }
        if !members.allSatisfy({ $0.scores["i"] == $0.id % 10 && $0.scores["n"] == $0.id / 10 }) {
            problems.append("a member's scores are not whole")
        }
        if !teams.allSatisfy({ team in team.people.count == members.filter { $0.team?.id == team.id }.count }) {
            problems.append("a team's backlinks disagree with its members' links")
        }
        let report = try realm.verify()
        problems += report.findings.prefix(5).map { "verify: \($0)" }
        return problems
    }
}
