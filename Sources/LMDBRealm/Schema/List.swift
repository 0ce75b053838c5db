public import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// An ordered collection of values or objects held by a property of a model:
/// `@Persisted var keywords: List<Keyword>`, `@Persisted var scores: List<Double>`.
///
/// ```swift
/// final class Article: Object {
///     @Persisted(primaryKey: true) var id: String
///     @Persisted var keywords: List<Keyword>
///     @Persisted var scores: List<Double?>
/// }
/// try realm.write {
///     article.keywords.append(keyword)       // an unmanaged keyword is added too
///     article.scores.insert(4.5, at: 0)
/// }
/// ```
///
/// Before its object is added, a list is a plain in-memory array. On a managed object it is a
/// live view of the stored list: it reads the realm's current version, and changes it only
/// inside a write transaction. Counting, reading by index and appending take one B-tree
/// descent each, whatever the list's length; inserting or removing in the middle moves the
/// elements after it. Lists of objects are never optional (`List<Keyword?>` stops the
/// process); deleting an object removes it from every list that holds it.
public final class List<Element: _Persistable>: RandomAccessCollection, MutableCollection {
    /// The elements of an unmanaged list.
    var storage: [Element] = []
    /// The managed object holding the list, and the list's declared column; `nil` while the
    /// list is unmanaged.
    let owner: Object?
    let column: Int32

    /// An empty unmanaged list.
    public init() {
        owner = nil
        column = 0
    }

    /// The list of declared column `column` of the managed `owner`.
    init(owner: Object, column: Int32) {
        self.owner = owner
        self.column = column
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public func index(after i: Int) -> Int { i + 1 }
    public func index(before i: Int) -> Int { i - 1 }

    /// The number of elements; on a managed list, read without reading any element.
    public var count: Int {
        guard let owner else { return storage.count }
        return owner._listCount(column)
    }

    public var isEmpty: Bool { count == 0 }

    /// The element at `position`; setting it replaces it (inside a write, on a managed list).
    public subscript(position: Int) -> Element {
        get {
            guard let owner else { return storage[position] }
            return owner._listElement(column, at: position, as: Element.self)
        }
        set { apply(.replace(position, newValue)) }
    }

    /// Iterates the elements as they are when iteration begins: a managed list's elements are
    /// read in one walk (an object's accessor is made as it is reached).
    public func makeIterator() -> Iterator {
        guard let owner else { return Iterator(unmanaged: storage) }
        return Iterator(owner: owner, fields: owner._listFieldBytes(column))
    }

    /// The iterator of a `List`.
    public struct Iterator: IteratorProtocol {
        private var unmanaged: IndexingIterator<[Element]>?
        private let owner: Object?
        private let fields: ListFieldBytes
        private var index = 0
        /// Where element `index` starts in `fields`.
        private var offset = 0
        /// The class of the elements of a list of objects, found once for the whole walk.
        private let target: Object.Type?

        init(unmanaged: [Element]) {
            self.unmanaged = unmanaged.makeIterator()
            owner = nil
            fields = ListFieldBytes()
            target = nil
        }

        init(owner: Object, fields: ListFieldBytes) {
            self.owner = owner
            self.fields = fields
            target = Element.self as? Object.Type
        }

        public mutating func next() -> Element? {
            if unmanaged != nil { return unmanaged!.next() }
            guard index < fields.count, let realm = owner?._realm else { return nil }
            index += 1
            guard let target else {
                return fields.withElement(at: &offset) { Object.decodeElement($0, as: Element.self, in: realm) }
            }
            // An object: looked up through a closure of no generic type, then handed out as an
            // `Element` (it is one: `target`'s binding made it).
            let object = fields.object(at: &offset) { key in
                guard let key, let object = realm.linkedObject(target, key: key) else {
                    fatalError("A list of '\(target.className())' holds an object that is gone")
                }
                return object
            }
            assert(object is Element)
            return unsafeBitCast(object, to: Element.self)
        }
    }

    /// Adds `element` at the end.
    public func append(_ element: Element) {
        guard let owner else {
            storage.append(element)
            return
        }
        owner._appendToList(column, element)
    }

    /// Adds the elements of `objects` at the end, in order (RealmSwift's name).
    public func append<S: Sequence>(objectsIn objects: S) where S.Element == Element {
        guard owner != nil else {
            storage.append(contentsOf: objects)
            return
        }
        for element in objects { append(element) }
    }

    /// Adds the elements of `elements` at the end, in order, as ``append(objectsIn:)`` does.
    public func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        append(objectsIn: elements)
    }

    /// Inserts `element` at `index` (at most `count`).
    public func insert(_ element: Element, at index: Int) { apply(.insert(element, index)) }

    /// Removes the element at `index`.
    public func remove(at index: Int) { apply(.remove(index)) }

    /// Removes the last element; the list must not be empty.
    public func removeLast() { apply(.removeLast) }

    /// Removes every element (the objects of a list of objects stay in the realm).
    public func removeAll() { apply(.replaceAll([])) }

    /// Moves the element at `from` to `to`.
    public func move(from: Int, to: Int) { apply(.move(from, to)) }

    /// Exchanges the elements at `i` and `j`.
    public func swapAt(_ i: Int, _ j: Int) { apply(.swap(i, j)) }

    /// Replaces the element at `index` with `object`.
    public func replace(index: Int, object: Element) { apply(.replace(index, object)) }

    /// Removes the first `number` elements; the list must have that many.
    public func removeFirst(_ number: Int = 1) {
        require(number >= 0 && number <= count, "Cannot remove the first \(number) elements of a list of \(count)")
        for _ in 0..<number { apply(.remove(0)) }
    }

    /// Removes the last `number` elements; the list must have that many.
    public func removeLast(_ number: Int) {
        require(number >= 0 && number <= count, "Cannot remove the last \(number) elements of a list of \(count)")
        for _ in 0..<number { apply(.removeLast) }
    }

    /// Inserts the elements of `newElements` at `i` (at most `count`), in order.
    public func insert<C: Collection>(contentsOf newElements: C, at i: Int) where C.Element == Element {
        for (offset, element) in newElements.enumerated() { apply(.insert(element, i + offset)) }
    }

    /// Removes the elements in `bounds`.
    public func removeSubrange<R: RangeExpression>(_ bounds: R) where R.Bound == Int {
        let range = bounds.relative(to: 0..<count)
        for index in range.reversed() { apply(.remove(index)) }
    }

    /// Replaces the elements in `subrange` with those of `newElements`.
    public func replaceSubrange<C: Collection, R: RangeExpression>(_ subrange: R, with newElements: C)
    where C.Element == Element, R.Bound == Int {
        let range = subrange.relative(to: 0..<count)
        removeSubrange(range)
        insert(contentsOf: newElements, at: range.lowerBound)
    }

    /// Removes the elements at `offsets` (SwiftUI's `onDelete` gives these).
    public func remove(atOffsets offsets: IndexSet) {
        for index in offsets.reversed() { apply(.remove(index)) }
    }

    /// Moves the elements at `offsets` to just before `destination`, keeping their order
    /// (SwiftUI's `onMove` gives these).
    public func move(fromOffsets offsets: IndexSet, toOffset destination: Int) {
        var order = Array(indices)
        let moving = offsets.map { order[$0] }
        let before = offsets.filter { $0 < destination }.count
        for index in offsets.reversed() { order.remove(at: index) }
        order.insert(contentsOf: moving, at: destination - before)
        // Each element is moved once, from where it is now to where it belongs.
        var current = Array(indices)
        for (target, original) in order.enumerated() {
            let from = current.firstIndex(of: original)!
            if from != target {
                apply(.move(from, target))
                current.insert(current.remove(at: from), at: target)
            }
        }
    }

    /// The elements at `indexes`, in order.
    public func objects(at indexes: IndexSet) -> [Element] {
        indexes.map { self[$0] }
    }

    /// Applies `edit` to the elements in memory, or to the stored list.
    private func apply(_ edit: ListEdit<Element>) {
        guard let owner else {
            edit.apply(to: &storage) { $0 }
            return
        }
        owner._editList(column, edit)
    }
}

/// One change to a list, applied alike to an unmanaged list's elements and to a stored list's
/// element bytes (which need not be decoded for it).
enum ListEdit<Element> {
    case insert(Element, Int)
    case replace(Int, Element)
    case remove(Int)
    case removeLast
    case move(Int, Int)
    case swap(Int, Int)
    case replaceAll([Element])

    /// The elements the edit brings in.
    var newElements: [Element] {
        switch self {
        case .insert(let e, _), .replace(_, let e): [e]
        case .replaceAll(let elements): elements
        default: []
        }
    }

    /// Applies the edit to `items`, making each new element an item with `item`; an index out
    /// of bounds stops the process with RealmSwift's message.
    func apply<Item>(to items: inout [Item], _ item: (Element) -> Item) {
        func check(_ i: Int, _ limit: Int) {
            require(i >= 0 && i < limit, "Index \(i) is out of bounds (must be less than \(limit)).")
        }
        switch self {
        case .insert(let e, let i):
            check(i, items.count + 1)
            items.insert(item(e), at: i)
        case .replace(let i, let e):
            check(i, items.count)
            items[i] = item(e)
        case .remove(let i):
            check(i, items.count)
            items.remove(at: i)
        case .removeLast:
            require(!items.isEmpty, "Cannot remove the last element of an empty list.")
            items.removeLast()
        case .move(let from, let to):
            check(from, items.count)
            check(to, items.count)
            items.insert(items.remove(at: from), at: to)
        case .swap(let i, let j):
            check(i, items.count)
            check(j, items.count)
            items.swapAt(i, j)
        case .replaceAll(let elements):
            items = elements.map(item)
        }
    }
}

extension List where Element: Equatable {
    /// The position of the first element equal to `element`, or `nil`.
    public func index(of element: Element) -> Int? { firstIndex(of: element) }
}

extension List where Element: Object {
    /// The position of `object` in the list, or `nil`.
    public func index(of object: Element) -> Int? { firstIndex { $0 === object || ($0.realm != nil && $0._key == object._key && object.realm != nil) } }
}

extension List: CustomStringConvertible {
    public var description: String { "List<\(Element.self)>(\(Array(self)))" }
}

@available(*, unavailable, message: "a managed List belongs to its realm's thread")
extension List: Sendable {}

// MARK: - A list as a persisted property

extension List: _PersistableNonOptional {
    public static var _rlmType: PropertyType { Element._rlmType }
    public static var _rlmOptional: Bool { false }
    /// A new empty list: every object gets its own.
    public static var _rlmDefaultValue: List<Element> { List() }
    public static func _rlmDecode(_ field: UnsafeRawBufferPointer?) -> List<Element> {
        fatalError("A list is read through its object")
    }
    /// A list has no bytes in its object's record: its elements are stored apart.
    public func _rlmWithBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try body(nil)
    }
    public static func _rlmGet(_ object: Object, column: Int32) -> List<Element> {
        guard object._realm != nil else {
            // The key-path recorder: the read is what it records.
            _ = ClassInfo.recordAccess(column)
            return List()
        }
        return List(owner: object, column: column)
    }
    public static func _rlmSet(_ object: Object, column: Int32, _ value: List<Element>) {
        // `object.list.sort()` and the like write the same list back: nothing to do.
        if let owner = value.owner, owner === object || (owner._key == object._key && owner.realm === object.realm), value.column == column {
            return
        }
        object._editList(column, ListEdit.replaceAll(Array(value)))
    }
}

/// What the schema and `add` need to know of a list, whatever its element type.
protocol ListValue {
    /// The stored kind of the elements, whether they may be `nil`, and the class of objects.
    static var elementType: PropertyType { get }
    static var elementIsOptional: Bool { get }
    static var elementTarget: Object.Type? { get }
    /// Whether the property is a `MutableSet` (stored as a list whose elements are distinct).
    static var isSet: Bool { get }
    /// Whether the property is a `Map` (stored as a list of key-value entries).
    static var isMap: Bool { get }
    /// The Swift type of an element (of a map's value).
    static var elementValueType: Any.Type { get }
}

extension ListValue {
    static var isMap: Bool { false }
}

/// An unmanaged list's elements, for `add`.
protocol UnmanagedListContents: AnyObject {
    /// The objects of a list of objects.
    var objects: [Object] { get }
    /// Each element's field bytes (an object's key, once the object is stored).
    func encodedElements() -> [[UInt8]?]
    /// Whether this is a `List` of objects: `objects` are its elements, in order.
    var isListOfObjects: Bool { get }
}

extension UnmanagedListContents {
    var isListOfObjects: Bool { false }
}

/// Reads the collection a `@Persisted` wrapper of one type holds on an unmanaged object. Made
/// once per class (``ClassInfo/Field/listReader``), so adding an object finds each collection's
/// conformance without a dynamic cast.
protocol UnmanagedListReader {
    /// The collection at `value`, a wrapper's value.
    func contents(at value: UnsafeRawPointer) -> any UnmanagedListContents
}

struct TypedListReader<Collection: UnmanagedListContents>: UnmanagedListReader {
    func contents(at value: UnsafeRawPointer) -> any UnmanagedListContents {
        value.assumingMemoryBound(to: Collection.self).pointee
    }
}

extension List: ListValue, UnmanagedListContents {
    static var elementType: PropertyType { Element._rlmType }
    static var elementValueType: Any.Type { Element.self }
    static var elementIsOptional: Bool { Element._rlmOptional }
    static var elementTarget: Object.Type? { Element.self as? Object.Type ?? (Element.self as? any LinkValue.Type)?.targetType }
    static var isSet: Bool { false }

    var objects: [Object] {
        if Element.self == AnyRealmValue.self { return storage.compactMap { ($0 as! AnyRealmValue).object(Object.self) } }
        // A list of objects holds class references: the array is reinterpreted, not cast
        // element by element.
        guard Element.self is Object.Type else { return [] }
        return unsafeBitCast(storage, to: [Object].self)
    }

    var isListOfObjects: Bool { Element.self is Object.Type }

    func encodedElements() -> [[UInt8]?] {
        // Objects are read directly: their keys, without a generic call per element.
        if Element.self is Object.Type { return objects.map { $0._realm == nil ? nil : $0._key.withBytes { Array($0) } } }
        return storage.map { $0._rlmWithBytes { $0.map(Array.init) } }
    }
}

