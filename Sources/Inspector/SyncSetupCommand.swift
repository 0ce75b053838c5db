import ArgumentParser
import InspectorImport
import LMDBRealmSync

/// `lmdbrealm sync-setup`: prints the SQL script that makes LMDBRealmSync's shared log, a
/// PostgreSQL role per node and the row-level security that holds each node to its own change
/// sets (``SyncSetup/script(nodes:compactor:prefix:)``), for an administrator to read and run.
struct SyncSetupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-setup",
        abstract: "Print the SQL that makes the sync log's tables, a PostgreSQL role per node and row-level security.",
        discussion: """
            Run what it prints once, as a role that may create roles, in the database the nodes \
            sync through (psql -v ON_ERROR_STOP=1 -f setup.sql "postgres://admin@host/db"), then \
            give each role a password. Each node then logs in as the role named by its node id: \
            PostgreSQL refuses it change sets under another id, and any update or deletion of the \
            log; only the compactor folds the log into the snapshot. Running it again with more \
            nodes keeps what exists.
            """)

    @Option(name: .customLong("node"), help: "A node id (its role gets the same name); repeat for each node.")
    var nodes: [String] = []

    @Option(help: "The node that alone compacts the log (a role of its own).")
    var compactor: String?

    @Option(help: "The start of the group roles' names (<prefix>_node, <prefix>_compactor).")
    var prefix = "lmdbrealm"

    func validate() throws {
        if nodes.isEmpty && compactor == nil { throw ValidationError("Give at least one --node (or a --compactor).") }
    }

    func run() throws {
        do {
            print(try SyncSetup.script(nodes: nodes, compactor: compactor, prefix: prefix), terminator: "")
        } catch let error as SyncSetup.InvalidName {
            throw InspectorFailure(message: "sync-setup: \(error.description)", status: 2)
        }
    }
}
