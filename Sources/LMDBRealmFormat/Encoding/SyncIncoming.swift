/// A change set from the shared log, to apply with `Realm.applySyncChanges(_:)`.
package struct SyncIncoming: Sendable {
    /// Its place in the shared log (the global order).
    package var sequence: Int64
    /// The node that made it.
    package var node: String
    /// Its bytes (``SyncChangeSet/encoded()``).
    package var changes: [UInt8]

    package init(sequence: Int64, node: String, changes: [UInt8]) {
        self.sequence = sequence
        self.node = node
        self.changes = changes
    }
}
