// swift-tools-version: 6.0
import PackageDescription

// A Swift program that streams a generation with Lumen's library, LumenKit, used by path as
// any package would use it by URL.
let package = Package(
    name: "StreamGeneration",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Lumen", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "StreamGeneration", dependencies: [.product(name: "LumenKit", package: "Lumen")]),
    ],
    swiftLanguageModes: [.v6]
)
