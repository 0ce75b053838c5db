import Foundation
import LMDBRealm
import TestSupport
import Testing

/// Each property kind survives a trip through the file: written by `add`, read back through a
/// managed accessor, after a commit, and after the file is closed and reopened.
@Suite struct PropertyKindTests {
    /// Writes `configure`d objects, then checks them with `verify` in the write, after the
    /// commit, and after reopening.
    func roundTrip(_ configure: [(AllTypes) -> Void], verify: (AllTypes, Int) -> Void) throws {
        try withTemporaryDirectory { dir in
            let config = makeConfiguration(dir, types: [AllTypes.self])
            do {
                let realm = try Realm(configuration: config)
                try realm.write {
                    for (i, c) in configure.enumerated() {
                        let o = AllTypes()
                        o.id = i
                        c(o)
                        realm.add(o)
                        verify(o, i)  // managed, read inside the write
                    }
                }
                for i in configure.indices {
                    verify(try #require(realm.object(ofType: AllTypes.self, forPrimaryKey: i)), i)
                }
            }
            let reopened = try Realm(configuration: config)
            let all = reopened.objects(AllTypes.self)
            #expect(all.count == configure.count)
            for (i, o) in all.enumerated() { verify(o, i) }
        }
    }

    @Test func integersKeepTheirExtremes() throws {
        let ints = [0, 1, -1, Int.max, Int.min]
        try roundTrip(ints.map { v in { $0.int = v; $0.int64 = Int64(v); $0.optInt = v; $0.optInt64 = Int64(v) } }) { o, i in
            #expect(o.int == ints[i])
            #expect(o.int64 == Int64(ints[i]))
            #expect(o.optInt == ints[i])
            #expect(o.optInt64 == Int64(ints[i]))
        }
        let small: [(Int8, Int16, Int32)] = [(.min, .min, .min), (.max, .max, .max), (0, 0, 0), (-1, -1, -1)]
        try roundTrip(small.map { v in { $0.int8 = v.0; $0.int16 = v.1; $0.int32 = v.2; $0.optInt8 = v.0; $0.optInt16 = v.1; $0.optInt32 = v.2 } }) {
            o, i in
            #expect(o.int8 == small[i].0 && o.int16 == small[i].1 && o.int32 == small[i].2)
            #expect(o.optInt8 == small[i].0 && o.optInt16 == small[i].1 && o.optInt32 == small[i].2)
        }
    }

    @Test func floatingPointKeepsNaNInfinityAndSignedZero() throws {
        let doubles: [Double] = [.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1]
        let floats: [Float] = [.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1]
        try roundTrip(doubles.indices.map { i in { $0.double = doubles[i]; $0.float = floats[i]; $0.optDouble = doubles[i]; $0.optFloat = floats[i] } }) {
            o, i in
            #expect(o.double.bitPattern == doubles[i].bitPattern)
            #expect(o.float.bitPattern == floats[i].bitPattern)
            #expect(o.optDouble?.bitPattern == doubles[i].bitPattern)
            #expect(o.optFloat?.bitPattern == floats[i].bitPattern)
        }
    }

    @Test func stringsEmptyLongAndUnicode() throws {
        let strings = [
            "", "a", String(repeating: "long text ", count: 100_000), "naïve café", "日本語のテキスト", "👩‍👩‍👧‍👦🏳️‍🌈",
            "nul\u{0}inside", "Ελληνικά", "\u{10FFFF}",
        ]
        try roundTrip(strings.map { s in { $0.string = s; $0.optString = s } }) { o, i in
            #expect(o.string == strings[i])
            #expect(o.optString == strings[i])
        }
    }

    @Test func dataEmptyAndLarge() throws {
        let blobs = [Data(), Data([0]), Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })]
        try roundTrip(blobs.map { d in { $0.data = d; $0.optData = d } }) { o, i in
            #expect(o.data == blobs[i])
            #expect(o.optData == blobs[i])
        }
    }

    @Test func datesKeepSubSecondPrecisionAndDistantValues() throws {
        let dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_435_708_800.123456789), .distantPast, .distantFuture,
            Date(timeIntervalSinceReferenceDate: -0.000_001), Date(timeIntervalSinceReferenceDate: 1e-9),
        ]
        try roundTrip(dates.map { d in { $0.date = d; $0.optDate = d } }) { o, i in
            #expect(o.date == dates[i])
            #expect(o.date.timeIntervalSinceReferenceDate.bitPattern == dates[i].timeIntervalSinceReferenceDate.bitPattern)
            #expect(o.optDate == dates[i])
        }
    }

    @Test func uuidsObjectIdsDecimalsAndBools() throws {
        let uuids = [UUID(), UUID(uuidString: "00000000-0000-0000-0000-000000000000")!, UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]
        let ids = [ObjectId.generate(), ObjectId(), try ObjectId(string: "ffffffffffffffffffffffff")]
        let decimals = [Decimal(string: "123456789012345678901234567890.123")!, Decimal(string: "-0.000000000000000000000000001")!, Decimal.nan]
        try roundTrip(uuids.indices.map { i in
            { $0.uuid = uuids[i]; $0.optUUID = uuids[i]; $0.objectId = ids[i]; $0.optObjectId = ids[i]
              $0.decimal = decimals[i]; $0.optDecimal = decimals[i]; $0.bool = i % 2 == 0; $0.optBool = i % 2 == 1 }
        }) { o, i in
            #expect(o.uuid == uuids[i])
            #expect(o.optUUID == uuids[i])
            #expect(o.objectId == ids[i])
            #expect(o.optObjectId == ids[i])
            if decimals[i].isNaN {
                #expect(o.decimal.isNaN)
                #expect(o.optDecimal?.isNaN == true)
            } else {
                #expect(o.decimal == decimals[i])
                #expect(o.optDecimal == decimals[i])
            }
            #expect(o.bool == (i % 2 == 0))
            #expect(o.optBool == (i % 2 == 1))
        }
    }

    @Test func optionalsStoreNilDistinctFromEmpty() throws {
        try roundTrip([{ _ in }, { $0.optString = ""; $0.optData = Data(); $0.optInt = 0; $0.optBool = false }]) { o, i in
            if i == 0 {
                #expect(o.optString == nil && o.optData == nil && o.optInt == nil && o.optBool == nil && o.optDate == nil)
                #expect(o.optUUID == nil && o.optObjectId == nil && o.optDecimal == nil && o.optDouble == nil && o.optFloat == nil)
                #expect(o.optInt8 == nil && o.optInt16 == nil && o.optInt32 == nil && o.optInt64 == nil)
            } else {
                #expect(o.optString == "" && o.optData == Data() && o.optInt == 0 && o.optBool == false)
            }
        }
    }

    @Test func managedSettersUpdateEachKind() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir, types: [AllTypes.self]))
            let o = AllTypes()
            try realm.write { realm.add(o) }
            let date = Date(timeIntervalSince1970: 12345.678)
            try realm.write {
                o.string = "changed"
                o.optString = nil
                o.int = -42
                o.optInt = 7
                o.date = date
                o.data = Data([1, 2, 3])
                o.double = 2.5
                o.optDecimal = Decimal(string: "1.5")
            }
            let again = try #require(realm.object(ofType: AllTypes.self, forPrimaryKey: 0))
            #expect(again.string == "changed" && again.optString == nil && again.int == -42 && again.optInt == 7)
            #expect(again.date == date && again.data == Data([1, 2, 3]) && again.double == 2.5)
            #expect(again.optDecimal == Decimal(string: "1.5"))
        }
    }
}

@Suite struct SchemaTests {
    @Test func classNameHasNoModulePrefix() {
        #expect(Article.className() == "Article")
        #expect(Article.sharedSchema().className == "Article")
    }

    @Test func schemaListsPropertiesInDeclarationOrder() throws {
        let schema = Article.sharedSchema()
        #expect(schema.properties.map(\.name) == ["id", "url", "leadParagraph", "abstract", "section", "pubDate", "wordCount"])
        #expect(schema.primaryKeyProperty?.name == "id")
        #expect(schema["section"]?.isIndexed == true)
        #expect(schema["abstract"]?.isOptional == true)
        #expect(schema["wordCount"]?.type == .int)
        #expect(schema["pubDate"]?.type == .date)
    }

    @Test func subclassesStoreEveryLevelsProperties() throws {
        #expect(Set(Cat.sharedSchema().properties.map(\.name)) == ["name", "lives"])
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let cat = Cat()
            cat.name = "Tom"
            cat.lives = 7
            try realm.write { realm.add(cat) }
            let stored = try #require(realm.objects(Cat.self).first)
            #expect(stored.name == "Tom" && stored.lives == 7)
        }
    }

    @Test func unmanagedObjectsArePlainObjects() {
        let a = Article(id: "x", wordCount: 3)
        a.wordCount += 1
        #expect(a.wordCount == 4)
        #expect(a.realm == nil)
        #expect(!a.isInvalidated)
    }

    @Test func objectIdGeneratesUniqueIncreasingIdsAndRoundTripsHex() throws {
        let ids = (0..<1000).map { _ in ObjectId.generate() }
        #expect(Set(ids).count == 1000)
        for id in ids.prefix(10) {
            #expect(try ObjectId(string: id.stringValue) == id)
            #expect(id.stringValue.count == 24)
            #expect(abs(id.timestamp.timeIntervalSinceNow) < 60)
        }
        #expect(try ObjectId(string: "507F1F77BCF86CD799439011").stringValue == "507f1f77bcf86cd799439011")
        #expect(throws: Realm.Error.self) { try ObjectId(string: "xyz") }
        #expect(throws: Realm.Error.self) { try ObjectId(string: "507f1f77bcf86cd79943901g") }
    }
}
