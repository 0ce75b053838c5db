import Foundation
import GRDBSQLite
import LMDBRealm

// The object-graph workload: articles that link to an author and hold a list of keywords,
// against SQLite with the same data normalised (a join table for the lists, indexes on every
// foreign key). Run with `--graph`; each round runs LMDBRealm and SQLite in turn, each on a
// fresh file, and every figure is the median of the rounds.
//
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --graph [--n N] [--rounds R]

final class GraphAuthor: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted(indexed: true) var name: String
}

final class GraphKeyword: Object {
    @Persisted(primaryKey: true) var value: String
    @Persisted(originProperty: "keywords") var articles: LinkingObjects<GraphArticle>
}

final class GraphArticle: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var title: String
    @Persisted var byline: GraphAuthor?
    @Persisted var keywords: List<GraphKeyword>
}

/// The graph's data: N articles, N/100 authors, N/10 keywords, 5 distinct keywords an article.
struct GraphData {
    let articles: Int
    let authors: Int
    let keywords: Int
    /// For each article: its author and its keywords (indexes).
    let byline: [Int]
    let keywordsOf: [[Int]]
    /// Article ids to follow, keyword values and author names to query.
    let lookups: [Int64]
    let values: [String]
    let names: [String]

    init(n: Int) {
        articles = n
        authors = max(1, n / 100)
        keywords = max(5, n / 10)
        var g = Generator(state: 99)
        var byline: [Int] = []
        var keywordsOf: [[Int]] = []
        for _ in 0..<n {
            byline.append(Int(g.next() % UInt64(authors)))
            var chosen: [Int] = []
            while chosen.count < 5 {
                let k = Int(g.next() % UInt64(keywords))
                if !chosen.contains(k) { chosen.append(k) }
            }
            keywordsOf.append(chosen)
        }
        self.byline = byline
        self.keywordsOf = keywordsOf
        lookups = (0..<20_000).map { _ in Int64(1 + g.next() % UInt64(n)) }
        names = (0..<1_000).map { _ in graphAuthorName(Int(g.next() % UInt64(max(1, n / 100)))) }
        values = (0..<1_000).map { _ in graphKeyword(Int(g.next() % UInt64(max(5, n / 10)))) }
    }
}

func graphAuthorName(_ i: Int) -> String { "Author \(i)" }
func graphKeyword(_ i: Int) -> String { "keyword \(String(format: "%06d", i))" }
func graphTitle(_ i: Int) -> String { "Article \(i): a headline of ordinary length" }

/// The graph operations, in the order each engine runs them.
enum GraphOperation: String, CaseIterable {
    case link_insert, follow_links, backlink_count, query_through_link, query_byline

    var unit: String {
        switch self {
        case .link_insert: "articles/s"
        case .follow_links: "articles/s"
        case .backlink_count, .query_through_link, .query_byline: "queries/s"
        }
    }

    var summary: String {
        switch self {
        case .link_insert: "N articles, each linked to 1 of N/100 authors and 5 of N/10 keywords, one transaction"
        case .follow_links: "20,000 random articles: the byline's name and every keyword's value read"
        case .backlink_count: "every keyword: how many articles hold it (LinkingObjects count / COUNT on the join table)"
        case .query_through_link: "1,000 counts of articles holding a keyword given by value (ANY keywords.value == X)"
        case .query_byline: "1,000 counts of articles whose byline's name is given (Author.name indexed)"
        }
    }
}

/// One engine of the graph workload; each returns a checksum the two must agree on.
@MainActor protocol GraphEngine {
    func insert(_ data: GraphData) throws
    func follow(_ ids: [Int64]) throws -> Int
    func countBacklinks() throws -> Int
    func countByAuthor(_ names: [String]) throws -> Int
    func countByKeyword(_ values: [String]) throws -> Int
}

@MainActor final class RealmGraphEngine: GraphEngine {
    let realm: Realm

    init(directory: URL) throws {
        var config = Realm.Configuration(
            fileURL: directory.appendingPathComponent("graph.realm"),
            objectTypes: [GraphArticle.self, GraphAuthor.self, GraphKeyword.self])
        config.maximumFileSize = profileMapSize  // room enough, and valgrind can reserve it
        config.verifiesChecksums = benchmarkVerifiesChecksums
        realm = try Realm(configuration: config)
    }

    func insert(_ data: GraphData) throws {
        try realm.write {
            let authors = (0..<data.authors).map { i in
                let author = GraphAuthor()
                author.id = Int64(i)
                author.name = graphAuthorName(i)
                return author
            }
            let keywords = (0..<data.keywords).map { i in
                let keyword = GraphKeyword()
                keyword.value = graphKeyword(i)
                return keyword
            }
            for author in authors { realm.add(author) }
            for keyword in keywords { realm.add(keyword) }
            for i in 0..<data.articles {
                let article = GraphArticle()
                article.id = Int64(i + 1)
                article.title = graphTitle(i)
                article.byline = authors[data.byline[i]]
                article.keywords.append(objectsIn: data.keywordsOf[i].map { keywords[$0] })
                realm.add(article)
            }
        }
    }

    func follow(_ ids: [Int64]) throws -> Int {
        var sum = 0
        for id in ids {
            guard let article = realm.object(ofType: GraphArticle.self, forPrimaryKey: id) else { continue }
            sum += article.byline?.name.utf8.count ?? 0
            for keyword in article.keywords { sum += keyword.value.utf8.count }
        }
        return sum
    }

    func countBacklinks() throws -> Int {
        var total = 0
        for keyword in realm.objects(GraphKeyword.self) { total += keyword.articles.count }
        return total
    }

    func countByKeyword(_ values: [String]) throws -> Int {
        let articles = realm.objects(GraphArticle.self)
        var total = 0
        for value in values { total += articles.where { $0.keywords.value == value }.count }
        return total
    }

    func countByAuthor(_ names: [String]) throws -> Int {
        let articles = realm.objects(GraphArticle.self)
        var total = 0
        for name in names { total += articles.where { $0.byline.name == name }.count }
        return total
    }
}

@MainActor final class SQLiteGraphEngine: GraphEngine {
    private let db: SQLiteDatabase
    private var transient: sqlite3_destructor_type { db.transient }

    init(directory: URL) throws {
        db = try SQLiteDatabase(
            directory.appendingPathComponent("graph.sqlite"),
            schema: """
                CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE INDEX author_name ON author(name);
                CREATE TABLE keyword(id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
                CREATE TABLE article(id INTEGER PRIMARY KEY, title TEXT NOT NULL, author_id INTEGER REFERENCES author(id));
                CREATE INDEX article_author ON article(author_id);
                CREATE TABLE article_keyword(article_id INTEGER NOT NULL, position INTEGER NOT NULL,
                                             keyword_id INTEGER NOT NULL, PRIMARY KEY(article_id, position)) WITHOUT ROWID;
                CREATE INDEX article_keyword_keyword ON article_keyword(keyword_id);
                """)
    }

    private func exec(_ sql: String) throws { try db.exec(sql) }
    private func prepare(_ sql: String) throws -> OpaquePointer? { try db.prepare(sql) }

    private func step(_ statement: OpaquePointer?) throws {
        let rc = sqlite3_step(statement)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw db.lastError }
        sqlite3_reset(statement)
    }

    func insert(_ data: GraphData) throws {
        let author = try prepare("INSERT INTO author(id, name) VALUES (?, ?)")
        let keyword = try prepare("INSERT INTO keyword(id, value) VALUES (?, ?)")
        let article = try prepare("INSERT INTO article(id, title, author_id) VALUES (?, ?, ?)")
        let link = try prepare("INSERT INTO article_keyword(article_id, position, keyword_id) VALUES (?, ?, ?)")
        defer { for s in [author, keyword, article, link] { sqlite3_finalize(s) } }
        try exec("BEGIN")
        for i in 0..<data.authors {
            sqlite3_bind_int64(author, 1, Int64(i))
            sqlite3_bind_text(author, 2, graphAuthorName(i), -1, transient)
            try step(author)
        }
        for i in 0..<data.keywords {
            sqlite3_bind_int64(keyword, 1, Int64(i))
            sqlite3_bind_text(keyword, 2, graphKeyword(i), -1, transient)
            try step(keyword)
        }
        for i in 0..<data.articles {
            sqlite3_bind_int64(article, 1, Int64(i + 1))
            sqlite3_bind_text(article, 2, graphTitle(i), -1, transient)
            sqlite3_bind_int64(article, 3, Int64(data.byline[i]))
            try step(article)
            for (position, k) in data.keywordsOf[i].enumerated() {
                sqlite3_bind_int64(link, 1, Int64(i + 1))
                sqlite3_bind_int64(link, 2, Int64(position))
                sqlite3_bind_int64(link, 3, Int64(k))
                try step(link)
            }
        }
        try exec("COMMIT")
    }

    func follow(_ ids: [Int64]) throws -> Int {
        let byline = try prepare("SELECT au.name FROM article a JOIN author au ON au.id = a.author_id WHERE a.id = ?")
        let keywords = try prepare(
            "SELECT k.value FROM article_keyword ak JOIN keyword k ON k.id = ak.keyword_id WHERE ak.article_id = ? ORDER BY ak.position")
        defer { for s in [byline, keywords] { sqlite3_finalize(s) } }
        var sum = 0
        for id in ids {
            sqlite3_bind_int64(byline, 1, id)
            while sqlite3_step(byline) == SQLITE_ROW { sum += Int(sqlite3_column_bytes(byline, 0)) }
            sqlite3_reset(byline)
            sqlite3_bind_int64(keywords, 1, id)
            while sqlite3_step(keywords) == SQLITE_ROW { sum += Int(sqlite3_column_bytes(keywords, 0)) }
            sqlite3_reset(keywords)
        }
        return sum
    }

    func countBacklinks() throws -> Int {
        let ids = try prepare("SELECT id FROM keyword ORDER BY value")
        let count = try prepare("SELECT count(*) FROM article_keyword WHERE keyword_id = ?")
        defer { for s in [ids, count] { sqlite3_finalize(s) } }
        var total = 0
        while sqlite3_step(ids) == SQLITE_ROW {
            sqlite3_bind_int64(count, 1, sqlite3_column_int64(ids, 0))
            if sqlite3_step(count) == SQLITE_ROW { total += Int(sqlite3_column_int64(count, 0)) }
            sqlite3_reset(count)
        }
        return total
    }

    func countByKeyword(_ values: [String]) throws -> Int {
        let count = try prepare(
            "SELECT count(*) FROM article_keyword ak JOIN keyword k ON k.id = ak.keyword_id WHERE k.value = ?")
        defer { sqlite3_finalize(count) }
        var total = 0
        for value in values {
            sqlite3_bind_text(count, 1, value, -1, transient)
            if sqlite3_step(count) == SQLITE_ROW { total += Int(sqlite3_column_int64(count, 0)) }
            sqlite3_reset(count)
        }
        return total
    }

    func countByAuthor(_ names: [String]) throws -> Int {
        let count = try prepare("SELECT count(*) FROM article a JOIN author au ON au.id = a.author_id WHERE au.name = ?")
        defer { sqlite3_finalize(count) }
        var total = 0
        for name in names {
            sqlite3_bind_text(count, 1, name, -1, transient)
            if sqlite3_step(count) == SQLITE_ROW { total += Int(sqlite3_column_int64(count, 0)) }
            sqlite3_reset(count)
        }
        return total
    }
}

/// Runs the graph workload: `rounds` rounds of both engines, alternating, and prints a
/// Markdown table of medians (and writes it to `output/graph-latest.md`).
@MainActor func runGraph(settings: Settings) throws {
    let data = GraphData(n: settings.n)
    let rounds = settings.effectiveRounds
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-graph-\(getpid())")
    defer { try? FileManager.default.removeItem(at: root) }
    log("graph: N = \(data.articles) articles, \(data.authors) authors, \(data.keywords) keywords; \(rounds) rounds")
    var rates: [String: [GraphOperation: [Double]]] = ["LMDBRealm": [:], "SQLite": [:]]
    var checks: [String: [GraphOperation: Int]] = [:]
    for round in 0..<rounds {
        for name in ["LMDBRealm", "SQLite"] where settings.engines.contains(name) {
            let directory = root.appendingPathComponent("\(name)-\(round)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let engine: any GraphEngine = name == "LMDBRealm" ? try RealmGraphEngine(directory: directory) : try SQLiteGraphEngine(directory: directory)
            func record(_ op: GraphOperation, _ seconds: Double, _ work: Int, _ check: Int) {
                rates[name]![op, default: []].append(Double(work) / seconds)
                if let previous = checks[name]?[op] {
                    precondition(previous == check, "\(name) \(op.rawValue) gave \(check), then \(previous)")
                }
                checks[name, default: [:]][op] = check
            }
            let (insertTime, _) = try timed { try engine.insert(data) }
            record(.link_insert, insertTime, data.articles, 0)
            let (followTime, followSum) = try timed { try engine.follow(data.lookups) }
            record(.follow_links, followTime, data.lookups.count, followSum)
            let (countTime, backlinks) = try timed { try engine.countBacklinks() }
            record(.backlink_count, countTime, data.keywords, backlinks)
            precondition(backlinks == data.articles * 5, "\(name) counted \(backlinks) backlinks, not \(data.articles * 5)")
            let (keywordTime, byKeyword) = try timed { try engine.countByKeyword(data.values) }
            record(.query_through_link, keywordTime, data.values.count, byKeyword)
            let (queryTime, byAuthor) = try timed { try engine.countByAuthor(data.names) }
            record(.query_byline, queryTime, data.names.count, byAuthor)
            log("round \(round + 1)/\(rounds) \(name): " + GraphOperation.allCases.map { "\($0.rawValue) \(Report.format(rates[name]![$0]!.last!))" }.joined(separator: ", "))
            try? FileManager.default.removeItem(at: directory)
        }
    }
    // With one engine (`--engines LMDBRealm`, for a profiler) there is nothing to compare.
    guard checks.count == 2 else { return }
    for op in GraphOperation.allCases {
        precondition(checks["LMDBRealm"]![op] == checks["SQLite"]![op], "the engines disagree on \(op.rawValue)")
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    var lines = [
        "Object graph, N = \(data.articles) articles (\(data.authors) authors, \(data.keywords) keywords, 5 keywords an article); medians of \(rounds) rounds",
        "",
        "| operation | unit | LMDBRealm | SQLite | LMDBRealm / SQLite | what |",
        "|---|---|---:|---:|---:|---|",
    ]
    for op in GraphOperation.allCases {
        let a = median(rates["LMDBRealm"]![op]!)
        let b = median(rates["SQLite"]![op]!)
        lines.append("| \(op.rawValue) | \(op.unit) | \(Report.format(a)) | \(Report.format(b)) | \(String(format: "%.2f", a / b))× | \(op.summary) |")
    }
    let table = lines.joined(separator: "\n") + "\n"
    print(table)
    if let output = settings.output {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try table.write(toFile: output + "/graph-latest.md", atomically: true, encoding: .utf8)
        let ratios = GraphOperation.allCases.map { op in (op, median(rates["LMDBRealm"]![op]!) / median(rates["SQLite"]![op]!)) }
        try graphChart(ratios, n: data.articles, rounds: rounds).write(toFile: output + "/graph-latest.svg", atomically: true, encoding: .utf8)
    }
}

/// A bar per operation: LMDBRealm's rate over SQLite's, with lines at 1× (even) and 2× (the goal).
func graphChart(_ ratios: [(GraphOperation, Double)], n: Int, rounds: Int) -> String {
    let left = 170.0, top = 56.0, barHeight = 22.0, gap = 10.0, plotWidth = 620.0, width = 840.0
    let maximum = max(3.0, ceil(ratios.map(\.1).max() ?? 1))
    func x(_ v: Double) -> Double { left + v / maximum * plotWidth }
    let height = top + Double(ratios.count) * (barHeight + gap) + 40
    var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="16" y="22" font-size="15" font-weight="bold">Object graph: LMDBRealm's rate over SQLite's (normalised tables), N = \(n)</text>
        <text x="16" y="40" fill="#555">Median of \(rounds) rounds; higher is better; the dashed line is the 2× goal</text>

        """
    for (label, v, dash) in [("1×", 1.0, ""), ("2×", 2.0, " stroke-dasharray=\"4 3\"")] {
        let gx = x(v)
        s += "<line x1=\"\(gx)\" y1=\"\(top - 4)\" x2=\"\(gx)\" y2=\"\(height - 30)\" stroke=\"#999\"\(dash)/>"
        s += "<text x=\"\(gx)\" y=\"\(height - 14)\" text-anchor=\"middle\" fill=\"#555\">\(label)</text>\n"
    }
    for (i, (op, ratio)) in ratios.enumerated() {
        let y = top + Double(i) * (barHeight + gap)
        let color = ratio >= 2 ? "#2ca02c" : (ratio >= 1 ? "#1f77b4" : "#d62728")
        s += "<text x=\"\(left - 8)\" y=\"\(y + barHeight - 7)\" text-anchor=\"end\" font-weight=\"bold\">\(op.rawValue)</text>"
        s += "<rect x=\"\(left)\" y=\"\(y)\" width=\"\(String(format: "%.1f", x(ratio) - left))\" height=\"\(barHeight)\" fill=\"\(color)\"/>"
        s += "<text x=\"\(String(format: "%.1f", x(ratio) + 5))\" y=\"\(y + barHeight - 7)\">\(String(format: "%.2f", ratio))×</text>\n"
    }
    s += "</svg>\n"
    return s
}
