public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// The query language through lists and backlinks, with RealmSwift's spelling:
//
//     articles.where { $0.keywords.value == "swift" }            // ANY keyword's value
//     articles.where { $0.keywords.count > 2 }                   // keywords.@count
//     articles.where { $0.scores.avg >= 4 }                      // scores.@avg
//     articles.where { $0.tags.contains("lmdb") }                // 'lmdb' IN tags
//     articles.where { ($0.keywords.value.starts(with: "s")).count > 1 }   // SUBQUERY(…).@count
//     keywords.where { $0.articles.count == 0 }                  // backlinks
//
// A key path through a collection is kept as one dotted name while the query is built; when
// the query is applied, `resolvingCollections(in:)` turns each test on it into a collection
// test or an aggregate.

/// A persisted collection a query can reach into: `List` and `LinkingObjects`.
public protocol _QueryCollection: _Persistable {
    associatedtype _QueryElement
}

extension List: _QueryCollection {
    public typealias _QueryElement = Element
}

extension LinkingObjects: _QueryCollection {
    public typealias _QueryElement = Element
}

extension Map: _QueryCollection {
    public typealias _QueryElement = Value
}

extension Query where T: _QueryMap {
    /// The value under `key` (`ratings['home']`); a test of it fails where the key is absent.
    public subscript(key: String) -> Query<T._MapValue> { Query<T._MapValue>(.property(name: MapKeyPath.path(propertyName, key: key))) }
    /// Every value (`ratings.@values`): a test of it holds if it holds for any value.
    public var values: Query<T._MapValue> { Query<T._MapValue>(.property(name: propertyName)) }
    /// Every key (`ratings.@keys`): a test of it holds if it holds for any key.
    public var keys: Query<String> { Query<String>(.property(name: propertyName + "@keys")) }
}

/// A `Map` in the query language.
public protocol _QueryMap: _Persistable {
    associatedtype _MapValue: _Persistable
}

extension Map: _QueryMap {
    public typealias _MapValue = Value
}

extension Query where T: _QueryCollection {
    /// The number of elements (`@count`).
    public var count: Query<Int> { Query<Int>(.property(name: propertyName + ".@count")) }

    /// Whether the collection holds `value` (`value IN collection`); an object is compared by
    /// identity.
    public func contains(_ value: T._QueryElement) -> Query<Bool> where T._QueryElement: _Persistable {
        Query<Bool>(.condition(.comparison(property: propertyName, op: .equal, value: QueryValue(value), options: [])))
    }

    /// Whether the collection holds any of `values`.
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T._QueryElement, T._QueryElement: _Persistable {
        Query<Bool>(.condition(.membership(property: propertyName, values: values.map { QueryValue($0) })))
    }
}

extension Query where T: _QueryCollection, T._QueryElement: Object {
    /// The property `keyPath` reads on the collection's objects: a test of it holds if it
    /// holds for any of them (`ANY keywords.value == 'x'`).
    public subscript<V: _Persistable>(dynamicMember keyPath: KeyPath<T._QueryElement, V>) -> Query<V> {
        let info = ClassInfo.of(T._QueryElement.self)
        guard let name = info.propertyName(for: keyPath) else {
            fatalError("\(keyPath) is not a persisted property of \(info.schema.className)")
        }
        return Query<V>(.property(name: propertyName + "." + name))
    }
}

/// Numbers a collection can be aggregated over.
public protocol _QueryNumeric: _Persistable {}
extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal: _QueryNumeric {}
extension Date: _QueryNumeric {}
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric & _PersistableNonOptional {}

extension Query where T: _QueryCollection, T._QueryElement: _QueryNumeric {
    /// The smallest element (`@min`); `nil` for an empty collection.
    public var min: Query<T._QueryElement> { Query<T._QueryElement>(.property(name: propertyName + ".@min")) }
    /// The largest element (`@max`).
    public var max: Query<T._QueryElement> { Query<T._QueryElement>(.property(name: propertyName + ".@max")) }
    /// The sum of the elements (`@sum`); 0 for an empty collection.
    public var sum: Query<T._QueryElement> { Query<T._QueryElement>(.property(name: propertyName + ".@sum")) }
    /// The mean of the elements (`@avg`); `nil` for an empty collection.
    public var avg: Query<T._QueryElement> { Query<T._QueryElement>(.property(name: propertyName + ".@avg")) }
}

extension Query where T: _QueryNumeric {
    /// The smallest value of the property over a collection's objects:
    /// `$0.tasks.priority.min` is `tasks.@min.priority`; `nil` for an empty collection.
    /// - Precondition: The key path goes through a collection of objects.
    public var min: Query<T> { Query<T>(.property(name: aggregatedPath("@min"))) }
    /// The largest value of the property over a collection's objects (`tasks.@max.priority`).
    public var max: Query<T> { Query<T>(.property(name: aggregatedPath("@max"))) }
    /// The sum of the property over a collection's objects (`tasks.@sum.priority`); 0 for an
    /// empty collection.
    public var sum: Query<T> { Query<T>(.property(name: aggregatedPath("@sum"))) }
    /// The mean of the property over a collection's objects (`tasks.@avg.priority`); `nil`
    /// for an empty collection.
    public var avg: Query<T> { Query<T>(.property(name: aggregatedPath("@avg"))) }

    /// `collection.property` as `collection.@aggregate.property`.
    private func aggregatedPath(_ aggregate: String) -> String {
        guard let dot = propertyName.lastIndex(of: ".") else {
            fatalError(
                "'\(propertyName).\(aggregate.dropFirst())' needs a key path through a list of objects, such as $0.tasks.priority.\(aggregate.dropFirst())"
            )
        }
        return propertyName[..<dot] + "." + aggregate + propertyName[dot...]
    }
}

extension Query where T == Bool {
    /// How many elements of the one collection the condition reaches into satisfy it:
    /// `($0.keywords.weight > 3).count > 1` is `SUBQUERY(keywords, $k, $k.weight > 3).@count > 1`.
    public var count: Query<Int> { Query<Int>(.subquery(node)) }
}

// MARK: - Resolving key paths through collections

extension QueryNode {
    /// The query with every test whose key path goes through a list or `LinkingObjects` of
    /// `schema`'s class made a collection test (`ANY`) or an aggregate. Key paths that name no
    /// collection are left as they are. Links lead to the classes `schemaNamed` gives for their
    /// targets' names (the realm's file's).
    func resolvingCollections(
        in schema: ObjectSchema, schemaNamed: (String) -> ObjectSchema? = { ClassInfo.named($0)?.schema }
    ) -> QueryNode {
        switch self {
        case .and(let children): return .and(children.map { $0.resolvingCollections(in: schema, schemaNamed: schemaNamed) })
        case .or(let children): return .or(children.map { $0.resolvingCollections(in: schema, schemaNamed: schemaNamed) })
        case .not(let child): return .not(child.resolvingCollections(in: schema, schemaNamed: schemaNamed))
        case .constant, .block, .collection, .elementOf: return self
        case .aggregate(let path, let function, let property, let filter?, let op, let value) where path.isEmpty:
            // `(condition).count`: the collection is the one the condition reaches into.
            guard let collection = filter.propertyNames.firstNonNil({ splitAtCollection($0, in: schema, schemaNamed)?.path }) else {
                fatalError("a query's .count needs a condition on the elements of a List or LinkingObjects")
            }
            let element = filter.strippingPrefix(collection + ".", itself: collection)
            return .aggregate(path: collection, function: function, property: property, filter: element, op: op, value: value)
        case .aggregate:
            return self
        case .comparison, .between, .membership, .stringMatch:
            guard let name = property, let (path, rest) = splitAtCollection(name, in: schema, schemaNamed) else { return self }
            if let first = rest.first, first.hasPrefix("@"), let function = AggregateFunction(rawValue: first) {
                let property = rest.count > 1 ? rest.dropFirst().joined(separator: ".") : nil
                switch self {
                case .comparison(_, let op, let value, _):
                    return .aggregate(path: path, function: function, property: property, filter: nil, op: op, value: value)
                case .between(_, let lower, let upper):
                    return .and([
                        .aggregate(path: path, function: function, property: property, filter: nil, op: .greaterOrEqual, value: lower),
                        .aggregate(path: path, function: function, property: property, filter: nil, op: .lessOrEqual, value: upper),
                    ])
                default:
                    fatalError("an aggregate of '\(path)' can only be compared with a value")
                }
            }
            let element = withProperty(rest.isEmpty ? "self" : rest.count == 1 ? rest[rest.startIndex] : rest.joined(separator: "."))
            return .collection(path: path, quantifier: .any, element: element)
        }
    }

    /// Whether ``resolvingCollections(in:)`` may change the query: a key path, a `.count` of a
    /// condition, or (when `info` declares lists or backlinks) any leaf. Checked first so that
    /// a query on flat properties costs nothing more.
    func mayReachCollections(_ info: ClassInfo) -> Bool {
        switch self {
        case .and(let children), .or(let children): return children.contains { $0.mayReachCollections(info) }
        case .not(let child): return child.mayReachCollections(info)
        case .aggregate(let path, _, _, _, _, _): return path.isEmpty
        case .comparison, .between, .membership, .stringMatch:
            return property!.isKeyPath || !(info.lists.isEmpty && info.backlinks.isEmpty)
        case .constant, .block, .collection, .elementOf: return false
        }
    }

    /// The leaves' key paths with `prefix` removed (`itself`, the collection alone, becomes
    /// `self`).
    fileprivate func strippingPrefix(_ prefix: String, itself: String) -> QueryNode {
        switch self {
        case .and(let children): return .and(children.map { $0.strippingPrefix(prefix, itself: itself) })
        case .or(let children): return .or(children.map { $0.strippingPrefix(prefix, itself: itself) })
        case .not(let child): return .not(child.strippingPrefix(prefix, itself: itself))
        default:
            guard let name = property else { return self }
            if name == itself { return withProperty("self") }
            require(name.hasPrefix(prefix), "a query's .count reaches into '\(itself)' and '\(name)': one collection at a time")
            return withProperty(String(name.dropFirst(prefix.count)))
        }
    }
}

/// The part of key path `name` up to the first list or `LinkingObjects` property, and the
/// components after it; `nil` if it goes through none.
private func splitAtCollection(
    _ name: String, in schema: ObjectSchema, _ schemaNamed: (String) -> ObjectSchema?
) -> (path: String, rest: ArraySlice<String>)? {
    // Walked on the name's UTF-8 bytes, component by component, without splitting the whole
    // path: a query through a list is resolved each time it is applied.
    var name = name
    return name.withUTF8 { bytes in
        let dot = UInt8(ascii: ".")
        var schema = schema
        var start = 0
        while true {
            var end = start
            var marked = false  // a `[` or an `@`: a map's keys (`ratings@keys`) or one key's value (`ratings[<hex>]`)
            while end < bytes.count, bytes[end] != dot {
                if bytes[end] == UInt8(ascii: "[") || bytes[end] == UInt8(ascii: "@") { marked = true }
                end += 1
            }
            var componentName = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            if marked {
                if let map = MapKeyPath.split(componentName)?.map {
                    componentName = map
                } else if componentName.hasSuffix("@keys") {
                    componentName.removeLast(5)
                }
            }
            guard let column = schema.properties.firstIndex(where: { $0.name == componentName }) else { return nil }
            if schema.properties[column].isArray || schema.properties[column].type == .linkingObjects {
                let path = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
                guard end < bytes.count else { return (path, []) }
                // One component after the collection is the usual case (`keywords.value`).
                var rest: [String] = []
                var from = end + 1
                for i in from...bytes.count where i == bytes.count || bytes[i] == dot {
                    rest.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<i]), as: UTF8.self))
                    from = i + 1
                }
                return (path, rest[...])
            }
            guard end < bytes.count, schema.properties[column].type == .object,
                let target = schema.properties[column].objectClassName.flatMap(schemaNamed)
            else { return nil }
            schema = target
            start = end + 1
        }
    }
}

extension Sequence {
    /// The first non-nil result of `transform` on the elements, in order.
    fileprivate func firstNonNil<R>(_ transform: (Element) -> R?) -> R? {
        for element in self {
            if let result = transform(element) { return result }
        }
        return nil
    }
}
