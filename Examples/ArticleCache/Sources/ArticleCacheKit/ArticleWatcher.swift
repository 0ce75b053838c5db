import Foundation
import LMDBRealm

/// Follows the cache as other threads and processes change it, and reports each change.
///
/// The watcher reads the articles through `Results.changes`: a realm of its own, on a private
/// queue, refreshes itself whenever any thread or process commits to the file, and each change
/// set arrives with the articles frozen at that version. No thread polls.
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

    public init(store: ArticleStore) {
        self.store = store
    }

    /// Hands each batch of changes (one commit, or several that arrived together) to `report`,
    /// until `report` returns false or the task is cancelled. `started` runs once the watcher
    /// holds the articles it compares later versions with.
    public func run(started: () -> Void = {}, _ report: ([Change]) -> Bool) async throws {
        // The handle only starts the observation; the changes come from the stream's own realm.
        let updates = try Realm(configuration: store.configuration).objects(Article.self)
            .sorted(byKeyPath: "pubDate", ascending: false).changes
        var previous: [ArticleRecord] = []
        for await change in updates {
            switch change {
            case .initial(let articles):
                previous = articles.map(ArticleRecord.init)
                started()
            case .update(let articles, let deletions, let insertions, let modifications):
                let current = articles.map(ArticleRecord.init)
                // Deletions and modifications index the previous list, insertions the new one.
                var changes = deletions.map { Change.deleted(id: previous[$0].id) }
                changes += insertions.map { Change.inserted(current[$0]) }
                let byID = Dictionary(current.map { ($0.id, $0) }) { first, _ in first }
                changes += modifications.compactMap { byID[previous[$0].id].map(Change.modified) }
                previous = current
                if !report(changes) { return }
            case .error(let error):
                throw error
            }
        }
    }
}
