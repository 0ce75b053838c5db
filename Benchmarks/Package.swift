// swift-tools-version: 6.1
// The benchmark suite: LMDBRealm against SQLite (C API and GRDB) and the raw LMDBKit floor, on
// one workload. A package of its own so that the library's users never resolve GRDB.
//
//     make bench          # swift run -c release --package-path Benchmarks LMDBRealmBenchmarks
//     make bench-quick    # the same with --quick (N = 10,000, 3 rounds)
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --profile scan
//                         # one LMDBRealm operation repeated in-process, for perf or callgrind
//     make bench-sync     # SyncBenchmarks: sync's figures against a PostgreSQL server of its own
import PackageDescription

let package = Package(
    name: "LMDBRealmBenchmarks",
    dependencies: [
        .package(name: "LMDBRealm", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "LMDBRealmBenchmarks",
            dependencies: [
                .product(name: "LMDBRealm", package: "LMDBRealm"),
                .product(name: "LMDBKit", package: "LMDBRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("MemberImportVisibility"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        ),
        // Sync's figures against a real PostgreSQL server (`make bench-sync`).
        .executableTarget(
            name: "SyncBenchmarks",
            dependencies: [
                .product(name: "LMDBRealm", package: "LMDBRealm"),
                .product(name: "LMDBRealmSync", package: "LMDBRealm"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
