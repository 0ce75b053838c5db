import ArgumentParser
import Foundation
import InspectorImport
import LMDBRealm

/// The output formats of the commands that print objects.
enum ObjectFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}

/// `info`: the classes, their counts, properties, indexes and links; schema version; sizes.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the classes with their object counts, properties, indexes and links; the schema version; the sizes.")

    @OptionGroup var file: FileArgument

    func run() throws {
        let realm = try file.open()
        let statistics = try realm.statistics
        var out = Output()
        out.line("File            \(file.url.path)")
        out.line("Schema version  \(realm.configuration.schemaVersion)")
        out.line("Size            \(statistics.fileSize.bytes) on disk, \(statistics.usedSize.bytes) used")
        let classes = realm.schema.objectSchema
        out.line("Classes         \(classes.count)")
        for schema in classes {
            out.line("")
            let count = schema.isEmbedded ? "embedded" : "\(realm.dynamicObjects(schema.className).count.grouped) objects"
            out.line("\(schema.className)  (\(count))")
            let width = schema.properties.map(\.name.count).max() ?? 0
            for property in schema.properties {
                out.line("  " + property.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + Info.describe(property))
            }
            for group in schema.compoundIndexes {
                out.line("  compound index (\(group.joined(separator: ", ")))")
            }
            for group in schema.coveringIndexes {
                out.line("  covering index (\(group.joined(separator: ", ")))")
            }
        }
        out.flush()
    }

    /// A property's kind and traits: `string?  indexed`, `→ Author`, `List<Keyword>`.
    static func describe(_ property: Property) -> String {
        var kind: String
        let element = property.objectClassName ?? property.type.rawValue
        if property.type == .linkingObjects {
            kind = "← \(element).\(property.linkOriginPropertyName ?? "?") (backlinks)"
        } else if property.isMap {
            kind = "Map<String, \(element)\(property.isOptional ? "?" : "")>"
        } else if property.isArray {
            kind = "\(property.isSet ? "MutableSet" : "List")<\(element)\(property.isOptional ? "?" : "")>"
        } else if property.type == .object {
            kind = "→ \(element)"
        } else {
            kind = element + (property.isOptional ? "?" : "")
        }
        if property.isPrimary { kind += "  primary key" }
        if property.isIndexed && !property.isPrimary { kind += "  indexed" }
        return kind
    }
}

/// `schema`: the stored classes as text, JSON, or Swift model classes to paste into an app.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema", abstract: "Print the stored classes as text, JSON, or Swift model classes.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, swift }

    @OptionGroup var file: FileArgument
    @Option(help: "text, json or swift.") var format: Format = .text

    func run() throws {
        let realm = try file.open()
        let schema = realm.schema
        var out = Output()
        switch format {
        case .text:
            out.line(schema.objectSchema.map(\.description).joined(separator: "\n"))
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            out.line(String(decoding: try encoder.encode(schema.objectSchema), as: UTF8.self))
        case .swift:
            out.write(SchemaCommand.swiftSource(schema, version: realm.configuration.schemaVersion))
        }
        out.flush()
    }

    /// Model classes declaring `schema`, ready to compile against LMDBRealm.
    static func swiftSource(_ schema: Schema, version: UInt64) -> String {
        var text = "import LMDBRealm\n\n// The classes of a realm at schema version \(version).\n"
        for object in schema.objectSchema {
            text += "\nfinal class \(object.className): \(object.isEmbedded ? "EmbeddedObject" : "Object") {\n"
            for property in object.properties {
                text += "    \(attribute(property)) var \(property.name): \(swiftType(property))\n"
            }
            for (name, groups) in [("compoundIndexes", object.compoundIndexes), ("coveringIndexes", object.coveringIndexes)] where !groups.isEmpty {
                let listed = groups.map { "[" + $0.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
                text += "\n    override class func \(name)() -> [[String]] {\n        [\(listed.joined(separator: ", "))]\n    }\n"
            }
            text += "}\n"
        }
        return text
    }

    private static func attribute(_ property: Property) -> String {
        if property.isPrimary { return "@Persisted(primaryKey: true)" }
        if property.type == .linkingObjects { return "@Persisted(originProperty: \"\(property.linkOriginPropertyName ?? "")\")" }
        if property.isIndexed { return "@Persisted(indexed: true)" }
        return "@Persisted"
    }

    private static func swiftType(_ property: Property) -> String {
        let element: String
        switch property.type {
        case .bool: element = "Bool"
        case .int: element = "Int"
        case .float: element = "Float"
        case .double: element = "Double"
        case .string: element = "String"
        case .data: element = "Data"
        case .date: element = "Date"
        case .uuid: element = "UUID"
        case .objectId: element = "ObjectId"
        case .decimal: element = "Decimal128"
        case .mixed: element = "AnyRealmValue"
        case .object, .linkingObjects: element = property.objectClassName ?? "Object"
        }
        if property.type == .linkingObjects { return "LinkingObjects<\(element)>" }
        // Links are optional, in collections too (in a map), as RealmSwift requires.
        let optional = (property.isOptional || (property.type == .object && (property.isMap || !property.isArray))) && property.type != .mixed
        if property.isMap { return "Map<String, \(element)\(optional ? "?" : "")>" }
        if property.isArray { return "\(property.isSet ? "MutableSet" : "List")<\(element)\(optional ? "?" : "")>" }
        return element + (optional ? "?" : "")
    }
}

/// `query`: the objects of a class that match a query string, as a table, JSON or CSV.
struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the objects of a class matching a query string.",
        discussion: "The predicate is a Realm query string: \"wordCount > 500 AND section == 'Sports'\".")

    @OptionGroup var file: FileArgument
    @Argument(help: "The class.") var className: String
    @Argument(help: "A Realm query string (all objects when omitted).") var predicate: String?
    @Option(help: "The key path to sort by.") var sort: String?
    @Flag(help: "Sort in descending order.") var descending = false
    @Option(help: "Print at most this many objects.") var limit: Int?
    @Option(help: "table, json (one object per line) or csv.") var format: ObjectFormat = .table
    @Option(help: "Only these properties, in this order (comma-separated).") var properties: String?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be zero or more") }
        if descending && sort == nil { throw ValidationError("--descending needs --sort") }
    }

    func run() throws {
        let realm = try file.open()
        let schema = try Inspector.objectSchema(realm, className)
        let results = try Inspector.results(realm, className, predicate: predicate, sort: sort, descending: descending)
        var renderer = ValueRenderer(realm: realm)
        var properties = ValueRenderer.shownProperties(schema)
        if let names = self.properties {
            properties = try names.split(separator: ",").map { name in
                let name = name.trimmingCharacters(in: .whitespaces)
                guard let property = schema[name] else {
                    throw InspectorFailure(message: "'\(className)' has no property '\(name)'", status: 2)
                }
                return property
            }
        }
        var out = Output()
        var printer = ObjectPrinter(format: format, properties: properties.map(\.name))
        var printed = 0
        for object in results {
            if let limit, printed >= limit { break }
            printer.add(properties.map { renderer.render(object[$0.name], $0) }, to: &out)
            printed += 1
        }
        printer.finish(to: &out)
        if format == .table {
            out.line("(\(printed.grouped) of \(results.count.grouped) objects)")
        }
        out.flush()
    }
}

/// Prints rows of rendered values: JSON lines and CSV as they come, a table at the end (its
/// columns fit the widest cell, and the whole fits the terminal's width).
struct ObjectPrinter {
    let format: ObjectFormat
    let names: [String]
    let className: String?
    private var rows: [[String]] = []
    private var headerDone = false

    init(format: ObjectFormat, properties names: [String], className: String? = nil) {
        self.format = format
        self.names = names
        self.className = className
    }

    mutating func add(_ values: [JSONValue], to out: inout Output) {
        switch format {
        case .json:
            var members = zip(names, values).map { ($0, $1) }
            if let className { members.insert(("_class", .string(className)), at: 0) }
            out.jsonLine(.object(members))
        case .csv:
            if !headerDone {
                out.write(ObjectPrinter.csvRow(names))
                headerDone = true
            }
            out.write(ObjectPrinter.csvRow(values.map(\.cell)))
        case .table:
            rows.append(values.map(\.cell))
        }
    }

    mutating func finish(to out: inout Output) {
        if format == .csv && !headerDone { out.write(ObjectPrinter.csvRow(names)) }
        guard format == .table else { return }
        for line in ObjectPrinter.table(header: names, rows: rows, width: terminalWidth) { out.line(line) }
    }

    /// One CSV record (RFC 4180): fields with a comma, quote or line break are quoted, quotes
    /// doubled; lines end with CRLF.
    static func csvRow(_ fields: [String]) -> String {
        fields.map { field in
            field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
        }.joined(separator: ",") + "\r\n"
    }

    /// The lines of a table of `rows` under `header`, no wider than `width`: the widest columns
    /// are shortened first, their cells cut with "…"; line breaks in cells show as "⏎".
    static func table(header: [String], rows: [[String]], width: Int) -> [String] {
        let clean = { (s: String) in s.replacingOccurrences(of: "\r\n", with: "⏎").replacingOccurrences(of: "\n", with: "⏎") }
        let all = [header] + rows.map { $0.map(clean) }
        var widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        let separators = 2 * max(0, header.count - 1)
        while widths.reduce(0, +) + separators > width, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }),
            widths[widest] > 4
        {
            widths[widest] -= 1
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, w in
                let fitted = cell.count > w ? String(cell.prefix(w - 1)) + "…" : cell
                return fitted.padding(toLength: w, withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingTrailingSpaces
        }
        return [line(header), line(widths.map { String(repeating: "─", count: $0) })] + rows.map { line($0.map(clean)) }
    }
}

/// The terminal's width in columns: `COLUMNS` if set, else the terminal's, else 120.
var terminalWidth: Int {
    if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
    var size = winsize()
    if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
    return 120
}

extension String {
    var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

/// `dump`: every object of one class or all classes, as JSON lines or CSV.
struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every object of a class (or of every class) as JSON lines or CSV.",
        discussion: """
            JSON: one object per line, keys are property names; links as the target's primary key \
            (nested when the target's class has none), lists and sets as arrays, maps as objects, \
            dates in ISO 8601, data in base64. Without --class each line starts with "_class". \
            `lmdbrealm import` reads this back.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, csv }

    @OptionGroup var file: FileArgument
    @Option(name: .customLong("class"), help: "Only this class.") var className: String?
    @Option(help: "json (one object per line) or csv.") var format: Format = .json
    @Option(help: "Write to this file instead of standard output.") var output: String?

    func validate() throws {
        if format == .csv && className == nil { throw ValidationError("--format csv needs --class: each class has its own columns") }
    }

    func run() throws {
        let realm = try file.open()
        let classes =
            try className.map { [try Inspector.objectSchema(realm, $0)] }
            ?? realm.schema.objectSchema.filter { !$0.isEmbedded }
        let handle: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil) else {
                throw InspectorFailure(message: "cannot write '\(output)'")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        } else {
            handle = .standardOutput
        }
        var out = Output(handle)
        let results = classes.map { realm.dynamicObjects($0.className) }
        var progress = ProgressBar(total: results.reduce(0) { $0 + $1.count }, unit: "objects")
        var renderer = ValueRenderer(realm: realm)
        for (schema, objects) in zip(classes, results) {
            let properties = ValueRenderer.shownProperties(schema)
            var printer = ObjectPrinter(
                format: format == .json ? .json : .csv, properties: properties.map(\.name),
                className: className == nil ? schema.className : nil)
            for object in objects {
                printer.add(properties.map { renderer.render(object[$0.name], $0) }, to: &out)
                progress.advance()
            }
            printer.finish(to: &out)
        }
        out.flush()
        progress.finish()
        if output != nil { try handle.close() }
    }
}

/// `explain`: the plan a query takes.
struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the plan a query takes: the index it uses, or the scan.")

    @OptionGroup var file: FileArgument
    @Argument(help: "The class.") var className: String
    @Argument(help: "A Realm query string.") var predicate: String
    @Option(help: "The key path to sort by.") var sort: String?
    @Flag(help: "Sort in descending order.") var descending = false

    func run() throws {
        let realm = try file.open()
        let results = try Inspector.results(realm, className, predicate: predicate, sort: sort, descending: descending)
        print(results.explain())
    }
}

/// `stats`: the file's figures.
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the file's size, the part in use, the map size, the readers and the versions they pin.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @OptionGroup var file: FileArgument
    @Option(help: "text or json.") var format: Format = .text

    func run() throws {
        let realm = try file.open()
        let s = try realm.statistics
        switch format {
        case .text:
            print(
                """
                File                    \(file.url.path)
                File size               \(s.fileSize.grouped) bytes (\(s.fileSize.bytes))
                Used                    \(s.usedSize.grouped) bytes (\(s.usedSize.bytes))
                Free                    \((s.fileSize - s.usedSize).grouped) bytes
                Map size                \(s.mapSize.grouped) bytes (\(s.mapSize.bytes))
                Readers                 \(s.readers)
                Current version         \(s.currentVersion)
                Oldest pinned version   \(s.oldestPinnedVersion.map(String.init) ?? "none")
                """)
        case .json:
            let members: [(String, JSONValue)] = [
                ("path", .string(file.url.path)), ("fileSize", .int(s.fileSize)), ("usedSize", .int(s.usedSize)),
                ("mapSize", .int(s.mapSize)), ("readers", .int(s.readers)), ("currentVersion", .int(s.currentVersion)),
                ("oldestPinnedVersion", s.oldestPinnedVersion.map { .int($0) } ?? .null),
            ]
            print(JSONValue.object(members).json)
        }
    }
}
