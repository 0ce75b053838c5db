// What `lmdbrealm import` reads: JSON and CSV rows, and their conversion to the values of a
// class's properties. A library of its own so that the import fuzz target runs it too.
package import Foundation
package import LMDBRealm

/// A JSON value as read by `import`: decoded with the kinds told apart (`true` is not `1`).
package enum ImportedValue: Decodable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([ImportedValue])
    case object([String: ImportedValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let v = try? container.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? container.decode(Int.self) {
            self = .int(v)
        } else if let v = try? container.decode(Double.self) {
            self = .double(v)
        } else if let v = try? container.decode(String.self) {
            self = .string(v)
        } else if let v = try? container.decode([ImportedValue].self) {
            self = .array(v)
        } else {
            self = .object(try container.decode([String: ImportedValue].self))
        }
    }

    /// The value as written, for messages.
    package var shown: String {
        switch self {
        case .null: "null"
        case .bool(let v): "\(v)"
        case .int(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One row of an imported file, with where it came from for messages.
package struct ImportRow: Sendable {
    package let place: String
    package let values: [String: ImportedValue]

    package init(place: String, values: [String: ImportedValue]) {
        self.place = place
        self.values = values
    }
}

/// Reading the rows of the files `lmdbrealm import` takes.
package enum ImportRows {

    /// The rows of JSON text: an array of objects, or one object per line.
    package static func json(_ data: Data, _ path: String) throws -> [ImportRow] {
        let decoder = JSONDecoder()
        let firstByte = data.first { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
        if firstByte == UInt8(ascii: "[") {
            let items: [ImportedValue]
            do {
                items = try decoder.decode([ImportedValue].self, from: data)
            } catch {
                throw InspectorFailure(message: "\(path): not valid JSON (\(error))")
            }
            return try items.enumerated().map { i, item in
                guard case .object(let values) = item else {
                    throw InspectorFailure(message: "\(path): element \(i + 1) of the array is \(item.shown), not an object")
                }
                return ImportRow(place: "\(path): element \(i + 1)", values: values)
            }
        }
        var rows: [ImportRow] = []
        for (i, line) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            guard line.contains(where: { ![0x20, 0x0D, 0x09].contains($0) }) else { continue }
            let place = "\(path):\(i + 1)"
            let item: ImportedValue
            do {
                item = try decoder.decode(ImportedValue.self, from: Data(line))
            } catch {
                throw InspectorFailure(message: "\(place): not valid JSON")
            }
            guard case .object(let values) = item else {
                throw InspectorFailure(message: "\(place): \(item.shown) is not an object")
            }
            rows.append(ImportRow(place: place, values: values))
        }
        return rows
    }

    /// Rows of an RFC 4180 file with a header row; every value is a string (an empty field
    /// is `nil` for an optional property), converted by the property's kind.
    package static func csv(_ data: Data, _ path: String) throws -> [ImportRow] {
        let records = CSVReader.records(String(decoding: data, as: UTF8.self))
        guard let header = records.first?.fields else { return [] }
        return try records.dropFirst().compactMap { record in
            if record.fields == [""] { return nil }
            guard record.fields.count == header.count else {
                throw InspectorFailure(
                    message: "\(path):\(record.line): \(record.fields.count) fields where the header has \(header.count)")
            }
            var values: [String: ImportedValue] = [:]
            for (name, field) in zip(header, record.fields) { values[name] = .string(field) }
            return ImportRow(place: "\(path):\(record.line)", values: values)
        }
    }
}

/// Splits RFC 4180 text into records of fields, with the line each record starts on.
package enum CSVReader {
    package static func records(_ text: String) -> [(line: Int, fields: [String])] {
        var records: [(Int, [String])] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var line = 1
        var start = 1
        var chars = text.makeIterator()
        var pending: Character?
        while let c = pending ?? chars.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = chars.next() {
                        if next == "\"" {
                            field.append("\"")
                        } else {
                            quoted = false
                            pending = next
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    if c == "\n" || c == "\r\n" { line += 1 }
                    field.append(c)
                }
                continue
            }
            switch c {
            case "\"" where field.isEmpty: quoted = true
            case ",":
                fields.append(field)
                field = ""
            case "\n", "\r\n", "\r":
                fields.append(field)
                records.append((start, fields))
                fields = []
                field = ""
                line += 1
                start = line
            default: field.append(c)
            }
        }
        if !field.isEmpty || !fields.isEmpty {
            fields.append(field)
            records.append((start, fields))
        }
        return records
    }
}

/// Converts imported values to the Swift values the dynamic API takes, by each property's
/// kind, or throws saying where and what is wrong.
package struct RowConverter {
    let realm: Realm
    let schema: ObjectSchema
    let source: String
    /// Whether the values come from CSV, where an empty field is `nil` for what can be nil.
    let csv: Bool
    private let dates = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private let wholeSecondDates = Date.ISO8601FormatStyle()

    package init(realm: Realm, schema: ObjectSchema, source: String, csv: Bool) {
        self.realm = realm
        self.schema = schema
        self.source = source
        self.csv = csv
    }

    package func convert(_ row: ImportRow) throws -> [String: Any?] {
        var values: [String: Any?] = [:]
        for (name, value) in row.values where name != "_class" {
            guard let property = schema[name] else {
                throw InspectorFailure(message: "\(row.place): '\(schema.className)' has no property '\(name)'")
            }
            if property.type == .linkingObjects { continue }
            values[name] = try convert(value, property, row.place, schema.className)
        }
        if let key = schema.primaryKeyProperty, (values[key.name] ?? nil) == nil {
            throw InspectorFailure(message: "\(row.place): the primary key '\(key.name)' is missing")
        }
        for property in schema.properties
        where !property.isOptional && !property.isArray && property.type != .object
            && property.type != .mixed && property.type != .linkingObjects && values[property.name] != nil && values[property.name]! == nil
        {
            throw InspectorFailure(message: "\(row.place): '\(property.name)' is required and cannot be null")
        }
        return values
    }

    private func convert(_ value: ImportedValue, _ property: Property, _ place: String, _ className: String) throws -> Any? {
        if property.isMap {
            if case .string(let text) = value { return try convert(try parseNested(text, place, property), property, place, className) }
            guard case .object(let entries) = value else { throw wrong(value, property, place, "an object") }
            return try entries.mapValues { try element($0, property, place) }
        }
        if property.isArray {
            if case .string(let text) = value { return try convert(try parseNested(text, place, property), property, place, className) }
            guard case .array(let items) = value else { throw wrong(value, property, place, "an array") }
            return try items.map { try element($0, property, place) }
        }
        return try element(value, property, place)
    }

    /// A list or map given as JSON text in a CSV field.
    private func parseNested(_ text: String, _ place: String, _ property: Property) throws -> ImportedValue {
        if text.isEmpty { return property.isMap ? .object([:]) : .array([]) }
        guard let value = try? JSONDecoder().decode(ImportedValue.self, from: Data(text.utf8)) else {
            throw InspectorFailure(message: "\(place): '\(property.name)' takes a JSON \(property.isMap ? "object" : "array"), not \"\(text)\"")
        }
        return value
    }

    private func element(_ value: ImportedValue, _ property: Property, _ place: String) throws -> Any? {
        if case .null = value { return nil }
        // CSV gives every value as a string; an empty one is nil for what can be nil.
        if csv, case .string("") = value, property.isOptional || property.type == .object || property.type == .mixed { return nil }
        switch (property.type, value) {
        case (.int, .int(let v)): return v
        case (.int, .string(let s)): if let v = Int(s) { return v }
        case (.double, .int(let v)): return Double(v)
        case (.double, .double(let v)): return v
        case (.double, .string(let s)): if let v = Double(s) { return v }
        case (.float, .int(let v)): return Float(v)
        case (.float, .double(let v)): return Float(v)
        case (.float, .string(let s)): if let v = Float(s) { return v }
        case (.bool, .bool(let v)): return v
        case (.bool, .string(let s)): if let v = Bool(s) { return v }
        case (.string, .string(let s)): return s
        case (.date, .string(let s)):
            if let v = (try? dates.parse(s)) ?? (try? wholeSecondDates.parse(s)) { return v }
        case (.data, .string(let s)): if let v = Data(base64Encoded: s) { return v }
        case (.uuid, .string(let s)): if let v = UUID(uuidString: s) { return v }
        case (.objectId, .string(let s)): if let v = try? ObjectId(string: s) { return v }
        case (.decimal, .string(let s)): if (try? Decimal128(string: s)) != nil, let v = Decimal(string: s) { return v }
        case (.decimal, .int(let v)): return Decimal(v)
        case (.decimal, .double(let v)): return Decimal(v)
        case (.mixed, .int(let v)): return v
        case (.mixed, .double(let v)): return v
        case (.mixed, .bool(let v)): return v
        case (.mixed, .string(let s)): return s
        case (.object, _): return try link(value, property, place)
        default: break
        }
        throw wrong(value, property, place, Self.kindName(property))
    }

    /// The object a link names: by the target's primary key, or created from a nested object
    /// when the target's class has no primary key.
    private func link(_ value: ImportedValue, _ property: Property, _ place: String) throws -> Any? {
        guard let targetName = property.objectClassName, let target = realm.schema[targetName] else {
            throw InspectorFailure(message: "\(place): '\(property.name)' links to a class the file does not have")
        }
        guard let key = target.primaryKeyProperty else {
            // CSV gives a nested object as its JSON text.
            if case .string(let text) = value, let nested = try? JSONDecoder().decode(ImportedValue.self, from: Data(text.utf8)),
                case .object = nested
            {
                return try link(nested, property, place)
            }
            guard case .object = value else { throw wrong(value, property, place, "an object of '\(targetName)'") }
            let nested = RowConverter(realm: realm, schema: target, source: source, csv: false)
            guard case .object(let values) = value else { return nil }
            let converted = try nested.convert(ImportRow(place: place, values: values))
            return realm.dynamicCreate(targetName, value: converted)
        }
        let keyValue = try element(value, key, place)
        guard let keyValue, let object = realm.dynamicObject(ofType: targetName, forPrimaryKey: keyValue) else {
            throw InspectorFailure(
                message: "\(place): '\(property.name)' links to the '\(targetName)' with primary key \(value.shown), which is not stored")
        }
        return object
    }

    private func wrong(_ value: ImportedValue, _ property: Property, _ place: String, _ expected: String) -> InspectorFailure {
        InspectorFailure(message: "\(place): '\(property.name)' takes \(expected), not \(value.shown)")
    }

    private static func kindName(_ property: Property) -> String {
        switch property.type {
        case .int: "an integer"
        case .double, .float: "a number"
        case .bool: "true or false"
        case .string: "a string"
        case .date: "an ISO 8601 date (2024-05-01T12:00:00Z)"
        case .data: "base64 data"
        case .uuid: "a UUID"
        case .objectId: "an ObjectId (24 hexadecimal digits)"
        case .decimal: "a decimal number"
        case .mixed: "a string, number or boolean"
        case .object, .linkingObjects: "a link"
        }
    }
}

/// A failure of the inspector's work, with the message to print and the exit status.
package struct InspectorFailure: Error {
    package let message: String
    package var status: Int32 = 1

    package init(message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }
}
