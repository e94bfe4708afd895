// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "streammap",
    products: [
        .library(name: "StreamMap", targets: ["StreamMap"]),
        .executable(name: "streammap", targets: ["streammap"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // `swift package generate-documentation --target StreamMap` (scripts/docs.sh); nothing of it is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // yajl's event parser (Debian: libyajl-dev, pkg-config: yajl). Only Sources/StreamMap/JSON/YajlParser.swift imports it.
        .systemLibrary(
            name: "CYajl",
            path: "CYajl",
            pkgConfig: "yajl",
            providers: [.apt(["libyajl-dev"]), .brew(["yajl"])]
        ),
        // zlib (Debian: zlib1g-dev, pkg-config: zlib) and libzstd (libzstd-dev, pkg-config: libzstd): compressed input
        // and output. Only Sources/StreamMap/Pipeline/Compression imports them.
        .systemLibrary(
            name: "CZlib",
            path: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .systemLibrary(
            name: "CZstd",
            path: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),
        // xz (Debian: liblzma-dev, pkg-config: liblzma) and bzip2 (libbz2-dev; Debian ships no pkg-config file for it):
        // compressed input and output, like gzip and zstd.
        .systemLibrary(
            name: "CLzma",
            path: "CLzma",
            pkgConfig: "liblzma",
            providers: [.apt(["liblzma-dev"]), .brew(["xz"])]
        ),
        .systemLibrary(name: "CBzip2", path: "CBzip2", providers: [.apt(["libbz2-dev"]), .brew(["bzip2"])]),
        // ISA-L's inflate (Debian: libisal-dev): its header only, for the struct and the constants; no pkgConfig, so
        // nothing links it — libisal.so.2 is loaded at run time where it is installed (IsalInflate.swift), zlib
        // inflates elsewhere.
        .systemLibrary(name: "CIsal", path: "CIsal", providers: [.apt(["libisal-dev"])]),
        // The strict scanner's SIMD kernel (AVX2 on x86-64; elsewhere the scanner's Swift code does all the work).
        .target(name: "CJSONScan"),
        // STREAMMAP_MUTATIONS: the stream engine's rules that the mutation tests break on purpose
        // (StreamMutationTests), compiled only into debug builds — the builds `swift test` makes.
        .target(
            name: "StreamMap",
            dependencies: ["CYajl", "CZlib", "CZstd", "CLzma", "CBzip2", "CIsal", "CJSONScan"],
            swiftSettings: [.define("STREAMMAP_MUTATIONS", .when(configuration: .debug))]
        ),
        .executableTarget(
            name: "streammap",
            dependencies: ["StreamMap", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Random mappers, spec files and records (public API only): the differential tests and the fuzz target
        // (Fuzz/Package.swift, a separate package) share them. Not a product.
        .target(name: "StreamMapTestSupport", dependencies: ["StreamMap"]),
        .testTarget(
            name: "StreamMapTests",
            dependencies: ["StreamMap", "CJSONScan", "StreamMapTestSupport"],
            swiftSettings: [.define("STREAMMAP_MUTATIONS", .when(configuration: .debug))]
        ),
        .testTarget(name: "StreamMapCLITests", dependencies: ["streammap", "StreamMapTestSupport"]),
    ]
)
