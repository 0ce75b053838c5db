import Foundation

/// One commit's changes as synced files exchange them: what LMDBRealmSync sends from a file's
/// outbox and applies to the others. Made by the commit itself, in its own transaction.
///
/// Objects are named by class and encoded primary key; a value travels as its field's stored
/// bytes (a link as its target's key, a list as what the write did to its named elements —
/// ``SyncList`` —, a set or map as its elements' fields), with its property's name and kind so
/// that the receiver checks it against its own schema.
package struct SyncChangeSet: Equatable, Sendable {
    /// The hybrid logical clock of the commit: milliseconds since 1970 in the upper 48 bits, a
    /// counter in the lower 16. With the node's name it orders every write of every node.
    package var clock: UInt64
    /// The schema version of the file that made it.
    package var schemaVersion: UInt64
    package var changes: [SyncChange]

    package init(clock: UInt64, schemaVersion: UInt64, changes: [SyncChange]) {
        self.clock = clock
        self.schemaVersion = schemaVersion
        self.changes = changes
    }
}

/// What one commit did to one object.
package struct SyncChange: Equatable, Sendable {
    package enum Kind: UInt8, Sendable {
        /// The object was created (or replaced whole): every property's value follows.
        case insert = 1
        /// Some properties of a stored object changed: theirs follow.
        case update = 2
        /// The object was deleted.
        case delete = 3
    }

    package var kind: Kind
    package var className: String
    /// The object's key: its encoded primary key.
    package var key: [UInt8]
    package var values: [SyncValue]

    package init(kind: Kind, className: String, key: [UInt8], values: [SyncValue] = []) {
        self.kind = kind
        self.className = className
        self.key = key
        self.values = values
    }
}

/// A property's new value.
package struct SyncValue: Equatable, Sendable {
    package enum Field: Equatable, Sendable {
        case null
        case value([UInt8])
        /// The elements of a list, set or map (a map's as its stored entries).
        case elements([[UInt8]?])
        /// What a write did to a list, by element names (see ``SyncList``).
        case operations([SyncListOperation])
    }

    package var property: String
    /// The property's kind (``PropertyType``'s raw value), checked by the receiver.
    package var type: String
    package var field: Field

    package init(property: String, type: String, field: Field) {
        self.property = property
        self.type = type
        self.field = field
    }
}

extension SyncChangeSet {
    /// The first byte of every encoded change set: its format.
    package static let format: UInt8 = 1

    /// The change set's bytes.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = [SyncChangeSet.format]
        SyncBytes.appendWord(clock, to: &out)
        SyncBytes.appendVarint(schemaVersion, to: &out)
        SyncBytes.appendVarint(UInt64(changes.count), to: &out)
        for change in changes {
            out.append(change.kind.rawValue)
            SyncBytes.appendBytes(Array(change.className.utf8), to: &out)
            SyncBytes.appendBytes(change.key, to: &out)
            SyncBytes.appendVarint(UInt64(change.values.count), to: &out)
            for value in change.values { value.append(to: &out) }
        }
        return out
    }

    /// The clock of the change set `bytes` encode, read without decoding the rest (`nil`: too
    /// short, or another format).
    package static func clock(ofEncoded bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= 9, bytes[0] == format else { return nil }
        return SyncBytes.word(bytes[1..<9])
    }

    /// The change set `bytes` encode.
    /// - Throws: ``SyncBytes/Malformed`` saying where the bytes stop making sense.
    package init(decoding bytes: [UInt8]) throws {
        var reader = SyncBytes.Reader(bytes)
        let format = try reader.byte("format")
        guard format == SyncChangeSet.format else {
            throw SyncBytes.Malformed(description: "change set format \(format) is not \(SyncChangeSet.format)")
        }
        clock = try reader.word("clock")
        schemaVersion = try reader.varint("schema version")
        let count = try reader.count("changes")
        changes = []
        changes.reserveCapacity(count)
        for _ in 0..<count {
            let raw = try reader.byte("change kind")
            guard let kind = SyncChange.Kind(rawValue: raw) else { throw SyncBytes.Malformed(description: "change kind \(raw) is unknown") }
            let className = try reader.string("class name")
            let key = try reader.bytes("object key")
            let valueCount = try reader.count("values")
            var values: [SyncValue] = []
            values.reserveCapacity(valueCount)
            for _ in 0..<valueCount { values.append(try SyncValue(reading: &reader, of: className)) }
            changes.append(SyncChange(kind: kind, className: className, key: key, values: values))
        }
        guard reader.isAtEnd else { throw SyncBytes.Malformed(description: "\(reader.remaining) bytes follow the last change") }
    }
}

extension SyncValue {
    /// The bytes of an embedded object whose properties have `values`: how it travels, as the
    /// value of its parent's property.
    package static func encodedObject(_ values: [SyncValue]) -> [UInt8] {
        var out: [UInt8] = []
        SyncBytes.appendVarint(UInt64(values.count), to: &out)
        for value in values { value.append(to: &out) }
        return out
    }

    /// The property values of the embedded object of class `className` that `bytes` encode.
    package static func decodedObject(_ bytes: [UInt8], of className: String) throws -> [SyncValue] {
        var reader = SyncBytes.Reader(bytes)
        let count = try reader.count("values of an embedded '\(className)'")
        var values: [SyncValue] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try SyncValue(reading: &reader, of: className)) }
        guard reader.isAtEnd else { throw SyncBytes.Malformed(description: "\(reader.remaining) bytes follow an embedded '\(className)'") }
        return values
    }

    /// Appends the value's bytes (as change sets and snapshots hold them) to `out`.
    package func append(to out: inout [UInt8]) {
        SyncBytes.appendBytes(Array(property.utf8), to: &out)
        SyncBytes.appendBytes(Array(type.utf8), to: &out)
        switch field {
        case .null: out.append(0)
        case .value(let bytes):
            out.append(1)
            SyncBytes.appendBytes(bytes, to: &out)
        case .elements(let elements):
            out.append(2)
            SyncBytes.appendVarint(UInt64(elements.count), to: &out)
            for element in elements { SyncBytes.appendOptionalBytes(element, to: &out) }
        case .operations(let operations):
            out.append(3)
            SyncBytes.appendVarint(UInt64(operations.count), to: &out)
            for operation in operations { operation.append(to: &out) }
        }
    }

    /// Reads a value of an object of `className` that ``append(to:)`` wrote.
    package init(reading reader: inout SyncBytes.Reader, of className: String) throws {
        property = try reader.string("property name")
        type = try reader.string("property kind")
        let tag = try reader.byte("value tag")
        switch tag {
        case 0: field = .null
        case 1: field = .value(try reader.bytes("value"))
        case 2:
            let n = try reader.count("elements")
            var elements: [[UInt8]?] = []
            elements.reserveCapacity(n)
            for _ in 0..<n { elements.append(try reader.optionalBytes("element")) }
            field = .elements(elements)
        case 3:
            let n = try reader.count("list operations")
            var operations: [SyncListOperation] = []
            operations.reserveCapacity(n)
            for _ in 0..<n { operations.append(try SyncListOperation(reading: &reader)) }
            field = .operations(operations)
        default: throw SyncBytes.Malformed(description: "value tag \(tag) of '\(className).\(property)' is unknown")
        }
    }
}

extension SyncStamp {
    /// Appends the stamp's bytes (its clock, then its node's name) as change sets and
    /// snapshots hold them.
    package func append(to out: inout [UInt8]) {
        SyncBytes.appendWord(clock, to: &out)
        SyncBytes.appendBytes(Array(node.utf8), to: &out)
    }

    /// Reads a stamp that ``append(to:)`` wrote; `what` names it in errors.
    package init(reading reader: inout SyncBytes.Reader, _ what: String) throws {
        let clock = try reader.word("\(what) clock")
        self.init(clock: clock, node: try reader.string("\(what) node"))
    }
}

/// The byte forms of change sets and the sync state: unsigned LEB128 varints, length-prefixed
/// byte strings, 8-byte big-endian words.
package enum SyncBytes {
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
    }

    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    package static func appendBytes(_ bytes: [UInt8], to out: inout [UInt8]) {
        appendVarint(UInt64(bytes.count), to: &out)
        out.append(contentsOf: bytes)
    }

    /// A tag byte (0 for `nil`, 1 otherwise), then the bytes if any.
    static func appendOptionalBytes(_ bytes: [UInt8]?, to out: inout [UInt8]) {
        if let bytes {
            out.append(1)
            appendBytes(bytes, to: &out)
        } else {
            out.append(0)
        }
    }

    package static func appendWord(_ value: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    package static func word(_ bytes: some Collection<UInt8>) -> UInt64 {
        bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads what the `append` functions wrote; every read names what it reads, for the error.
    package struct Reader {
        private let bytes: [UInt8]
        private var offset = 0

        package init(_ bytes: [UInt8]) { self.bytes = bytes }

        package var isAtEnd: Bool { offset == bytes.count }
        package var remaining: Int { bytes.count - offset }

        private func truncated(_ what: String) -> Malformed {
            Malformed(description: "the bytes end inside the \(what) at offset \(offset)")
        }

        package mutating func byte(_ what: String) throws -> UInt8 {
            guard offset < bytes.count else { throw truncated(what) }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint(_ what: String) throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte(what)
                guard shift < 64 else { throw Malformed(description: "the \(what) at offset \(offset) is longer than 64 bits") }
                value |= UInt64(b & 0x7F) << shift
                if b < 0x80 { return value }
                shift += 7
            }
        }

        /// A count of items that follow, each taking at least one byte.
        package mutating func count(_ what: String) throws -> Int {
            let n = try varint(what)
            guard n <= UInt64(remaining) else { throw Malformed(description: "\(n) \(what) cannot fit in the \(remaining) bytes left") }
            return Int(n)
        }

        package mutating func bytes(_ what: String) throws -> [UInt8] {
            let n = try varint(what)
            guard n <= UInt64(remaining) else { throw truncated(what) }
            defer { offset += Int(n) }
            return Array(bytes[offset..<offset + Int(n)])
        }

        /// What ``SyncBytes/appendOptionalBytes(_:to:)`` wrote.
        mutating func optionalBytes(_ what: String) throws -> [UInt8]? {
            try byte("\(what) tag") == 0 ? nil : try bytes(what)
        }

        package mutating func string(_ what: String) throws -> String {
            let b = try bytes(what)
            guard let s = String(validating: b, as: UTF8.self) else {
                throw Malformed(description: "the \(what) before offset \(offset) is not UTF-8")
            }
            return s
        }

        package mutating func word(_ what: String) throws -> UInt64 {
            guard remaining >= 8 else { throw truncated(what) }
            defer { offset += 8 }
            return SyncBytes.word(bytes[offset..<offset + 8])
        }
    }
}
