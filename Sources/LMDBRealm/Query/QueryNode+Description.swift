import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension QueryNode: CustomStringConvertible {
    /// The query in predicate-string form, canonical so tests can compare queries:
    /// `(section == 'Sports' AND wordCount > 500)`, `url BEGINSWITH[c] 'http'`,
    /// `wordCount BETWEEN {1, 5}`, `section IN {'a', 'b'}`, `NOT x == 1`, `TRUEPREDICATE`,
    /// and `BLOCK` for a test run object by object.
    var description: String {
        switch self {
        case .constant(let value):
            return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let property, let op, let value, let options):
            return "\(property) \(op.rawValue)\(options.modifier) \(value.literal)"
        case .between(let property, let lower, let upper):
            return "\(property) BETWEEN {\(lower.literal), \(upper.literal)}"
        case .membership(let property, let values):
            return "\(property) IN {\(values.map(\.literal).joined(separator: ", "))}"
        case .stringMatch(let property, let op, let pattern, let options):
            return "\(property) \(op.rawValue)\(options.modifier) \(QueryValue.string(pattern).literal)"
        case .and(let children):
            return "(" + children.map(\.description).joined(separator: " AND ") + ")"
        case .or(let children):
            return "(" + children.map(\.description).joined(separator: " OR ") + ")"
        case .not(let child):
            return "NOT \(child)"
        case .block:
            return "BLOCK"
        case .elementOf(let owner, let property, _):
            return "ELEMENT OF \(owner).\(property)"
        case .collection(let path, let quantifier, let element):
            return "\(quantifier.rawValue) \(path) WHERE \(element)"
        case .aggregate(let path, let function, let property, let filter, let op, let value):
            let subject =
                filter.map { "SUBQUERY(\(path), $x, \($0)).@count" }
                ?? "\(path).\(function.rawValue)\(property.map { "." + $0 } ?? "")"
            return "\(subject) \(op.rawValue) \(value.literal)"
        }
    }
}

extension StringOptions {
    /// `[c]`, `[d]`, `[cd]` or nothing.
    var modifier: String {
        switch (contains(.caseInsensitive), contains(.diacriticInsensitive)) {
        case (true, true): "[cd]"
        case (true, false): "[c]"
        case (false, true): "[d]"
        case (false, false): ""
        }
    }
}

extension QueryValue {
    /// The value as a predicate-string literal: `'text'` (with `\'` and `\\` escaped), `42`,
    /// `2.5`, `true`, `nil`, `T<seconds since 1970>`, `uuid(…)`, `oid(…)`, `decimal(…)`,
    /// `data(<n bytes>)`.
    var literal: String {
        switch self {
        case .null: "nil"
        case .bool(let v): v ? "true" : "false"
        case .int(let v): String(v)
        case .double(let v): String(v)
        case .string(let v): "'" + v.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        case .data(let v): "data(\(v.count) bytes)"
        case .date(let v): "T\(v.timeIntervalSince1970)"
        case .uuid(let v): "uuid(\(v.uuidString))"
        case .objectId(let v): "oid(\(v.stringValue))"
        case .decimal(let v): "decimal(\(v))"
        }
    }
}
