import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// MARK: - Shapes

/// A shape of ``Query/geoWithin(_:)``: ``GeoCircle``, ``GeoBox`` or ``GeoPolygon``.
public protocol Geospatial: Sendable {
    /// Whether `point` lies in the shape (on its edge counts as in).
    func contains(_ point: GeoPoint) -> Bool
}

/// A point on the Earth: latitude and longitude in degrees.
///
/// Points are not stored as such: store a location as an embedded object of GeoJSON's shape, a
/// `type` of `"Point"` and `coordinates` holding longitude then latitude, and query it with
/// ``Query/geoWithin(_:)`` or `"location IN %@"`:
///
/// ```swift
/// final class Location: EmbeddedObject {
///     @Persisted private var type = "Point"
///     @Persisted private var coordinates: List<Double>
///     convenience init(latitude: Double, longitude: Double) {
///         self.init()
///         coordinates.append(objectsIn: [longitude, latitude])
///     }
/// }
/// final class Cafe: Object {
///     @Persisted var name = ""
///     @Persisted var location: Location?
/// }
/// let near = realm.objects(Cafe.self).where { $0.location.geoWithin(GeoCircle(center: (55.67, 12.56), radius: .kilometers(2)!)!) }
/// ```
public struct GeoPoint: Sendable, Hashable {
    /// Degrees, -90...90.
    public let latitude: Double
    /// Degrees, -180...180.
    public let longitude: Double
    /// Not used in queries.
    public let altitude: Double

    /// A point; `nil` if the latitude or longitude is out of range, or the altitude negative.
    public init?(latitude: Double, longitude: Double, altitude: Double = 0) {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude), altitude >= 0 else { return nil }
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }

    /// The unit vector from the Earth's centre through the point.
    var vector: SIMD3<Double> {
        let lat = latitude * .pi / 180
        let lon = longitude * .pi / 180
        return SIMD3(cos(lat) * cos(lon), cos(lat) * sin(lon), sin(lat))
    }
}

/// A distance on the Earth's surface, kept as the angle it spans at the centre.
public struct Distance: Sendable, Hashable {
    /// The Earth's radius the conversions use, in kilometres (RealmSwift's).
    static let earthRadiusKilometers = 6378.1

    /// The angle, in radians.
    public let radians: Double

    init(radians: Double) {
        self.radians = radians
    }

    /// As ``radians``.
    public var asRadians: Double { radians }

    /// `nil` for a negative distance.
    public static func kilometers(_ kilometers: Double) -> Distance? {
        kilometers >= 0 ? Distance(radians: kilometers / earthRadiusKilometers) : nil
    }
    /// `nil` for a negative distance.
    public static func miles(_ miles: Double) -> Distance? {
        miles >= 0 ? Distance(radians: miles * 1.609344 / earthRadiusKilometers) : nil
    }
    /// `nil` for a negative angle.
    public static func degrees(_ degrees: Double) -> Distance? {
        degrees >= 0 ? Distance(radians: degrees * .pi / 180) : nil
    }
    /// `nil` for a negative angle.
    public static func radians(_ radians: Double) -> Distance? {
        radians >= 0 ? Distance(radians: radians) : nil
    }
}

/// The points within a distance of a centre, along the sphere.
public struct GeoCircle: Geospatial, Hashable {
    public let center: GeoPoint
    /// The radius as an angle at the Earth's centre.
    public let radians: Double

    /// `nil` for a negative radius.
    public init?(center: GeoPoint, radiusInRadians: Double) {
        guard radiusInRadians >= 0 else { return nil }
        self.center = center
        radians = radiusInRadians
    }

    public init(center: GeoPoint, radius: Distance) {
        self.center = center
        radians = radius.radians
    }

    /// `center` is (latitude, longitude); `nil` if it is out of range or the radius negative.
    public init?(center: (Double, Double), radiusInRadians: Double) {
        guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: point, radiusInRadians: radiusInRadians)
    }

    /// `center` is (latitude, longitude); `nil` if it is out of range.
    public init?(center: (Double, Double), radius: Distance) {
        guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: point, radius: radius)
    }

    public func contains(_ point: GeoPoint) -> Bool {
        // The angle between the two unit vectors, from its sine and cosine (accurate at any
        // size, unlike acos of the dot product for small circles).
        let a = center.vector
        let b = point.vector
        let cross = SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
        let sine = (cross * cross).sum().squareRoot()
        let cosine = (a * b).sum()
        return atan2(sine, cosine) <= radians
    }
}

/// The points between two latitudes and two longitudes: a rectangle on the map.
///
/// If the bottom left corner's longitude is greater than the top right's, the box crosses the
/// 180° meridian.
public struct GeoBox: Geospatial, Hashable {
    public let bottomLeft: GeoPoint
    public let topRight: GeoPoint

    /// `nil` if the bottom is above the top.
    public init?(bottomLeft: GeoPoint, topRight: GeoPoint) {
        guard bottomLeft.latitude <= topRight.latitude else { return nil }
        self.bottomLeft = bottomLeft
        self.topRight = topRight
    }

    /// Corners as (latitude, longitude).
    public init?(bottomLeft: (Double, Double), topRight: (Double, Double)) {
        guard let bl = GeoPoint(latitude: bottomLeft.0, longitude: bottomLeft.1),
            let tr = GeoPoint(latitude: topRight.0, longitude: topRight.1)
        else { return nil }
        self.init(bottomLeft: bl, topRight: tr)
    }

    public func contains(_ point: GeoPoint) -> Bool {
        guard point.latitude >= bottomLeft.latitude && point.latitude <= topRight.latitude else { return false }
        if bottomLeft.longitude <= topRight.longitude {
            return point.longitude >= bottomLeft.longitude && point.longitude <= topRight.longitude
        }
        return point.longitude >= bottomLeft.longitude || point.longitude <= topRight.longitude
    }
}

/// The points inside a ring of points joined by great-circle arcs, outside its holes.
///
/// Each ring is closed (its first point repeated last) and has at least three other points. A
/// ring encloses the smaller of the two regions it divides the sphere into.
public struct GeoPolygon: Geospatial, Hashable {
    public let outerRing: [GeoPoint]
    public let holes: [[GeoPoint]]

    /// `nil` if a ring is not closed or has fewer than four points.
    public init?(outerRing: [GeoPoint], holes: [[GeoPoint]] = []) {
        for ring in [outerRing] + holes {
            guard ring.count >= 4, ring.first == ring.last else { return nil }
        }
        self.outerRing = outerRing
        self.holes = holes
    }

    /// Rings of (latitude, longitude) pairs.
    public init?(outerRing: [(Double, Double)], holes: [[(Double, Double)]] = []) {
        func points(_ ring: [(Double, Double)]) -> [GeoPoint]? {
            let points = ring.compactMap { GeoPoint(latitude: $0.0, longitude: $0.1) }
            return points.count == ring.count ? points : nil
        }
        guard let outer = points(outerRing) else { return nil }
        var inner: [[GeoPoint]] = []
        for hole in holes {
            guard let ring = points(hole) else { return nil }
            inner.append(ring)
        }
        self.init(outerRing: outer, holes: inner)
    }

    public func contains(_ point: GeoPoint) -> Bool {
        let p = point.vector
        guard Self.ring(outerRing, encloses: p) else { return false }
        return !holes.contains { Self.ring($0, encloses: p) && !Self.onEdge($0, p) }
    }

    /// Whether the smaller region `ring` bounds holds `p`.
    ///
    /// Seen from `p`, the bearings to the ring's points turn once around (±2π) when the ring
    /// separates `p` from its antipode, and not at all otherwise; they turn anticlockwise when
    /// `p` is on the ring's left. The ring's signed area says which side, left or right, is the
    /// smaller region.
    static func ring(_ ring: [GeoPoint], encloses p: SIMD3<Double>) -> Bool {
        if onEdge(ring, p) { return true }
        let winding = windingAngle(ring, around: p)
        return signedArea(ring) >= 0 ? winding > .pi : winding < -.pi
    }

    /// The signed sum of the angles the bearings from `p` to the ring's points turn through
    /// (directions in the plane tangent at `p`, anticlockwise positive).
    static func windingAngle(_ ring: [GeoPoint], around p: SIMD3<Double>) -> Double {
        var total = 0.0
        for i in 0..<(ring.count - 1) {
            let a = ring[i].vector
            let b = ring[i + 1].vector
            let ta = a - p * (a * p).sum()
            let tb = b - p * (b * p).sum()
            let cross = SIMD3(ta.y * tb.z - ta.z * tb.y, ta.z * tb.x - ta.x * tb.z, ta.x * tb.y - ta.y * tb.x)
            total += atan2((cross * p).sum(), (ta * tb).sum())
        }
        return total
    }

    /// The area (steradians) of the region on the ring's left, negative when the ring runs
    /// clockwise around the smaller region: the sum of the signed areas of the triangles of a
    /// fan from the first point (Van Oosterom and Strackee's formula).
    static func signedArea(_ ring: [GeoPoint]) -> Double {
        let a = ring[0].vector
        var total = 0.0
        for i in 1..<(ring.count - 2) {
            let b = ring[i].vector
            let c = ring[i + 1].vector
            let cross = SIMD3(b.y * c.z - b.z * c.y, b.z * c.x - b.x * c.z, b.x * c.y - b.y * c.x)
            let numerator = (a * cross).sum()
            let denominator = 1 + (a * b).sum() + (b * c).sum() + (c * a).sum()
            total += 2 * atan2(numerator, denominator)
        }
        return total
    }

    /// Whether `p` lies on one of the ring's edges (within 1e-12 radians).
    static func onEdge(_ ring: [GeoPoint], _ p: SIMD3<Double>) -> Bool {
        for i in 0..<(ring.count - 1) {
            let a = ring[i].vector
            let b = ring[i + 1].vector
            let normal = SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
            let length = (normal * normal).sum().squareRoot()
            guard length > 0 else { continue }
            if abs((normal * p).sum() / length) > 1e-12 { continue }
            // On the great circle: between a and b?
            let ab = (a * b).sum()
            if (a * p).sum() >= ab - 1e-15 && (b * p).sum() >= ab - 1e-15 { return true }
        }
        return false
    }
}

// MARK: - Queries

extension QueryNode {
    /// Whether the GeoJSON point the embedded object at `path` holds lies in `shape`.
    static func geoWithin(_ path: String, _ shape: any Geospatial) -> QueryNode {
        let parts = path.split(separator: ".").map(String.init)
        return .block { object in
            var current: Object? = object
            for part in parts { current = current?[part] as? Object }
            guard let location = current, let point = location.geoJSONPoint else { return false }
            return shape.contains(point)
        }
    }
}

extension Object {
    /// The point a GeoJSON-shaped object holds: `type` `"Point"`, `coordinates` longitude then
    /// latitude.
    var geoJSONPoint: GeoPoint? {
        let schema = ClassInfo.of(type(of: self)).schema
        guard schema["type"]?.type == .string, schema["coordinates"]?.type == .double, schema["coordinates"]?.isArray == true,
            self["type"] as? String == "Point", let coordinates = self["coordinates"] as? List<Double>, coordinates.count >= 2
        else { return nil }
        return GeoPoint(latitude: coordinates[1], longitude: coordinates[0])
    }
}

extension Query {
    /// Whether the location this link holds (an embedded object of GeoJSON's shape: `type`
    /// `"Point"` and `coordinates` [longitude, latitude]) lies in `shape`.
    ///
    /// ```swift
    /// let downtown = GeoBox(bottomLeft: (40.70, -74.02), topRight: (40.72, -73.99))!
    /// let offices = companies.where { $0.location.geoWithin(downtown) }
    /// ```
    /// Every object is read and tested (there is no spatial index yet).
    public func geoWithin<Location: Object>(_ shape: some Geospatial) -> Query<Bool> where T == Location? {
        Query<Bool>(.condition(.geoWithin(propertyName, shape)))
    }
}
