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
        if !data.utf8.contains(UInt8(ascii: "\n")) { return "event: \(event)\ndata: \(data)\n\n" }
        return "event: \(event)\n" + data.split(separator: "\n", omittingEmptySubsequences: false).map { "data: \($0)\n" }.joined() + "\n"
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
    private struct Failure: Codable {
        var error: String
    }

    /// The event as the stream sends it: `initial` with the folder's count, `change` with the
    /// counts of a change, `error` with what went wrong.
    ///
    /// A commit sends one event to every subscriber, so the counts are written without an
    /// encoder: the same JSON a `JSONEncoder` with `.sortedKeys` writes, for a fraction of
    /// the cost.
    public var serverSentEvent: ServerSentEvent {
        switch self {
        case .initial(let count):
            return ServerSentEvent(event: "initial", data: #"{"count":\#(count)}"#)
        case .change(let change):
            return ServerSentEvent(
                event: "change",
                data: #"{"count":\#(change.count),"deletions":\#(change.deletions),"#
                    + #""insertions":\#(change.insertions),"modifications":\#(change.modifications)}"#)
        case .failure(let message):
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            // Encoding a struct of one string cannot fail.
            guard let data = try? encoder.encode(Failure(error: message)) else {
                preconditionFailure("Cannot encode the message \(message)")
            }
            return ServerSentEvent(event: "error", data: String(decoding: data, as: UTF8.self))
        }
    }

    /// The folder event `event` carries, or `nil` if it is not one.
    public init?(_ event: ServerSentEvent) {
        switch event.event {
        case "initial":
            guard let fields = Self.counts(event.data), fields.count == 1, let count = fields["count"] else { return nil }
            self = .initial(count: count)
        case "change":
            guard let fields = Self.counts(event.data), fields.count == 4, let count = fields["count"],
                let deletions = fields["deletions"], let insertions = fields["insertions"],
                let modifications = fields["modifications"]
            else { return nil }
            self = .change(FolderChange(insertions: insertions, deletions: deletions, modifications: modifications, count: count))
        case "error":
            guard let failure = try? JSONDecoder().decode(Failure.self, from: Data(event.data.utf8)) else { return nil }
            self = .failure(failure.error)
        default:
            return nil
        }
    }

    /// The fields of a flat JSON object whose values are all non-negative integers (what
    /// `initial` and `change` carry), or `nil` if `json` is anything else.
    static func counts(_ json: String) -> [String: Int]? {
        var fields: [String: Int] = [:]
        var bytes = json.utf8[...]
        func skipSpaces() { while let b = bytes.first, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { bytes.removeFirst() } }
        func take(_ byte: UInt8) -> Bool {
            skipSpaces()
            guard bytes.first == byte else { return false }
            bytes.removeFirst()
            return true
        }
        guard take(UInt8(ascii: "{")) else { return nil }
        if take(UInt8(ascii: "}")) { return bytes.isEmpty ? fields : nil }
        repeat {
            guard take(UInt8(ascii: "\"")), let quote = bytes.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            let name = String(decoding: bytes[..<quote], as: UTF8.self)
            // A name with escapes is none of ours.
            guard !name.contains("\\") else { return nil }
            bytes = bytes[bytes.index(after: quote)...]
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpaces()
            var value = 0
            var digits = 0
            while let b = bytes.first, b >= 0x30, b <= 0x39, digits < 18 {
                value = value * 10 + Int(b - 0x30)
                digits += 1
                bytes.removeFirst()
            }
            guard digits > 0, fields.updateValue(value, forKey: name) == nil else { return nil }
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")) else { return nil }
        skipSpaces()
        return bytes.isEmpty ? fields : nil
    }
}
