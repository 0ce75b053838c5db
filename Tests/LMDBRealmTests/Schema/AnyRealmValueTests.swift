import Foundation
import LMDBRealm
import TestSupport
import Testing

final class MixedSetting: Object {
    @Persisted(primaryKey: true) var key = ""
    @Persisted var value: AnyRealmValue
    @Persisted var history: List<AnyRealmValue>
    @Persisted var extras: Map<String, AnyRealmValue>
}

final class MixedProfile: Object {
    @Persisted(primaryKey: true) var name = ""
}

@Suite struct AnyRealmValueTests {
    private func config(_ dir: URL) -> Realm.Configuration {
        makeConfiguration(dir, types: [MixedSetting.self, MixedProfile.self])
    }

    /// Every kind round-trips through the file, as a property, a list element and a map value;
    /// an unmanaged object held is added with its holder.
    @Test func everyKindIsStoredAndRead() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: config(dir))
            let id = ObjectId.generate()
            let uuid = UUID()
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            let values: [AnyRealmValue] = [
                .none, .int(-3), .bool(true), .float(1.5), .double(2.25), .string("dark"), .data(Data([1, 2])), .date(date),
                .objectId(id), .decimal128("12.5"), .uuid(uuid),
            ]
            try realm.write {
                for (n, value) in values.enumerated() {
                    realm.add(MixedSetting(value: ["key": "k\(n)", "value": value]))
                }
                let linked = MixedSetting(value: ["key": "linked"])
                linked.value = .object(MixedProfile(value: ["name": "Ann"]))
                linked.history.append(objectsIn: [.int(1), .string("two"), .none, .object(MixedProfile(value: ["name": "Bo"]))])
                linked.extras["theme"] = .string("dark")
                linked.extras["size"] = .double(11)
                realm.add(linked)
            }
            for (n, value) in values.enumerated() {
                #expect(realm.object(ofType: MixedSetting.self, forPrimaryKey: "k\(n)")?.value == value)
            }
            let linked = try #require(realm.object(ofType: MixedSetting.self, forPrimaryKey: "linked"))
            #expect(linked.value.object(MixedProfile.self)?.name == "Ann")
            #expect(realm.objects(MixedProfile.self).count == 2, "the objects held were added")
            #expect(linked.history.count == 4 && linked.history[0] == .int(1) && linked.history[1] == .string("two") && linked.history[2] == .none)
            #expect(linked.history[3].object(MixedProfile.self)?.name == "Bo")
            #expect(linked.extras["theme"] == .string("dark") && linked.extras["size"]?.doubleValue == 11)

            // Setting a managed object's value, and deleting the object it held.
            try realm.write {
                linked.value = .int(7)
                realm.object(ofType: MixedSetting.self, forPrimaryKey: "k1")!.value = .object(realm.object(ofType: MixedProfile.self, forPrimaryKey: "Bo")!)
            }
            #expect(linked.value == .int(7))
            let k1 = try #require(realm.object(ofType: MixedSetting.self, forPrimaryKey: "k1"))
            #expect(k1.value.object(MixedProfile.self)?.name == "Bo")
            try realm.write { realm.delete(realm.object(ofType: MixedProfile.self, forPrimaryKey: "Bo")!) }
            #expect(k1.value == .none, "a deleted object reads as none")
        }
    }

    /// Queries compare numbers by value across kinds, other kinds only with their own, in the
    /// DSL and in predicate strings; sorting orders by kind, then value.
    @Test func queriesAndSortsFollowRealmsRules() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: config(dir))
            let values: [(String, AnyRealmValue)] = [
                ("a", .int(3)), ("b", .double(3.0)), ("c", .float(2.5)), ("d", .string("3")), ("e", .none), ("f", .bool(true)),
                ("g", .decimal128(4)), ("h", .string("Dark")), ("i", .date(Date(timeIntervalSince1970: 0))),
            ]
            try realm.write {
                for (key, value) in values { realm.add(MixedSetting(value: ["key": key, "value": value])) }
            }
            let settings = realm.objects(MixedSetting.self)
            func keys(_ results: Results<MixedSetting>) -> [String] { results.map(\.key).sorted() }
            #expect(keys(settings.where { $0.value == .int(3) }) == ["a", "b"])
            #expect(keys(settings.filter("value == 3")) == ["a", "b"])
            #expect(keys(settings.filter("value > 2.9")) == ["a", "b", "g"])
            #expect(keys(settings.filter("value < 3")) == ["c"])
            #expect(keys(settings.filter("value == '3'")) == ["d"])
            #expect(keys(settings.filter("value != 3")) == ["c", "d", "e", "f", "g", "h", "i"])
            #expect(keys(settings.filter("value == nil")) == ["e"])
            #expect(keys(settings.filter("value == true")) == ["f"])
            #expect(keys(settings.filter("value ==[c] 'dark'")) == ["h"])
            #expect(keys(settings.filter("value BEGINSWITH 'D'")) == ["h"])
            #expect(keys(settings.where { $0.value == .none }) == ["e"])
            let sorted = settings.sorted(byKeyPath: "value").map(\.key)
            #expect(sorted == ["e", "f", "c", "a", "b", "g", "d", "h", "i"] || sorted == ["e", "f", "c", "b", "a", "g", "d", "h", "i"])
        }
    }

    /// A dynamic reader sees a held object as a DynamicObject, and sets a value of any kind.
    @Test func dynamicReadersSeeHeldObjects() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: config(dir))
            try realm.write {
                let setting = MixedSetting(value: ["key": "s"])
                setting.value = .object(MixedProfile(value: ["name": "Cy"]))
                realm.add(setting)
            }
            let dynamic = try #require(realm.dynamicObject(ofType: "MixedSetting", forPrimaryKey: "s"))
            #expect((dynamic["value"] as? DynamicObject)?["name"] as? String == "Cy")
            try realm.write { dynamic["value"] = 5 }
            #expect(realm.object(ofType: MixedSetting.self, forPrimaryKey: "s")?.value == .int(5))
        }
    }
}
