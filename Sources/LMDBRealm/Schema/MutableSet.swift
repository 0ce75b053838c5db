import LMDBRealmFormat
import LMDBRealmStorage

/// An unordered collection of distinct values or objects held by a property of a model:
/// `@Persisted var tags: MutableSet<String>`, `@Persisted var readers: MutableSet<Reader>`.
///
/// ```swift
/// try realm.write {
///     article.tags.insert("lmdb")                // a value already there is not added again
///     article.tags.formUnion(["swift", "linux"])
///     article.tags.remove("draft")
/// }
/// article.tags.contains("swift")
/// articles.filter("'swift' IN tags")          // queries as a list's
/// ```
///
/// Before its object is added, a set lives in memory; on a managed object it is a live view
/// of the stored set, changed only inside a write. Its order is unspecified (it is the order of
/// insertion, which removals may change). It is stored as a list is, so counting is one B-tree
/// descent; `insert` and `contains` compare with every element (sets are meant for tags and
/// the like, not for hundreds of thousands of elements). Deleting an object removes it from
/// every set that holds it.
public final class MutableSet<Element: _Persistable>: RandomAccessCollection {
    /// The elements of an unmanaged set.
    var storage: [Element] = []
    /// The managed object holding the set, and the set's declared column; `nil` while the set
    /// is unmanaged.
    let owner: Object?
    let column: Int32

    /// An empty unmanaged set.
    public init() {
        owner = nil
        column = 0
    }

    /// The set of declared column `column` of the managed `owner`.
    init(owner: Object, column: Int32) {
        self.owner = owner
        self.column = column
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    /// The number of elements; on a managed set, read without reading any element.
    public var count: Int {
        guard let owner else { return storage.count }
        return owner._listCount(column)
    }

    public var isEmpty: Bool { count == 0 }

    /// The element at `position` in the set's current (unspecified) order.
    public subscript(position: Int) -> Element {
        guard let owner else { return storage[position] }
        return owner._listElement(column, at: position, as: Element.self)
    }

    /// The elements as they are when iteration begins, read in one walk.
    public func makeIterator() -> List<Element>.Iterator {
        guard let owner else { return List<Element>.Iterator(unmanaged: storage) }
        return List<Element>.Iterator(owner: owner, fields: owner._listFieldBytes(column))
    }

    /// Whether the set holds `element` (an object: the same stored object).
    public func contains(_ element: Element) -> Bool { position(of: element) != nil }

    /// Adds `element` unless the set holds it already.
    public func insert(_ element: Element) {
        guard position(of: element) == nil else { return }
        guard let owner else {
            storage.append(element)
            return
        }
        owner._appendToList(column, element)
    }

    /// Adds each element of `objects` the set does not hold (RealmSwift's name).
    public func insert<S: Sequence>(objectsIn objects: S) where S.Element == Element {
        for element in objects { insert(element) }
    }

    /// Removes `element` if the set holds it.
    public func remove(_ element: Element) {
        guard let i = position(of: element) else { return }
        guard let owner else {
            storage.remove(at: i)
            return
        }
        owner._editList(column, ListEdit<Element>.remove(i))
    }

    /// Removes every element (the objects of a set of objects stay in the realm).
    public func removeAll() {
        guard let owner else {
            storage.removeAll()
            return
        }
        owner._editList(column, ListEdit<Element>.replaceAll([]))
    }

    /// Adds the elements of `other` the set does not hold.
    public func formUnion<S: Sequence>(_ other: S) where S.Element == Element {
        for element in other { insert(element) }
    }

    /// Keeps only the elements `other` holds too.
    public func formIntersection<S: Sequence>(_ other: S) where S.Element == Element {
        let others = Array(other)
        for element in Array(self) where !others.contains(where: { Self.same($0, element) }) { remove(element) }
    }

    /// Removes the elements `other` holds.
    public func subtract<S: Sequence>(_ other: S) where S.Element == Element {
        for element in other { remove(element) }
    }

    /// Whether every element is in `other`.
    public func isSubset(of other: MutableSet<Element>) -> Bool { allSatisfy { other.contains($0) } }

    /// Whether some element is in `other`.
    public func intersects(_ other: MutableSet<Element>) -> Bool { contains { other.contains($0) } }

    /// The position of `element` in the current order, or `nil`.
    private func position(of element: Element) -> Int? {
        guard let owner else { return storage.firstIndex { Self.same($0, element) } }
        // An unmanaged object cannot be in a stored set.
        if let object = element as? Object, object._realm == nil { return nil }
        let bytes = element._rlmWithBytes { $0.map(Array.init) }
        return owner._listFields(column).firstIndex { $0 == bytes }
    }

    /// Whether two elements are the same: the same object, or values with the same bytes.
    static func same(_ a: Element, _ b: Element) -> Bool {
        if let x = a as? Object, let y = b as? Object {
            return x === y || (x._realm != nil && y._realm != nil && x._key == y._key)
        }
        return a._rlmWithBytes { x in b._rlmWithBytes { y in ByteOrder.equal(x, y) } }
    }
}

extension MutableSet: CustomStringConvertible {
    public var description: String { "MutableSet<\(Element.self)>(\(Array(self)))" }
}

@available(*, unavailable, message: "a managed MutableSet belongs to its realm's thread")
extension MutableSet: Sendable {}

// MARK: - A set as a persisted property

extension MutableSet: _PersistableNonOptional {
    public static var _rlmType: PropertyType { Element._rlmType }
    public static var _rlmOptional: Bool { false }
    /// A new empty set: every object gets its own.
    public static var _rlmDefaultValue: MutableSet<Element> { MutableSet() }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> MutableSet<Element> {
        fatalError("A set is read through its object")
    }
    /// A set has no bytes in its object's record: its elements are stored apart.
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try body(nil)
    }
    public static func _rlmGet(_ object: Object, column: Int32) -> MutableSet<Element> {
        guard object._realm != nil else {
            // The key-path recorder: the read is what it records.
            _ = ClassInfo.recordAccess(column)
            return MutableSet()
        }
        return MutableSet(owner: object, column: column)
    }
    public static func _rlmSet(_ object: Object, column: Int32, _ value: MutableSet<Element>) {
        if let owner = value.owner, owner === object || (owner._key == object._key && owner._realm === object._realm), value.column == column {
            return
        }
        var distinct: [Element] = []
        for element in value where !distinct.contains(where: { same($0, element) }) { distinct.append(element) }
        object._editList(column, ListEdit.replaceAll(distinct))
    }
}

extension MutableSet: ListValue, UnmanagedListContents {
    static var elementType: PropertyType { Element._rlmType }
    static var elementValueType: Any.Type { Element.self }
    static var elementIsOptional: Bool { Element._rlmOptional }
    static var elementTarget: Object.Type? { Element.self as? Object.Type ?? (Element.self as? any LinkValue.Type)?.targetType }
    static var isSet: Bool { true }

    var objects: [Object] {
        if Element.self == AnyRealmValue.self { return storage.compactMap { ($0 as! AnyRealmValue).object(Object.self) } }
        guard Element.self is Object.Type else { return [] }
        return unsafeBitCast(storage, to: [Object].self)
    }

    func encodedElements() -> [[UInt8]?] {
        storage.map { $0._rlmWithBytes { $0.map(Array.init) } }
    }
}
