public import Foundation
import LMDBRealm

/// Follows the cache as other threads and processes change it, and reports each change.
///
/// Until LMDBRealm delivers change notifications, the watcher refreshes its realm handle every
/// `interval` and compares the articles it sees with the ones it saw before, by primary key.
public struct ArticleWatcher: Sendable {
    /// One article that came, went or changed.
    public enum Change: Sendable, Equatable, CustomStringConvertible {
        case inserted(ArticleRecord)
        case deleted(id: String)
        case modified(ArticleRecord)

        public var description: String {
            switch self {
            case .inserted(let a): "+ \(a.id)  \(a.section)  \(a.headline)"
            case .deleted(let id): "- \(id)"
            case .modified(let a): "~ \(a.id)  \(a.section)  \(a.headline)"
            }
        }
    }

    public let store: ArticleStore
    public let interval: TimeInterval

    public init(store: ArticleStore, interval: TimeInterval = 0.2) {
        self.store = store
        self.interval = interval
    }

    /// Watches on the calling thread, handing each batch of changes (one commit, or several
    /// commits between two looks) to `report`, until `report` returns false. `started` runs once
    /// the watcher has read the cache it compares later versions with.
    @available(*, noasync, message: "blocks its thread; run it on a thread of its own")
    public func run(started: () -> Void = {}, _ report: ([Change]) -> Bool) throws {
        let realm = try Realm(configuration: store.configuration)
        let articles = realm.objects(Article.self).sorted(byKeyPath: "pubDate", ascending: false)
        var seen = Dictionary(uniqueKeysWithValues: articles.map { ($0.id, ArticleRecord($0)) })
        started()
        let tick = DispatchSemaphore(value: 0)
        while true {
            // A timed wait: the interval between two looks at the file.
            _ = tick.wait(timeout: .now() + interval)
            guard realm.refresh() else { continue }
            let now = Dictionary(uniqueKeysWithValues: articles.map { ($0.id, ArticleRecord($0)) })
            var changes: [Change] = []
            for id in seen.keys.sorted() where now[id] == nil { changes.append(.deleted(id: id)) }
            for article in articles.map(ArticleRecord.init) {
                if let old = seen[article.id] {
                    if old != article { changes.append(.modified(article)) }
                } else {
                    changes.append(.inserted(article))
                }
            }
            seen = now
            if !changes.isEmpty && !report(changes) { return }
        }
    }
}
