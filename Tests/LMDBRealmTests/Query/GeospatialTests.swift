import Foundation
import LMDBRealm
import TestSupport
import Testing

/// A location as RealmSwift's documentation declares one: GeoJSON's shape in an embedded object.
final class GeoLocation: EmbeddedObject {
    @Persisted private var type: String = "Point"
    @Persisted private var coordinates: List<Double>

    var latitude: Double { coordinates[1] }
    var longitude: Double { coordinates[0] }

    convenience init(_ latitude: Double, _ longitude: Double) {
        self.init()
        coordinates.append(objectsIn: [longitude, latitude])
    }
}

final class GeoCompany: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var location: GeoLocation?
}

@Suite struct GeospatialTests {
    /// Random points, and one company without a location.
    private func seed(_ realm: Realm, count: Int, seed: UInt64) throws -> [(Int, Double, Double)] {
        var state = seed
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        var points: [(Int, Double, Double)] = []
        try realm.write {
            for i in 0..<count {
                // Denser near (40, -74), and some anywhere on the globe.
                let lat = i % 4 == 0 ? next() * 180 - 90 : 35 + next() * 10
                let lon = i % 4 == 0 ? next() * 360 - 180 : -79 + next() * 10
                let company = GeoCompany()
                company.id = i
                company.location = GeoLocation(lat, lon)
                realm.add(company)
                points.append((i, lat, lon))
            }
            realm.add(GeoCompany(value: ["id": -1]))
        }
        return points
    }

    /// The central angle by the haversine formula: an independent check of the circle.
    private func haversine(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let (p1, p2) = (lat1 * .pi / 180, lat2 * .pi / 180)
        let dp = p2 - p1
        let dl = (lon2 - lon1) * .pi / 180
        let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * asin(min(1, h.squareRoot()))
    }

    @Test func circlesAgreeWithTheHaversineDistance() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let points = try seed(realm, count: 2_000, seed: 11)
            let companies = realm.objects(GeoCompany.self)
            for (lat, lon, km) in [
                (40.7, -74.0, 50.0), (40.0, -75.0, 300.0), (0.0, 0.0, 8_000.0), (-33.9, 151.2, 20_000.0),
            ] {
                let radius = try #require(Distance.kilometers(km))
                let circle = try #require(GeoCircle(center: (lat, lon), radius: radius))
                let expected = points.filter { haversine(lat, lon, $0.1, $0.2) <= km / 6378.1 }.map(\.0)
                    .sorted()
                let dsl = companies.where { $0.location.geoWithin(circle) }.map(\.id).sorted()
                let string = companies.filter("location IN %@", circle).map(\.id).sorted()
                // Points within a rounding error of the edge may fall either way.
                let borderline = points.filter {
                    abs(haversine(lat, lon, $0.1, $0.2) - km / 6378.1) < 1e-12
                }.map(\.0)
                #expect(
                    Set(dsl).symmetricDifference(expected).isSubset(of: borderline),
                    "circle (\(lat), \(lon)) \(km) km")
                #expect(dsl == string)
                #expect(companies.filter("location GEOWITHIN %@", circle).map(\.id).sorted() == dsl, "RealmSwift's spelling")
                #expect(km > 1_000 || !expected.isEmpty)
            }
        }
    }

    @Test func boxesIncludingOnesAcrossTheDateLine() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            try realm.write {
                for (i, (lat, lon)) in [
                    (40.71, -74.0), (40.8, -73.9), (41.5, -74.0), (10, 179.5), (10, -179.5), (10, 0),
                ].enumerated() {
                    realm.add(
                        GeoCompany(value: ["id": i, "location": GeoLocation(lat, lon)] as [String: Any]))
                }
            }
            let companies = realm.objects(GeoCompany.self)
            let manhattan = try #require(GeoBox(bottomLeft: (40.7, -74.1), topRight: (40.9, -73.8)))
            #expect(companies.where { $0.location.geoWithin(manhattan) }.map(\.id).sorted() == [0, 1])
            let dateLine = try #require(GeoBox(bottomLeft: (0, 179), topRight: (20, -179)))
            #expect(companies.filter("location IN %@", dateLine).map(\.id).sorted() == [3, 4])
            #expect(GeoBox(bottomLeft: (50, 0), topRight: (40, 1)) == nil)
        }
    }

    /// Polygons with a hole: a point is in when it is in the outer ring and not in a hole; the
    /// check is by edges' sides, another method than the query's.
    @Test func polygonsWithHolesAgreeWithAnEdgeSideCheck() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let points = try seed(realm, count: 2_000, seed: 5)
            // Anticlockwise rings (seen from above), convex.
            let outer = [(36.0, -78.0), (36.0, -70.0), (44.0, -70.0), (44.0, -78.0), (36.0, -78.0)]
            let hole = [(39.0, -75.0), (39.0, -73.0), (41.0, -73.0), (41.0, -75.0), (39.0, -75.0)]
            let polygon = try #require(GeoPolygon(outerRing: outer, holes: [hole]))
            func vector(_ lat: Double, _ lon: Double) -> (Double, Double, Double) {
                let (p, l) = (lat * .pi / 180, lon * .pi / 180)
                return (cos(p) * cos(l), cos(p) * sin(l), sin(p))
            }
            func leftOfEveryEdge(_ ring: [(Double, Double)], _ lat: Double, _ lon: Double) -> Bool {
                let p = vector(lat, lon)
                for i in 0..<(ring.count - 1) {
                    let a = vector(ring[i].0, ring[i].1)
                    let b = vector(ring[i + 1].0, ring[i + 1].1)
                    let n = (a.1 * b.2 - a.2 * b.1, a.2 * b.0 - a.0 * b.2, a.0 * b.1 - a.1 * b.0)
                    if n.0 * p.0 + n.1 * p.1 + n.2 * p.2 < 0 { return false }
                }
                return true
            }
            let expected = points.filter {
                leftOfEveryEdge(outer, $0.1, $0.2) && !leftOfEveryEdge(hole, $0.1, $0.2)
            }.map(\.0).sorted()
            let found = realm.objects(GeoCompany.self).where { $0.location.geoWithin(polygon) }.map(\.id)
                .sorted()
            #expect(found == expected)
            #expect(expected.count > 100)
            // The same ring the other way round encloses the same (smaller) region.
            let clockwise = try #require(GeoPolygon(outerRing: Array(outer.reversed())))
            let withoutHole = points.filter { leftOfEveryEdge(outer, $0.1, $0.2) }.map(\.0).sorted()
            #expect(
                realm.objects(GeoCompany.self).filter("location IN %@", clockwise).map(\.id).sorted()
                    == withoutHole)
        }
    }

    @Test func shapesRefuseWhatIsNotOne() {
        #expect(GeoPoint(latitude: 91, longitude: 0) == nil)
        #expect(GeoPoint(latitude: 0, longitude: -181) == nil)
        #expect(Distance.kilometers(-1) == nil)
        #expect(GeoCircle(center: (0, 0), radiusInRadians: -0.1) == nil)
        #expect(GeoPolygon(outerRing: [(0, 0), (0, 1), (1, 1), (1, 0)]) == nil)  // not closed
        #expect(GeoPolygon(outerRing: [(0, 0), (0, 1), (0, 0)]) == nil)  // too few points
        #expect(Distance.miles(1)!.radians == Distance.kilometers(1.609344)!.radians)
    }

    /// `IN %@` with a shape on something that is not a location says so.
    @Test func aShapeOnAPropertyThatIsNotALocationThrows() throws {
        try withTemporaryDirectory { dir in
            let realm = try Realm(configuration: makeConfiguration(dir))
            let circle = GeoCircle(center: (0, 0), radiusInRadians: 1)!
            #expect(throws: Realm.Error.self) {
                try realm.objects(GeoCompany.self).filter(checking: "id IN %@", circle)
            }
            let notALocation = #expect(throws: Realm.Error.self) {
                try realm.objects(GeoCompany.self).filter(checking: "id GEOWITHIN %@", circle)
            }
            #expect(notALocation?.localizedDescription.contains("is not a location") == true, "\(String(describing: notALocation))")
            let noShape = #expect(throws: Realm.Error.self) {
                try realm.objects(GeoCompany.self).filter(checking: "location GEOWITHIN %@", 5)
            }
            #expect(noShape?.localizedDescription.contains("GEOWITHIN at offset 9 needs a shape argument") == true, "\(String(describing: noShape))")
        }
    }
}
