// swift-tools-version: 6.1
// NotesServer: a notes service over HTTP that keeps its data in LMDBRealm (or, for comparison,
// in SQLite through GRDB). A package of its own, so that LMDBRealm's users never resolve the
// server's dependencies.
//
//     swift run --package-path Examples/NotesServer NotesServer --port 8080
//     make test-notes-server     # the tests, against a real server on a loopback port
//     make notes-load            # Scripts/load.sh: wrk and a thousand SSE subscribers, both backends
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "NotesServer",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The repository root. Named, so that products are found under "LMDBRealm" whatever the
        // folder of the clone is called.
        .package(name: "LMDBRealm", path: "../.."),
        // Only the FullFoundation trait: the ConfigurationSupport trait (swift-configuration) is
        // not used here.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // The service: model, backends, routes, server-sent events and metrics.
        .target(
            name: "NotesServerKit",
            dependencies: [
                .product(name: "LMDBRealm", package: "LMDBRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // `NotesServer` (serve), `NotesServer seed` and `NotesServer subscribe-bench`.
        .executableTarget(
            name: "NotesServer",
            dependencies: [
                "NotesServerKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "NotesServerTests",
            dependencies: [
                "NotesServerKit",
                .product(name: "LMDBRealm", package: "LMDBRealm"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
