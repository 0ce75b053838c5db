import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

/// The two accessors a walk re-points in turn. Each step tries the one returned two steps
/// before: the optimiser may release a loop's variable only after the next call to `next()`,
/// so the one returned last can still be held then, but not the one before it.
struct RecycledAccessors {
    private var current: Object?
    private var other: Object?

    /// An accessor of `binding` that nothing else holds, to re-point, or `nil`.
    @inline(__always)
    mutating func reusable(_ binding: TableBinding) -> Object? {
        swap(&current, &other)
        guard isKnownUniquelyReferenced(&current) else { return nil }
        let object = current.unsafelyUnwrapped
        return object._binding === binding ? object : nil
    }

    /// Keeps a new accessor for reuse.
    @inline(__always)
    mutating func keep(_ object: Object) {
        current = object
    }
}

/// A walk over a whole table: a batch of records at a time from the realm's current version,
/// resumed after the last key handed out when the realm changes under it.
final class TableWalk {
    let core: ResultsCore
    let realm: Realm
    @exclusivity(unchecked) private var batch = BorrowedBatch()
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var lastKey: ObjectKey?
    @exclusivity(unchecked) private var exhausted = false
    @exclusivity(unchecked) private var binding: TableBinding?
    @exclusivity(unchecked) private var accessors = RecycledAccessors()
    /// The committed version every batch so far was read from, while there is one (see
    /// `Table.checkedVersion`): a walk that reads the whole table in it has checked it all.
    @exclusivity(unchecked) private var walkedVersion: Int?
    @exclusivity(unchecked) private var refilled = false
    /// How many of the batch's first entries are checked (all but from a damaged one on, which
    /// is read through the ordinary checks, stopping the process when the walk reaches it).
    @exclusivity(unchecked) private var checkedEntries = 0
    /// Whether the file checks checksums (fixed while it is open).
    private let verifiesChecksums: Bool

    static var batchSize: Int { 512 }
    /// How many records the next refill reads: the full batch, or fewer while each batch is
    /// abandoned early (a loop that writes invalidates it at every step).
    @exclusivity(unchecked) private var batchLimit = TableWalk.batchSize

    init(core: ResultsCore) {
        self.core = core
        self.realm = core.realm
        verifiesChecksums = core.realm.file.verifiesChecksums
    }

    func next() -> Object? {
        if position == batch.count || batch.generation != realm.generation {
            if exhausted && batch.generation == realm.generation { return nil }
            refill()
            if batch.isEmpty { return nil }
        }
        let generation = realm.generation
        // Start loading a record a few places ahead: a loop reads most of each object, and
        // the loads overlap (scan_all: 2.8 to 3.4 M objects/s, `--profile scan`).
        if position + 4 < batch.count { batch.prefetch(position + 4, at: generation) }
        let i = position
        position += 1
        let binding = binding.unsafelyUnwrapped
        let object: Object
        let checked = i < checkedEntries
        if let reused = accessors.reusable(binding) {
            batch.withEntry(i, at: generation) { key, record in realm.rebind(reused, key: key, record: record, checked: checked) }
            object = reused
        } else {
            object = batch.withEntry(i, at: generation) { key, record in
                realm.makeObject(binding, key: key, record: record, checked: checked)
            }
            accessors.keep(object)
        }
        lastKey = object._key
        return object
    }

    /// Reads the next batch after `lastKey` from the realm's current version.
    private func refill() {
        // A batch given up before its end (the realm changed under it) was mostly wasted:
        // read fewer next time; a batch used up earns back the full size.
        batchLimit = position < batch.count ? Swift.max(4, position * 2) : Swift.min(Self.batchSize, batchLimit * 2)
        position = 0
        guard let binding = core.resolveBinding() else {
            batch.refill(at: realm.generation) { _ in }
            exhausted = true
            return
        }
        self.binding = binding
        let view = realm.readView()
        do {
            exhausted = try view.readBatch(of: binding.table, after: lastKey, limit: batchLimit, into: &batch, at: realm.generation)
        } catch {
            realm.cannotRead("objects of '\(binding.table.className)'", error)
        }
        checkBatch(binding.table)
    }

    /// Checks the records of the batch just read, their headers and, when the file checks
    /// them, their checksums (once a batch, not once an object: whether the table was checked
    /// in this version already is found out once), and records a table read whole in one
    /// version as checked.
    private func checkBatch(_ table: Table) {
        checkedEntries = batch.count
        let generation = realm.generation
        guard verifiesChecksums else {
            for i in 0..<batch.count where !batch.withEntry(i, at: generation, { _, record in table.headerIsSound(record) }) {
                checkedEntries = i
                return
            }
            return
        }
        let version = realm.checkedVersion
        if !refilled {
            refilled = true
            walkedVersion = version
        } else if walkedVersion != version {
            walkedVersion = nil
        }
        let checkedBefore = table.isChecked(in: version)
        for i in 0..<batch.count
        where !batch.withEntry(i, at: generation, { _, record in checkedBefore ? table.headerIsSound(record) : table.checksumMatches(record) }) {
            checkedEntries = i
            walkedVersion = nil
            return
        }
        if exhausted, walkedVersion == version, realm.session == nil { table.markChecked(in: version) }
    }
}

/// The objects of a filtered or shaped chain as they stood when an iteration began (as Realm's
/// enumeration does); objects deleted since are skipped.
final class EvaluatedObjects {
    let realm: Realm
    let binding: TableBinding
    /// The objects, with their records when the evaluation read them (else the accessor looks
    /// the record up on first read).
    let entries: [ResultsCore.Entry]
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var accessors = RecycledAccessors()

    init(realm: Realm, binding: TableBinding, entries: [ResultsCore.Entry]) {
        self.realm = realm
        self.binding = binding
        self.entries = entries
    }

    func next() -> Object? {
        while position < entries.count {
            let i = position
            position = i + 1
            let entry = entries[i]
            let generation = realm.generation
            if entry.record.generation == generation {
                guard entry.record.isCurrent(at: generation) else { return accessor(entry.key) }
                return entry.key.withBytes { key in entry.record.read(at: generation) { accessor(key, $0) } }
            }
            // The realm changed since the walk began: the record is read again, and an object
            // deleted since is skipped.
            let view = realm.readView()
            let record = entries[i].key.withBytes { realm.record(of: binding.table, key: $0, in: view) }
            if let record { return entries[i].key.withBytes { accessor($0, record) } }
        }
        return nil
    }

    @inline(__always)
    private func accessor(_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> Object {
        if let object = accessors.reusable(binding) {
            realm.rebind(object, key: key, record: record)
            return object
        }
        let object = realm.makeObject(binding, key: key, record: record)
        accessors.keep(object)
        return object
    }

    @inline(__always)
    private func accessor(_ key: ObjectKey) -> Object {
        if let object = accessors.reusable(binding) {
            realm.rebind(object, key: key)
            return object
        }
        let object = realm.makeObject(binding, key: key)
        accessors.keep(object)
        return object
    }
}
