// The object layer's hot paths at 100,000 objects: bulk insert in one write, a full scan
// reading every property, and random primary-key lookups; the raw LMDBKit floor (the same
// bytes without the object layer) runs alongside in the same process.
//
//     swift run -c release LMDBRealmBench [--count N] [--rounds R]
import Foundation
import LMDBKit
import LMDBRealm

final class Article: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var url: String
    @Persisted var leadParagraph: String
    @Persisted(indexed: true) var section: String
    @Persisted(indexed: true) var pubDate: Date
    @Persisted var wordCount: Int
}

/// The same model without secondary indexes, for the queries an index should speed up.
final class PlainArticle: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var url: String
    @Persisted var leadParagraph: String
    @Persisted var section: String
    @Persisted var pubDate: Date
    @Persisted var wordCount: Int
}

var count = 100_000
var rounds = 5
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--count": count = Int(arguments.next() ?? "") ?? count
    case "--rounds": rounds = Int(arguments.next() ?? "") ?? rounds
    default:
        FileHandle.standardError.write(Data("usage: LMDBRealmBench [--count N] [--rounds R]\n".utf8))
        exit(2)
    }
}

// MARK: - Deterministic data

struct Generator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state >> 33
    }
}

let sections = ["Sports", "World", "U.S.", "Business", "Arts", "Opinion", "Science", "Health", "Style", "Travel"]
let words = ["the", "market", "season", "players", "government", "city", "report", "new", "officials", "year",
             "said", "team", "after", "court", "music", "election", "game", "study", "museum", "coach"]

struct Row {
    var id: Int64
    var url: String
    var lead: String
    var section: String
    var pubDate: Date
    var wordCount: Int
}

func makeRows(_ n: Int) -> [Row] {
    var g = Generator(state: 42)
    return (1...n).map { i in
        var lead = ""
        while lead.utf8.count < 180 { lead += words[Int(g.next() % UInt64(words.count))] + " " }
        return Row(
            id: Int64(i),
            url: "https://www.nytimes.com/2015/07/0\(i % 7 + 1)/sports/article-\(String(format: "%010d", i))-basketball.html",
            lead: lead,
            section: sections[Int(g.next() % 10)],
            pubDate: Date(timeIntervalSince1970: 1_435_708_800 + Double(g.next() % 604_800)),
            wordCount: 100 + Int(g.next() % 1901))
    }
}

let rows = makeRows(count)
var g = Generator(state: 7)
let lookups = (0..<100_000).map { _ in Int64(1 + g.next() % UInt64(count)) }

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
func rate(_ times: [Double], _ n: Int) -> Double { Double(n) / median(times) }

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-bench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

// MARK: - LMDBRealm

var realmTimes: [String: [Double]] = [:]
var kitTimes: [String: [Double]] = [:]
var checksum = 0

@MainActor func realmRound(_ round: Int) throws {
    let config = Realm.Configuration(fileURL: directory.appendingPathComponent("realm-\(round).realm"), objectTypes: [Article.self, PlainArticle.self])
    defer { _ = try? Realm.deleteFiles(for: config) }
    do {
        let realm = try Realm(configuration: config)
        realmTimes["insert", default: []].append(try seconds {
            try realm.write {
                for row in rows {
                    let a = Article()
                    a.id = row.id
                    a.url = row.url
                    a.leadParagraph = row.lead
                    a.section = row.section
                    a.pubDate = row.pubDate
                    a.wordCount = row.wordCount
                    try realm.add(a)
                }
            }
        })
        if ProcessInfo.processInfo.environment["BENCH_PROFILE"] == "insert" { return }
        var sum = 0
        realmTimes["scan", default: []].append(seconds {
            for a in realm.objects(Article.self) {
                sum &+= a.wordCount &+ a.url.utf8.count &+ a.leadParagraph.utf8.count
            }
        })
        var found = 0
        realmTimes["get", default: []].append(seconds {
            for id in lookups {
                if let a = realm.object(ofType: Article.self, forPrimaryKey: id) { found &+= a.wordCount }
            }
        })
        checksum &+= sum &+ found

        // Queries, against the same data without indexes.
        realmTimes["insert_plain", default: []].append(try seconds { try realm.write {
            for row in rows {
                let a = PlainArticle()
                a.id = row.id
                a.url = row.url
                a.leadParagraph = row.lead
                a.section = row.section
                a.pubDate = row.pubDate
                a.wordCount = row.wordCount
                try realm.add(a)
            }
        } })
        let articles = realm.objects(Article.self)
        let plain = realm.objects(PlainArticle.self)
        var counted = 0
        let repeats = 20
        realmTimes["count_indexed", default: []].append(seconds {
            for _ in 0..<repeats { counted &+= articles.where { $0.section == "Sports" }.count }
        } / Double(repeats))
        realmTimes["count_unindexed", default: []].append(seconds {
            counted &+= plain.where { $0.section == "Sports" }.count
        })
        realmTimes["count_filter", default: []].append(seconds {
            counted &+= plain.where { $0.wordCount > 1800 }.count
        })
        realmTimes["top100_indexed", default: []].append(seconds {
            for _ in 0..<repeats { counted &+= Int(articles.sorted(byKeyPath: "pubDate", ascending: false).limit(100).last!.id) }
        } / Double(repeats))
        realmTimes["top100_sorted", default: []].append(seconds {
            counted &+= Int(plain.sorted(byKeyPath: "pubDate", ascending: false).limit(100).last!.id)
        })
        checksum &+= counted
    }
}

// MARK: - LMDBKit floor: the same records, written and read without objects

func kitRecord(_ row: Row, into out: inout [UInt8]) {
    out.removeAll(keepingCapacity: true)
    func append<T>(_ v: T) { withUnsafeBytes(of: v) { out.append(contentsOf: $0) } }
    append(row.id.littleEndian)
    append(UInt32(row.url.utf8.count).littleEndian)
    out.append(contentsOf: row.url.utf8)
    append(UInt32(row.lead.utf8.count).littleEndian)
    out.append(contentsOf: row.lead.utf8)
    append(UInt32(row.section.utf8.count).littleEndian)
    out.append(contentsOf: row.section.utf8)
    append(row.pubDate.timeIntervalSinceReferenceDate.bitPattern.littleEndian)
    append(Int64(row.wordCount).littleEndian)
}

@MainActor func kitRound(_ round: Int) throws {
    let path = directory.appendingPathComponent("kit-\(round).mdb").path
    defer {
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + "-lock")
    }
    var options = Environment.Options()
    options.mapSize = 1 << 30
    let env = try Environment.open(path: path, options: options)
    let db = try env.createDatabase(named: "articles")
    var buffer: [UInt8] = []
    kitTimes["insert", default: []].append(try seconds {
        try env.write { txn in
            for row in rows {
                kitRecord(row, into: &buffer)
                try txn.put(buffer, forKey: withUnsafeBytes(of: row.id.bigEndian) { Array($0) }, in: db, flags: .append)
            }
        }
    })
    var sum = 0
    kitTimes["scan", default: []].append(try seconds {
        try env.read { txn in
            try txn.forEach(in: db) { _, value in
                // id 8, then url, lead, section as (length, bytes), then date 8, wordCount 8.
                var at = 8
                var lengths = 0
                for _ in 0..<3 {
                    let n = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                    if lengths < 2 { sum &+= String(decoding: UnsafeRawBufferPointer(rebasing: value[(at + 4)..<(at + 4 + n)]), as: UTF8.self).utf8.count }
                    lengths += 1
                    at += 4 + n
                }
                sum &+= Int(Int64(littleEndian: value.loadUnaligned(fromByteOffset: at + 8, as: Int64.self)))
                return true
            }
        }
    })
    var found = 0
    kitTimes["get", default: []].append(try seconds {
        try env.read { txn in
            for id in lookups {
                found &+= try txn.get(withUnsafeBytes(of: id.bigEndian) { Array($0) }, in: db) {
                    Int(Int64(littleEndian: $0.loadUnaligned(fromByteOffset: $0.count - 8, as: Int64.self)))
                } ?? 0
            }
        }
    })
    checksum &+= sum &+ found
}

FileHandle.standardError.write(Data("LMDBRealmBench: \(count) objects, \(rounds) rounds, alternating LMDBRealm and LMDBKit\n".utf8))
if let op = ProcessInfo.processInfo.environment["BENCH_PROFILE"] {
    // Profiling aid (BENCH_PROFILE=insert|scan|get): only the object layer, the named
    // operation repeated; scans and gets reuse one loaded file.
    if op == "insert" {
        for round in 0..<rounds { try realmRound(round) }
    } else if op == "construct" {
        // The user's side of an insert alone: creating and filling unmanaged objects.
        for _ in 0..<rounds {
            var keep: [Article] = []
            keep.reserveCapacity(rows.count)
            realmTimes[op, default: []].append(seconds {
                for row in rows {
                    let a = Article()
                    a.id = row.id
                    a.url = row.url
                    a.leadParagraph = row.lead
                    a.section = row.section
                    a.pubDate = row.pubDate
                    a.wordCount = row.wordCount
                    keep.append(a)
                }
            })
        }
    } else {
        let config = Realm.Configuration(fileURL: directory.appendingPathComponent("profile.realm"), objectTypes: [Article.self, PlainArticle.self])
        let realm = try Realm(configuration: config)
        try realm.write {
            for row in rows {
                let a = Article()
                a.id = row.id
                a.url = row.url
                a.leadParagraph = row.lead
                a.wordCount = row.wordCount
                try realm.add(a)
            }
        }
        for _ in 0..<rounds {
            var sum = 0
            realmTimes[op, default: []].append(seconds {
                if op == "scan" {
                    for a in realm.objects(Article.self) { sum &+= a.wordCount &+ a.url.utf8.count &+ a.leadParagraph.utf8.count }
                } else {
                    for id in lookups { sum &+= realm.object(ofType: Article.self, forPrimaryKey: id)?.wordCount ?? 0 }
                }
            })
            checksum &+= sum
        }
    }
    print(op, rate(realmTimes[op]!, op == "get" ? lookups.count : count))
    exit(0)
}
for round in 0..<rounds {
    try realmRound(round)
    try kitRound(round)
    FileHandle.standardError.write(Data("  round \(round + 1)/\(rounds) done\n".utf8))
}

print("operation          LMDBRealm ops/s    LMDBKit ops/s   LMDBRealm/LMDBKit")
print("(insert maintains two secondary indexes, on section and pubDate; the LMDBKit floor none)")
for (op, n) in [("insert", count), ("scan", count), ("get", lookups.count)] {
    let r = rate(realmTimes[op]!, n)
    let k = rate(kitTimes[op]!, n)
    print(String(format: "%-14@ %16.0f %16.0f %10.2f", op as NSString, r, k, r / k))
}
print(String(format: "insert, no index   %14.0f", rate(realmTimes["insert_plain"]!, count)))
print("(medians of \(rounds) rounds, N = \(count); checksum \(checksum))")
print("")
print("query (LMDBRealm)                           seconds     objects/s")
for (op, label) in [
    ("count_indexed", "section == 'Sports' count, indexed"), ("count_unindexed", "section == 'Sports' count, no index"),
    ("count_filter", "wordCount > 1800 count, no index"), ("top100_indexed", "sorted(pubDate).limit(100), indexed"),
    ("top100_sorted", "sorted(pubDate).limit(100), full sort"),
] {
    let t = median(realmTimes[op]!)
    print(String(format: "%-40@ %10.6f %13.0f", label as NSString, t, Double(count) / t))
}
let indexGain = median(realmTimes["count_unindexed"]!) / median(realmTimes["count_indexed"]!)
let sortGain = median(realmTimes["top100_sorted"]!) / median(realmTimes["top100_indexed"]!)
print(String(format: "indexed count %.0fx faster than without the index; index-ordered top 100 %.0fx faster than a full sort", indexGain, sortGain))
