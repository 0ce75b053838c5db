import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension Realm {
    /// Where a realm reports what it does on its own: opening a file, migrating it (with
    /// progress on long work), and what it had to repair.
    ///
    /// ```swift
    /// var config = Realm.Configuration(fileURL: url)
    /// config.logger = Realm.Logger(level: .info) { level, message in
    ///     print("[\(level)] \(message)")
    /// }
    /// ```
    ///
    /// LMDBRealm depends on nothing but the toolchain and liblmdb, so this is a function rather
    /// than a swift-log `Logger`; a server hands the messages to its own logger in that function
    /// (`logger.log(level: .info, "\(message)")`).
    public struct Logger: Sendable {
        /// How much to report: a message is passed on when its level is at least this one.
        public let level: Level
        private let logFunction: @Sendable (Level, String) -> Void

        /// A logger passing each message of `level` or above to `logFunction` (called on the
        /// thread doing the work, so keep it short).
        public init(level: Level, logFunction: @escaping @Sendable (_ level: Level, _ message: String) -> Void) {
            self.level = level
            self.logFunction = logFunction
        }

        /// The levels, from the most detailed to the most severe.
        public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
            case trace, debug, info, warn, error

            public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

            public var description: String {
                switch self {
                case .trace: "trace"
                case .debug: "debug"
                case .info: "info"
                case .warn: "warn"
                case .error: "error"
                }
            }
        }

        /// Passes `message` on if `level` is reported; the message is made only then.
        func log(_ level: Level, _ message: @autoclosure () -> String) {
            guard level >= self.level else { return }
            logFunction(level, message())
        }
    }

    /// Reports `message` through the configuration's logger, if it has one.
    func log(_ level: Logger.Level, _ message: @autoclosure () -> String) {
        configuration.logger?.log(level, message())
    }
}
