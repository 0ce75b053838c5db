import ArgumentParser
import Foundation
import InspectorImport
import LMDBRealm

/// `lmdbrealm`: looks into any LMDBRealm file from a terminal, with no model classes compiled
/// in (through the dynamic API: the schema stored in the file says what is there).
///
/// Exit statuses: 0 success; 1 the work failed (a file that cannot be opened, a bad row to
/// import, `verify` found damage); 2 a usage error.
@main
struct Inspector: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lmdbrealm",
        abstract: "Look into an LMDBRealm file: its classes, objects, health and figures.",
        discussion: """
            Every command opens the file read-only except import and compact, and none changes \
            the file's schema. Output to a pipe has no colours and no progress.
            """,
        subcommands: [
            Info.self, SchemaCommand.self, Query.self, Dump.self, Import.self, Verify.self, Compact.self, Watch.self,
            Explain.self, Stats.self, SyncSetupCommand.self,
        ]
    )

    /// Runs the command line, mapping ArgumentParser's usage errors (its status 64) to 2 and
    /// failures of the work to 1, each with a message on standard error.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as InspectorFailure {
            FileHandle.standardError.write(Data("lmdbrealm: \(failure.message)\n".utf8))
            Foundation.exit(failure.status)
        } catch let error as Realm.Error {
            FileHandle.standardError.write(Data("lmdbrealm: \(error.message)\n".utf8))
            Foundation.exit(1)
        } catch {
            let code = exitCode(for: error)
            if code == .success || code.rawValue == 1 {
                exit(withError: error)
            }
            // Help and version requests print to standard output and succeed; everything else
            // ArgumentParser rejects is a usage error.
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}

/// The arguments every command that reads one file takes.
struct FileArgument: ParsableArguments {
    @Argument(help: "The LMDBRealm file.", completion: .file())
    var path: String

    var url: URL { URL(fileURLWithPath: path) }

    /// Opens the file, read-only unless `writable`, at the schema version stored in it, with
    /// no model classes: every class is read through the dynamic API.
    /// - Throws: ``InspectorFailure`` naming the path and why it cannot be opened.
    func open(writable: Bool = false) throws -> Realm {
        try Inspector.open(url, writable: writable)
    }
}

extension Inspector {
    /// See ``FileArgument/open(writable:)``.
    static func open(_ url: URL, writable: Bool = false, queue: DispatchQueue? = nil) throws -> Realm {
        try checkReadable(url)
        let version: UInt64
        do {
            version = try schemaVersionAtURL(url)
        } catch let error as Realm.Error {
            throw InspectorFailure(message: "cannot open '\(url.path)': \(notARealm(error))")
        }
        let configuration = Realm.Configuration(fileURL: url, readOnly: !writable, schemaVersion: version)
        do {
            if let queue { return try Realm(configuration: configuration, queue: queue) }
            return try Realm(configuration: configuration)
        } catch let error as Realm.Error {
            throw InspectorFailure(message: "cannot open '\(url.path)': \(notARealm(error))")
        }
    }

    /// Throws when `url` is not a readable regular file, saying which of those it is not.
    static func checkReadable(_ url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw InspectorFailure(message: "cannot open '\(url.path)': no such file")
        }
        if isDirectory.boolValue {
            throw InspectorFailure(message: "cannot open '\(url.path)': it is a directory, not an LMDBRealm file")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw InspectorFailure(message: "cannot open '\(url.path)': permission denied")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        if size == 0 {
            throw InspectorFailure(message: "cannot open '\(url.path)': the file is empty, not an LMDBRealm file")
        }
    }

    /// The message of an open's error, said plainly when the file is not an LMDBRealm file.
    private static func notARealm(_ error: Realm.Error) -> String {
        error.code == .invalidDatabase ? "not an LMDBRealm file (\(error.message))" : error.message
    }

    /// The stored class `name`, or a failure listing the classes there are.
    static func objectSchema(_ realm: Realm, _ name: String) throws -> ObjectSchema {
        guard let schema = realm.schema[name] else {
            let names = realm.schema.objectSchema.map(\.className).joined(separator: ", ")
            throw InspectorFailure(
                message: "'\(realm.configuration.fileURL?.path ?? "")' has no class '\(name)' (it has: \(names.isEmpty ? "none" : names))")
        }
        if schema.isEmbedded {
            throw InspectorFailure(message: "'\(name)' is an embedded class: its objects are read through their parents")
        }
        return schema
    }

    /// The objects of `className` matching `predicate` (checked, so a bad query string is a
    /// message, not a stop), sorted by `sort`.
    static func results(
        _ realm: Realm, _ className: String, predicate: String?, sort: String?, descending: Bool
    ) throws -> Results<DynamicObject> {
        let schema = try objectSchema(realm, className)
        var results = realm.dynamicObjects(className)
        if let predicate, !predicate.isEmpty {
            do {
                results = try results.filter(checking: predicate, argumentArray: [])
            } catch let error as Realm.Error {
                throw InspectorFailure(message: error.message, status: 2)
            }
        }
        if let sort {
            let first = String(sort.split(separator: ".").first ?? "")
            guard schema[first] != nil else {
                throw InspectorFailure(message: "cannot sort by '\(sort)': '\(className)' has no property '\(first)'", status: 2)
            }
            results = results.sorted(byKeyPath: sort, ascending: !descending)
        }
        return results
    }
}

/// Whether standard error is a terminal (progress is shown only there).
var standardErrorIsTerminal: Bool { isatty(2) == 1 }

/// Whether standard output is a terminal.
var standardOutputIsTerminal: Bool { isatty(1) == 1 }

/// Writes `text` to standard output through a buffer (output of a million lines stays fast).
struct Output {
    private var buffer: [UInt8] = []
    private let handle: FileHandle

    init(_ handle: FileHandle = .standardOutput) {
        self.handle = handle
        buffer.reserveCapacity(1 << 16)
    }

    mutating func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func line(_ text: String) {
        write(text)
        buffer.append(0x0A)
    }

    /// Writes `value` as one line of JSON.
    mutating func jsonLine(_ value: JSONValue) {
        value.append(to: &buffer)
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}
