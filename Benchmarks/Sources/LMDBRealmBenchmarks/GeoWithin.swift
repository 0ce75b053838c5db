import Foundation
import GRDBSQLite
import LMDBRealm

// The geospatial workload: how many of 100,000 points lie in a circle of 25 km, for 20 circles.
// LMDBRealm stores each point as a GeoJSON-shaped embedded object and counts
// `where { $0.location.geoWithin(circle) }`; SQLite keeps the points in a table and an R*Tree of
// their coordinates, asks the R*Tree for the circle's bounding box and checks the candidates
// exactly (the same spherical test). Both counts are checked. Run with `--geo`.
//
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --geo [--n N] [--rounds R]

final class BenchLocation: EmbeddedObject {
    @Persisted var type = "Point"
    @Persisted var coordinates: List<Double>
}

final class Place: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var location: BenchLocation?
}

/// Points spread over a 10° square around (40, -74).
func geoPoints(_ n: Int) -> [(lat: Double, lon: Double)] {
    var g = Generator(state: 3)
    return (0..<n).map { _ in (35 + Double(g.next() % 1_000_000) / 100_000, -79 + Double(g.next() % 1_000_000) / 100_000) }
}

func geoCircles() -> [GeoCircle] {
    var g = Generator(state: 4)
    return (0..<20).map { _ in
        GeoCircle(center: (36 + Double(g.next() % 800) / 100, -78 + Double(g.next() % 800) / 100), radius: .kilometers(25)!)!
    }
}

@MainActor func runGeoWithin(settings: Settings) throws {
    let n = settings.n
    let rounds = settings.effectiveRounds
    let points = geoPoints(n)
    let circles = geoCircles()
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-geo-\(getpid())")
    defer { try? FileManager.default.removeItem(at: root) }
    log("geo: N = \(n) points, \(circles.count) circles of 25 km; \(rounds) rounds")
    var rates: [String: [Double]] = [:]
    var check: Int?
    for round in 0..<rounds {
        let directory = root.appendingPathComponent("\(round)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        var config = Realm.Configuration(fileURL: directory.appendingPathComponent("places.realm"), objectTypes: [Place.self, BenchLocation.self])
        config.maximumFileSize = profileMapSize
        let realm = try Realm(configuration: config)
        try realm.write {
            for (i, p) in points.enumerated() {
                let place = Place()
                place.id = Int64(i)
                let location = BenchLocation()
                location.coordinates.append(objectsIn: [p.lon, p.lat])
                place.location = location
                realm.add(place)
            }
        }
        let places = realm.objects(Place.self)
        let (realmSeconds, realmCount) = timed { circles.reduce(0) { total, circle in total + places.where { $0.location.geoWithin(circle) }.count } }

        let db = try SQLiteDatabase(
            directory.appendingPathComponent("places.sqlite"),
            schema: """
                CREATE TABLE place(id INTEGER PRIMARY KEY, lat REAL NOT NULL, lon REAL NOT NULL);
                CREATE VIRTUAL TABLE place_box USING rtree(id, minLat, maxLat, minLon, maxLon);
                """)
        let insert = try db.prepare("INSERT INTO place(id, lat, lon) VALUES (?, ?, ?)")
        let box = try db.prepare("INSERT INTO place_box(id, minLat, maxLat, minLon, maxLon) VALUES (?, ?, ?, ?, ?)")
        try db.exec("BEGIN")
        for (i, p) in points.enumerated() {
            sqlite3_bind_int64(insert, 1, Int64(i))
            sqlite3_bind_double(insert, 2, p.lat)
            sqlite3_bind_double(insert, 3, p.lon)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw db.lastError }
            sqlite3_reset(insert)
            sqlite3_bind_int64(box, 1, Int64(i))
            for (k, v) in [p.lat, p.lat, p.lon, p.lon].enumerated() { sqlite3_bind_double(box, Int32(k + 2), v) }
            guard sqlite3_step(box) == SQLITE_DONE else { throw db.lastError }
            sqlite3_reset(box)
        }
        try db.exec("COMMIT")
        sqlite3_finalize(insert)
        sqlite3_finalize(box)
        let query = try db.prepare(
            "SELECT p.lat, p.lon FROM place_box b JOIN place p ON p.id = b.id WHERE b.maxLat >= ? AND b.minLat <= ? AND b.maxLon >= ? AND b.minLon <= ?")
        defer { sqlite3_finalize(query) }
        let (sqliteSeconds, sqliteCount) = timed { () -> Int in
            var count = 0
            for circle in circles {
                // The circle's bounding box in degrees (the circles stay away from the poles
                // and the 180° meridian).
                let dLat = circle.radians * 180 / .pi
                let dLon = dLat / cos(circle.center.latitude * .pi / 180)
                let bounds = [circle.center.latitude - dLat, circle.center.latitude + dLat, circle.center.longitude - dLon, circle.center.longitude + dLon]
                sqlite3_bind_double(query, 1, bounds[0])
                sqlite3_bind_double(query, 2, bounds[1])
                sqlite3_bind_double(query, 3, bounds[2])
                sqlite3_bind_double(query, 4, bounds[3])
                while sqlite3_step(query) == SQLITE_ROW {
                    let point = GeoPoint(latitude: sqlite3_column_double(query, 0), longitude: sqlite3_column_double(query, 1))!
                    if circle.contains(point) { count += 1 }
                }
                sqlite3_reset(query)
            }
            return count
        }
        precondition(realmCount == sqliteCount, "LMDBRealm counted \(realmCount) points in the circles, SQLite \(sqliteCount)")
        precondition(check == nil || check == realmCount)
        check = realmCount
        rates["LMDBRealm", default: []].append(Double(circles.count) / realmSeconds)
        rates["SQLite", default: []].append(Double(circles.count) / sqliteSeconds)
        log("round \(round + 1)/\(rounds): LMDBRealm \(String(format: "%.1f", realmSeconds * 1000)) ms, SQLite \(String(format: "%.2f", sqliteSeconds * 1000)) ms for \(circles.count) circles (\(realmCount) points)")
        try? FileManager.default.removeItem(at: directory)
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let (a, b) = (median(rates["LMDBRealm"]!), median(rates["SQLite"]!))
    let table = """
        Geospatial, N = \(n) points; medians of \(rounds) rounds

        | operation | unit | LMDBRealm | SQLite | LMDBRealm / SQLite | what |
        |---|---|---:|---:|---:|---|
        | geo_within | queries/s | \(Report.format(a)) | \(Report.format(b)) | \(String(format: "%.3f", a / b))× | count the points in a 25 km circle (20 circles): LMDBRealm `geoWithin` (every object tested); SQLite R*Tree on the bounding box, then the same exact test on the candidates |

        """
    print(table)
    if let output = settings.output {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try table.write(toFile: output + "/geo-latest.md", atomically: true, encoding: .utf8)
    }
}
