import Foundation

/// A child process of the battery: this same executable with other arguments, its standard
/// output read for "ack N" lines.
final class Child {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let input = Pipe()
    private var text = ""
    private var otherLines: [String] = []
    private(set) var acknowledged = -1
    /// The output ended while acknowledgements were awaited: the child was gone already.
    private(set) var endedBeforeWanted = false
    private var errorReader: ErrorReader?
    private var errorData = Data()

    private init() {}

    /// Starts the child with `arguments`, and `environment` added to the battery's own.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Child {
        let child = Child()
        child.process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).absoluteURL
        child.process.arguments = arguments
        if !environment.isEmpty {
            child.process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        child.process.standardOutput = child.output
        child.process.standardError = child.errors
        child.process.standardInput = child.input
        try child.process.run()
        child.errorReader = ErrorReader(child.errors.fileHandleForReading)
        return child
    }

    /// Prints "ack N" on standard output, unbuffered: commit N returned.
    static func acknowledge(_ n: Int) {
        FileHandle.standardOutput.write(Data("ack \(n)\n".utf8))
    }

    /// Reads acknowledgements until one is at least `wanted`, the output ends, or `timeout`
    /// seconds pass (the child is then killed).
    func waitForAck(atLeast wanted: Int, timeout: TimeInterval) {
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        while acknowledged < wanted {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                endedBeforeWanted = true
                return
            }
            read(chunk)
        }
    }

    /// Reads the child's output until a line starting with `prefix` arrives (returned), the
    /// output ends, or `timeout` seconds pass (the child is then killed): `nil` unless it came.
    func waitForLine(startingWith prefix: String, timeout: TimeInterval) -> String? {
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        while true {
            if let line = otherLines.first(where: { $0.hasPrefix(prefix) }) { return line }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            read(chunk)
        }
    }

    /// Closes the child's standard input: a child reading it to its end goes on from there.
    func closeInput() {
        // try?: closing fails only if it is closed already, which is the wanted state.
        try? input.fileHandleForWriting.close()
    }

    private func read(_ data: Data) {
        text += String(decoding: data, as: UTF8.self)
        while let newline = text.firstIndex(of: "\n") {
            let line = text[..<newline]
            if line.hasPrefix("ack "), let n = Int(line.dropFirst(4)) {
                acknowledged = max(acknowledged, n)
            } else {
                otherLines.append(String(line))
            }
            text.removeSubrange(...newline)
        }
    }

    struct Status: CustomStringConvertible {
        var code: Int32?
        var signal: Int32?
        var description: String { signal.map { "by signal \($0)" } ?? "with status \(code ?? -1)" }
    }

    /// Waits for the child to end, reading the rest of its output; a child still running after
    /// `timeout` seconds is killed.
    func waitForExit(timeout: TimeInterval) -> Status {
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        return waitForExit()
    }

    /// Waits for the child to end, reading the rest of its output.
    func waitForExit() -> Status {
        read(output.fileHandleForReading.readDataToEndOfFile())
        errorData = errorReader?.wait() ?? Data()
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
            ? Status(signal: process.terminationStatus) : Status(code: process.terminationStatus)
    }

    /// What the child wrote on standard output and has not been read as an acknowledgement.
    var standardOutput: String { (otherLines + [text]).joined(separator: "\n") }

    /// What the child wrote on standard error.
    var errorOutput: String { String(decoding: errorData, as: UTF8.self) }
}

/// A child's standard error, read to its end on a thread of its own from the start: a child
/// that fills one pipe (64 KiB) while its parent reads the other to its end would wait forever.
private final class ErrorReader: @unchecked Sendable {
    // @unchecked Sendable: `data` is written once, by the reading thread, before `done` is
    // signalled, and read only after waiting on `done`.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    /// Everything the child wrote on standard error, once it closed it.
    func wait() -> Data {
        done.wait()
        done.signal()
        return data
    }
}

/// A directory of its own under the system's temporary directory.
struct TemporaryFolder: Sendable {
    let url: URL
    init(_ name: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("reliability-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A small, fast generator whose sequence a seed fixes (SplitMix64), so that a failed trial
/// can be run again.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(below bound: UInt64) -> UInt64 { next() % bound }
}
