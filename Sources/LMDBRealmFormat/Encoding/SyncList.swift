import Foundation

/// The name of one element of a synced list, stable for the element's life on every node: the
/// stamp of the write that inserted it and its place among that write's insertions.
package struct SyncElementID: Comparable, Hashable, Sendable, CustomStringConvertible {
    package var stamp: SyncStamp
    package var index: UInt32

    package init(stamp: SyncStamp, index: UInt32) {
        self.stamp = stamp
        self.index = index
    }

    package static func < (a: SyncElementID, b: SyncElementID) -> Bool {
        a.stamp != b.stamp ? a.stamp < b.stamp : a.index < b.index
    }

    package var description: String { "\(stamp)#\(index)" }

    package func append(to out: inout [UInt8]) {
        stamp.append(to: &out)
        SyncBytes.appendVarint(UInt64(index), to: &out)
    }

    package init(reading reader: inout SyncBytes.Reader) throws {
        let stamp = try SyncStamp(reading: &reader, "element")
        let index = try reader.varint("element index")
        guard index <= UInt64(UInt32.max) else { throw SyncBytes.Malformed(description: "element index \(index) is too large") }
        self.init(stamp: stamp, index: UInt32(index))
    }
}

/// One change of a synced list, by element names rather than positions, so that changes made
/// concurrently on several nodes merge (see ``SyncList``).
package enum SyncListOperation: Equatable, Sendable {
    /// `value` (an element's stored field) inserted right after the element `after` (at the
    /// start when `nil`).
    case insert(SyncElementID, after: SyncElementID?, value: [UInt8]?)
    /// The element removed.
    case remove(SyncElementID)
}

/// A list as synced files merge it: every element ever inserted, in order, each named by a
/// ``SyncElementID``; removed ones stay as markers so that insertions placed after them
/// still find their place.
///
/// An insertion goes right after the element it names, past the elements already there whose
/// names are greater (inserted later, by the order of stamps, at the same place, and what was
/// inserted after those). Every node applying the same operations, in any order that keeps
/// an insertion after the one it is placed after, holds the same list. A removal wins over
/// nothing but its element: an element inserted concurrently next to it stays.
package struct SyncList: Equatable, Sendable {
    package struct Entry: Equatable, Sendable {
        package var id: SyncElementID
        /// The element's stored field (`nil` for a null); dropped once removed.
        package var value: [UInt8]?
        var isRemoved: Bool
    }

    package private(set) var entries: [Entry] = []
    private var ids: Set<SyncElementID> = []

    package init() {}

    /// The list `values` as one write stamped `stamp` makes it whole (the elements named by
    /// their places): how a list set as a whole value becomes a merged one, the same on
    /// every node.
    package init(values: [[UInt8]?], stamp: SyncStamp) {
        entries = values.enumerated().map { Entry(id: SyncElementID(stamp: stamp, index: UInt32($0.offset)), value: $0.element, isRemoved: false) }
        ids = Set(entries.map(\.id))
    }

    /// The elements, in order.
    package var values: [[UInt8]?] { entries.filter { !$0.isRemoved }.map(\.value) }

    /// Applies `operation`; one applied already changes nothing.
    package mutating func apply(_ operation: SyncListOperation) {
        switch operation {
        case .insert(let id, let after, let value):
            guard ids.insert(id).inserted else { return }
            var position = 0
            if let after {
                // Looked for from the end, where appends place theirs. An element this file has
                // not seen puts it at the end (the log's order makes every insertion arrive
                // after the one it names).
                position = (entries.lastIndex { $0.id == after }).map { $0 + 1 } ?? entries.count
            }
            while position < entries.count && entries[position].id > id { position += 1 }
            entries.insert(Entry(id: id, value: value, isRemoved: false), at: position)
        case .remove(let id):
            // Looked for from the end too: rebuilding a list removes each element right after
            // inserting it.
            guard ids.contains(id), let index = entries.lastIndex(where: { $0.id == id }) else { return }
            entries[index].isRemoved = true
            entries[index].value = nil
        }
    }

    /// The operations that turn this list's elements into `new`, made by the write stamped
    /// `stamp` (greater than every stamp the list holds): the elements kept are a longest
    /// common subsequence of the two (past the common start and end; a difference of more than
    /// a million element pairs keeps only those), the others are removed and `new`'s others
    /// inserted after the element before them.
    package func operations(making new: [[UInt8]?], stamp: SyncStamp) -> [SyncListOperation] {
        let live = entries.filter { !$0.isRemoved }
        var start = 0
        while start < live.count && start < new.count && live[start].value == new[start] { start += 1 }
        var end = 0
        while end < live.count - start && end < new.count - start && live[live.count - 1 - end].value == new[new.count - 1 - end] { end += 1 }
        let old = Array(live[start..<(live.count - end)])
        let added = Array(new[start..<(new.count - end)])
        let kept = Self.commonSubsequence(old.map(\.value), added)
        var out: [SyncListOperation] = []
        let keptOld = Set(kept.map(\.old))
        for (index, entry) in old.enumerated() where !keptOld.contains(index) { out.append(.remove(entry.id)) }
        var after = start > 0 ? live[start - 1].id : nil
        var next = kept.makeIterator()
        var pair = next.next()
        var minted: UInt32 = 0
        for (index, value) in added.enumerated() {
            if let match = pair, match.new == index {
                after = old[match.old].id
                pair = next.next()
                continue
            }
            let id = SyncElementID(stamp: stamp, index: minted)
            minted += 1
            out.append(.insert(id, after: after, value: value))
            after = id
        }
        return out
    }

    /// The index pairs of a longest common subsequence of `a` and `b`, in order; none if the
    /// table would pass a million cells.
    private static func commonSubsequence(_ a: [[UInt8]?], _ b: [[UInt8]?]) -> [(old: Int, new: Int)] {
        guard !a.isEmpty, !b.isEmpty, a.count * b.count <= 1_000_000 else { return [] }
        let width = b.count + 1
        // lengths[i * width + j]: the longest common subsequence of a[i...] and b[j...].
        var lengths = [Int32](repeating: 0, count: (a.count + 1) * width)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lengths[i * width + j] =
                    a[i] == b[j] ? lengths[(i + 1) * width + j + 1] + 1 : max(lengths[(i + 1) * width + j], lengths[i * width + j + 1])
            }
        }
        var pairs: [(old: Int, new: Int)] = []
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if a[i] == b[j] {
                pairs.append((i, j))
                i += 1
                j += 1
            } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
                i += 1
            } else {
                j += 1
            }
        }
        return pairs
    }

    /// Operations that make this list, entry for entry, out of an empty one: how a snapshot
    /// keeps it.
    package var rebuildingOperations: [SyncListOperation] {
        var out: [SyncListOperation] = []
        var after: SyncElementID?
        for entry in entries {
            out.append(.insert(entry.id, after: after, value: entry.value))
            if entry.isRemoved { out.append(.remove(entry.id)) }
            after = entry.id
        }
        return out
    }

    /// The list `operations` make out of an empty one.
    package init(operations: [SyncListOperation]) {
        for operation in operations { apply(operation) }
    }
}

extension SyncListOperation {
    package func append(to out: inout [UInt8]) {
        switch self {
        case .insert(let id, let after, let value):
            out.append(1)
            id.append(to: &out)
            if let after {
                out.append(1)
                after.append(to: &out)
            } else {
                out.append(0)
            }
            SyncBytes.appendOptionalBytes(value, to: &out)
        case .remove(let id):
            out.append(2)
            id.append(to: &out)
        }
    }

    package init(reading reader: inout SyncBytes.Reader) throws {
        let kind = try reader.byte("list operation")
        switch kind {
        case 1:
            let id = try SyncElementID(reading: &reader)
            let after = try reader.byte("anchor tag") == 0 ? nil : try SyncElementID(reading: &reader)
            let value = try reader.optionalBytes("element")
            self = .insert(id, after: after, value: value)
        case 2:
            self = .remove(try SyncElementID(reading: &reader))
        default:
            throw SyncBytes.Malformed(description: "list operation \(kind) is unknown")
        }
    }
}

extension SyncList {
    /// The list's bytes, as a synced file keeps them beside the list.
    package func encoded() -> [UInt8] {
        var out: [UInt8] = []
        let operations = rebuildingOperations
        SyncBytes.appendVarint(UInt64(operations.count), to: &out)
        for operation in operations { operation.append(to: &out) }
        return out
    }

    /// The list `bytes` encode.
    /// - Throws: ``SyncBytes/Malformed`` saying where the bytes stop making sense.
    package init(decoding bytes: [UInt8]) throws {
        var reader = SyncBytes.Reader(bytes)
        let count = try reader.count("list operations")
        var operations: [SyncListOperation] = []
        operations.reserveCapacity(count)
        for _ in 0..<count { operations.append(try SyncListOperation(reading: &reader)) }
        guard reader.isAtEnd else { throw SyncBytes.Malformed(description: "\(reader.remaining) bytes follow a list") }
        self.init(operations: operations)
    }
}
