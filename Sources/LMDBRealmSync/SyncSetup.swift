import Foundation

/// The shared log's tables, a PostgreSQL role for each node and the row-level security that
/// holds every node to its own change sets: the SQL script an administrator runs once
/// (`lmdbrealm sync-setup` prints it).
///
/// ```sh
/// lmdbrealm sync-setup --node api-1 --node api-2 --compactor compactor \
///     | psql -v ON_ERROR_STOP=1 "postgres://admin@db.internal/app?sslmode=verify-full"
/// psql … -c "ALTER ROLE \"api-1\" PASSWORD '…'"     # or a certificate login in pg_hba.conf
/// ```
///
/// Once it has run, PostgreSQL itself enforces that
/// - a node logs in as the role named by its node id, and inserts change sets only under that
///   id (a node posing as another is refused: its status is
///   ``SyncClient/Status/notPermitted(reason:)``);
/// - no node updates or deletes the log, or writes the snapshot;
/// - only the compactor's role folds the log into the snapshot (other nodes leave
///   compaction to it, whatever their ``LogCompaction`` says).
///
/// The nodes' roles share the group role `<prefix>_node`, the compactor's also
/// `<prefix>_compactor` (roles are the server's, not one database's: give each application
/// on a server its own `prefix`). The script can run again, with more nodes: what exists is
/// kept, the grants and policies are made anew.
public enum SyncSetup {
    /// The tables of the shared log, as a node that may create tables makes them when they are
    /// missing, and as the setup script does: one statement each.
    package static let tableStatements = [
        """
        CREATE TABLE IF NOT EXISTS lmdbrealm_changes (
            sequence bigserial PRIMARY KEY,
            node text NOT NULL,
            local_sequence bigint NOT NULL,
            changes bytea NOT NULL,
            UNIQUE (node, local_sequence))
        """,
        """
        CREATE TABLE IF NOT EXISTS lmdbrealm_objects (
            class text NOT NULL,
            key bytea NOT NULL,
            state bytea NOT NULL,
            has_links boolean NOT NULL,
            PRIMARY KEY (class, key))
        """,
        // The log's identity: a new one for every new log, so that a node that synced with
        // another (its tables recreated) finds out.
        "CREATE TABLE IF NOT EXISTS lmdbrealm_log (id int PRIMARY KEY CHECK (id = 1), epoch text NOT NULL)",
        "INSERT INTO lmdbrealm_log VALUES (1, gen_random_uuid()::text) ON CONFLICT (id) DO NOTHING",
        """
        CREATE TABLE IF NOT EXISTS lmdbrealm_snapshot (
            id int PRIMARY KEY CHECK (id = 1),
            through bigint NOT NULL,
            clock bigint NOT NULL,
            schema_version bigint NOT NULL)
        """,
    ]

    /// The names of the shared log's tables.
    package static let tables = ["lmdbrealm_changes", "lmdbrealm_objects", "lmdbrealm_snapshot", "lmdbrealm_log"]

    /// The longest role name PostgreSQL keeps: a longer one is cut short without an error, and
    /// would no longer be the node's id.
    static let longestRoleName = 63

    /// A node id or prefix the script cannot use.
    public struct InvalidName: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The script that makes the shared log's tables (if missing), a login role for each of
    /// `nodes` (named by its node id) and for `compactor`, the group roles `<prefix>_node` and
    /// `<prefix>_compactor`, their grants and the log's row-level security policies, in one
    /// transaction. It makes no passwords: set them afterwards, or let `pg_hba.conf` admit
    /// the roles by certificate.
    ///
    /// - Parameters:
    ///   - nodes: The node ids (``SyncClient/node``) that will sync, each the name of its role.
    ///   - compactor: The node that alone folds the log into the snapshot (``SyncClient`` with
    ///     this node id and a ``LogCompaction`` that compacts); `nil`: no node compacts.
    ///   - prefix: The start of the group roles' names.
    /// - Throws: ``InvalidName`` for an empty name, one longer than 63 bytes (PostgreSQL would cut
    ///   it short), one holding a NUL or `$lmdbrealm$`, the same name twice, or a prefix that is not letters,
    ///   digits and underscores.
    public static func script(nodes: [String], compactor: String? = nil, prefix: String = "lmdbrealm") throws -> String {
        guard !prefix.isEmpty, prefix.utf8.count <= longestRoleName - "_compactor".utf8.count,
            prefix.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") })
        else {
            throw InvalidName(description: "the prefix '\(prefix)' is not 1 to 53 letters, digits and underscores")
        }
        var seen = Set<String>()
        for name in nodes + (compactor.map { [$0] } ?? []) {
            if name.isEmpty { throw InvalidName(description: "a node id is empty") }
            if name.utf8.count > longestRoleName {
                throw InvalidName(
                    description: "the node id '\(name)' is \(name.utf8.count) bytes long: PostgreSQL cuts role names "
                        + "after \(longestRoleName), and the role would not be the node's id")
            }
            if name.contains("\0") { throw InvalidName(description: "the node id '\(name)' holds a NUL character") }
            if name.contains("$lmdbrealm$") { throw InvalidName(description: "the node id '\(name)' holds $lmdbrealm$, the script's quote") }
            if !seen.insert(name).inserted { throw InvalidName(description: "the node id '\(name)' is given twice") }
        }
        let group = "\(prefix)_node"
        let compactors = "\(prefix)_compactor"
        var lines: [String] = [
            "-- LMDBRealmSync: the shared log, a role for each node and row-level security.",
            "-- Run as a role that may create roles, in the database the nodes sync through:",
            "--   psql -v ON_ERROR_STOP=1 -f this-file.sql \"postgres://admin@host/database\"",
            "-- Then give each node's role a password (ALTER ROLE \"node\" PASSWORD '...') or a",
            "-- certificate login in pg_hba.conf.",
            "BEGIN;",
            "SET LOCAL client_min_messages = warning;",
            "SELECT pg_advisory_xact_lock(7300);",
        ]
        lines += tableStatements.map { $0 + ";" }
        lines.append("")
        lines.append("-- The group roles that hold the privileges, and a login role for each node.")
        for role in [group, compactors] { lines.append(createRole(role, login: false)) }
        for node in nodes {
            lines.append(createRole(node, login: true))
            lines.append("GRANT \(identifier(group)) TO \(identifier(node));")
        }
        if let compactor {
            lines.append(createRole(compactor, login: true))
            lines.append("GRANT \(identifier(group)), \(identifier(compactors)) TO \(identifier(compactor));")
        }
        let g = identifier(group)
        let c = identifier(compactors)
        lines += [
            "",
            "-- Nodes read the log and the snapshot and append to the log; the compactor also",
            "-- writes the snapshot and removes what it folded. Nobody else reaches the tables.",
            "REVOKE ALL ON lmdbrealm_changes, lmdbrealm_objects, lmdbrealm_snapshot, lmdbrealm_log FROM PUBLIC;",
            "REVOKE ALL ON SEQUENCE lmdbrealm_changes_sequence_seq FROM PUBLIC;",
            "GRANT SELECT, INSERT ON lmdbrealm_changes TO \(g);",
            "GRANT USAGE ON SEQUENCE lmdbrealm_changes_sequence_seq TO \(g);",
            "GRANT SELECT ON lmdbrealm_objects, lmdbrealm_snapshot, lmdbrealm_log TO \(g);",
            "GRANT SELECT, DELETE ON lmdbrealm_changes TO \(c);",
            "GRANT SELECT, INSERT, UPDATE ON lmdbrealm_objects, lmdbrealm_snapshot TO \(c);",
            "",
            "-- A node appends change sets under its own id only (its role's name).",
            "ALTER TABLE lmdbrealm_changes ENABLE ROW LEVEL SECURITY;",
            "DROP POLICY IF EXISTS lmdbrealm_reads ON lmdbrealm_changes;",
            "CREATE POLICY lmdbrealm_reads ON lmdbrealm_changes FOR SELECT TO \(g), \(c) USING (true);",
            "DROP POLICY IF EXISTS lmdbrealm_appends ON lmdbrealm_changes;",
            "CREATE POLICY lmdbrealm_appends ON lmdbrealm_changes FOR INSERT TO \(g) WITH CHECK (node = current_user);",
            "DROP POLICY IF EXISTS lmdbrealm_compacts ON lmdbrealm_changes;",
            "CREATE POLICY lmdbrealm_compacts ON lmdbrealm_changes FOR DELETE TO \(c) USING (true);",
            "COMMIT;",
            "",
        ]
        return lines.joined(separator: "\n")
    }

    /// `CREATE ROLE name`, unless a role of that name exists.
    private static func createRole(_ name: String, login: Bool) -> String {
        "DO $lmdbrealm$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = \(literal(name))) THEN "
            + "CREATE ROLE \(identifier(name)) \(login ? "LOGIN" : "NOLOGIN"); END IF; END $lmdbrealm$;"
    }

    /// `name` as a quoted SQL identifier.
    static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `text` as an SQL string literal (standard strings: a backslash is itself).
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
