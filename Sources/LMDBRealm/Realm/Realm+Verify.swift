import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension Realm {
    /// Checks the whole file for consistency and reports every problem it finds.
    ///
    /// Reads the version this realm reads (inside a write, the write's own changes; after
    /// ``invalidate()``, a fresh read snapshot) and checks, straight from the file's LMDB
    /// databases:
    /// - the catalog: every stored schema decodes, and the databases it implies exist;
    /// - every record: its header and offset table lie within its bytes, every field is valid
    ///   for its property's kind (sizes, UTF-8, decimal text, mixed tags), required properties
    ///   are set, and its key is the encoding of its primary key;
    /// - every index (declared, compound, and the index of each to-one link, which holds the
    ///   backlinks): each object has its entry and each entry names a stored object holding
    ///   the entry's value;
    /// - every link, in a to-one property, list, set or map, names a stored object of its
    ///   class;
    /// - every list, set and map: its chunks belong to a stored object, follow on, and parse;
    ///   set elements and map keys are unique; the references kept for lists of objects
    ///   (target → owners) agree with the elements both ways.
    ///
    /// Damage is never a crash: each problem is a ``VerificationReport/Finding`` and the walk
    /// goes on. Links held in `AnyRealmValue` are checked for their form only: nothing indexes
    /// them, and one whose object was deleted reads as `nil` by design.
    ///
    /// ```swift
    /// let report = try realm.verify { checked, total in print("\(checked)/\(total)") }
    /// if !report.isSound {
    ///     for finding in report.findings { print(finding) }
    /// }
    /// ```
    ///
    /// - Parameter progress: Called on the calling thread with the number of objects checked
    ///   and the number in the file: at the start, every 1,000 objects, and at the end.
    /// - Returns: What was found; ``VerificationReport/isSound`` when nothing was.
    /// - Throws: ``RealmError`` when the file cannot be read for a reason other than damage:
    ///   no read transaction can be had (every reader slot taken), an I/O error.
    public func verify(progress: ((_ checked: Int, _ total: Int) -> Void)? = nil) throws -> VerificationReport {
        checkThread()
        let view: StoreView
        if session != nil {
            view = queryView()
        } else {
            if reading.isReset {
                do {
                    try takeNewestSnapshot()
                } catch {
                    throw Realm.Error(error, url: file.url, doing: "Cannot open a read transaction to verify")
                }
            }
            view = readView()
        }
        let verifier = StoreVerifier(view: view, file: file, progress: progress)
        do {
            try verifier.run { className in
                frozenLock?.lock()
                defer { frozenLock?.unlock() }
                return try discoverTable(named: className)
            }
        } catch {
            throw Realm.Error(error, url: file.url, doing: "Cannot verify")
        }
        return VerificationReport(findings: verifier.findings.map(VerificationReport.Finding.init), objectsChecked: verifier.objectsChecked)
    }
}

/// What ``Realm/verify(progress:)`` found in a file: every inconsistency, one finding each.
///
/// ```swift
/// let report = try realm.verify()
/// print(report)                        // "Checked 1200 objects: sound." or one line per finding
/// let dangling = report.findings.filter { $0.kind == .danglingLink }
/// ```
public struct VerificationReport: Sendable, CustomStringConvertible {
    /// One inconsistency: what kind, where, and what is wrong.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// The class concerned, when one is.
        public let className: String?
        /// The object concerned, when one is, printable: its primary key's value, or its key
        /// in the file in hex (classes without a primary key, keys that do not decode).
        public let objectKey: String?
        /// What kind of inconsistency it is.
        public let kind: Kind
        /// What is wrong, naming the property, index or list concerned.
        public let message: String

        public var description: String {
            var place = className ?? ""
            if let objectKey { place += place.isEmpty ? objectKey : " \(objectKey)" }
            return place.isEmpty ? "\(kind.rawValue): \(message)" : "\(kind.rawValue) [\(place)]: \(message)"
        }
    }

    /// The kinds of inconsistency.
    public enum Kind: String, Sendable {
        /// A record that does not decode: its header or offset table points outside it, a
        /// field is not valid for its property's kind, a required property is null, or its key
        /// is not its primary key.
        case damagedRecord
        /// An object with no entry in an index of its class.
        case missingIndexEntry
        /// An index entry for no stored object, or under a value its object does not hold.
        case orphanIndexEntry
        /// A link (to-one, or an element of a list, set or map) to an object that is not
        /// stored, or to a class the file does not hold.
        case danglingLink
        /// The backlinks (a to-one link's index, or a list's references) disagree with the
        /// links stored, one way or the other.
        case backlinkMismatch
        /// Elements of a list, set or map that belong to no stored object, do not parse, do not
        /// follow on, or repeat in a set or a map's keys.
        case damagedList
        /// The catalog of classes: a stored schema that does not decode, or a database it
        /// implies that is missing.
        case damagedCatalog
        /// A database whose pages LMDB itself finds damaged: the rest of it is not checked.
        case damagedDatabase
        /// An embedded object that no object owns (its parent was deleted or its link replaced
        /// without it), or that more than one object does.
        case unownedEmbeddedObject
    }

    /// Every inconsistency found, in the order of the walk (catalog, then each class's
    /// records and indexes, then its lists).
    public let findings: [Finding]
    /// The number of objects whose records were checked.
    public let objectsChecked: Int
    /// Whether nothing was found.
    public var isSound: Bool { findings.isEmpty }

    public var description: String {
        guard !isSound else { return "Checked \(objectsChecked) objects: sound." }
        let noun = findings.count == 1 ? "problem" : "problems"
        return (["Checked \(objectsChecked) objects: \(findings.count) \(noun)."] + findings.map { "- \($0)" }).joined(separator: "\n")
    }
}

extension VerificationReport.Finding {
    init(_ finding: StoreFinding) {
        className = finding.className
        objectKey = finding.objectKey
        message = finding.message
        kind =
            switch finding.kind {
            case .damagedRecord: .damagedRecord
            case .missingIndexEntry: .missingIndexEntry
            case .orphanIndexEntry: .orphanIndexEntry
            case .danglingLink: .danglingLink
            case .backlinkMismatch: .backlinkMismatch
            case .damagedList: .damagedList
            case .damagedCatalog: .damagedCatalog
            case .damagedDatabase: .damagedDatabase
            case .unownedEmbeddedObject: .unownedEmbeddedObject
            }
    }
}
