import CHotPaths
package import LMDBKit
package import LMDBRealmFormat

/// The databases of one list property (`List<T>`).
///
/// Layout: `items` maps *(owner, first position)* to a chunk of consecutive elements
/// (``ListChunk``) — the key is the owner's object key prefixed by its length (two bytes,
/// big-endian) and followed by the position of the chunk's first element (four bytes,
/// big-endian), so an owner's chunks are contiguous and in order. An element is a tag (`nil` or
/// a value) and the value's field bytes (an object's key for a list of objects). Count, read by
/// index and append are one B-tree descent each (and a walk of one chunk); a short list is one
/// value, read and written at once. Inserting or removing in the middle rewrites the chunks
/// from there on.
///
/// A list of objects also has `references`, a `duplicateSort` database mapping a target's key
/// to the keys of the owners whose lists hold it, so deleting a target finds the lists to
/// remove it from without scanning. A map's elements are its entries (``MapEntry``): for a map
/// of objects, the references name the targets of their values.
package struct ListDatabases {
    package let items: Database
    package let references: Database?
    /// Whether the elements are a map's entries.
    package var isMap = false

    /// The object a stored element of a collection of objects names: the element itself, or
    /// a map entry's value (`nil` for a null).
    @inline(__always)
    package func target(of element: [UInt8]?) -> [UInt8]? {
        guard isMap else { return element }
        guard let element else { return nil }
        return element.withUnsafeBytes { entry in
            let value = MapEntry.part(entry, keys: false)
            return value.baseAddress == nil ? nil : Array(value)
        }
    }

    /// The objects stored elements name, in their order (nulls left out).
    package func targets(of elements: [[UInt8]?]) -> [[UInt8]] {
        elements.compactMap { target(of: $0) }
    }
}

extension Table {
    /// The LMDB database names of the list `property` of `className`.
    static func listDatabaseNames(className: String, property: String) -> (items: String, references: String) {
        ("list_" + className + "_" + property, "listrefs_" + className + "_" + property)
    }

    /// Opens (or, through `open`, creates) the databases of every list property of `schema`;
    /// `open` is told whether a database sorts duplicates.
    static func openLists(
        of schema: ObjectSchema, _ open: (_ name: String, _ duplicateSort: Bool) throws -> Database?
    ) throws -> [Int: ListDatabases] {
        var lists: [Int: ListDatabases] = [:]
        for (column, property) in schema.properties.enumerated() where property.isArray {
            let names = listDatabaseNames(className: schema.className, property: property.name)
            guard let items = try open(names.items, false) else { continue }
            let references = property.type == .object ? try open(names.references, true) : nil
            lists[column] = ListDatabases(items: items, references: references, isMap: property.isMap)
        }
        return lists
    }
}

/// Keys of list chunks.
package enum ListKey {
    /// The prefix every chunk of `owner`'s list has.
    package static func prefix(_ owner: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = [UInt8(truncatingIfNeeded: owner.count >> 8), UInt8(truncatingIfNeeded: owner.count)]
        out.append(contentsOf: owner)
        return out
    }

    /// The key of the chunk starting at element `position` of the list whose prefix is `prefix`.
    package static func key(_ prefix: [UInt8], _ position: Int) -> [UInt8] {
        var out = prefix
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: position).bigEndian) { out.append(contentsOf: $0) }
        return out
    }

    /// The first position of a chunk key of the same list as the chunk key `other`, or `nil`
    /// for another list.
    package static func position(_ key: UnsafeRawBufferPointer, sameListAs other: UnsafeRawBufferPointer) -> Int? {
        guard key.count == other.count,
            ByteOrder.equal(UnsafeRawBufferPointer(rebasing: key.prefix(other.count - 4)), UnsafeRawBufferPointer(rebasing: other.prefix(other.count - 4)))
        else { return nil }
        return Int(UInt32(bigEndian: key.loadUnaligned(fromByteOffset: other.count - 4, as: UInt32.self)))
    }

    /// The first position of a chunk key of the list with prefix `prefix`, or `nil` for another
    /// list.
    package static func position(_ key: UnsafeRawBufferPointer, prefix: [UInt8]) -> Int? {
        guard key.count == prefix.count + 4, key.starts(with: prefix) else { return nil }
        return Int(UInt32(bigEndian: key.loadUnaligned(fromByteOffset: prefix.count, as: UInt32.self)))
    }

    /// The owner's key in a chunk key, or `nil` for bytes that are not one.
    package static func owner(of key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard key.count >= 2 else { return nil }
        let n = Int(key[0]) << 8 | Int(key[1])
        guard key.count == 2 + n + 4 else { return nil }
        return UnsafeRawBufferPointer(rebasing: key[2..<(2 + n)])
    }
}

/// A run of consecutive elements of one list, stored as one value: the number of elements (two
/// bytes, big-endian, its top bit set in a sealed chunk), then each element as a tag byte (0 for
/// `nil`, 1 for a value) and, for a value, its length (LEB128) and field bytes, then, in a
/// sealed chunk, the CRC-32C of the chunk's key followed by every byte before it (UInt32
/// little-endian). Every chunk is written sealed; chunks written before checksums (top bit
/// clear, no checksum) are still read. A chunk is closed once it holds ``maximumCount``
/// elements or ``closingSize`` bytes.
///
/// Chunks are built unsealed in memory (``append(_:to:)-([UInt8]?,_)``), sealed by
/// ``sealed(_:key:)`` as they are stored, and opened again by ``opened(_:)`` to take more.
package enum ListChunk {
    static let maximumCount = 64
    static let closingSize = 1024
    /// The top bit of the count: the chunk ends with its checksum.
    package static let sealedFlag: UInt8 = 0x80
    package static let checksumSize = 4

    /// Whether a stored chunk ends with a checksum.
    @inline(__always)
    static func isSealed(_ chunk: UnsafeRawBufferPointer) -> Bool {
        chunk.count >= 2 + checksumSize && chunk[0] & sealedFlag != 0
    }

    /// The number of elements `chunk` holds.
    package static func count(_ chunk: UnsafeRawBufferPointer) -> Int {
        chunk.count >= 2 ? Int(chunk[0] & ~sealedFlag) << 8 | Int(chunk[1]) : 0
    }

    /// The bytes of `chunk` before its checksum.
    @inline(__always)
    package static func body(_ chunk: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        isSealed(chunk) ? UnsafeRawBufferPointer(rebasing: chunk[..<(chunk.count - checksumSize)]) : chunk
    }

    /// `chunk` (built by `append`) as stored under `key`: flagged, its checksum after it.
    package static func sealed(_ chunk: [UInt8], key: UnsafeRawBufferPointer) -> [UInt8] {
        var out = chunk
        seal(&out, key: key)
        return out
    }

    /// Seals `chunk` (built by `append`) in place, as stored under `key`.
    static func seal(_ chunk: inout [UInt8], key: UnsafeRawBufferPointer) {
        if chunk.isEmpty { chunk = [0, 0] }
        chunk[0] |= sealedFlag
        let checksum = chunk.withUnsafeBytes { body in
            lmdbrealm_crc32c(lmdbrealm_crc32c(0, key.baseAddress, key.count), body.baseAddress, body.count)
        }
        withUnsafeBytes(of: checksum.littleEndian) { chunk.append(contentsOf: $0) }
    }

    /// A stored chunk as `append` takes it: unflagged, without its checksum.
    package static func opened(_ chunk: UnsafeRawBufferPointer) -> [UInt8] {
        var out = Array(body(chunk))
        if !out.isEmpty { out[0] &= ~sealedFlag }
        return out
    }

    /// What is wrong with the checksum of the stored chunk `chunk` under `key`, or `nil` (also
    /// for a chunk written before checksums).
    package static func checksumProblem(_ chunk: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) -> String? {
        guard isSealed(chunk) else { return nil }
        let body = body(chunk)
        let stored = UInt32(littleEndian: chunk.loadUnaligned(fromByteOffset: body.count, as: UInt32.self))
        let computed = lmdbrealm_crc32c(lmdbrealm_crc32c(0, key.baseAddress, key.count), body.baseAddress, body.count)
        guard stored != computed else { return nil }
        return "its checksum is \(String(stored, radix: 16)), its key's and bytes' \(String(computed, radix: 16))"
    }

    /// Whether `chunk` takes another element.
    package static func hasRoom(_ chunk: UnsafeRawBufferPointer) -> Bool {
        count(chunk) < maximumCount && chunk.count < closingSize
    }

    /// Calls `body` with each element of `chunk` (`nil` for a null; a value's bytes lie in the
    /// chunk) until it returns false. Bytes read from the file are checked, not trusted: the
    /// walk ends where the chunk stops making sense (``walk(_:_:)`` says where and why).
    /// - Returns: false if `body` stopped the walk.
    @discardableResult @inline(__always)
    package static func forEach(_ stored: UnsafeRawBufferPointer, _ body: (_ index: Int, _ element: UnsafeRawBufferPointer?) -> Bool) -> Bool {
        if case .stopped = walk(stored, { i, element, _ in body(i, element) }) { return false }
        return true
    }

    /// How a walk of a chunk ended.
    package enum Walk: Equatable {
        /// Every element was walked and the chunk's bytes end with the last.
        case complete
        /// `body` returned false.
        case stopped
        /// The bytes stop making sense here; the elements before were walked.
        case malformed(Problem)
    }

    /// What is wrong with a chunk's bytes.
    package enum Problem: Equatable, CustomStringConvertible {
        case shorterThanItsCount(bytes: Int)
        case noElement
        case endsEarly(after: Int, of: Int)
        case unknownTag(UInt8, element: Int)
        case endsInsideLength(element: Int)
        case overlongLength(element: Int)
        case pastItsEnd(element: Int, length: Int)
        case bytesAfterTheLast(Int)

        package var description: String {
            switch self {
            case .shorterThanItsCount(let bytes): "has \(bytes) bytes, shorter than its count"
            case .noElement: "holds no element"
            case .endsEarly(let i, let n): "ends after \(i) of its \(n) elements"
            case .unknownTag(let tag, let i): "has the tag \(tag) at element \(i), neither null (0) nor a value (1)"
            case .endsInsideLength(let i): "ends inside the length of element \(i)"
            case .overlongLength(let i): "has an overlong length at element \(i)"
            case .pastItsEnd(let i, let length): "has element \(i) of \(length) bytes, past its end"
            case .bytesAfterTheLast(let n): "has \(n) bytes after its last element"
            }
        }
    }

    /// The one walk of a chunk's bytes, which readers and the verifier share: calls `body` with
    /// each element (`nil` for a null), the index of the element and where in the chunk its
    /// bytes end, until `body` returns false or the bytes stop making sense. Every count, tag
    /// and length is checked against the bytes before it is used.
    @inline(__always)
    package static func walk(
        _ stored: UnsafeRawBufferPointer, _ body: (_ index: Int, _ element: UnsafeRawBufferPointer?, _ end: Int) -> Bool
    ) -> Walk {
        guard stored.count >= 2 else { return .malformed(.shorterThanItsCount(bytes: stored.count)) }
        let n = count(stored)
        guard n > 0 else { return .malformed(.noElement) }
        let chunk = Self.body(stored)
        var at = 2
        for i in 0..<n {
            guard at < chunk.count else { return .malformed(.endsEarly(after: i, of: n)) }
            let tag = chunk[at]
            at += 1
            if tag == 0 {
                if !body(i, nil, at) { return .stopped }
                continue
            }
            guard tag == 1 else { return .malformed(.unknownTag(tag, element: i)) }
            var length = 0
            var shift = 0
            while true {
                guard at < chunk.count else { return .malformed(.endsInsideLength(element: i)) }
                guard shift < 35 else { return .malformed(.overlongLength(element: i)) }
                let b = chunk[at]
                at += 1
                length |= Int(b & 0x7F) << shift
                shift += 7
                if b & 0x80 == 0 { break }
            }
            guard length <= chunk.count - at else { return .malformed(.pastItsEnd(element: i, length: length)) }
            if !body(i, UnsafeRawBufferPointer(start: chunk.baseAddress! + at, count: length), at + length) { return .stopped }
            at += length
        }
        return at == chunk.count ? .complete : .malformed(.bytesAfterTheLast(chunk.count - at))
    }

    /// The elements of `stored` that make sense (those ``forEach(_:_:)`` walks): how many, and
    /// their bytes as the chunk holds them (each a tag, a length and its field bytes).
    static func wellFormedElements(_ stored: UnsafeRawBufferPointer) -> (count: Int, bytes: UnsafeRawBufferPointer) {
        var count = 0
        var end = 2
        _ = walk(stored) { _, _, elementEnd in
            count += 1
            end = elementEnd
            return true
        }
        guard count > 0 else { return (0, UnsafeRawBufferPointer(start: nil, count: 0)) }
        return (count, UnsafeRawBufferPointer(rebasing: stored[2..<end]))
    }

    /// Appends `element` to `chunk` (a chunk's bytes, its count included).
    package static func append(_ element: UnsafeRawBufferPointer?, to chunk: inout [UInt8]) {
        appendHeader(element?.count, to: &chunk)
        if let element { chunk.append(contentsOf: element) }
    }

    /// Appends `element` to `chunk`, from an array (copied at once).
    package static func append(_ element: [UInt8]?, to chunk: inout [UInt8]) {
        appendHeader(element?.count, to: &chunk)
        if let element { chunk.append(contentsOf: element) }
    }

    /// Counts one more element in `chunk` and appends its tag and length (`nil` for a null).
    @inline(__always)
    private static func appendHeader(_ count: Int?, to chunk: inout [UInt8]) {
        if chunk.isEmpty {
            chunk.append(0)  // keeps a capacity reserved beforehand
            chunk.append(0)
        }
        let n = (Int(chunk[0]) << 8 | Int(chunk[1])) + 1
        chunk[0] = UInt8(truncatingIfNeeded: n >> 8)
        chunk[1] = UInt8(truncatingIfNeeded: n)
        guard var length = count else {
            chunk.append(0)
            return
        }
        chunk.append(1)
        repeat {
            let low = UInt8(length & 0x7F)
            length >>= 7
            chunk.append(length == 0 ? low : low | 0x80)
        } while length != 0
    }
}

extension StoreView {
    /// Throws if the configuration asks for checksums to be checked and `chunk`, stored under
    /// `key`, fails its own.
    @inline(__always)
    fileprivate func check(_ chunk: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws {
        guard verifiesChecksums, let problem = ListChunk.checksumProblem(chunk, key: key) else { return }
        throw DamagedValue(description: "a chunk of a list's elements is damaged (\(problem))")
    }

    /// The last chunk of the list with prefix `prefix`, and its first position: one descent.
    fileprivate func lastChunk(_ cursor: borrowing UnsafeCursor, prefix: [UInt8]) throws -> (first: Int, chunk: UnsafeRawBufferPointer)? {
        let beyond = ListKey.key(prefix, Int(UInt32.max))
        let last = try beyond.withUnsafeBytes { try cursor.seek(atLeast: $0) } != nil ? try cursor.previous() : try cursor.last()
        guard let last, let first = ListKey.position(last.key, prefix: prefix) else { return nil }
        try check(last.value, key: last.key)
        return (first, last.value)
    }

    /// The chunk holding element `position` of the list with prefix `prefix`, and its first
    /// position: one descent.
    fileprivate func chunk(_ cursor: borrowing UnsafeCursor, prefix: [UInt8], holding position: Int) throws
        -> (first: Int, chunk: UnsafeRawBufferPointer)?
    {
        guard position >= 0, position < Int(UInt32.max) else { return nil }
        let after = ListKey.key(prefix, position + 1)
        let found = try after.withUnsafeBytes { try cursor.seek(atLeast: $0) } != nil ? try cursor.previous() : try cursor.last()
        guard let found, let first = ListKey.position(found.key, prefix: prefix), first <= position else { return nil }
        try check(found.value, key: found.key)
        return (first, found.value)
    }

    /// The number of elements of `owner`'s list: one descent to its last chunk.
    package func listCount(_ list: ListDatabases, owner: UnsafeRawBufferPointer) throws -> Int {
        let cursor = try UnsafeCursor(transaction: transaction, dbi: list.items.dbi)
        guard let last = try lastChunk(cursor, prefix: ListKey.prefix(owner)) else { return 0 }
        return last.first + ListChunk.count(last.chunk)
    }

    /// Lends `body` element `index` of `owner`'s list (`nil` for a null element).
    /// - Returns: What `body` returned, or `nil` if there is no such element.
    package func withListElement<R>(
        _ list: ListDatabases, owner: UnsafeRawBufferPointer, at index: Int, _ body: (UnsafeRawBufferPointer?) -> R
    ) throws -> R? {
        let cursor = try UnsafeCursor(transaction: transaction, dbi: list.items.dbi)
        guard let found = try chunk(cursor, prefix: ListKey.prefix(owner), holding: index) else { return nil }
        var result: R?
        ListChunk.forEach(found.chunk) { i, element in
            guard found.first + i == index else { return true }
            result = body(element)
            return false
        }
        return result
    }

    /// Calls `body` with each element of `owner`'s list, in order, until it returns false.
    package func forEachListElement(
        _ list: ListDatabases, owner: UnsafeRawBufferPointer, _ body: (_ position: Int, _ element: UnsafeRawBufferPointer?) -> Bool
    ) throws {
        try forEachListChunk(list, owner: owner) { first, chunk in
            ListChunk.forEach(chunk) { i, element in body(first + i, element) }
        }
    }

    /// Calls `body` with each chunk of `owner`'s list and the position of its first element,
    /// in order, until it returns false. The chunk's checksum is checked first.
    func forEachListChunk(
        _ list: ListDatabases, owner: UnsafeRawBufferPointer, _ body: (_ first: Int, _ chunk: UnsafeRawBufferPointer) -> Bool
    ) throws {
        // The first chunk's key, on the stack: two bytes of length, the owner's key, position 0.
        try withUnsafeTemporaryAllocation(byteCount: owner.count + 6, alignment: 1) { start in
            start[0] = UInt8(truncatingIfNeeded: owner.count >> 8)
            start[1] = UInt8(truncatingIfNeeded: owner.count)
            UnsafeMutableRawBufferPointer(rebasing: start[2..<(2 + owner.count)]).copyMemory(from: owner)
            for i in 0..<4 { start[2 + owner.count + i] = 0 }
            let start = UnsafeRawBufferPointer(start)
            let cursor = try UnsafeCursor(transaction: transaction, dbi: list.items.dbi)
            var entry = try cursor.seek(atLeast: start)
            while let e = entry, let first = ListKey.position(e.key, sameListAs: start) {
                try check(e.value, key: e.key)
                guard body(first, e.value) else { return }
                entry = try cursor.next()
            }
        }
    }

    /// The elements of `owner`'s list, copied in one walk into one buffer.
    package func listFieldBytes(_ list: ListDatabases, owner: UnsafeRawBufferPointer) throws -> ListFieldBytes {
        var fields = ListFieldBytes()
        try forEachListChunk(list, owner: owner) { _, chunk in
            fields.append(ListChunk.wellFormedElements(chunk))
            return true
        }
        return fields
    }

    /// The elements of `owner`'s list, copied.
    package func listElements(_ list: ListDatabases, owner: UnsafeRawBufferPointer) throws -> [[UInt8]?] {
        var elements: [[UInt8]?] = []
        try forEachListElement(list, owner: owner) { _, element in
            elements.append(element.map(Array.init))
            return true
        }
        return elements
    }
}

extension WriteSession {
    /// Replaces `owner`'s list in `table`'s list `column` with `elements`; `old`, if the caller
    /// has read them, are the elements stored now. Only the chunks from the one holding the
    /// first element that differs are rewritten.
    package func setList(_ elements: [[UInt8]?], old: [[UInt8]?]? = nil, of owner: ObjectKey, in table: Table, column: Int) throws {
        let list = table.list(at: column)!
        try owner.withBytes { owner in
            let old = try old ?? view.listElements(list, owner: owner)
            let kept = zip(old, elements).prefix { $0 == $1 }.count
            guard kept < max(old.count, elements.count) else { return }
            let txn = view.transaction
            let prefix = ListKey.prefix(owner)
            // The chunk holding the first change (the last chunk, when elements are only added)
            // and every chunk after it go; the elements from its start are written anew.
            var start = 0
            if !old.isEmpty {
                let cursor = try UnsafeCursor(transaction: txn, dbi: list.items.dbi)
                start = try view.chunk(cursor, prefix: prefix, holding: min(kept, old.count - 1))?.first ?? 0
                var doomed: [[UInt8]] = []
                var entry = try ListKey.key(prefix, start).withUnsafeBytes { try cursor.seek(atLeast: $0) }
                while let e = entry, ListKey.position(e.key, prefix: prefix) != nil {
                    doomed.append(Array(e.key))
                    entry = try cursor.next()
                }
                for key in doomed { try key.withUnsafeBytes { _ = try writer.delete(list.items.dbi, key: $0) } }
            }
            // A list written after every other (a new object's, in key order) is appended: no
            // search, and full pages. The first refusal ends the attempt.
            var appending = true
            var chunk: [UInt8] = []
            // Room for the first chunk, sealed: one allocation, not one per doubling.
            var size = 2 + ListChunk.checksumSize
            for element in elements[start...] {
                if size > ListChunk.closingSize { break }
                size += 3 + (element?.count ?? 0)
            }
            chunk.reserveCapacity(size)
            var first = start
            var key = prefix
            for position in start..<elements.count {
                ListChunk.append(elements[position], to: &chunk)
                if !chunk.withUnsafeBytes(ListChunk.hasRoom) {
                    try storeChunk(&chunk, first: first, key: &key, prefixCount: prefix.count, in: list.items, appending: &appending)
                    chunk.removeAll(keepingCapacity: true)
                    first = position + 1
                }
            }
            if !chunk.isEmpty { try storeChunk(&chunk, first: first, key: &key, prefixCount: prefix.count, in: list.items, appending: &appending) }
            if let references = list.references {
                if old.isEmpty {
                    // A new list (the usual case of `add`): every target is new. A target held
                    // twice is buffered twice; the flush writes it once.
                    for element in elements {
                        guard let target = list.target(of: element) else { continue }
                        try target.withUnsafeBytes { try bufferReference(references, target: $0, owner: owner) }
                    }
                } else {
                    let before = Set(list.targets(of: old))
                    let after = Set(list.targets(of: elements))
                    let gone = before.subtracting(after)
                    // A buffered entry must be written before one is removed.
                    if !gone.isEmpty { try flushIndexEntries() }
                    for target in gone {
                        try target.withUnsafeBytes { t in _ = try writer.delete(references.dbi, key: t, value: owner) }
                    }
                    for added in after.subtracting(before) {
                        try added.withUnsafeBytes { try bufferReference(references, target: $0, owner: owner) }
                    }
                    // Embedded objects taken out of their list are deleted.
                    if !gone.isEmpty, let embedded = try embeddedTargets(of: table, column: column) {
                        try removeObjects(gone.map { target in target.withUnsafeBytes { ObjectKey($0) } }, from: embedded)
                    }
                }
            }
            listChanged(owner: ObjectKey(owner), table: table, column: column)
        }
    }

    /// Seals `chunk` as the chunk starting at element `first` of the list whose key prefix is
    /// the first `prefixCount` bytes of `key`, and stores it: appended while `appending` holds
    /// (the first refusal clears it), put in place otherwise.
    package func storeChunk(
        _ chunk: inout [UInt8], first: Int, key: inout [UInt8], prefixCount: Int, in items: Database, appending: inout Bool
    ) throws {
        key.removeSubrange(prefixCount...)
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: first).bigEndian) { key.append(contentsOf: $0) }
        try key.withUnsafeBytes { k in
            ListChunk.seal(&chunk, key: k)
            try chunk.withUnsafeBytes { v in
                if appending { appending = try writer.put(items.dbi, key: k, value: v, flags: PutFlags.append.rawValue) }
                if !appending { _ = try writer.put(items.dbi, key: k, value: v) }
            }
        }
    }

    /// Appends `element` to `owner`'s list: one descent to its last chunk, one to store it.
    package func appendToList(_ element: UnsafeRawBufferPointer?, of owner: ObjectKey, in table: Table, column: Int) throws {
        let list = table.list(at: column)!
        try owner.withBytes { owner in
            let txn = view.transaction
            let prefix = ListKey.prefix(owner)
            let cursor = try UnsafeCursor(transaction: txn, dbi: list.items.dbi)
            var chunk: [UInt8] = []
            var first = 0
            if let last = try view.lastChunk(cursor, prefix: prefix) {
                if ListChunk.hasRoom(last.chunk) {
                    chunk = ListChunk.opened(last.chunk)  // copied: the put below replaces the page it lies in
                    first = last.first
                } else {
                    first = last.first + ListChunk.count(last.chunk)
                }
            }
            ListChunk.append(element, to: &chunk)
            try ListKey.key(prefix, first).withUnsafeBytes { k in
                try ListChunk.sealed(chunk, key: k).withUnsafeBytes { v in
                    if try !writer.put(list.items.dbi, key: k, value: v, flags: PutFlags.append.rawValue) {
                        _ = try writer.put(list.items.dbi, key: k, value: v)
                    }
                }
            }
            if let references = list.references, let target = list.target(of: element.map(Array.init)) {
                try target.withUnsafeBytes { try bufferReference(references, target: $0, owner: owner) }
            }
            listChanged(owner: ObjectKey(owner), table: table, column: column)
        }
    }

    /// Removes every list element of the objects `owners` of `table` (being deleted), with
    /// their references.
    func removeLists(of owners: [ObjectKey], in table: Table) throws {
        for (column, _) in table.lists {
            for owner in owners { try setList([], of: owner, in: table, column: column) }
        }
    }

    /// Removes `targets` (objects of `target`, being deleted) from every list of objects that
    /// holds them: `nil` removes every element of those lists. In a map the entries stay, their
    /// values set to `nil`, as in RealmSwift.
    func removeFromLists(_ targets: [ObjectKey]?, of target: Table, sources: [(table: Table, column: Int)]) throws {
        try flushIndexEntries()  // the references are read whole
        let txn = view.transaction
        for (source, column) in sources {
            guard let list = source.lists[column], let references = list.references else { continue }
            guard let targets else {
                // Every element goes: the owners that had any are told their list changed.
                var owners = Set<ObjectKey>()
                try UnsafeCursor(transaction: txn, dbi: references.dbi).forEach { _, owner in
                    owners.insert(ObjectKey(owner))
                    return true
                }
                if list.isMap {
                    for owner in owners {
                        let entries = try owner.withBytes { try view.listElements(list, owner: $0) }
                        try setList(entries.map { MapEntry.withNullValue($0) }, old: entries, of: owner, in: source, column: column)
                    }
                    continue
                }
                try writer.empty(list.items.dbi)
                try writer.empty(references.dbi)
                for owner in owners { listChanged(owner: owner, table: source, column: column) }
                continue
            }
            let removed = Set(targets.map { $0.withBytes { Array($0) } })
            var owners = Set<ObjectKey>()
            let cursor = try UnsafeCursor(transaction: txn, dbi: references.dbi)
            for key in removed {
                var entry = try key.withUnsafeBytes { try cursor.seek(exactly: $0) }
                while let e = entry {
                    owners.insert(ObjectKey(e.value))
                    entry = try cursor.nextValue()
                }
            }
            for owner in owners {
                let elements = try owner.withBytes { try view.listElements(list, owner: $0) }
                let kept: [[UInt8]?]
                if list.isMap {
                    kept = elements.map { entry in list.target(of: entry).map(removed.contains) == true ? MapEntry.withNullValue(entry) : entry }
                } else {
                    kept = elements.filter { $0.map { !removed.contains($0) } ?? true }
                }
                try setList(kept, old: elements, of: owner, in: source, column: column)
            }
        }
    }

    package func listChanged(owner: ObjectKey, table: Table, column: Int) {
        changeLog?.changes(for: table).modified[owner, default: 0] |= ChangeLog.bit(column)
    }
}

/// The elements of a list, copied from its chunks in one walk into one buffer: each chunk's
/// elements that make sense, as the chunk holds them (a tag, a length and the field bytes), in
/// one copy per chunk. An iterator reads them in order.
@usableFromInline
package struct ListFieldBytes {
    package init() {}

    /// The elements' bytes, read through ``withElement(at:_:)`` (or, above this layer, through
    /// ``element(_:at:_:)`` in a walk compiled for its caller).
    @usableFromInline package private(set) var bytes: [UInt8] = []
    /// The number of elements.
    package private(set) var count = 0

    /// Appends a chunk's well-formed elements (``ListChunk/wellFormedElements(_:)``).
    package mutating func append(_ elements: (count: Int, bytes: UnsafeRawBufferPointer)) {
        guard elements.count > 0 else { return }
        bytes.append(contentsOf: elements.bytes)
        count += elements.count
    }

    /// Lends `body` the element starting at `offset` (`nil` for a null) and moves `offset` to
    /// the next. `offset` must be 0 or where the previous element ended.
    @inlinable @inline(__always)
    package func withElement<R>(at offset: inout Int, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        bytes.withUnsafeBytes { Self.element($0, at: &offset, body) }
    }

    /// The element of `bytes` at `offset`, lent to `body`; `offset` moves past it.
    @inlinable @inline(__always)
    package static func element<R>(_ bytes: UnsafeRawBufferPointer, at offset: inout Int, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        // Checked as they were copied (`ListChunk.walk`): the tag, a length of at most five
        // bytes and the field bytes are all there.
        let tag = bytes[offset]
        offset += 1
        guard tag == 1 else { return body(nil) }
        var length = 0
        var shift = 0
        while true {
            let b = bytes[offset]
            offset += 1
            length |= Int(b & 0x7F) << shift
            shift += 7
            if b & 0x80 == 0 { break }
        }
        let start = offset
        offset += length
        return body(UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
    }
}
