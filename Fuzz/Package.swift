// swift-tools-version: 6.1
// The libFuzzer target for StreamMap's engines: a separate package, so the root `swift build` never builds it.
// Build and run it with scripts/fuzz.sh (which passes -sanitize=fuzzer,address and -parse-as-library).
import PackageDescription

// A path dependency's identity is its directory's name (lowercased): `streammap` in a checkout named so, `main`
// here. Computed, so the package works whatever the checkout is called.
let rootIdentity = Context.packageDirectory.split(separator: "/").dropLast().last.map { $0.lowercased() } ?? "streammap"

let package = Package(
    name: "streammap-fuzz",
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        // The root package's generators and the engine check (Sources/StreamMapTestSupport, a symlink): that target
        // is not a product, so it cannot be a dependency of another package; its sources are compiled here again.
        .target(
            name: "StreamMapFuzzSupport",
            dependencies: [.product(name: "StreamMap", package: rootIdentity)]
        ),
        .executableTarget(
            name: "StreamMapFuzz",
            dependencies: ["StreamMapFuzzSupport", .product(name: "StreamMap", package: rootIdentity)]
        ),
    ]
)
