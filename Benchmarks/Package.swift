// swift-tools-version: 6.1
// A nested package, so the root package's `swift build` / `swift test` never builds the benchmark stack.
// Run from this directory: `swift package benchmark` (see README.md here).
import PackageDescription

import struct Foundation.URL

// The root package is a path dependency; its identity is the name of its directory (e.g. "main" or
// "streammap"), so derive it instead of hard-coding the checkout's name.
let rootIdentity = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "StreamMapBenchmarks",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "streammap-feed", targets: ["FeedTweets"]),
        .executable(name: "streammap-decode", targets: ["DecodeTweets"]),
    ],
    dependencies: [
        .package(path: ".."),
        // The default traits pull in swift-runtime-interposer, which is not available here: malloc counts only.
        .package(url: "https://github.com/ordo-one/benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The library's MappingFeed on a stream (Benchmarks/library_feed.py).
        .executableTarget(
            name: "FeedTweets",
            dependencies: [.product(name: "StreamMap", package: rootIdentity)],
            path: "FeedTweets"
        ),
        // Tweets into Codable models: ModelFeed, MappingFeed + decode, Foundation (Benchmarks/decode_models.py).
        .executableTarget(
            name: "DecodeTweets",
            dependencies: [.product(name: "StreamMap", package: rootIdentity)],
            path: "DecodeTweets"
        ),
        .executableTarget(
            name: "StreamMapBenchmarks",
            dependencies: [
                .product(name: "StreamMap", package: rootIdentity),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "StreamMapBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
