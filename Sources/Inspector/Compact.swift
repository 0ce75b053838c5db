import ArgumentParser
import Foundation
import InspectorImport
import LMDBRealm
import Dispatch
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
        // On a terminal, the copy's progress: the size of the compacted copy being written
        // beside the file, against the bytes in use.
        let watcher = CopyWatcher(copy: file.url.deletingLastPathComponent().appendingPathComponent(".\(file.url.lastPathComponent).compact-\(getpid())"))
        configuration.shouldCompactOnLaunch = { _, used in
            if standardErrorIsTerminal { watcher.start(expecting: used) }
            return true
        }
        defer { watcher.stop() }
        configuration.logger = Realm.Logger(level: .info) { _, message in messages.withLock { $0.append(message) } }
        do {
            _ = try Realm(configuration: configuration)
            watcher.stop()
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

/// Draws a progress bar from the growing size of a file being written, on a thread of its own,
/// until stopped.
final class CopyWatcher: Sendable {
    private let copy: URL
    private let stopped = Mutex(false)
    /// Wakes the drawing thread early when stopped.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled by the drawing thread once its bar is cleared.
    private let finished = DispatchSemaphore(value: 0)
    private let running = Mutex(false)

    init(copy: URL) {
        self.copy = copy
    }

    func start(expecting total: Int) {
        running.withLock { $0 = true }
        Thread { [self] in
            var bar = ProgressBar(total: total, unit: "bytes")
            while !stopped.withLock({ $0 }) {
                let size = (try? FileManager.default.attributesOfItem(atPath: copy.path)[.size] as? Int) ?? 0
                bar.advance(by: max(0, size - bar.done))
                // Ten times a second, or at once when stopped.
                _ = wake.wait(timeout: .now() + .milliseconds(100))
            }
            bar.finish()
            finished.signal()
        }.start()
    }

    /// Stops the drawing and clears the bar; calling it again does nothing.
    func stop() {
        guard running.withLock({ was in defer { was = false }; return was }) else { return }
        stopped.withLock { $0 = true }
        wake.signal()
        // Waits for the last redraw to be cleared, so the summary prints on a clean line.
        finished.wait()
    }
}
