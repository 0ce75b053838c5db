import enum CoreMetrics.MetricsSystem
public import Prometheus

/// What `GET /metrics` reports: the store's figures (read at each scrape), the time each write
/// takes to become durable, the open event streams, and Hummingbird's request metrics.
///
/// Each service has a registry of its own for its figures; the request metrics go through
/// swift-metrics, whose backend a process sets once (``processRegistry``), so services in one
/// process (as in the tests) share those.
public final class NotesMetrics: Sendable {
    /// The registry of this service's own figures.
    public let registry = PrometheusCollectorRegistry()
    /// The event streams open now, which a test may wait on.
    package let eventStreams: StreamCount

    private let fileSize: Gauge
    private let usedSize: Gauge
    private let mapSize: Gauge
    private let readers: Gauge
    private let pinnedVersions: Gauge
    private let currentVersion: Gauge
    private let commitDuration: DurationHistogram

    /// The registry swift-metrics reports to in this process, made and installed as its backend
    /// on first use: `MetricsSystem.bootstrap` may run only once per process.
    public static let processRegistry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    public init() {
        _ = Self.processRegistry
        let registry = registry
        func gauge(_ name: String, _ unit: String, _ help: String) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(
                namespace: "notes", subsystem: "store", metricName: name, unitName: unit, helpText: help))
        }
        fileSize = gauge("file_size", "bytes", "Bytes of the store's files on disk")
        usedSize = gauge("used_size", "bytes", "Bytes of the store's pages in use")
        mapSize = gauge("map_size", "bytes", "Address space reserved for the memory map (LMDBRealm)")
        readers = gauge("readers", "", "Read transactions holding a version now, in every process (LMDBRealm)")
        pinnedVersions = gauge(
            "pinned_versions", "", "Versions between the newest and the oldest one a reader holds (LMDBRealm)")
        currentVersion = gauge("current_version", "", "The newest committed version (LMDBRealm)")
        commitDuration = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "notes", metricName: "commit_duration", unitName: "seconds",
                helpText: "Time from asking for a write to its durable commit"),
            labels: [],
            buckets: [
                .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                .seconds(1),
            ])
        let streams = registry.makeGauge(descriptor: MetricNameDescriptor(
            namespace: "notes", metricName: "event_streams", unitName: "", helpText: "Server-sent event streams open now"))
        eventStreams = StreamCount { streams.set(Double($0)) }
    }

    /// Records the time a write took, from the call to its durable commit.
    func recordCommit(_ duration: Duration) {
        commitDuration.record(duration)
    }

    /// The Prometheus text of every figure, the store's taken from `statistics`.
    func exposition(_ statistics: StoreStatistics) -> [UInt8] {
        fileSize.set(Double(statistics.fileSize))
        usedSize.set(Double(statistics.usedSize))
        // The LMDBRealm figures are absent for a store that has none.
        if let value = statistics.mapSize { mapSize.set(Double(value)) }
        if let value = statistics.readers { readers.set(Double(value)) }
        if let value = statistics.pinnedVersions { pinnedVersions.set(Double(value)) }
        if let value = statistics.currentVersion { currentVersion.set(Double(value)) }
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        Self.processRegistry.emit(into: &buffer)
        return buffer
    }
}
