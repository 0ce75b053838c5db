import ArgumentParser
import Foundation
import InspectorImport
import LMDBRealm

/// `import`: objects from JSON (an array, or one object per line) or CSV with a header row,
/// in one write transaction.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add objects to a class from a .json file (an array, or one object per line) or a .csv file with a header row.",
        discussion: """
            The import is one write transaction: the first bad row (a value of the wrong kind, a \
            missing primary key, a primary key already stored under the default policy, a link \
            to an object that is not there) stops it with its line number, and the file is left \
            as it was. Links are given as the target's primary key. JSON lines whose "_class" \
            names another class (from `dump` without --class) are skipped.
            """)

    enum Update: String, ExpressibleByArgument, CaseIterable { case error, modified, all }

    @OptionGroup var file: FileArgument
    @Argument(help: "The class.") var className: String
    @Argument(help: "A .json or .csv file.", completion: .file(extensions: ["json", "jsonl", "csv"])) var input: String
    @Option(help: "error (a stored primary key stops the import), modified or all (update the stored object).")
    var update: Update = .error

    func run() throws {
        let realm = try file.open(writable: true)
        let schema = try Inspector.objectSchema(realm, className)
        guard let data = FileManager.default.contents(atPath: input) else {
            throw InspectorFailure(message: "cannot read '\(input)'")
        }
        let csv = input.lowercased().hasSuffix(".csv")
        let rows = try csv ? ImportRows.csv(data, input) : ImportRows.json(data, input)
        let converter = RowConverter(realm: realm, schema: schema, source: input, csv: csv)
        var progress = ProgressBar(total: rows.count, unit: "rows")
        let policy: UpdatePolicy =
            switch update {
            case .error: .error
            case .modified: .modified
            case .all: .all
            }
        var imported = 0
        try realm.write {
            for row in rows {
                if case .string(let name)? = row.values["_class"], name != className { continue }
                let values = try converter.convert(row)
                if policy == .error, let key = schema.primaryKeyProperty,
                    let stored = values[key.name] ?? nil, realm.dynamicObject(ofType: className, forPrimaryKey: stored) != nil
                {
                    throw InspectorFailure(
                        message: "\(row.place): a '\(className)' with primary key \(row.values[key.name]?.shown ?? "?") is stored already "
                            + "(give --update modified or all to update it)")
                }
                realm.dynamicCreate(className, value: values, update: policy)
                imported += 1
                progress.advance()
            }
        }
        progress.finish()
        print("Imported \(imported.grouped) objects into '\(className)'.")
    }
}
