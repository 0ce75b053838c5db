import Foundation
@_spi(Testing) import LMDBRealm

// The soak's workload: many writers at once on one file — actors in this process and a second
// process — each moving money between the workload's accounts (their sum is conserved) and
// growing, rewiring and pruning a graph of its own groups and nodes, whose links may point at
// any writer's nodes. Ids of writer `w`'s commit `n` are `w << 32 | n` (and four per group below
// that for its nodes and notes), so writers never clash on a primary key.

/// A group of nodes: its `members` list holds exactly the nodes whose `group` link names it.
final class SoakGroup: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var writer = 0
    @Persisted var members: List<SoakNode>
    @Persisted(deleteRule: .cascade) var notes: List<SoakNote>
    @Persisted(originProperty: "group") var linked: LinkingObjects<SoakNode>
}

final class SoakNode: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var group: SoakGroup?
    /// Any writer's node, or none once that node is deleted.
    @Persisted var peer: SoakNode?
}

/// Notes a group owns: deleted with it.
final class SoakNote: Object {
    @Persisted(primaryKey: true) var id: Int
}

/// The number of commits writer `id` made: each of its commits adds one.
final class SoakWriter: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var commits = 0
}

enum SoakWorkload {
    static let objectTypes: [Object.Type] = [Account.self, SoakGroup.self, SoakNode.self, SoakNote.self, SoakWriter.self]
    /// How many of its newest groups a writer keeps: commit `n` deletes group `n - keptGroups`.
    static let keptGroups = 6
    static let nodesPerGroup = 3

    static func configuration(_ path: String) -> Realm.Configuration {
        Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: objectTypes)
    }

    /// The accounts, with their initial balances, and one counter per writer.
    static func prepare(_ realm: Realm, writers: Int) throws {
        try realm.write {
            for id in 0..<Workload.accountCount {
                let account = Account()
                account.id = id
                account.balance = Workload.initialBalance
                account.owner = "owner \(id % 10)"
                account.tier = id % 4
                realm.add(account)
            }
            for id in 0..<writers {
                let writer = SoakWriter()
                writer.id = id
                realm.add(writer)
            }
        }
    }

    static func groupID(writer: Int, commit n: Int) -> Int { writer << 32 | n }

    /// Writer `writer`'s commit `n`, inside a write of `realm`; `seed` varies the transfer and
    /// the peer chosen.
    static func apply(writer: Int, commit n: Int, seed: UInt64, in realm: Realm) {
        var random = SplitMix(seed: seed ^ UInt64(groupID(writer: writer, commit: n)))
        let accounts = UInt64(Workload.accountCount)
        let from = realm.object(ofType: Account.self, forPrimaryKey: Int(random.next(below: accounts)))!
        let to = realm.object(ofType: Account.self, forPrimaryKey: Int(random.next(below: accounts)))!
        let amount = Int(random.next(below: 50)) + 1
        from.balance -= amount
        to.balance += amount
        to.tier = n % 4

        let id = groupID(writer: writer, commit: n)
        let group = SoakGroup()
        group.id = id
        group.writer = writer
        for k in 0..<2 {
            let note = SoakNote()
            note.id = id * 4 + k
            group.notes.append(note)
        }
        // The first node links to a node of any writer, the others to the node before them.
        let existing = realm.objects(SoakNode.self)
        var peer: SoakNode? = existing.isEmpty ? nil : existing[Int(random.next(below: UInt64(existing.count)))]
        for i in 0..<nodesPerGroup {
            let node = SoakNode()
            node.id = id * 4 + i
            node.group = group
            node.peer = peer
            group.members.append(node)
            peer = node
        }
        realm.add(group)
        // A node of the group before last moves to the new group: its link and both lists change.
        if n >= 2, let moved = realm.object(ofType: SoakNode.self, forPrimaryKey: groupID(writer: writer, commit: n - 2) * 4 + 1),
            let old = moved.group, let place = old.members.index(of: moved)
        {
            old.members.remove(at: place)
            moved.group = group
            group.members.append(moved)
        }
        // The oldest group goes with its nodes (links to them become nil) and its notes (cascade).
        if n >= keptGroups, let doomed = realm.object(ofType: SoakGroup.self, forPrimaryKey: groupID(writer: writer, commit: n - keptGroups)) {
            realm.delete(Array(doomed.members))
            realm.delete(doomed)
        }
        realm.object(ofType: SoakWriter.self, forPrimaryKey: writer)!.commits += 1
    }

    /// The commits of every writer the version `realm` reads holds.
    static func commits(in realm: Realm) -> Int {
        realm.objects(SoakWriter.self).sum(ofProperty: "commits")
    }

    /// What is wrong with the version `realm` reads: empty when nothing is. Checks the
    /// conserved sum, that every link and list element names a live object, that each group's
    /// list and its backlinks hold the same nodes, and that notes went with their groups.
    static func problems(in realm: Realm) -> [String] {
        var problems: [String] = []
        let total: Int = realm.objects(Account.self).sum(ofProperty: "balance")
        let expected = Workload.accountCount * Workload.initialBalance
        if total != expected { problems.append("the balances sum to \(total), not \(expected)") }

        let groups = realm.objects(SoakGroup.self)
        let nodes = realm.objects(SoakNode.self)
        var groupIDs = Set<Int>()
        var listedIn: [Int: Int] = [:]  // node id -> the group whose list holds it
        for group in groups {
            groupIDs.insert(group.id)
            if group.notes.count != 2 { problems.append("group \(group.id) has \(group.notes.count) notes, not 2") }
            for member in group.members {
                if member.isInvalidated {
                    problems.append("group \(group.id) lists a deleted node")
                    continue
                }
                if let other = listedIn.updateValue(group.id, forKey: member.id) {
                    problems.append("node \(member.id) is listed by groups \(other) and \(group.id)")
                }
            }
        }
        var nodeIDs = Set<Int>()
        for node in nodes { nodeIDs.insert(node.id) }
        var linking: [Int: Int] = [:]  // group id -> how many nodes link to it
        for node in nodes {
            if let group = node.group {
                if !groupIDs.contains(group.id) { problems.append("node \(node.id) links to group \(group.id), which is gone") }
                linking[group.id, default: 0] += 1
                if listedIn[node.id] != group.id {
                    problems.append("node \(node.id) links to group \(group.id) but is listed by \(listedIn[node.id].map(String.init) ?? "none")")
                }
            } else {
                problems.append("node \(node.id) belongs to no group")
            }
            if let peer = node.peer, !nodeIDs.contains(peer.id) { problems.append("node \(node.id) links to node \(peer.id), which is gone") }
        }
        for group in groups {
            let links = linking[group.id] ?? 0
            if group.linked.count != links { problems.append("group \(group.id) has \(group.linked.count) backlinks but \(links) nodes link to it") }
            if group.members.count != links { problems.append("group \(group.id) lists \(group.members.count) nodes but \(links) link to it") }
        }
        let notes = realm.objects(SoakNote.self).count
        if notes != 2 * groups.count { problems.append("\(notes) notes for \(groups.count) groups: notes outlived their group") }
        return problems
    }
}

// MARK: - Process figures

/// Figures of this process and of the file, from /proc and the realm.
struct SoakSample {
    /// Resident memory in bytes (VmRSS): all of it, its anonymous and file-backed parts, and the
    /// pages of the realm file's memory map, which follow the file's size rather than any use of
    /// memory.
    var rss = 0
    var rssAnonymous = 0
    var rssFile = 0
    var rssOfRealmMap = 0
    var fileDescriptors = 0
    var readerSlots = 0
    /// In a window of samples, the most reader slots in use (`readerSlots` is the fewest).
    var readerSlotsPeak = 0
    var fileSize = 0

    /// Resident memory without the pages of the realm file's map.
    var rssWithoutRealmMap: Int { rss - rssOfRealmMap }

    static func take(_ realm: Realm, path: String) throws -> SoakSample {
        var sample = SoakSample()
        let status = try procFile("status")
        for line in status.split(separator: "\n") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
            switch fields[0] {
            case "VmRSS:": sample.rss = kilobytes * 1024
            case "RssAnon:": sample.rssAnonymous = kilobytes * 1024
            case "RssFile:": sample.rssFile = kilobytes * 1024
            default: break
            }
        }
        guard sample.rss > 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: "/proc/self/status"]) }
        // A mapping's header line ends with its file's path; its "Rss:" line follows.
        let maps = try procFile("smaps")
        var inRealmMap = false
        for line in maps.split(separator: "\n") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard let first = fields.first else { continue }
            if first.contains("-") && first.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                inRealmMap = fields.count >= 6 && fields[5...].joined(separator: " ") == path
            } else if inRealmMap && first == "Rss:", fields.count >= 2, let kilobytes = Int(fields[1]) {
                sample.rssOfRealmMap += kilobytes * 1024
            }
        }
        sample.fileDescriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        sample.readerSlots = realm.readerSlotsInUse
        sample.readerSlotsPeak = sample.readerSlots
        sample.fileSize = try realm.statistics.fileSize
        return sample
    }

    /// The text of /proc/self/`name`, read to its end (`String(contentsOfFile:)` stops at the
    /// first 4 KB of a file whose size stat gives as 0, as /proc's are).
    private static func procFile(_ name: String) throws -> String {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/" + name))
        defer { try? handle.close() }
        return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    }

    /// The figures of a window of samples: the median of the memory figures (one sample may
    /// catch a burst of allocations), the fewest descriptors in use, and the fewest and the most
    /// reader slots in use (a sample may catch transient reads; a leaked slot is in every one).
    static func window(_ samples: ArraySlice<SoakSample>) -> SoakSample {
        guard let last = samples.last else { return SoakSample() }
        func median(_ figure: (SoakSample) -> Int) -> Int { samples.map(figure).sorted()[samples.count / 2] }
        var window = last
        window.rss = median(\.rss)
        window.rssAnonymous = median(\.rssAnonymous)
        window.rssFile = median(\.rssFile)
        window.rssOfRealmMap = median(\.rssOfRealmMap)
        window.fileDescriptors = samples.map(\.fileDescriptors).min()!
        window.readerSlots = samples.map(\.readerSlots).min()!
        window.readerSlotsPeak = samples.map(\.readerSlots).max()!
        return window
    }

    var memory: String {
        String(
            format: "%.1f MB (anonymous %.1f, file-backed %.1f of which the realm's map %.1f; file %.1f MB)", Double(rss) / 1e6,
            Double(rssAnonymous) / 1e6, Double(rssFile) / 1e6, Double(rssOfRealmMap) / 1e6, Double(fileSize) / 1e6)
    }
}
