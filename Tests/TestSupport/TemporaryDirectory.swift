public import Foundation
@_spi(Testing) import LMDBKit
public import Testing

/// Runs `body` with a new, empty directory of its own, then checks that nothing `body` opened
/// in it is still open (no environment, so no transaction or reader slot of this process) and
/// removes it.
///
/// ```swift
/// @Test func roundTrip() throws {
///     try withTemporaryDirectory { dir in
///         let realm = try Realm(configuration: .init(fileURL: dir.appendingPathComponent("a.realm")))
///         …
///     }
/// }
/// ```
public func withTemporaryDirectory<R>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (URL) throws -> R
) throws -> R {
    let url = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: url) }
    let result = try body(url)
    expectNothingOpen(in: url, sourceLocation: sourceLocation)
    return result
}

/// The `async` form of ``withTemporaryDirectory(sourceLocation:_:)``.
public func withTemporaryDirectory<R>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (URL) async throws -> R
) async throws -> R {
    let url = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: url) }
    let result = try await body(url)
    // Waits on a thread of its own: what is still closing may need this task's pool thread.
    let open = try await onNewThread { stillOpen(under: url) }
    #expect(open.isEmpty, "still open at the end of the test: \(open)", sourceLocation: sourceLocation)
    return result
}

/// A new empty directory under the system's temporary directory.
public func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("lmdbrealm-tests")
        .appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    // Resolve symbolic links so paths compare equal to the registry's real paths.
    return URL(fileURLWithPath: url.resolvingSymlinksInPath().path)
}

/// Records an issue for every environment still open under `directory`, once handles released
/// on other threads or queues (an observation's queue, a notification thread) had time to close
/// their files: the wait ends at the close itself, not on a timer.
public func expectNothingOpen(in directory: URL, sourceLocation: SourceLocation = #_sourceLocation) {
    let open = stillOpen(under: directory)
    #expect(open.isEmpty, "still open at the end of the test: \(open)", sourceLocation: sourceLocation)
}

/// The environments still open under `directory` after waiting (at most 30 s, a bound for a
/// machine busy with the other tests) for them to close.
private func stillOpen(under directory: URL) -> [String] {
    Environment.waitUntilClosed(under: directory.resolvingSymlinksInPath().path + "/", timeout: eventTimeout)
}

/// The number of file descriptors this process has open on files under `directory`
/// (other tests running in parallel open and close their own).
public func openFileDescriptorCount(under directory: URL) -> Int {
    let prefix = directory.resolvingSymlinksInPath().path + "/"
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return fds.filter { fd in
        ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)) ?? "").hasPrefix(prefix)
    }.count
}

/// The number of file descriptors this process has open.
public func openFileDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// The executable `name` built beside the test bundle (a product of this package).
public func builtExecutable(named name: String) -> URL {
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var dir = me.deletingLastPathComponent()
    // The test binary may sit inside a .xctest bundle directory.
    while dir.path != "/" {
        let candidate = dir.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return me.deletingLastPathComponent().appendingPathComponent(name)
}

/// Runs `executable` with `arguments`, waits for it, and returns its exit status and output.
public func run(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Starts `executable` with `arguments` and waits until what it prints contains `marker` (or it
/// ends). Its standard input is a pipe: closing `input` tells a helper waiting on it to finish.
public func start(_ executable: URL, _ arguments: [String], waitingFor marker: String) throws
    -> (process: Process, input: Pipe, output: String)
{
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let output = Pipe()
    let input = Pipe()
    process.standardOutput = output
    process.standardInput = input
    try process.run()
    var text = ""
    while !text.contains(marker) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        text += String(decoding: chunk, as: UTF8.self)
    }
    return (process, input, text)
}
