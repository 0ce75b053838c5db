import Foundation
import TestSupport
import Testing

@testable import LMDBRealm
@testable import LMDBRealmStorage

/// A mood, as this version of the app knows it.
enum DiaryMood: String, PersistableEnum {
    case calm, cross
}

/// The same mood in the app's next version, which added a case.
enum DiaryMoodNext: String, PersistableEnum {
    case calm, cross, elated
}

/// A page count, stored as an integer: an odd number makes none (pages come in sheets).
struct SheetPages: FailableCustomPersistable, Equatable {
    let count: Int
    init?(persistedValue: Int) {
        guard persistedValue >= 0, persistedValue % 2 == 0 else { return nil }
        count = persistedValue
    }
    var persistableValue: Int { count }
}

final class DiaryEntry: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var mood: DiaryMood
    @Persisted var previousMood: DiaryMood?
    @Persisted var moods: List<DiaryMood>
    @Persisted var moodByHour: Map<String, DiaryMood>
    @Persisted var pages: SheetPages?
}

/// `DiaryEntry` in the app's next version: a mood more, any page count.
final class DiaryEntryNext: Object {
    override class func className() -> String { "DiaryEntry" }
    @Persisted(primaryKey: true) var id = ""
    @Persisted var mood: DiaryMoodNext
    @Persisted var previousMood: DiaryMoodNext?
    @Persisted var moods: List<DiaryMoodNext>
    @Persisted var moodByHour: Map<String, DiaryMoodNext>
    @Persisted var pages: Int?
}

/// A change set from a node running a newer version of the app may hold a value this version
/// cannot read: an enum case it does not have, a stored value its custom type makes none of.
/// The node refuses it — an error naming the change set, the class, the property and the value
/// — and applies nothing of the batch, the sets before it included.
@Suite struct SyncValueRefusalTests {
    /// Node `node` of `dir`, on this version of the app (`newer`: on the next).
    private func node(_ node: String, in dir: URL, newer: Bool = false) throws -> Realm {
        let type: Object.Type = newer ? DiaryEntryNext.self : DiaryEntry.self
        let realm = try Realm(configuration: makeConfiguration(dir, "\(node).realm", types: [type]))
        try realm.enableSync(node: node)
        return realm
    }

    /// What the newer node wrote, one way per test case, and what the refusal must name.
    enum Write: String, CaseIterable, Sendable {
        case enumProperty, optionalEnum, newListOfEnums, appendedEnum, mapOfEnums, customType

        func make(_ realm: Realm) {
            let entry = realm.object(ofType: DiaryEntryNext.self, forPrimaryKey: "d1")!
            switch self {
            case .enumProperty: entry.mood = .elated
            case .optionalEnum: entry.previousMood = .elated
            case .newListOfEnums: realm.add(DiaryEntryNext(value: ["id": "d2", "moods": [DiaryMoodNext.calm, .elated]]))
            case .appendedEnum: entry.moods.append(.elated)
            case .mapOfEnums: entry.moodByHour["9"] = .elated
            case .customType: entry.pages = 3
            }
        }

        var property: String {
            switch self {
            case .enumProperty: "mood"
            case .optionalEnum: "previousMood"
            case .newListOfEnums, .appendedEnum: "moods"
            case .mapOfEnums: "moodByHour"
            case .customType: "pages"
            }
        }

        var value: String { self == .customType ? "3, which makes no SheetPages" : "\"elated\", which is not a case of DiaryMood" }
    }

    @Test(arguments: Write.allCases)
    func aValueThisVersionCannotReadRefusesTheBatch(_ write: Write) throws {
        try withTemporaryDirectory { dir in
            let newer = try node("a", in: dir, newer: true)
            let older = try node("b", in: dir)
            let log = SharedLog()
            try newer.write { newer.add(DiaryEntryNext(value: ["id": "d1", "mood": DiaryMoodNext.cross, "pages": 4])) }
            try newer.write { write.make(newer) }
            try log.push(newer)
            #expect(log.entries.count == 2)

            let error = #expect(throws: Realm.Error.self) { try log.pull(older) }
            #expect(error?.code == .invalidValue)
            let message = error?.localizedDescription ?? ""
            #expect(message.contains("Change set 2 from node 'a'"), "\(message)")
            #expect(message.contains("'DiaryEntry.\(write.property)'"), "\(message)")
            #expect(message.contains(write.value), "\(message)")
            // Nothing of the batch is applied, the set before the refused one included.
            #expect(try older.syncState()?.cursor == 0)
            older.refresh()
            #expect(older.objects(DiaryEntry.self).isEmpty)

            // The set before it, alone, applies; the older node reads it.
            try older.applySyncChanges(Array(log.entries.prefix(1)))
            older.refresh()
            let entry = try #require(older.object(ofType: DiaryEntry.self, forPrimaryKey: "d1"))
            #expect(entry.mood == .cross && entry.pages == SheetPages(persistedValue: 4))
            #expect(throws: Realm.Error.self) { try older.applySyncChanges(Array(log.entries.dropFirst())) }
            older.refresh()
            #expect(entry.mood == .cross && entry.previousMood == nil && entry.moods.isEmpty && entry.moodByHour.isEmpty)
            #expect(entry.pages == SheetPages(persistedValue: 4))
            #expect(older.objects(DiaryEntry.self).count == 1)
        }
    }

    /// A value both versions know goes through: the check refuses only what cannot be read.
    @Test func casesBothVersionsKnowApply() throws {
        try withTemporaryDirectory { dir in
            let newer = try node("a", in: dir, newer: true)
            let older = try node("b", in: dir)
            let log = SharedLog()
            try newer.write {
                newer.add(
                    DiaryEntryNext(value: [
                        "id": "d1", "mood": DiaryMoodNext.cross, "previousMood": DiaryMoodNext.calm, "moods": [DiaryMoodNext.calm, .cross],
                        "moodByHour": ["9": DiaryMoodNext.cross], "pages": 6,
                    ]))
            }
            try newer.write { newer.object(ofType: DiaryEntryNext.self, forPrimaryKey: "d1")!.moods.append(.calm) }
            try log.push(newer)
            try log.pull(older)
            older.refresh()
            let entry = try #require(older.object(ofType: DiaryEntry.self, forPrimaryKey: "d1"))
            #expect(entry.mood == .cross && entry.previousMood == .calm)
            #expect(Array(entry.moods) == [.calm, .cross, .calm])
            #expect(entry.moodByHour["9"] == .cross)
            #expect(entry.pages == SheetPages(persistedValue: 6))
        }
    }
}
