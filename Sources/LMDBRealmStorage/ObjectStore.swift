package import LMDBRealmFormat

/// What a managed object's accessors need from the handle that manages it, and all they use:
/// they read and write an object's fields through this protocol only, so that the layer above
/// (the `Realm` handle) can change without the accessors, and the accessors cannot reach past
/// it into the write's or the snapshot's internals.
///
/// The accessors are generic over the store and specialized for the one conforming type, so
/// going through the protocol costs nothing at run time.
package protocol ObjectStore: StoreReader {
    /// The accessor type whose fields are read and written (`Object`).
    associatedtype Accessor: AnyObject

    /// Changes whenever a record an accessor borrowed may have moved or gone (a commit, a
    /// refresh, a change in the current write): a borrowed record is reused only while the
    /// generation it was borrowed at is current.
    var generation: UInt64 { get }
    /// Scratch space for a primary key decoded from an object's key.
    var keyFieldBuffer: UnsafeKeyFieldBuffer { get }
    /// Whether the current write has failed: its commit throws the failure, and nothing more
    /// may change.
    var writeHasFailed: Bool { get }

    /// Stops the process unless called where the store may be read.
    func checkThread()
    /// Stops the process unless a write is open where the store may be written.
    func checkWriteThread()
    /// The version reads see now: the current write's, or the snapshot's.
    func readView() -> StoreView
    /// Checks a record read from the file before it is trusted (stops if it is damaged).
    func checkRecord(_ record: UnsafeRawBufferPointer, of table: Table)
    /// The binding `object`'s class has now, if it changed (indexes added or removed).
    func currentBinding(of object: Accessor) -> TableBinding?
    /// Rewrites `object`'s record with `value` in stored column `storedColumn`; a failure is
    /// the write's (its commit throws it).
    func replaceField(of object: Accessor, storedColumn: Int, with value: UnsafeRawBufferPointer?)
}
