import LMDBRealmFormat
import LMDBRealmStorage

/// One key of a sort: a property name and a direction.
///
/// ```swift
/// let newest = articles.sorted(by: [SortDescriptor(keyPath: "pubDate", ascending: false),
///                                   SortDescriptor(keyPath: "id")])
/// ```
///
/// Sorting is stable. `nil` sorts first in ascending order (last in descending), strings by
/// Unicode code point, numbers by value.
public struct SortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The property to sort by.
    public let keyPath: String
    /// Whether smaller values come first.
    public let ascending: Bool

    /// Sorts by the property named `keyPath`.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// Sorts by the persisted property `keyPath` reads, through to-one links too
    /// (`\Article.byline?.name`).
    /// - Precondition: `keyPath` names a `@Persisted` property.
    public init<Root: Object, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) {
        guard let name = ClassInfo.of(Root.self).keyPathName(for: keyPath) else {
            fatalError("\(keyPath) is not a persisted property of \(Root.className())")
        }
        self.init(keyPath: name, ascending: ascending)
    }

    /// The same key, the other way round.
    public func reversed() -> SortDescriptor {
        SortDescriptor(keyPath: keyPath, ascending: !ascending)
    }

    public var description: String { "\(keyPath) \(ascending ? "ascending" : "descending")" }
}

extension SortDescriptor: ExpressibleByStringLiteral {
    /// Sorts ascending by the property the literal names: `sorted(by: ["section", "pubDate"])`.
    public init(stringLiteral keyPath: String) {
        self.init(keyPath: keyPath)
    }
}
