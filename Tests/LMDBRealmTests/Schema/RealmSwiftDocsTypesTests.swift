import Foundation
import LMDBRealm
import TestSupport
import Testing

// RealmSwift's documented mixed and dynamic examples, as a user ports them (only `try` added
// where `add` throws here).

final class MixedDog: Object {
    @Persisted var name = ""
    @Persisted var companion: AnyRealmValue
    override class func className() -> String { "DocsMixedDog" }
}

final class MixedCat: Object {
    @Persisted var name = ""
    override class func className() -> String { "DocsMixedCat" }
}

@Suite struct RealmSwiftDocsTypesTests {
    @Test func theDocumentedMixedExampleRuns() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [MixedDog.self, MixedCat.self]))
            let myDog = MixedDog()
            myDog.name = "Rex"
            myDog.companion = .none
            let theirDog = MixedDog()
            theirDog.name = "Wolfie"
            theirDog.companion = .string("Fluffy the Cat")
            let anotherDog = MixedDog()
            anotherDog.name = "Fido"
            anotherDog.companion = .object(MixedCat(value: ["name": "Snowball"]))
            try realm.write {
                realm.add([myDog, theirDog, anotherDog])
            }
            let dogsWithoutCompanions = realm.objects(MixedDog.self).where { $0.companion == .none }
            #expect(dogsWithoutCompanions.map(\.name) == ["Rex"])
            let fido = try #require(realm.objects(MixedDog.self).where { $0.name == "Fido" }.first)
            switch fido.companion {
            case .object(let companion): #expect((companion as? MixedCat)?.name == "Snowball")
            default: Issue.record("Fido's companion is \(fido.companion)")
            }
            #expect(theirDog.companion.stringValue == "Fluffy the Cat")
        }
    }

    @Test func theDocumentedDynamicReadRuns() throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [MixedDog.self, MixedCat.self])
            let realm = try Realm(configuration: config)
            try realm.write { realm.add(MixedDog(value: ["name": "Rex"])) }
            let dogs = realm.dynamicObjects("DocsMixedDog")
            let rex = try #require(dogs.first)
            #expect(rex["name"] as? String == "Rex")
            try realm.write {
                let cat = realm.dynamicCreate("DocsMixedCat", value: ["name": "Tom"])
                #expect(cat["name"] as? String == "Tom")
            }
            #expect(realm.objects(MixedCat.self).first?.name == "Tom")
        }
    }
}
