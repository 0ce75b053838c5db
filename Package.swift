// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "LMDBRealm",
    products: [
        .library(name: "LMDBRealm", targets: ["LMDBRealm"]),
        .library(name: "LMDBKit", targets: ["LMDBKit"]),
        .executable(name: "lmdbrealm", targets: ["Inspector"]),
        // Every node's file converging through PostgreSQL (postgres-nio); a product of its own,
        // so that LMDBRealm and LMDBKit keep depending on nothing.
        .library(name: "LMDBRealmSync", targets: ["LMDBRealmSync"]),
    ],
    traits: [
        // On by default. Builds that need no sync (the sanitized test builds) leave it out with
        // `--disable-default-traits`, and with it postgres-nio and its dependencies.
        .trait(name: "Sync", description: "The LMDBRealmSync product and its PostgreSQL client (postgres-nio)"),
        .default(enabledTraits: ["Sync"]),
    ],
    dependencies: [
        // Used only by the inspector, the ArticleCache example and their tests; the library
        // products LMDBRealm and LMDBKit depend on nothing.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.0"),
        // LMDBRealmSync's PostgreSQL client (and its logging).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // Its TLS (postgres-nio's own dependency): the root certificates and checks of a connection.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.25.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // C on hot paths: CRC-32C with the processor's instruction (the checksum of every
        // record), the thread-local column counter of the object a thread is making, the sort
        // of a write's buffered index entries, and LMDB's default key order compared eight
        // bytes at a time (LMDBKit's databases). It includes no lmdb.h: only LMDBKit does.
        .target(name: "CHotPaths"),
        .target(name: "LMDBKit", dependencies: ["CLMDB", "CHotPaths"], swiftSettings: strict),
        // The layers of LMDBRealm, each a target, so that an upward use does not compile
        // (the DocC article Architecture draws this graph). They share `package` declarations;
        // users see one product and one `import LMDBRealm`, which re-exports their public types.
        //
        // The file format: records, keys, sync's change sets, and the value types they hold
        // (ObjectId, Decimal128, the schema description, RealmError).
        .target(
            name: "LMDBRealmFormat",
            dependencies: ["CHotPaths"],
            swiftSettings: strict
        ),
        // Storage: the file's tables, indexes, lists and backlinks, the write session, the
        // query executor and its plans, group commit, change logs, verification, sync's
        // outbox. The only layer that imports LMDBKit.
        .target(
            name: "LMDBRealmStorage",
            dependencies: ["LMDBRealmFormat", "LMDBKit", "CHotPaths"],
            swiftSettings: strict
        ),
        // The object layer: Object and @Persisted, Realm, query building, Results,
        // notifications.
        .target(
            name: "LMDBRealm",
            dependencies: ["LMDBRealmFormat", "LMDBRealmStorage", "CHotPaths"],
            swiftSettings: strict
        ),
        .target(
            name: "LMDBRealmSync",
            dependencies: [
                "LMDBRealm", "LMDBRealmStorage",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Sync"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Sync"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Sync"])),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Sync"])),
            ],
            swiftSettings: strict
        ),
        // `lmdbrealm`, the command-line inspector.
        // What the inspector's `import` reads (JSON and CSV rows, converted by a class's schema),
        // apart from the command so that a fuzz target runs it.
        .target(name: "InspectorImport", dependencies: ["LMDBRealm"], swiftSettings: strict),
        .executableTarget(
            name: "Inspector",
            dependencies: [
                "LMDBRealm",
                "InspectorImport",
                "LMDBRealmSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "LMDBRealmDemo",
            dependencies: ["LMDBRealm"],
            path: "Examples/Demo",
            swiftSettings: strict
        ),
        // The example `make run` runs: the NYT Article Search client and its Realm cache.
        .target(
            name: "ArticleCacheKit",
            dependencies: ["LMDBRealm"],
            path: "Examples/ArticleCache/Sources/ArticleCacheKit",
            resources: [.copy("Resources/sample-articles.json")],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "ArticleCache",
            dependencies: [
                "ArticleCacheKit",
                // `watch --sync` (with the Sync trait).
                "LMDBRealmSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/ArticleCache/Sources/ArticleCache",
            swiftSettings: strict
        ),
        // A separate process for the tests that must cross a process boundary.
        .executableTarget(
            name: "RealmTestHelper",
            dependencies: ["LMDBRealm"],
            path: "Tests/RealmTestHelper",
            swiftSettings: strict
        ),
        // The reliability battery (`make reliability`): crash trials, fault injection at every
        // LMDB call, the soak; it runs copies of itself as the child processes it kills.
        .executableTarget(
            name: "ReliabilityBattery",
            dependencies: [
                "LMDBRealm", "LMDBKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/Reliability",
            // The power-cut recorder, a C library the battery builds and loads into its children.
            exclude: ["PowerCut"],
            swiftSettings: strict
        ),
        // libFuzzer targets (`make fuzz` builds them with the sanitizers and libFuzzer).
        .executableTarget(
            name: "FuzzTargets",
            dependencies: ["LMDBRealm", "InspectorImport"],
            path: "Tests/Fuzz",
            exclude: ["Corpus"],
            swiftSettings: strict
        ),
        .target(
            name: "TestSupport",
            dependencies: ["LMDBRealm", "LMDBKit"],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        // A PostgreSQL server of its own for each sync test (initdb and pg_ctl).
        .target(
            name: "SyncTestSupport",
            path: "Tests/SyncTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LMDBRealmSyncTests",
            dependencies: [
                "LMDBRealmSync", "LMDBRealm", "LMDBRealmStorage", "SyncTestSupport", "TestSupport", "ArticleCache", "ArticleCacheKit", "Inspector",
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Sync"])),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LMDBKitTests",
            dependencies: ["LMDBKit", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LMDBRealmTests",
            dependencies: ["LMDBRealm", "LMDBRealmFormat", "LMDBRealmStorage", "LMDBKit", "CHotPaths", "TestSupport", "RealmTestHelper"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "InspectorTests",
            dependencies: ["Inspector", "ArticleCache", "LMDBRealm", "LMDBRealmSync", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ArticleCacheTests",
            dependencies: [
                "ArticleCacheKit", "TestSupport",
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "FlyingSocks", package: "FlyingFox"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
