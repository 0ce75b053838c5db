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
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        .target(name: "LMDBKit", dependencies: ["CLMDB"], swiftSettings: strict),
        .target(
            name: "LMDBRealm",
            dependencies: ["LMDBKit"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "LMDBRealmDemo",
            dependencies: ["LMDBRealm"],
            path: "Examples/Demo",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "LMDBRealmBench",
            dependencies: ["LMDBRealm", "LMDBKit"],
            path: "Examples/Bench",
            swiftSettings: strict
        ),
        // A separate process for the tests that must cross a process boundary.
        .executableTarget(
            name: "RealmTestHelper",
            dependencies: ["LMDBRealm"],
            path: "Tests/RealmTestHelper",
            swiftSettings: strict
        ),
        .target(
            name: "TestSupport",
            dependencies: ["LMDBRealm", "LMDBKit"],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "LMDBKitTests",
            dependencies: ["LMDBKit", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "LMDBRealmTests",
            dependencies: ["LMDBRealm", "LMDBKit", "TestSupport", "RealmTestHelper"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
