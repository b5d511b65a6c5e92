// swift-tools-version:6.1
// Benchmarks for Courier, kept out of the main package so that `swift test` there never builds
// them. Every workload is a plain release executable that prints one JSON line per run; the
// driver (run.sh → bench.py) alternates Courier and its peer and computes the ratios.
import PackageDescription

let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "courier-bench", targets: ["CourierBench"]),
    ],
    dependencies: [
        .package(name: "Courier", path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "CourierBench",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "CourierOpenAPI", package: "Courier"),
                .product(name: "CourierURLSession", package: "Courier"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                "BenchOpenAPIClient",
            ]
        ),
        // The OpenAPI example's generated client and tour (a link to Examples/OpenAPI's sources),
        // under its own module name: the openapi-* rows run the same client on both transports.
        .target(
            name: "BenchOpenAPIClient",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierOpenAPI", package: "Courier"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
