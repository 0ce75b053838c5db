import Foundation
import Synchronization
import LMDBRealmFormat
import LMDBRealmStorage

/// A change to a collection of objects, delivered to ``Results/observe(keyPaths:_:)`` and
/// through ``Results/changes``.
///
/// ```swift
/// let token = articles.observe { change in
///     switch change {
///     case .initial(let results):
///         show(results)
///     case .update(let results, let deletions, let insertions, let modifications):
///         apply(deletions: deletions, insertions: insertions, modifications: modifications, to: results)
///     case .error(let error):
///         print(error)
///     }
/// }
/// ```
///
/// `deletions` are indices in the collection as the previous notification showed it,
/// `insertions` indices in the new one, `modifications` indices in the previous one of objects
/// whose observed properties changed; each is sorted ascending. Applying the deletions, then
/// the insertions, to the previous collection gives the new one. An object that moved (its
/// sort position changed) is deleted at its old index and inserted at its new one. Several
/// commits may be reported as one change.
public enum RealmCollectionChange<CollectionType> {
    /// The collection as first evaluated; always delivered first.
    case initial(CollectionType)
    /// The collection after one or more commits changed it.
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// The collection could not be observed (for example, the realm could not be opened on
    /// the queue asked for): no further notifications follow. Or its realm could not move to
    /// a newer version (every reader slot taken: ``RealmError/Code/tooManyReaders``): it keeps
    /// the version it had, and notifications go on after a later commit.
    case error(any Error)
}

extension RealmCollectionChange: Sendable where CollectionType: Sendable {}

/// A change to one object, delivered to `observe(keyPaths:on:_:)` on an ``Object`` and
/// through its `changes`.
public enum ObjectChange<T> {
    /// The object could not be observed: no further notifications follow. Or its realm could
    /// not move to a newer version (every reader slot taken): notifications go on after a
    /// later commit.
    case error(any Error)
    /// Observed properties of the object changed: each with its old and new value.
    case change(T, [PropertyChange])
    /// The object was deleted; no further notifications follow.
    case deleted
}

extension ObjectChange: Sendable where T: Sendable {}

/// One changed property of an observed object.
public struct PropertyChange: Sendable {
    /// The property's name.
    public let name: String
    /// The value before the change (`nil` for a nil optional).
    public let oldValue: (any Sendable)?
    /// The value after the change (`nil` for a nil optional).
    public let newValue: (any Sendable)?
}

/// What happened to a realm, delivered to ``Realm/observe(_:)``.
extension Realm {
    public enum Notification: String, Sendable {
        /// The realm moved to a newer version: after a refresh, an automatic refresh, or a
        /// write of its own.
        case didChange = "RLMRealmDidChangeNotification"
        /// Another thread or process committed, and the realm does not refresh by itself.
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }
}

/// Keeps an observation alive: notifications stop when it is invalidated or released.
///
/// ```swift
/// let token = results.observe { change in … }
/// …
/// token.invalidate()
/// ```
public final class NotificationToken: @unchecked Sendable, Hashable {
    // @unchecked Sendable: `invalidated` is atomic; `onInvalidate` and `keepAlive` are only
    // touched under `lock`, and only released (never used) by `invalidate`.
    private let invalidated = Atomic<Bool>(false)
    private let lock = NSLock()
    private var onInvalidate: [@Sendable () -> Void] = []
    /// What the observation needs alive (the observed results and their realm).
    private var keepAlive: AnyObject?

    public static func == (lhs: NotificationToken, rhs: NotificationToken) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    init() {}

    /// Stops the notifications. Calling it again does nothing.
    public func invalidate() {
        if invalidated.exchange(true, ordering: .acquiringAndReleasing) { return }
        let (actions, kept) = lock.withLock { () -> ([@Sendable () -> Void], AnyObject?) in
            defer {
                onInvalidate = []
                keepAlive = nil
            }
            return (onInvalidate, keepAlive)
        }
        for action in actions { action() }
        withExtendedLifetime(kept) {}
    }

    /// Whether ``invalidate()`` was called.
    public var isInvalidated: Bool { invalidated.load(ordering: .acquiring) }

    func keep(_ object: AnyObject) {
        lock.withLock { keepAlive = object }
    }

    /// Runs `action` when the token is invalidated (at once if it already is).
    func whenInvalidated(_ action: @escaping @Sendable () -> Void) {
        let now = lock.withLock {
            if isInvalidated { return true }
            onInvalidate.append(action)
            return false
        }
        if now { action() }
    }

    deinit {
        invalidate()
    }
}

/// Indices that turn one ordered list of keys into another: deletions from the old list, then
/// insertions into the new; objects in both whose relative order held are "kept".
struct CollectionDiff {
    var deletions: [Int] = []
    var insertions: [Int] = []
    /// For each old index, its new index if the object was kept in place, else -1.
    var keptOldToNew: [Int] = []

    init(old: [ObjectKey], new: [ObjectKey]) {
        if old == new {
            keptOldToNew = Array(0..<old.count)
            return
        }
        var oldIndex = [ObjectKey: Int](minimumCapacity: old.count)
        for (i, key) in old.enumerated() { oldIndex[key] = i }
        // Survivors in new order, with their old indices.
        var survivors: [(old: Int, new: Int)] = []
        survivors.reserveCapacity(min(old.count, new.count))
        for (j, key) in new.enumerated() {
            if let i = oldIndex[key] { survivors.append((i, j)) }
        }
        // The survivors that keep their relative order: a longest increasing subsequence of
        // their old indices. The others moved: deleted and inserted again.
        let kept = CollectionDiff.longestIncreasing(survivors.map(\.old))
        keptOldToNew = [Int](repeating: -1, count: old.count)
        var keptNew = [Bool](repeating: false, count: new.count)
        for s in kept {
            keptOldToNew[survivors[s].old] = survivors[s].new
            keptNew[survivors[s].new] = true
        }
        for i in 0..<old.count where keptOldToNew[i] < 0 { deletions.append(i) }
        for j in 0..<new.count where !keptNew[j] { insertions.append(j) }
    }

    /// Positions in `values` of one longest strictly increasing subsequence, ascending.
    static func longestIncreasing(_ values: [Int]) -> [Int] {
        if values.isEmpty { return [] }
        var increasing = true
        for i in 1..<values.count where values[i] <= values[i - 1] {
            increasing = false
            break
        }
        if increasing { return Array(values.indices) }
        // Patience sorting: tails[k] is the position ending the best run of length k + 1.
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (i, v) in values.enumerated() {
            var lo = 0
            var hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var result: [Int] = []
        var k = tails.last ?? -1
        while k >= 0 {
            result.append(k)
            k = previous[k]
        }
        return result.reversed()
    }
}
