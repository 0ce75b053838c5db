package import Foundation

/// When and where a write was made: a hybrid logical clock and the node's name. Stamps order
/// every write of every node the same way on each node (the clock first, the name breaking
/// ties), which is what makes "the last writer wins" converge.
package struct SyncStamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    package var clock: UInt64
    package var node: String

    package init(clock: UInt64, node: String) {
        self.clock = clock
        self.node = node
    }

    package static func < (a: SyncStamp, b: SyncStamp) -> Bool {
        a.clock != b.clock ? a.clock < b.clock : a.node.utf8.lexicographicallyPrecedes(b.node.utf8)
    }

    package var bytes: [UInt8] {
        var out: [UInt8] = []
        SyncBytes.appendWord(clock, to: &out)
        out.append(contentsOf: node.utf8)
        return out
    }

    package init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 8 else { return nil }
        clock = SyncBytes.word(bytes.prefix(8))
        node = String(decoding: bytes.dropFirst(8), as: UTF8.self)
    }

    package var description: String { "\(clock >> 16).\(clock & 0xFFFF)@\(node)" }

    /// The next clock after `last` at wall-clock time `now`: the time in milliseconds in the
    /// upper 48 bits when it has moved past `last`, else `last` plus one.
    package static func next(after last: UInt64, now: Date = Date()) -> UInt64 {
        let physical = UInt64(max(0, now.timeIntervalSince1970 * 1000)) << 16
        return max(physical, last &+ 1)
    }
}
