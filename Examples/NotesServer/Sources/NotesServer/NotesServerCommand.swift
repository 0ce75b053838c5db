import ArgumentParser
import Foundation
import Hummingbird
import Logging
import NotesServerKit
import ServiceLifecycle
import UnixSignals

/// `NotesServer`: serves notes over HTTP (the default), seeds a store, or measures how fast a
/// thousand event subscribers hear of a commit.
@main
struct NotesServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "NotesServer",
        abstract: "A notes service over HTTP, its data in LMDBRealm (or SQLite through GRDB).",
        subcommands: [Serve.self, Seed.self, SubscribeBench.self],
        defaultSubcommand: Serve.self)
}

/// The options that choose a store.
struct StoreOptions: ParsableArguments {
    @Option(help: "The store: lmdbrealm or grdb.")
    var backend: String = BackendKind.lmdbrealm.rawValue

    @Option(help: "The store's file (default: notes.realm or notes.sqlite in the current directory).")
    var path: String?

    @Option(help: "The reading queues of the LMDBRealm store (default: one per core, at most 8).")
    var readers: Int?

    func validate() throws {
        guard BackendKind(rawValue: backend) != nil else {
            throw ValidationError("--backend must be one of: \(BackendKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard (readers ?? 1) > 0 else { throw ValidationError("--readers must be at least 1") }
    }

    var kind: BackendKind { BackendKind(rawValue: backend) ?? .lmdbrealm }
    var url: URL { URL(fileURLWithPath: path ?? kind.defaultFileName) }

    func open() async throws -> any NotesBackend {
        switch kind {
        case .lmdbrealm: try await RealmNotesBackend(fileURL: url, readers: readers)
        case .grdb: try await kind.open(at: url)
        }
    }
}

/// Serves the routes until SIGTERM or SIGINT, then shuts down gracefully: the listener closes,
/// event streams end, and requests under way finish.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the notes over HTTP (the default).")

    @OptionGroup var store: StoreOptions

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port).")
    var port = 8080

    @Option(help: "A file to write the port to once the server listens.")
    var portFile: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("Unknown --log-level \(logLevel)") }
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        let logger = {
            var logger = Logger(label: "NotesServer")
            logger.logLevel = level
            return logger
        }()
        let backend = try await store.open()
        let (host, portFile, url) = (host, portFile, store.url)
        let app = NotesApplication.notes(
            backend: backend, metrics: NotesMetrics(), host: host, port: port, logger: logger
        ) { channel in
            let port = channel.localAddress?.port ?? 0
            logger.info("Serving \(backend.kind.rawValue) notes from \(url.path) on http://\(host):\(port)")
            if let portFile {
                do {
                    try "\(port)\n".write(toFile: portFile, atomically: true, encoding: .utf8)
                } catch {
                    logger.error("Cannot write the port to \(portFile): \(error)")
                }
            }
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("Stopped")
    }
}

/// Fills a store with notes, a batch to a transaction, before a benchmark.
struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write notes into a store, in batches.")

    @OptionGroup var store: StoreOptions

    @Option(help: "How many notes.")
    var notes = 20_000

    @Option(help: "Over how many folders (folder-0, folder-1, …).")
    var folders = 20

    @Option(help: "Notes per transaction.")
    var batch = 1_000

    func validate() throws {
        guard notes >= 0, folders > 0, batch > 0 else {
            throw ValidationError("--notes must be at least 0, --folders and --batch at least 1")
        }
    }

    func run() async throws {
        let backend = try await store.open()
        let start = ContinuousClock.now
        try await backend.seed(notes: notes, folders: folders, batchSize: batch)
        let elapsed = ContinuousClock.now - start
        print("Seeded \(notes) notes over \(folders) folders into \(store.url.path) (\(backend.kind.rawValue)) in \(elapsed)")
    }
}
