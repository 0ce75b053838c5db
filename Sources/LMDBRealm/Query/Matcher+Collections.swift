import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// Where a leaf test finds the bytes it tests, given the key and record (or element) a
/// ``Matcher`` is called with; `nil` is a null.
protocol FieldReader {
    func callAsFunction(_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?
}

/// A column of a record.
struct RecordField: FieldReader {
    let table: Table
    let column: Int
    let file: StoreFile

    @inline(__always)
    func callAsFunction(_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        table.field(record.baseAddress!, size: record.count, column: column, in: file)
    }
}

/// An element of a collection of values, handed over as the record; a null element has no
/// base address (an empty value has one).
struct ElementField: FieldReader {
    @inline(__always)
    func callAsFunction(_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        record.baseAddress == nil ? nil : record
    }
}

/// The object's own key: `self` in a test of a collection's objects (`ANY keywords == %@`).
struct KeyField: FieldReader {
    @inline(__always)
    func callAsFunction(_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? { key }
}

/// A null element, as ``ElementField`` reads it.
var nullElement: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

// MARK: - Collections in queries

extension QueryCompiler {
    /// How a compiled test reaches the elements of one collection property of its objects.
    struct CollectionSource {
        /// Calls `body` with each element of the object (key, record) until it returns false:
        /// a value's bytes (``nullElement`` for a null), or an object's key.
        let walk: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) -> Void
        /// The number of elements, without visiting them.
        let count: (_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> Int
        /// The kind of the values; `.object` for objects.
        let elementType: PropertyType
        /// The table of the objects; `nil` for values, or when the class has no table yet.
        let target: TableBinding?
    }

    /// The elements of the list or `LinkingObjects` property `name` of this table's objects.
    func collection(_ name: String) -> CollectionSource {
        // A map's keys are named `ratings@keys`; its values, `ratings`; the value of one key,
        // `ratings[<hex>]`.
        let keys = name.hasSuffix("@keys")
        let oneKey = MapKeyPath.split(name)
        let column = column(oneKey?.map ?? (keys ? String(name.dropLast(5)) : name))
        let property = table.schema.properties[column]
        let realm = realm
        let table = table
        if property.isMap, let (_, wanted) = oneKey {
            let walk: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, (UnsafeRawBufferPointer) -> Bool) -> Void = { k, _, body in
                realm.forEachListElement(of: table, column: column, owner: k) { entry in
                    guard let entry, MapEntry.part(entry, keys: true).elementsEqual(wanted) else { return true }
                    _ = body(MapEntry.part(entry, keys: false))
                    return false
                }
            }
            return CollectionSource(
                walk: walk,
                count: { k, r in
                    var n = 0
                    walk(k, r) { _ in
                        n += 1
                        return true
                    }
                    return n
                },
                elementType: property.type, target: mapTarget(property))
        }
        if property.isMap {
            return CollectionSource(
                walk: { k, _, body in
                    realm.forEachListElement(of: table, column: column, owner: k) { entry in
                        body(entry.map { MapEntry.part($0, keys: keys) } ?? nullElement)
                    }
                },
                count: { k, _ in realm.listCount(of: table, column: column, owner: k) },
                elementType: keys ? .string : property.type, target: keys ? nil : mapTarget(property))
        }
        if property.type == .linkingObjects {
            guard let origin = property.objectClassName.flatMap(realm.bindingForReading(className:)),
                let originColumn = origin.table.schema.properties.firstIndex(where: { $0.name == property.linkOriginPropertyName })
            else {
                return CollectionSource(walk: { _, _, _ in }, count: { _, _ in 0 }, elementType: .object, target: nil)
            }
            let originTable = origin.table
            return CollectionSource(
                walk: { k, _, body in realm.forEachBacklink(from: originTable, column: originColumn, to: k, body) },
                count: { k, _ in realm.backlinkCount(from: originTable, column: originColumn, to: k) },
                elementType: .object, target: origin)
        }
        let target = property.type == .object
            ? property.objectClassName.flatMap(realm.bindingForReading(className:)) : nil
        return CollectionSource(
            walk: { k, _, body in realm.forEachListElement(of: table, column: column, owner: k) { body($0 ?? nullElement) } },
            count: { k, _ in realm.listCount(of: table, column: column, owner: k) },
            elementType: property.type, target: target)
    }

    /// The table of the objects a map of objects holds; `nil` for a map of values.
    private func mapTarget(_ property: Property) -> TableBinding? {
        guard property.type == .object else { return nil }
        return property.objectClassName.flatMap(realm.bindingForReading(className:))
    }

    /// The keys the list `property` of the object `key` of class `owner` holds, in its order.
    func listElementKeys(owner: String, property: String, key: Data) -> [[UInt8]] {
        guard let binding = realm.bindingForReading(className: owner),
            let column = binding.table.schema.properties.firstIndex(where: { $0.name == property })
        else { return [] }
        var keys: [[UInt8]] = []
        key.withUnsafeBytes { owner in
            realm.forEachListElement(of: binding.table, column: column, owner: owner) { element in
                if let element { keys.append(Array(element)) }
                return true
            }
        }
        return keys
    }

    /// The test `element` of one element of `source`.
    func elementTest(_ source: CollectionSource, _ element: QueryNode) -> (UnsafeRawBufferPointer) -> Bool {
        guard source.elementType == .object else {
            var compiler = self
            compiler.elementType = source.elementType
            let test = compiler.compile(element)
            return { e in test(e, e) }
        }
        guard let target = source.target else { return { _ in false } }
        let test = QueryCompiler(table: target.table, binding: target, realm: realm).compile(element)
        // A test of the objects themselves (`ANY keywords == %@`) needs no record.
        if element.propertyNames == ["self"] { return { e in test(e, nullElement) } }
        let realm = realm
        let targetTable = target.table
        return { e in
            // A map's value may be null: it has no object to test.
            guard e.baseAddress != nil, let record = realm.linkedRecord(of: targetTable, key: e) else { return false }
            return test(e, record)
        }
    }

    /// `path.@count op value` and the other aggregates, `SUBQUERY(…).@count` with `filter`.
    func aggregate(
        _ path: String, _ function: AggregateFunction, _ property: String?, _ filter: QueryNode?,
        _ op: ComparisonOperator, _ value: QueryValue
    ) -> Matcher {
        let source = collection(path)
        let walk = source.walk
        guard let v = value.doubleValue else {
            // Only a missing average, minimum or maximum equals nil (a count or a sum never is).
            guard value == .null, function != .count, function != .sum else { return { _, _ in op == .notEqual } }
            let compute = numericAggregate(source, function, property)
            return { k, r in (compute(k, r) == nil) == (op == .equal) }
        }
        if function == .count {
            guard let filter else {
                let count = source.count
                return { k, r in Double(count(k, r)).compare(op, v) }
            }
            let test = elementTest(source, filter)
            return { k, r in
                var n = 0
                walk(k, r) { e in
                    if test(e) { n += 1 }
                    return true
                }
                return Double(n).compare(op, v)
            }
        }
        let compute = numericAggregate(source, function, property)
        return { k, r in compute(k, r).map { $0.compare(op, v) } ?? (op == .notEqual) }
    }

    /// The sum, average, minimum or maximum of the numbers of a collection (of `property` of
    /// its objects), as a `Double`; `nil` when there are none (a sum is then 0). Nulls are
    /// skipped.
    private func numericAggregate(_ source: CollectionSource, _ function: AggregateFunction, _ property: String?)
        -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Double?
    {
        let number: (UnsafeRawBufferPointer) -> Double?
        if let property, let target = source.target,
            let c = target.table.schema.properties.firstIndex(where: { $0.name == property })
        {
            let realm = realm
            let targetTable = target.table
            let type = targetTable.schema.properties[c].type
            let file = realm.file
            number = { e in
                guard let record = realm.linkedRecord(of: targetTable, key: e),
                    let field = targetTable.field(record.baseAddress!, size: record.count, column: c, in: file)
                else { return nil }
                return numericValue(field, type)
            }
        } else if property == nil, source.elementType != .object {
            let type = source.elementType
            number = { e in e.baseAddress == nil ? nil : numericValue(e, type) }
        } else {
            number = { _ in nil }
        }
        let walk = source.walk
        return { k, r in
            var total = 0.0
            var n = 0
            var best: Double?
            walk(k, r) { e in
                guard let x = number(e) else { return true }
                n += 1
                total += x
                switch function {
                case .min: best = best.map { Swift.min($0, x) } ?? x
                case .max: best = best.map { Swift.max($0, x) } ?? x
                default: break
                }
                return true
            }
            switch function {
            case .sum, .count: return total
            case .avg: return n == 0 ? nil : total / Double(n)
            case .min, .max: return best
            }
        }
    }
}

/// A stored number (or date) as a `Double`, for aggregates.
private func numericValue(_ field: UnsafeRawBufferPointer, _ type: PropertyType) -> Double? {
    switch type {
    case .int, .float, .double, .date: decodeDouble(field, type)
    case .decimal: NSDecimalNumber(decimal: Decimal._rlmDecode(field)).doubleValue
    default: nil
    }
}

/// How a query names one key of a map: `ratings[686f6d65]`, the key's UTF-8 in hex, so that no
/// key can look like a key path.
enum MapKeyPath {
    static func path(_ map: String, key: String) -> String {
        map + "[" + key.utf8.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() + "]"
    }

    /// The map and the key's bytes of a path made by ``path(_:key:)``, or `nil`.
    static func split(_ path: String) -> (map: String, key: [UInt8])? {
        guard path.last == "]", let open = path.firstIndex(of: "[") else { return nil }
        let hex = Array(path[path.index(after: open)..<path.index(before: path.endIndex)].utf8)
        guard hex.count % 2 == 0 else { return nil }
        var key: [UInt8] = []
        for i in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[i..<(i + 2)], as: UTF8.self), radix: 16) else { return nil }
            key.append(byte)
        }
        return (String(path[..<open]), key)
    }
}
