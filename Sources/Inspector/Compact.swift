import ArgumentParser
import Foundation
import LMDBRealm
import Synchronization

/// `compact`: rewrites the file without free pages, atomically.
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite the file without its free pages (atomic: the old file stays whole until the new one replaces it).",
        discussion: "Refused while another process has the file open.")

    @OptionGroup var file: FileArgument

    func run() throws {
        try Inspector.checkReadable(file.url)
        let before = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        let messages = Mutex<[String]>([])
        var configuration = Realm.Configuration(fileURL: file.url, schemaVersion: try schemaVersionAtURL(file.url))
        configuration.shouldCompactOnLaunch = { _, _ in true }
        configuration.logger = Realm.Logger(level: .info) { _, message in messages.withLock { $0.append(message) } }
        do {
            _ = try Realm(configuration: configuration)
        } catch let error as Realm.Error {
            throw InspectorFailure(message: "cannot compact '\(file.path)': \(error.message)")
        }
        if messages.withLock({ $0.contains { $0.contains("another process has it open") } }) {
            throw InspectorFailure(message: "cannot compact '\(file.path)': another process has it open; close it there and try again")
        }
        let after = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        print("Compacted '\(file.path)' from \(before.grouped) to \(after.grouped) bytes.")
    }
}
