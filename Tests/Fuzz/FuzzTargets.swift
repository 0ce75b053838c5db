// libFuzzer targets (`make fuzz`): the predicate parser, the record decoder, opening and
// verifying arbitrary files, and the inspector's import of JSON and CSV rows. Built with `-sanitize=address` and coverage by the Makefile, which
// links libFuzzer and defines FUZZING; built without them (as `swift build` does), the program
// runs each file it is given once, the regression form of the corpus.
//
//     FuzzTargets predicate|record|verify|import [libFuzzer options] [corpus directories]
import Foundation
import InspectorImport
@_spi(Testing) import LMDBRealm

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    func runDriver(
        _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt
#endif

final class FuzzNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var topic = ""
    @Persisted var score = 0.0
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var tags: List<String>
    @Persisted var ratings: Map<String, Int>
    @Persisted var author: FuzzAuthor?
}

final class FuzzAuthor: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(originProperty: "author") var notes: LinkingObjects<FuzzNote>
}

enum Targets {
    static let types: [Object.Type] = [FuzzNote.self, FuzzAuthor.self]

    /// The realm the predicate target queries: a few notes and authors, in memory.
    nonisolated(unsafe) static var queried: Realm?
    // nonisolated(unsafe): the fuzz driver calls the target on one thread, one input at a time.
    nonisolated(unsafe) static var target: (UnsafeRawBufferPointer) -> Void = { _ in }

    static func predicate(_ data: UnsafeRawBufferPointer) {
        let realm = queried!
        let text = String(decoding: data, as: UTF8.self)
        // A query that parses runs, through each class.
        _ = try? realm.objects(FuzzNote.self).filter(checking: text).count
        _ = try? realm.objects(FuzzAuthor.self).filter(checking: text).count
    }

    static let recordTypes = PropertyType.allCases.filter { $0 != .linkingObjects }

    static func record(_ data: UnsafeRawBufferPointer) {
        // The first byte picks the column kinds; the rest is the record.
        guard let first = data.first else { return }
        let count = Int(first % 9)
        let types = (0..<count).map { recordTypes[(Int(first) / 9 + $0 * 5) % recordTypes.count] }
        _ = RecordDecoderCheck.problems(ofRecord: UnsafeRawBufferPointer(rebasing: data.dropFirst()), types: types)
    }

    /// The import target: the first byte picks JSON or CSV and the class; the rest is the
    /// file. Its rows are converted by the class's schema and created in a write that is then
    /// cancelled, so every input starts from the same realm (`queried`'s notes and authors).
    static func importRows(_ data: UnsafeRawBufferPointer) {
        guard let first = data.first else { return }
        let realm = queried!
        let text = Data(data.dropFirst())
        let csv = first & 1 == 1
        let className = first & 2 == 0 ? "FuzzNote" : "FuzzAuthor"
        guard let schema = realm.schema[className], let rows = try? (csv ? ImportRows.csv(text, "fuzzed") : ImportRows.json(text, "fuzzed"))
        else { return }
        let converter = RowConverter(realm: realm, schema: schema, source: "fuzzed", csv: csv)
        realm.beginWrite()
        defer { realm.cancelWrite() }
        for row in rows {
            guard let values = try? converter.convert(row) else { return }
            realm.dynamicCreate(className, value: values, update: .modified)
        }
    }

    nonisolated(unsafe) static var directory: URL?

    static func verify(_ data: UnsafeRawBufferPointer) {
        let url = directory!.appendingPathComponent("fuzzed.realm")
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(atPath: url.path + "-lock")
        guard FileManager.default.createFile(atPath: url.path, contents: Data(data)) else { return }
        guard let realm = try? Realm(configuration: Realm.Configuration(fileURL: url, readOnly: true, objectTypes: types)) else { return }
        guard let report = try? realm.verify(), report.isSound else { return }
        // A sound file reads whole.
        for note in realm.objects(FuzzNote.self) { _ = (note.topic, note.tags.count, note.ratings.count, note.author?.name) }
    }

    /// Writes the seed of the verify target's corpus: a small file of notes and authors.
    static func writeSeed(_ path: String) throws {
        let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: types))
        try realm.write {
            for id in 0..<6 {
                let note = FuzzNote()
                note.id = id
                note.topic = "t\(id % 2)"
                note.tags.append(objectsIn: ["a", "b"])
                note.ratings["home"] = id
                note.author = realm.object(ofType: FuzzAuthor.self, forPrimaryKey: "ada") ?? FuzzAuthor(value: ["ada"])
                realm.add(note, update: .modified)
            }
        }
    }

    static func prepare(_ name: String) -> ((UnsafeRawBufferPointer) -> Void)? {
        switch name {
        case "predicate":
            let realm = try! Realm(configuration: Realm.Configuration(inMemoryIdentifier: "fuzz", objectTypes: types))
            try! realm.write {
                for id in 0..<20 {
                    let note = FuzzNote()
                    note.id = id
                    note.topic = "topic \(id % 3)"
                    note.score = Double(id) / 3
                    note.tags.append(objectsIn: ["a", "b\(id % 2)"])
                    note.ratings["home"] = id
                    note.author = realm.object(ofType: FuzzAuthor.self, forPrimaryKey: "author \(id % 4)") ?? FuzzAuthor(value: ["author \(id % 4)"])
                    realm.add(note, update: .modified)
                }
            }
            queried = realm
            return predicate
        case "record": return record
        case "import":
            _ = prepare("predicate")
            return importRows
        case "verify":
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-verify-\(getpid())")
            try! FileManager.default.createDirectory(at: directory!, withIntermediateDirectories: true)
            return verify
        default: return nil
        }
    }
}

@main struct FuzzTargets {
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count == 3 && arguments[1] == "write-seed" {
            do {
                try Targets.writeSeed(arguments[2])
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                exit(1)
            }
        }
        guard arguments.count >= 2, let target = Targets.prepare(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: FuzzTargets predicate|record|verify|import [libFuzzer options] [corpus...]\n".utf8))
            exit(2)
        }
        Targets.target = target
        #if FUZZING
            var argv: [UnsafeMutablePointer<CChar>?] = ([arguments[0]] + arguments.dropFirst(2)).map { strdup($0) }
            argv.append(nil)
            var argc = CInt(argv.count - 1)
            let status = argv.withUnsafeMutableBufferPointer { buffer in
                var base = buffer.baseAddress!
                return runDriver(&argc, &base) { data, count in
                    Targets.target(UnsafeRawBufferPointer(start: data, count: count))
                    return 0
                }
            }
            exit(status)
        #else
            // Each file of the given files and directories, once.
            var ran = 0
            for path in arguments.dropFirst(2) {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
                let files =
                    isDirectory.boolValue
                    ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 } : [path]
                for file in files {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    data.withUnsafeBytes { target($0) }
                    ran += 1
                }
            }
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
            print("\(arguments[1]): ran \(ran) inputs; \(descriptors) file descriptors open after them")
        #endif
    }
}
