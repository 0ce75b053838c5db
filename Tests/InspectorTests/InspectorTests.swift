import Foundation
import LMDBRealm
import LMDBRealmSync
import TestSupport
import Testing

// A model with every kind the inspector prints: links, lists, a set, a map, an embedded object,
// optional values, indexes and a compound index.
final class InspPerson: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(originProperty: "author") var books: LinkingObjects<InspBook>
}

final class InspCover: EmbeddedObject {
    @Persisted var colour = ""
    @Persisted var width = 0
}

final class InspBook: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var title = ""
    @Persisted var subtitle: String?
    @Persisted var price = Decimal128(0)
    @Persisted var published = Date(timeIntervalSince1970: 0)
    @Persisted var rating = 0.0
    @Persisted var inPrint = true
    @Persisted var blob = Data()
    @Persisted var code = UUID()
    @Persisted var author: InspPerson?
    @Persisted var tags: List<String>
    @Persisted var shelves: MutableSet<Int>
    @Persisted var scores: Map<String, Int>
    @Persisted var cover: InspCover?
    @Persisted var extra: AnyRealmValue

    override class func compoundIndexes() -> [[String]] { [["title", "inPrint"]] }
    override class func coveringIndexes() -> [[String]] { [["inPrint", "published"]] }
}

private let types: [Object.Type] = [InspPerson.self, InspBook.self, InspCover.self]

/// `lmdbrealm`, as a user runs it: the built executable on real files.
@Suite struct InspectorTests {
    private let tool = builtExecutable(named: "lmdbrealm")

    /// Runs the inspector and returns its status, standard output and standard error apart.
    private func inspect(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Standard error is read on a thread of its own so neither pipe fills while the other waits.
        let errText = Collector<String>()
        Thread { errText.append(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)) }.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errors = try #require(errText.wait(count: 1, timeout: eventTimeout)).first ?? ""
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), errors)
    }

    /// A file of three books by two people, one with a cover.
    private func makeLibrary(_ dir: URL, _ name: String = "library.realm") throws -> URL {
        let url = dir.appendingPathComponent(name)
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: types))
        try realm.write {
            let ann = InspPerson(value: ["name": "Ann"])
            let bo = InspPerson(value: ["name": "Bo"])
            realm.add(
                InspBook(value: [
                    "id": 1, "title": "Rivers", "subtitle": "and lakes", "price": try Decimal128(string: "12.50"),
                    "published": Date(timeIntervalSince1970: 1_700_000_000.25), "rating": 4.5, "blob": Data([1, 2, 3]),
                    "author": ann, "tags": ["water", "maps, old"], "shelves": [3, 1], "scores": ["home": 4, "away": 2],
                    "cover": InspCover(value: ["colour": "blue", "width": 20]), "extra": AnyRealmValue.string("signed"),
                ]))
            realm.add(InspBook(value: ["id": 2, "title": "Hills \"high\"", "author": ann, "inPrint": false, "extra": AnyRealmValue.int(7)]))
            realm.add(InspBook(value: ["id": 3, "title": "Caves", "author": bo, "rating": 3.0]))
        }
        return url
    }

    /// `info` names every class with its count and properties; `schema --format swift` writes
    /// the model back as classes; `schema --format json` is the stored schema.
    @Test func infoAndSchemaDescribeTheFile() throws {
        try withTemporaryDirectory { dir in
            let url = try makeLibrary(dir)
            let info = try inspect("info", url.path)
            #expect(info.status == 0, "\(info.err)")
            #expect(info.out.contains("InspBook  (3 objects)") && info.out.contains("InspPerson  (2 objects)"))
            #expect(info.out.contains("InspCover  (embedded)"))
            #expect(info.out.contains("id         int  primary key") || info.out.contains("id  ") && info.out.contains("int  primary key"))
            #expect(info.out.contains("→ InspPerson") && info.out.contains("List<string>") && info.out.contains("MutableSet<int>"))
            #expect(info.out.contains("Map<String, int>") && info.out.contains("← InspBook.author (backlinks)"))
            #expect(info.out.contains("compound index (title, inPrint)") && info.out.contains("covering index (inPrint, published)"))

            let swift = try inspect("schema", "--format", "swift", url.path)
            #expect(swift.status == 0)
            #expect(swift.out.contains("final class InspCover: EmbeddedObject {"))
            #expect(swift.out.contains("@Persisted(primaryKey: true) var id: Int"))
            #expect(swift.out.contains("@Persisted(indexed: true) var title: String"))
            #expect(swift.out.contains("@Persisted var subtitle: String?") && swift.out.contains("@Persisted var author: InspPerson?"))
            #expect(swift.out.contains("@Persisted var shelves: MutableSet<Int>") && swift.out.contains("@Persisted var scores: Map<String, Int>"))
            #expect(swift.out.contains("@Persisted(originProperty: \"author\") var books: LinkingObjects<InspBook>"))
            #expect(swift.out.contains("@Persisted var price: Decimal128") && swift.out.contains("@Persisted var extra: AnyRealmValue"))
            #expect(swift.out.contains("[[\"title\", \"inPrint\"]]"))
            #expect(swift.out.contains("override class func coveringIndexes() -> [[String]] {\n        [[\"inPrint\", \"published\"]]"))

            let json = try inspect("schema", "--format", "json", url.path)
            let decoded = try JSONDecoder().decode([ObjectSchema].self, from: Data(json.out.utf8))
            #expect(decoded.map(\.className) == ["InspBook", "InspCover", "InspPerson"])
            #expect(decoded[1].isEmbedded && !decoded[0].isEmbedded)
        }
    }

    /// `query` filters, sorts and limits, and prints a table, JSON lines or CSV; links print as
    /// the target's primary key, embedded objects nested, dates in ISO 8601, data in base64.
    @Test func queryPrintsTablesJSONAndCSV() throws {
        try withTemporaryDirectory { dir in
            let url = try makeLibrary(dir)
            let json = try inspect("query", url.path, "InspBook", "rating > 1", "--sort", "rating", "--descending", "--format", "json")
            #expect(json.status == 0, "\(json.err)")
            let lines = json.out.split(separator: "\n").map(String.init)
            try #require(lines.count == 2, "\(json.out)")
            #expect(lines[0].hasPrefix(#"{"id":1,"title":"Rivers","subtitle":"and lakes","price":"12.5","published":"2023-11-14T22:13:20.250Z""#))
            #expect(lines[0].contains(#""blob":"AQID""#) && lines[0].contains(#""author":"Ann""#))
            #expect(lines[0].contains(#""tags":["water","maps, old"]"#) && lines[0].contains(#""scores":{"away":2,"home":4}"#))
            #expect(lines[0].contains(#""cover":{"colour":"blue","width":20}"#) && lines[0].contains(#""extra":"signed""#))
            #expect(lines[1].hasPrefix(#"{"id":3,"title":"Caves","subtitle":null"#))

            let table = try inspect("query", url.path, "InspBook", "author.name == 'Ann' AND ANY tags != 'x'", "--sort", "id", "--limit", "1")
            let rows = table.out.split(separator: "\n").map(String.init)
            try #require(rows.count == 4, "\(table.out)\(table.err)")
            #expect(rows[0].hasPrefix("id  title") && rows[1].hasPrefix("──") && rows[2].hasPrefix("1   Rivers"))
            #expect(rows.last == "(1 of 1 objects)")

            let csv = try inspect("query", url.path, "InspBook", "id == 2", "--format", "csv")
            let records = csv.out.components(separatedBy: "\r\n")
            try #require(records.count == 3, "\(csv.out)\(csv.err)")
            #expect(records[0].hasPrefix("id,title,subtitle,price,"))
            #expect(records[1].hasPrefix(#"2,"Hills ""high""",,0,"#))

            let chosen = try inspect("query", url.path, "InspBook", "id <= 2", "--properties", "title, id", "--format", "csv", "--sort", "id")
            #expect(chosen.out == "title,id\r\nRivers,1\r\n\"Hills \"\"high\"\"\",2\r\n", "\(chosen.out)")
            #expect(try inspect("query", url.path, "InspBook", "--properties", "id,colour").status == 2)

            let bad = try inspect("query", url.path, "InspBook", "rating >")
            #expect(bad.status == 2 && bad.err.contains("offset"))
            let badSort = try inspect("query", url.path, "InspBook", "--sort", "colour")
            #expect(badSort.status == 2 && badSort.err.contains("'InspBook' has no property 'colour'"))
            let noClass = try inspect("query", url.path, "Nothing")
            #expect(noClass.status == 1 && noClass.err.contains("has no class 'Nothing' (it has: InspBook, InspCover, InspPerson)"))
        }
    }

    /// What `dump --format json` writes, `import` reads back into a file that has the classes
    /// and no objects: dumping that file gives the same text.
    @Test func dumpThenImportRoundTrips() throws {
        try withTemporaryDirectory { dir in
            let url = try makeLibrary(dir)
            let people = try inspect("dump", url.path, "--class", "InspPerson", "--output", dir.appendingPathComponent("people.jsonl").path)
            #expect(people.status == 0 && people.out.isEmpty)
            let books = try inspect("dump", url.path, "--class", "InspBook")
            try books.out.write(to: dir.appendingPathComponent("books.json"), atomically: true, encoding: .utf8)

            let empty = dir.appendingPathComponent("empty.realm")
            _ = try Realm(configuration: .init(fileURL: empty, objectTypes: types))
            let first = try inspect("import", empty.path, "InspPerson", dir.appendingPathComponent("people.jsonl").path)
            #expect(first.status == 0 && first.out.contains("Imported 2 objects into 'InspPerson'."), "\(first.err)")
            let second = try inspect("import", empty.path, "InspBook", dir.appendingPathComponent("books.json").path)
            #expect(second.status == 0, "\(second.err)")
            #expect(try inspect("dump", empty.path, "--class", "InspBook").out == books.out)
            #expect(try inspect("dump", empty.path).out == inspect("dump", url.path).out)

            // CSV comes back too (every value given as text, empty fields nil where allowed); CSV
            // has no kinds, so an AnyRealmValue comes back as a string.
            let csv = try inspect("dump", url.path, "--class", "InspBook", "--format", "csv")
            try csv.out.write(to: dir.appendingPathComponent("books.csv"), atomically: true, encoding: .utf8)
            let update = try inspect("import", empty.path, "InspBook", dir.appendingPathComponent("books.csv").path, "--update", "all")
            #expect(update.status == 0, "\(update.err)\n\(csv.out)")
            let again = try inspect("dump", empty.path, "--class", "InspBook").out
            #expect(again == books.out.replacingOccurrences(of: #""extra":7"#, with: #""extra":"7""#), "\(again)")
        }
    }

    /// A bad row stops the import with its line number and what is wrong, and the file keeps
    /// what it had: a value of the wrong kind, a primary key stored already, a missing primary
    /// key, a link to nothing.
    @Test func aBadRowLeavesTheFileAsItWas() throws {
        try withTemporaryDirectory { dir in
            let url = try makeLibrary(dir)
            let before = try inspect("dump", url.path).out
            let input = dir.appendingPathComponent("rows.jsonl")
            let cases: [(rows: String, message: String)] = [
                (#"{"id":10,"title":"A"}"# + "\n" + #"{"id":11,"title":5}"#, "rows.jsonl:2: 'title' takes a string, not 5"),
                (#"{"id":10}"# + "\n\n" + #"{"id":1,"title":"again"}"#, "rows.jsonl:3: a 'InspBook' with primary key 1 is stored already"),
                (#"{"title":"no key"}"#, "rows.jsonl:1: the primary key 'id' is missing"),
                (#"{"id":12,"author":"Cy"}"#, "rows.jsonl:1: 'author' links to the 'InspPerson' with primary key \"Cy\", which is not stored"),
                (#"{"id":13,"published":"yesterday"}"#, "rows.jsonl:1: 'published' takes an ISO 8601 date"),
                (#"{"id":14,"colour":"red"}"#, "rows.jsonl:1: 'InspBook' has no property 'colour'"),
                (#"{"id":15,"tags":"water"}"#, "rows.jsonl:1: 'tags' takes a JSON array, not \"water\""),
                ("{\"id\":16", "rows.jsonl:1: not valid JSON"),
            ]
            for (rows, message) in cases {
                try rows.write(to: input, atomically: true, encoding: .utf8)
                let result = try inspect("import", url.path, "InspBook", input.path)
                #expect(result.status == 1 && result.err.contains(message), "\(result.err)")
            }
            #expect(try inspect("dump", url.path).out == before)
        }
    }

    /// Files that are not LMDBRealm files, or not there, are named with the reason and exit 1;
    /// usage errors exit 2.
    @Test func unopenableFilesAndUsageErrorsSayWhy() throws {
        try withTemporaryDirectory { dir in
            let missing = try inspect("info", dir.appendingPathComponent("none.realm").path)
            #expect(missing.status == 1 && missing.err.contains("none.realm': no such file"))
            let empty = dir.appendingPathComponent("empty.realm")
            #expect(FileManager.default.createFile(atPath: empty.path, contents: Data()))
            let emptied = try inspect("info", empty.path)
            #expect(emptied.status == 1 && emptied.err.contains("the file is empty, not an LMDBRealm file"))
            let text = dir.appendingPathComponent("notes.txt")
            try String(repeating: "not a database\n", count: 1000).write(to: text, atomically: true, encoding: .utf8)
            let notRealm = try inspect("info", text.path)
            #expect(notRealm.status == 1 && notRealm.err.contains("notes.txt"), "\(notRealm.err)")
            let directory = try inspect("stats", dir.path)
            #expect(directory.status == 1 && directory.err.contains("it is a directory"))
            #expect(try inspect("info").status == 2)
            #expect(try inspect("frobnicate").status == 2)
            #expect(try inspect("query", "x.realm", "A", "--limit", "-1").status == 2)
            #expect(try inspect("--help").status == 0)
        }
    }

    /// `sync-setup` prints the script that sets a PostgreSQL database up for a role per node
    /// (the sync tests run it against a server); names it cannot keep are usage errors.
    @Test func syncSetupPrintsTheScript() throws {
        let printed = try inspect("sync-setup", "--node", "api-1", "--node", "api-2", "--compactor", "folder")
        #expect(printed.status == 0, "\(printed.err)")
        #expect(printed.out == (try SyncSetup.script(nodes: ["api-1", "api-2"], compactor: "folder")))
        #expect(printed.out.contains("CREATE POLICY lmdbrealm_appends ON lmdbrealm_changes FOR INSERT TO \"lmdbrealm_node\" WITH CHECK (node = current_user);"))
        let prefixed = try inspect("sync-setup", "--node", "a", "--prefix", "notes")
        #expect(prefixed.status == 0 && prefixed.out.contains("GRANT \"notes_node\" TO \"a\";"), "\(prefixed.err)")
        let none = try inspect("sync-setup")
        #expect(none.status == 2 && none.err.contains("--node"), "\(none.err)")
        let twice = try inspect("sync-setup", "--node", "a", "--compactor", "a")
        #expect(twice.status == 2 && twice.err.contains("the node id 'a' is given twice"), "\(twice.err)")
    }

    /// `stats` and `explain` read the file's figures and a query's plan.
    @Test func statsAndExplain() throws {
        try withTemporaryDirectory { dir in
            let url = try makeLibrary(dir)
            let stats = try inspect("stats", "--format", "json", url.path)
            #expect(stats.status == 0 && stats.out.contains(#""fileSize":"#) && stats.out.contains(#""readers":1"#))
            let explain = try inspect("explain", url.path, "InspBook", "title == 'Caves'")
            #expect(explain.status == 0 && explain.out.contains("InspBook.title"), "\(explain.out)")
        }
    }

    /// `compact` rewrites the file smaller, and refuses while another process has it open.
    @Test func compactIsRefusedWhileTheFileIsOpen() throws {
        try withTemporaryDirectory { dir in
            let url = try makeLibrary(dir)
            let size = { (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0 }
            do {
                let realm = try Realm(configuration: .init(fileURL: url, objectTypes: types))
                try realm.write {
                    for i in 100..<2_000 { realm.add(InspBook(value: ["id": i, "title": String(repeating: "x", count: 200)])) }
                }
                try realm.write { realm.delete(realm.objects(InspBook.self).where { $0.id >= 100 }) }
                let refused = try inspect("compact", url.path)
                #expect(refused.status == 1 && refused.err.contains("another process has it open"), "\(refused.err)")
            }
            let before = size()
            expectNothingOpen(in: dir)
            let compacted = try inspect("compact", url.path)
            #expect(compacted.status == 0 && compacted.out.contains("Compacted"), "\(compacted.err)")
            #expect(size() < before)
            #expect(try inspect("query", url.path, "InspBook", "--format", "json").out.split(separator: "\n").count == 3)
        }
    }

    /// `watch` prints what enters, changes and leaves a query's results as another process
    /// commits.
    @Test func watchPrintsChangesOfOtherProcesses() throws {
        try withTemporaryDirectory { dir in
            let url = try makeLibrary(dir)
            let process = Process()
            process.executableURL = tool
            process.arguments = ["watch", url.path, "InspBook", "rating >= 3"]
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            // A watch that never prints would leave the reads below waiting: it is stopped
            // after two minutes, which ends them.
            let pid = process.processIdentifier
            let watchdog = DispatchWorkItem { kill(pid, SIGTERM) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: watchdog)
            defer {
                watchdog.cancel()
                process.terminate()
                process.waitUntilExit()
            }
            var started = ""
            while !started.contains("Watching 2 objects of 'InspBook'.") {
                let chunk = err.fileHandleForReading.availableData
                try #require(!chunk.isEmpty, "watch ended: \(started)")
                started += String(decoding: chunk, as: UTF8.self)
            }
            // Each commit is printed before the next is made (commits close together may come
            // as one change, deletions first).
            var printed = ""
            func awaitLine(_ count: Int) throws {
                while printed.split(separator: "\n").count < count {
                    let chunk = out.fileHandleForReading.availableData
                    try #require(!chunk.isEmpty, "watch ended: \(printed)")
                    printed += String(decoding: chunk, as: UTF8.self)
                }
            }
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: types))
            try realm.write { realm.add(InspBook(value: ["id": 4, "title": "Dunes", "rating": 5.0])) }
            try awaitLine(1)
            try realm.write { realm.object(ofType: InspBook.self, forPrimaryKey: 3)!.rating = 1 }
            try awaitLine(2)
            try realm.write { realm.object(ofType: InspBook.self, forPrimaryKey: 1)!.title = "Streams" }
            try awaitLine(3)
            let lines = printed.split(separator: "\n")
            #expect(lines[0].hasPrefix(#"+ {"id":4,"title":"Dunes""#))
            #expect(lines[1].hasPrefix(#"- {"id":3,"title":"Caves""#))
            #expect(lines[2].hasPrefix(#"~ {"id":1,"title":"Streams""#))
        }
    }

    /// A file the example program writes (articles with authors, keywords and embedded media),
    /// by running it on its bundled sample, reads whole through the inspector.
    @Test func readsTheExamplesFile() throws {
        try withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("articles.realm")
            let fetched = try run(builtExecutable(named: "ArticleCache"), ["fetch", "--database", file.path, "--format", "json"])
            #expect(fetched.status == 0, "\(fetched.output)")
            let count = fetched.output.split(separator: "\n").filter { $0.hasPrefix("{") }.count
            try #require(count > 0)
            let info = try inspect("info", file.path)
            #expect(
                info.status == 0 && info.out.contains("Article  (\(count) objects)") && info.out.contains("Multimedia  (embedded)"), "\(info.out)")
            let dump = try inspect("dump", file.path, "--class", "Article")
            #expect(dump.out.split(separator: "\n").count == count)
            #expect(dump.out.contains(#""multimedia":[{"#) && dump.out.contains(#""keywords":[""#))
            let verify = try inspect("verify", file.path)
            #expect(verify.status == 0 && verify.out.contains("sound"), "\(verify.out)")
        }
    }
}

extension InspectorTests {
    /// `verify` says a sound file is sound (exit 0), and names what is damaged in a file with
    /// a corrupted record (exit 1), without crashing; a truncated or empty file is refused with
    /// the reason.
    @Test func verifyFindsDamageWithoutCrashing() throws {
        try withTemporaryDirectory { dir in
            let url = try makeLibrary(dir)
            let sound = try inspect("verify", url.path)
            #expect(sound.status == 0 && sound.out.contains("sound (6 objects checked)"), "\(sound.out)\(sound.err)")

            // Every copy of one title's bytes gets a byte that is no UTF-8.
            var bytes = [UInt8](try Data(contentsOf: url))
            let marker = Array("Caves".utf8)
            var flipped = 0
            var i = 0
            while i + marker.count <= bytes.count {
                if bytes[i..<(i + marker.count)].elementsEqual(marker) {
                    bytes[i + 1] = 0xFF
                    flipped += 1
                }
                i += 1
            }
            try #require(flipped > 0)
            let damaged = dir.appendingPathComponent("damaged.realm")
            try Data(bytes).write(to: damaged)
            let report = try inspect("verify", damaged.path)
            #expect(report.status == 1, "\(report.out)\(report.err)")
            #expect(report.out.contains("damagedRecord [InspBook 3]") && report.out.contains("problem"), "\(report.out)")

            let truncated = dir.appendingPathComponent("truncated.realm")
            try Data(bytes.prefix(bytes.count / 2)).write(to: truncated)
            let cut = try inspect("verify", truncated.path)
            #expect(cut.status == 1 && cut.err.contains("truncated.realm"), "\(cut.out)\(cut.err)")

            let empty = dir.appendingPathComponent("empty.realm")
            #expect(FileManager.default.createFile(atPath: empty.path, contents: Data()))
            let nothing = try inspect("verify", empty.path)
            #expect(nothing.status == 1 && nothing.err.contains("the file is empty"))
        }
    }
}
