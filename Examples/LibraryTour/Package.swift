// swift-tools-version: 6.1
// The library tour: a small program that uses StreamMap the way the README's library guide says — a mapper in
// Swift and the same from a spec file, input fed in chunks, as an async sequence and from a file with two jobs,
// Codable models in one pass, rejects printed, a typed closure. CI builds and runs it (scripts/library-tour.sh),
// so the front door cannot rot: it exits 1 when anything differs from what it expects.
//
//     cd Examples/LibraryTour && swift run LibraryTour
import PackageDescription

import struct Foundation.URL

// The root package is a path dependency named after its directory (whatever the checkout is called).
let rootIdentity = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "LibraryTour",
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(name: "LibraryTour", dependencies: [.product(name: "StreamMap", package: rootIdentity)])
    ]
)
