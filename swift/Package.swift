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
        .testTarget(name: "HackMatrixCoreTests", dependencies: ["HackMatrixCore"]),
        .testTarget(name: "HackMatrixProtocolTests", dependencies: ["HackMatrixCore", "HackMatrixProtocol"]),
    ],
    swiftLanguageModes: [.v6]
)
