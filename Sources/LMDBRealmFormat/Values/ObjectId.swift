public import Foundation
import Synchronization

/// A 12-byte identifier in MongoDB's format: a 4-byte timestamp in seconds, 5 random bytes
/// chosen once per process, and a 3-byte counter, all big-endian.
///
/// ```swift
/// let id = ObjectId.generate()
/// let same = try ObjectId(string: id.stringValue)
/// ```
public struct ObjectId: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The 12 bytes.
    public let bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

    /// The all-zero ObjectId.
    public init() {
        bytes = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// An ObjectId from exactly 12 bytes.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 12 else { return nil }
        var raw = ObjectId().bytes
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes) }
        self.bytes = raw
    }

    /// Parses 24 hexadecimal digits.
    /// - Throws: ``RealmError`` with code ``RealmError/Code/invalidValue`` for anything else.
    public init(string: String) throws {
        switch ObjectId.parse(string) {
        case .success(let id): self = id
        case .failure(let problem):
            throw RealmError(.invalidValue, "Invalid ObjectId string '\(string)': \(problem.reason)")
        }
    }

    /// The ObjectId `string` spells (24 hexadecimal digits), or `nil`.
    package init?(parsing string: String) {
        guard case .success(let id) = ObjectId.parse(string) else { return nil }
        self = id
    }

    private struct ParseFailure: Error {
        package let reason: String
    }

    private static func parse(_ string: String) -> Result<ObjectId, ParseFailure> {
        let digits = Array(string.utf8)
        guard digits.count == 24 else { return .failure(ParseFailure(reason: "expected 24 hexadecimal digits")) }
        var raw = [UInt8](repeating: 0, count: 12)
        for i in 0..<12 {
            guard let hi = hexValue(digits[2 * i]), let lo = hexValue(digits[2 * i + 1]) else {
                return .failure(ParseFailure(reason: "'\(string)' has a non-hex digit near offset \(2 * i)"))
            }
            raw[i] = hi << 4 | lo
        }
        return .success(ObjectId(bytes: raw)!)
    }

    /// A new ObjectId, unique within this process and very likely across processes.
    public static func generate() -> ObjectId {
        let seconds = UInt32(truncatingIfNeeded: Int(Date().timeIntervalSince1970))
        let count = ObjectIdGenerator.counter.add(1, ordering: .relaxed).newValue
        var raw = [UInt8](repeating: 0, count: 12)
        raw[0] = UInt8(truncatingIfNeeded: seconds >> 24)
        raw[1] = UInt8(truncatingIfNeeded: seconds >> 16)
        raw[2] = UInt8(truncatingIfNeeded: seconds >> 8)
        raw[3] = UInt8(truncatingIfNeeded: seconds)
        for i in 0..<5 { raw[4 + i] = ObjectIdGenerator.processUnique[i] }
        raw[9] = UInt8(truncatingIfNeeded: count >> 16)
        raw[10] = UInt8(truncatingIfNeeded: count >> 8)
        raw[11] = UInt8(truncatingIfNeeded: count)
        return ObjectId(bytes: raw)!
    }

    /// A new ObjectId of `timestamp` (whole seconds), the low three bytes of `machineId`, the
    /// low two of `processId`, and this process's next counter value.
    public init(timestamp: Date, machineId: Int, processId: Int) {
        let seconds = UInt32(truncatingIfNeeded: Int(timestamp.timeIntervalSince1970))
        let count = ObjectIdGenerator.counter.add(1, ordering: .relaxed).newValue
        let raw: [UInt8] = [
            UInt8(truncatingIfNeeded: seconds >> 24), UInt8(truncatingIfNeeded: seconds >> 16),
            UInt8(truncatingIfNeeded: seconds >> 8), UInt8(truncatingIfNeeded: seconds),
            UInt8(truncatingIfNeeded: machineId >> 16), UInt8(truncatingIfNeeded: machineId >> 8), UInt8(truncatingIfNeeded: machineId),
            UInt8(truncatingIfNeeded: processId >> 8), UInt8(truncatingIfNeeded: processId),
            UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count),
        ]
        self = ObjectId(bytes: raw)!
    }

    /// The ObjectId a literal spells: `ObjectId("6b08fe720f9619cbbf212f39")`.
    /// - Precondition: The literal is 24 hexadecimal digits.
    public init(_ str: StaticString) {
        let text = str.description
        guard let id = ObjectId(parsing: text) else { fatalError("Invalid ObjectId string '\(text)': give 24 hexadecimal digits") }
        self = id
    }

    /// The 24 lowercase hexadecimal digits.
    public var stringValue: String {
        // Written as ASCII bytes into the string's own storage (a server formats one per
        // object it returns; appending Characters costs several times more).
        withUnsafeBytes(of: bytes) { raw in
            String(unsafeUninitializedCapacity: 24) { out in
                for (i, b) in raw.enumerated() {
                    out[2 * i] = hexASCII(b >> 4)
                    out[2 * i + 1] = hexASCII(b & 0xF)
                }
                return 24
            }
        }
    }

    public var description: String { stringValue }

    /// When the ObjectId was generated, to the second.
    public var timestamp: Date {
        withUnsafeBytes(of: bytes) { raw in
            let s = UInt32(raw[0]) << 24 | UInt32(raw[1]) << 16 | UInt32(raw[2]) << 8 | UInt32(raw[3])
            return Date(timeIntervalSince1970: TimeInterval(s))
        }
    }

    public static func == (lhs: ObjectId, rhs: ObjectId) -> Bool {
        withUnsafeBytes(of: lhs.bytes) { l in withUnsafeBytes(of: rhs.bytes) { r in l.elementsEqual(r) } }
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes(of: bytes) { hasher.combine(bytes: $0) }
    }

    public static func < (lhs: ObjectId, rhs: ObjectId) -> Bool {
        withUnsafeBytes(of: lhs.bytes) { l in
            withUnsafeBytes(of: rhs.bytes) { r in l.lexicographicallyPrecedes(r) }
        }
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(string: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

/// The lowercase hexadecimal digit of `nibble` (0…15), as an ASCII byte.
@inlinable @inline(__always)
func hexASCII(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10
}

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
}

private enum ObjectIdGenerator {
    static let processUnique: [UInt8] = (0..<5).map { _ in UInt8.random(in: 0...255) }
    package static let counter = Atomic<UInt32>(UInt32.random(in: 0..<0xFF_FFFF))
}
