import Foundation

/// One server-sent event: its name and its data (one line of JSON here).
public struct ServerSentEvent: Sendable, Hashable {
    public var event: String
    public var data: String

    public init(event: String, data: String) {
        self.event = event
        self.data = data
    }

    /// The event as the `text/event-stream` format sends it, ending with its blank line.
    public var encoded: String {
        "event: \(event)\n" + data.split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)\n" }.joined() + "\n"
    }
}

/// Splits a `text/event-stream` body, as it arrives in pieces, into events: the client side of
/// the format (`event:` and `data:` fields; comments and other fields are skipped).
public struct ServerSentEventParser: Sendable {
    private var pending: [UInt8] = []
    private var event = "message"
    private var data: [String] = []

    public init() {}

    /// The events `bytes` completes, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        pending.append(contentsOf: bytes)
        var events: [ServerSentEvent] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            var line = pending[..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let text = String(decoding: line, as: UTF8.self)
            pending.removeSubrange(...newline)
            if text.isEmpty {
                if !data.isEmpty { events.append(ServerSentEvent(event: event, data: data.joined(separator: "\n"))) }
                event = "message"
                data = []
            } else if let value = Self.value(of: "event", in: text) {
                event = value
            } else if let value = Self.value(of: "data", in: text) {
                data.append(value)
            }
        }
        return events
    }

    /// The value of the field `name` if `line` holds it (`name: value` or `name:value`).
    private static func value(of name: String, in line: String) -> String? {
        guard line.hasPrefix(name + ":") else { return nil }
        let value = line.dropFirst(name.count + 1)
        return String(value.first == " " ? value.dropFirst() : value)
    }
}

// MARK: - Folder events as server-sent events

extension FolderEvent {
    private struct Initial: Codable {
        var count: Int
    }

    private struct Failure: Codable {
        var error: String
    }

    /// The event as the stream sends it: `initial` with the folder's count, `change` with the
    /// counts of a change, `error` before the stream ends on a failure.
    public var serverSentEvent: ServerSentEvent {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding these plain structs cannot fail.
        func json(_ value: some Encodable) -> String {
            do {
                return String(decoding: try encoder.encode(value), as: UTF8.self)
            } catch {
                preconditionFailure("Cannot encode \(value): \(error)")
            }
        }
        switch self {
        case .initial(let count): return ServerSentEvent(event: "initial", data: json(Initial(count: count)))
        case .change(let change): return ServerSentEvent(event: "change", data: json(change))
        case .failure(let message): return ServerSentEvent(event: "error", data: json(Failure(error: message)))
        }
    }

    /// The folder event `event` carries, or `nil` if it is not one.
    public init?(_ event: ServerSentEvent) {
        let data = Data(event.data.utf8)
        let decoder = JSONDecoder()
        switch event.event {
        case "initial":
            guard let initial = try? decoder.decode(Initial.self, from: data) else { return nil }
            self = .initial(count: initial.count)
        case "change":
            guard let change = try? decoder.decode(FolderChange.self, from: data) else { return nil }
            self = .change(change)
        case "error":
            guard let failure = try? decoder.decode(Failure.self, from: data) else { return nil }
            self = .failure(failure.error)
        default:
            return nil
        }
    }
}
