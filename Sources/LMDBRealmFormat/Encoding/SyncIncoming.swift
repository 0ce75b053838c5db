/// A change set from the shared log, to apply with `Realm.applySyncChanges(_:)`.
package struct SyncIncoming: Sendable {
    /// Its place in the shared log (the global order).
    package var sequence: Int64
    /// The node that made it.
    package var node: String
    /// Its bytes (``SyncChangeSet/encoded()``).
    package var changes: [UInt8]
    /// Its place among the change sets of its node (0: not known). With `node`, what the file
    /// remembers of the change set at its cursor, to find out whether the log went back.
    package var localSequence: Int64

    package init(sequence: Int64, node: String, changes: [UInt8], localSequence: Int64 = 0) {
        self.sequence = sequence
        self.node = node
        self.changes = changes
        self.localSequence = localSequence
    }
}
