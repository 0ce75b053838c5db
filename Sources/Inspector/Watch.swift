import ArgumentParser
import Dispatch
import Foundation
import LMDBRealm

/// `watch`: prints the changes to a query's results as other processes commit them.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the objects that enter (+), leave (-) or change (~) a query's results as processes commit, until interrupted.",
        discussion: "Each line is the sign and the object as one line of JSON. What matches when the watch starts is counted on standard error.")

    @OptionGroup var file: FileArgument
    @Argument(help: "The class.") var className: String
    @Argument(help: "A Realm query string (all objects when omitted).") var predicate: String?

    func run() throws {
        let queue = DispatchQueue(label: "lmdbrealm.watch")
        let failure = try queue.sync { () throws -> Int32? in
            let realm = try Inspector.open(file.url, queue: queue)
            let results = try Inspector.results(realm, className, predicate: predicate, sort: nil, descending: false)
            let schema = try Inspector.objectSchema(realm, className)
            let watcher = Watcher(realm: realm, schema: schema)
            watcher.token = results.observe { change in watcher.report(change) }
            Watcher.current = watcher
            return nil
        }
        if let failure { throw ExitCode(failure) }
        // Ends by a signal (the default action of SIGINT and SIGTERM), or at an error.
        dispatchMain()
    }
}

/// Keeps the rendered lines of the results (to print what leaves them) and prints changes.
final class Watcher {
    nonisolated(unsafe) static var current: Watcher?

    let realm: Realm
    let schema: ObjectSchema
    var token: NotificationToken?
    private var lines: [String] = []
    private var renderer: ValueRenderer
    private let properties: [Property]

    init(realm: Realm, schema: ObjectSchema) {
        self.realm = realm
        self.schema = schema
        renderer = ValueRenderer(realm: realm)
        properties = ValueRenderer.shownProperties(schema)
    }

    private func line(_ object: DynamicObject) -> String {
        JSONValue.object(properties.map { ($0.name, renderer.render(object[$0.name], $0)) }).json
    }

    func report(_ change: RealmCollectionChange<Results<DynamicObject>>) {
        var out = Output()
        switch change {
        case .initial(let results):
            lines = results.map(line)
            FileHandle.standardError.write(Data("Watching \(results.count.grouped) objects of '\(schema.className)'.\n".utf8))
        case .update(let results, let deletions, let insertions, let modifications):
            for index in deletions.sorted(by: >) {
                out.line("- " + lines[index])
                lines.remove(at: index)
            }
            for index in insertions.sorted() {
                let text = line(results[index])
                lines.insert(text, at: index)
                out.line("+ " + text)
            }
            for index in modifications.sorted() where index < results.count {
                let text = line(results[index])
                lines[index] = text
                out.line("~ " + text)
            }
        case .error(let error):
            FileHandle.standardError.write(Data("lmdbrealm: \(error)\n".utf8))
            Foundation.exit(1)
        }
        out.flush()
    }
}
