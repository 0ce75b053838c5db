import Foundation
@_spi(Testing) import LMDBRealm
import TestSupport
import Testing

struct Celsius: CustomPersistable, Equatable {
    var degrees: Double
    init(persistedValue: Double) { degrees = persistedValue }
    var persistableValue: Double { degrees }
}

/// A web address, stored as its string: a string that is no URL makes none.
struct WebAddress: FailableCustomPersistable, Equatable {
    let url: URL
    init?(persistedValue: String) {
        guard let url = URL(string: persistedValue), url.scheme != nil else { return nil }
        self.url = url
    }
    var persistableValue: String { url.absoluteString }
}

final class Reading: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var temperature: Celsius
    @Persisted var source: WebAddress?
    @Persisted var samples: List<Celsius>
}

@Suite struct CustomPersistableTests {
    /// Custom types persist as their stored type and are queried as it, in the DSL and in
    /// predicate strings; a failable one holds nil when optional.
    @Test func customTypesPersistAndQueryAsTheirStoredType() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Reading.self]))
            #expect(Reading().temperature == Celsius(persistedValue: 0))
            try realm.write {
                for (id, degrees) in [(1, 18.5), (2, 21.0), (3, 30.25)] {
                    let reading = Reading()
                    reading.id = id
                    reading.temperature = Celsius(persistedValue: degrees)
                    reading.source = id == 2 ? nil : WebAddress(persistedValue: "https://example.com/\(id)")
                    reading.samples.append(objectsIn: [Celsius(persistedValue: degrees), Celsius(persistedValue: 1)])
                    realm.add(reading)
                }
            }
            #expect(realm.schema["Reading"]?["temperature"]?.type == .double)
            let readings = realm.objects(Reading.self)
            #expect(readings.where { $0.temperature == Celsius(persistedValue: 21.0) }.map(\.id) == [2])
            #expect(readings.filter("temperature > 20").map(\.id).sorted() == [2, 3])
            #expect(readings.filter("source == %@", WebAddress(persistedValue: "https://example.com/3")!).map(\.id) == [3])
            #expect(readings.where { $0.source == nil }.map(\.id) == [2])
            let third = try #require(realm.object(ofType: Reading.self, forPrimaryKey: 3))
            #expect(third.temperature.degrees == 30.25 && third.source?.url.path == "/3")
            #expect(third.samples.map(\.degrees) == [30.25, 1])
            #expect(Realm.Error.Code.outOfDiskSpace == .noSpace && Realm.Error.Code.invalidInput == .invalidValue)
        }
    }

    /// `Object(value:)` and setting by name take the stored type's value for a custom type,
    /// as RealmSwift does (`Club(value: ["url": "https://akc.org"])`).
    @Test func storedValuesMakeCustomTypes() throws {
        let reading = Reading(value: ["id": 4, "temperature": 12.5, "source": "https://example.com/4", "samples": [1.5, 2.5]])
        #expect(reading.temperature.degrees == 12.5 && reading.source?.url.path == "/4")
        #expect(reading.samples.map(\.degrees) == [1.5, 2.5])
        reading["temperature"] = 13.0
        #expect(reading.temperature.degrees == 13)
    }
}
