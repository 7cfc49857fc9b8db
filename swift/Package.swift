// swift-tools-version:6.0
// HackMatrix reference engine: a pure core library, a JSON protocol layer,
// and a thin headless CLI. Toolchain and Foundation only.
import PackageDescription

let package = Package(
    name: "HackMatrix",
    products: [
        .library(name: "HackMatrixCore", targets: ["HackMatrixCore"]),
        .library(name: "HackMatrixProtocol", targets: ["HackMatrixProtocol"]),
        .executable(name: "hackmatrix", targets: ["hackmatrix"]),
    ],
    targets: [
        // The game: state, rules, keyed randomness, observation, rewards. No I/O.
        .target(name: "HackMatrixCore"),
        // JSON state schema, observation JSON, request handling. No I/O.
        .target(name: "HackMatrixProtocol", dependencies: ["HackMatrixCore"]),
        // The headless CLI: reads request lines from stdin, writes responses to stdout.
        .executableTarget(name: "hackmatrix", dependencies: ["HackMatrixCore", "HackMatrixProtocol"]),
        // Helpers shared by the test targets: scenario builders, state assertions, request
        // helpers. Built only for the tests (it imports XCTest and the modules @testable).
        .target(
            name: "HackMatrixTestSupport", dependencies: ["HackMatrixCore", "HackMatrixProtocol"],
            path: "Tests/HackMatrixTestSupport"),
        .testTarget(name: "HackMatrixCoreTests", dependencies: ["HackMatrixCore", "HackMatrixTestSupport"]),
        .testTarget(
            name: "HackMatrixProtocolTests",
            dependencies: ["HackMatrixCore", "HackMatrixProtocol", "HackMatrixTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
