/// Whether bytes read from the file are a valid value of a property's kind: every check a
/// full verification of the file makes of one field, list element or map entry (readers check
/// only what they need to read safely; see ``Record/field(_:size:column:fixedSize:)``).
///
/// Each check returns what is wrong, as a phrase that follows the property's name
/// ("holds 7 bytes, an int takes 8"), or `nil` for sound bytes. Nothing is read outside the
/// bytes given.
package enum FieldCheck {
    /// What is wrong with `field` as a value of kind `type`, or `nil`.
    /// - Parameter maximumKeySize: The file's largest key: a link holds an object's key.
    package static func problem(_ field: UnsafeRawBufferPointer, type: PropertyType, maximumKeySize: Int) -> String? {
        if let size = type.fixedSize, field.count != size {
            return "holds \(field.count) bytes, a \(type.rawValue) takes \(size)"
        }
        switch type {
        case .bool:
            return field[0] <= 1 ? nil : "holds the byte \(field[0]), a bool is 0 or 1"
        case .string:
            return isValidUTF8(field) ? nil : "holds bytes that are not UTF-8"
        case .decimal:
            return decimalProblem(field)
        case .object:
            return keyProblem(field, maximumKeySize: maximumKeySize).map { "links by \($0)" }
        case .mixed:
            return mixedProblem(field, maximumKeySize: maximumKeySize)
        case .int, .float, .double, .date, .uuid, .objectId, .data, .linkingObjects:
            return nil
        }
    }

    /// What is wrong with `key` as an object's key, or `nil`: LMDB keys are 1 to
    /// `maximumKeySize` bytes.
    package static func keyProblem(_ key: UnsafeRawBufferPointer, maximumKeySize: Int) -> String? {
        if key.isEmpty { return "an empty key" }
        if key.count > maximumKeySize { return "a key of \(key.count) bytes, longer than the file's \(maximumKeySize)" }
        return nil
    }

    /// What is wrong with `entry` as a map entry (see ``MapEntry``) whose values are of kind
    /// `type`, or `nil`; `nullable` says whether a value may be null. The phrase follows the
    /// entry's place ("element 3 has a key that is not UTF-8").
    package static func mapEntryProblem(_ entry: UnsafeRawBufferPointer, type: PropertyType, nullable: Bool, maximumKeySize: Int) -> String? {
        guard entry.count >= 3 else { return "is an entry of \(entry.count) bytes, shorter than an entry's header" }
        let n = Int(entry[0]) << 8 | Int(entry[1])
        guard entry.count >= 3 + n else { return "has a key of \(n) bytes, past the entry's \(entry.count)" }
        guard isValidUTF8(UnsafeRawBufferPointer(rebasing: entry[2..<(2 + n)])) else { return "has a key that is not UTF-8" }
        switch entry[2 + n] {
        case 0:
            if entry.count != 3 + n { return "has \(entry.count - 3 - n) bytes after its null value" }
            return nullable ? nil : "has a null value, but the map's values are required"
        case 1:
            let value = UnsafeRawBufferPointer(rebasing: entry[(3 + n)...])
            return problem(value, type: type, maximumKeySize: maximumKeySize).map { "has a value that \($0)" }
        case let tag:
            return "has the tag \(tag), neither a null value (0) nor a value (1)"
        }
    }

    /// Whether `bytes` are well-formed UTF-8 (no overlong forms, surrogates or truncated
    /// sequences).
    package static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Most text is ASCII: only what follows the first other byte goes through the decoder.
        var start = 0
        while start < bytes.count, bytes[start] < 0x80 { start += 1 }
        if start == bytes.count { return true }
        var iterator = UnsafeRawBufferPointer(rebasing: bytes[start...]).makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// A decimal is stored as its text: what `Decimal128` parses, or a plain number with more
    /// digits than it holds (a Foundation `Decimal`'s, read rounded). An empty field reads as 0.
    private static func decimalProblem(_ field: UnsafeRawBufferPointer) -> String? {
        if field.isEmpty || Decimal128.parse(bytes: field) != nil { return nil }
        var digits = 0
        for byte in field {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: " "): continue
            default: return "holds \(field.count) bytes that are not a decimal number"
            }
        }
        return digits > 0 ? nil : "holds \(field.count) bytes that are not a decimal number"
    }

    /// A mixed value: a known tag, then bytes valid for its kind; a link names a class in
    /// UTF-8 and holds a key.
    private static func mixedProblem(_ field: UnsafeRawBufferPointer, maximumKeySize: Int) -> String? {
        guard let (type, payload) = MixedField.split(field) else {
            guard let tag = field.first else { return "holds an empty mixed value" }
            let kinds = PropertyType.allCases.filter { $0 != .mixed && $0 != .linkingObjects }
            if let kind = kinds.first(where: { MixedField.tag($0) == tag }), let size = kind.fixedSize {
                return "holds a mixed \(kind.rawValue) of \(field.count - 1) bytes, a \(kind.rawValue) takes \(size)"
            }
            return "holds a mixed value of unknown tag \(tag)"
        }
        guard type == .object else {
            return problem(payload, type: type, maximumKeySize: maximumKeySize).map { "holds a mixed \(type.rawValue) that \($0)" }
        }
        guard let n = payload.first.map(Int.init), payload.count > 1 + n else { return "holds a mixed link shorter than its class name" }
        guard isValidUTF8(UnsafeRawBufferPointer(rebasing: payload[1..<(1 + n)])) else { return "holds a mixed link whose class name is not UTF-8" }
        return keyProblem(UnsafeRawBufferPointer(rebasing: payload[(1 + n)...]), maximumKeySize: maximumKeySize).map { "holds a mixed link by \($0)" }
    }
}

/// The record decoder's checks, for fuzzing: what is wrong with `record` read as a record of
/// properties of `types` (nullable), each field checked and decoded as a read would.
@_spi(Testing) public enum RecordDecoderCheck {
    public static func problems(ofRecord record: UnsafeRawBufferPointer, types: [PropertyType]) -> [String] {
        if let problem = Record.checkHeader(record, columns: types.count) { return [problem] }
        var problems: [String] = []
        if let problem = Record.checksumProblem(record) { problems.append(problem) }
        for (column, type) in types.enumerated() {
            switch Record.field(record.baseAddress!, size: record.count, column: column, fixedSize: 0) {
            case .null: continue
            case .damaged(let problem): problems.append(problem)
            case .value(let field):
                if let problem = FieldCheck.problem(field, type: type, maximumKeySize: 511) {
                    problems.append(problem)
                } else {
                    _ = decodeValue(field, type: type)
                }
            }
        }
        return problems
    }
}
