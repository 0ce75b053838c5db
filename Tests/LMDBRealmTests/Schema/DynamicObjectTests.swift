import Foundation
import LMDBRealm
import Synchronization
import TestSupport
import Testing

final class DynBook: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted(indexed: true) var pages = 0
    @Persisted var subtitle: String?
    @Persisted var author: DynAuthor?
    @Persisted var tags: List<String>
    @Persisted var ratings: Map<String, Int>
}

final class DynAuthor: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(originProperty: "author") var books: LinkingObjects<DynBook>
}

final class DynFirst: Object {
    @Persisted var name = ""
}

final class DynLater: Object {
    @Persisted var name = ""
}

@Suite struct DynamicObjectTests {
    /// Stores two authors and three books through the model classes.
    private func fill(_ realm: Realm) throws {
        try realm.write {
            let ann = DynAuthor(value: ["name": "Ann"])
            let bo = DynAuthor(value: ["name": "Bo"])
            realm.add(DynBook(value: ["id": 1, "title": "Rivers", "pages": 120, "author": ann, "tags": ["water", "maps"], "ratings": ["home": 4]]))
            realm.add(DynBook(value: ["id": 2, "title": "Hills", "pages": 80, "subtitle": "and dales", "author": ann]))
            realm.add(DynBook(value: ["id": 3, "title": "Caves", "pages": 300, "author": bo]))
        }
    }

    /// Every kind reads by name: values, a nil optional, a link as a DynamicObject, a list as an
    /// array, a map as a dictionary, backlinks as an array of objects; and dynamic results
    /// filter, sort and count like typed ones.
    @Test func dynamicObjectsReadEveryKind() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try fill(realm)
            let books = realm.dynamicObjects("DynBook")
            #expect(books.count == 3)
            let rivers = try #require(books.first)
            #expect(rivers["title"] as? String == "Rivers" && rivers.pages as? Int == 120 && rivers["subtitle"] == nil)
            #expect(rivers.objectSchema.className == "DynBook")
            let author = try #require(rivers["author"] as? DynamicObject)
            #expect(author["name"] as? String == "Ann" && author.objectSchema.className == "DynAuthor")
            #expect(rivers["tags"] as? [Any?] as? [String] == ["water", "maps"])
            #expect((rivers["ratings"] as? [String: Any?])?["home"] as? Int == 4)
            let written = try #require(author["books"] as? [DynamicObject])
            #expect(written.compactMap { $0["title"] as? String }.sorted() == ["Hills", "Rivers"])

            #expect(books.filter("pages > 100").count == 2)
            // Key paths through links, lists and backlinks, resolved against the file's classes.
            #expect(books.filter("author.name == 'Ann'").count == 2)
            #expect(books.filter("ANY tags == 'maps'").first?["title"] as? String == "Rivers")
            #expect(books.filter("author.name == 'Bo'").count == 1)
            #expect(books.filter("tags.@count > 1").count == 1)
            #expect(realm.objects(DynBook.self).filter("author.name == 'Bo' OR tags.@count > 1").count == 2, "typed")
            #expect(books.filter("author.name == 'Bo' OR pages == 120").count == 2)
            #expect(books.filter("tags.@count > 1 OR pages == 300").count == 2)
            #expect(books.filter("pages == 300 OR tags.@count > 1").count == 2)
            #expect(books.filter("tags.@count > 1 OR author.name == 'Bo'").count == 2)
            #expect(books.filter("author.name == 'Bo' OR tags.@count > 1").count == 2)
            #expect(realm.dynamicObjects("DynAuthor").filter("books.@count == 2").first?["name"] as? String == "Ann")
            #expect(realm.dynamicObjects("DynAuthor").filter("ANY books.pages > 200").first?["name"] as? String == "Bo")
            #expect(books.filter("pages == 80").first?["title"] as? String == "Hills")
            #expect(books.sorted(byKeyPath: "title").map { $0["title"] as? String } == ["Caves", "Hills", "Rivers"])
            #expect(realm.dynamicObject(ofType: "DynBook", forPrimaryKey: 3)?["title"] as? String == "Caves")
            #expect(realm.dynamicObject(ofType: "DynAuthor", forPrimaryKey: "Bo") != nil)
            #expect(realm.dynamicObject(ofType: "DynBook", forPrimaryKey: 9) == nil)
            #expect(rivers == realm.dynamicObject(ofType: "DynBook", forPrimaryKey: 1))
            #expect(rivers != realm.dynamicObject(ofType: "DynAuthor", forPrimaryKey: "Bo"))
            #expect(rivers.description.contains("title = Rivers;"))
        }
    }

    /// `dynamicCreate` stores an object the model classes then read (its index entries too);
    /// setting by name changes values, links, lists and maps; `.modified` updates only what
    /// is given.
    @Test func dynamicObjectsAreCreatedAndChanged() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try fill(realm)
            try realm.write {
                let cy = realm.dynamicCreate("DynAuthor", value: ["name": "Cy"])
                let book = realm.dynamicCreate("DynBook", value: ["id": 4, "title": "Dunes", "pages": 95, "author": cy, "tags": ["sand"]])
                book["ratings"] = ["away": 2, "home": 5]
                book.subtitle = "dry"
                let hills = realm.dynamicObject(ofType: "DynBook", forPrimaryKey: 2)!
                hills["author"] = nil
                hills["tags"] = ["green"]
                realm.dynamicCreate("DynBook", value: ["id": 3, "pages": 310], update: .modified)
            }
            let dunes = try #require(realm.object(ofType: DynBook.self, forPrimaryKey: 4))
            #expect(dunes.title == "Dunes" && dunes.subtitle == "dry" && dunes.author?.name == "Cy")
            #expect(Array(dunes.tags) == ["sand"] && dunes.ratings["home"] == 5 && dunes.ratings["away"] == 2)
            #expect(realm.objects(DynBook.self).where { $0.pages == 95 }.map(\.id) == [4], "the index has the new object")
            #expect(realm.object(ofType: DynAuthor.self, forPrimaryKey: "Cy")?.books.count == 1)
            let hills = try #require(realm.object(ofType: DynBook.self, forPrimaryKey: 2))
            #expect(hills.author == nil && Array(hills.tags) == ["green"])
            let caves = try #require(realm.object(ofType: DynBook.self, forPrimaryKey: 3))
            #expect(caves.pages == 310 && caves.title == "Caves" && caves.author?.name == "Bo")
            #expect(realm.objects(DynBook.self).where { $0.pages == 300 }.isEmpty)
        }
    }

    /// A duplicate primary key under `.error` fails the write, which changes nothing.
    @Test func aDuplicateKeyFailsTheWrite() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try fill(realm)
            do {
                try realm.write {
                    realm.dynamicCreate("DynBook", value: ["id": 9, "title": "New"])
                    let duplicate = realm.dynamicCreate("DynBook", value: ["id": 1, "title": "Again"])
                    duplicate["pages"] = 1  // an object that is not stored takes values and keeps them to itself
                }
                Issue.record("a duplicate primary key must fail the write")
            } catch let error as Realm.Error {
                #expect(error.code == .primaryKeyExists)
                #expect(error.localizedDescription.contains("DynBook"))
            }
            #expect(realm.dynamicObjects("DynBook").count == 3)
            #expect(realm.dynamicObject(ofType: "DynBook", forPrimaryKey: 1)?["title"] as? String == "Rivers")
        }
    }

    /// A program that declares none of the file's classes reads them all, links, lists, maps and
    /// backlinks included, from the schema stored in the file.
    @Test func aProgramWithoutTheModelReadsTheFile() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("test.realm")
            try fill(try Realm(configuration: makeConfiguration(dir)))
            let books = try run(builtExecutable(named: "RealmTestHelper"), ["dump-dynamic", url.path, "DynBook"])
            #expect(books.status == 0, "\(books.output)")
            #expect(
                books.output.split(separator: "\n") == [
                    "id=1 title=Rivers pages=120 subtitle=nil author=<Ann> tags=[water,maps] ratings={home:4}",
                    "id=2 title=Hills pages=80 subtitle=and dales author=<Ann> tags=[] ratings={}",
                    "id=3 title=Caves pages=300 subtitle=nil author=<Bo> tags=[] ratings={}",
                ])
            let authors = try run(builtExecutable(named: "RealmTestHelper"), ["dump-dynamic", url.path, "DynAuthor"])
            #expect(authors.output.split(separator: "\n") == ["name=Ann books=[<1>,<2>]", "name=Bo books=[<3>]"])
        }
    }

    /// A realm whose model leaves out a class of the file reads it by name while another
    /// handle, opened later with the whole model, uses it too: the class's databases were
    /// opened with the file, so the older version's LMDB transaction knows them (a handle
    /// opened after a transaction began is unknown to it).
    @Test func aClassOutsideTheModelReadsWhileAnotherHandleOpensIt() throws {
        try withTemporaryDirectory { dir in
            do {
                let whole = try Realm(configuration: makeConfiguration(dir, types: [DynFirst.self, DynLater.self]))
                try whole.write { whole.add(DynLater(value: ["name": "b"])) }
            }
            let first = try Realm(configuration: makeConfiguration(dir, types: [DynFirst.self]))
            first.autorefresh = false
            #expect(first.objects(DynFirst.self).count == 0)
            let second = try Realm(configuration: makeConfiguration(dir, types: [DynFirst.self, DynLater.self]))
            try second.write { second.add(DynLater(value: ["name": "c"])) }
            #expect(first.dynamicObjects("DynLater").count == 1)
            first.refresh()
            #expect(first.dynamicObjects("DynLater").count == 2)
        }
    }

    /// A class's table is made by the first write that adds one of its objects. A realm still
    /// reading a version from before that write, and its frozen copy, see no object of the
    /// class (the table's database handle is newer than their LMDB transaction, which would
    /// refuse it); the realm sees them after a refresh.
    @Test func aTableMadeByAnotherThreadsWriteIsReadAfterTheRefresh() throws {
        try withTemporaryDirectory { dir in
            let configuration = makeConfiguration(dir, types: [DynFirst.self, DynLater.self])
            let reader = try Realm(configuration: configuration)
            reader.autorefresh = false
            try reader.write { reader.add(DynFirst(value: ["name": "a"])) }
            #expect(reader.objects(DynLater.self).isEmpty && reader.objects(DynFirst.self).count == 1)
            // Another thread (a queue's `sync` could run on this one and use this realm).
            let written = DispatchSemaphore(value: 0)
            let failure = Mutex<String?>(nil)
            Thread {
                do {
                    let writer = try Realm(configuration: configuration)
                    try writer.write { writer.add(DynLater(value: ["name": "b"])) }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                written.signal()
            }.start()
            #expect(written.wait(timeout: .now() + eventTimeout) == .success)
            #expect(failure.withLock { $0 } == nil)
            #expect(reader.objects(DynLater.self).count == 0)
            #expect(reader.dynamicObjects("DynFirst").count == 1)
            // Freezing loads every table the process knows of, the new one included: the
            // frozen version has none of its objects.
            let frozen = reader.freeze()
            #expect(frozen.objects(DynLater.self).count == 0 && frozen.objects(DynFirst.self).count == 1)
            reader.refresh()
            #expect(reader.objects(DynLater.self).first?.name == "b")
        }
    }

    /// Another process adds a class while this one has the file open: the realm's next version
    /// has the class, and its databases, opened by this process after it began reading, are
    /// opened before the version is taken (LMDB refuses a handle newer than the transaction).
    @Test func aClassAnotherProcessAddsIsReadAfterTheRefresh() throws {
        try withTemporaryDirectory { dir in
            let url = dir.appendingPathComponent("shared.realm")
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [DynFirst.self]))
            realm.autorefresh = false
            try realm.write { realm.add(DynFirst(value: ["name": "a"])) }
            #expect(realm.objects(DynFirst.self).count == 1)
            let wrote = try run(builtExecutable(named: "RealmTestHelper"), ["write", url.path, "0", "10"])
            #expect(wrote.status == 0, "\(wrote.output)")
            realm.refresh()
            let people = realm.dynamicObjects("Person")
            #expect(people.count == 10)
            #expect(people.filter("age < 5").count == 5)
            #expect(realm.objects(DynFirst.self).count == 1)
        }
    }
}
