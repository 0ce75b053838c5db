import LMDBRealmStorage

/// What a realm reads when it is not writing, in one value: its snapshot (an LMDB read
/// transaction pinning one version), the view reads go through, and the version's number.
/// Between versions the snapshot is *reset* (it holds no version and no reader slot's pages)
/// when the realm holds it alone, and the next read takes the newest version; see
/// `Realm.readView()`, `takeNewestSnapshot(prepared:)` and `releaseSnapshot()`.
struct ReadState {
    /// The snapshot reads go through. Released while frozen realms or observers share it, it
    /// is left to them and a new one, reset, takes its place: its reader slot is the realm's.
    var snapshot: Snapshot?
    /// The snapshot's view, kept beside it so that a read loads it without unwrapping.
    var view: StoreView
    /// Whether the snapshot holds no version now (released between versions).
    var isReset = false
    /// The number of the version read (the snapshot's when it was last taken).
    var version: Int
    /// The frozen copy of the realm made last, reused while the realm reads the same version.
    weak var frozenCopy: Realm?

    init(_ snapshot: Snapshot) {
        self.snapshot = snapshot
        view = snapshot.view
        version = snapshot.version
    }
}
