// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        // The session and the `Transport` protocol without AsyncHTTPClient, for a program that
        // brings its own transport (issue 43).
        .library(name: "CourierCore", targets: ["CourierCore"]),
        // The AsyncHTTPClient transport alone, beside `CourierCore` (the `Courier` product is both);
        // a product so that its API is documented and checked for breaks like the others.
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        // Transport on Foundation's URLSession (FoundationNetworking on Linux); its own product (issue 19).
        .library(name: "CourierURLSession", targets: ["CourierURLSession"]),
        // XML responses through Foundation's XMLParser (FoundationXML and libxml2 on Linux); its own
        // product, so that a program on Courier alone loads neither and can link statically.
        .library(name: "CourierXML", targets: ["CourierXML"]),
        // A ClientTransport for swift-openapi-generator's clients; its own product, so that users of
        // Courier alone never compile OpenAPIRuntime.
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        .executable(name: "courier", targets: ["CourierCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // Tracing is already in the graph through AsyncHTTPClient; Metrics is Courier's own (issue 17).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        // CourierOpenAPI's protocol; the AsyncHTTPClient transport for it is the tests' peer only.
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        // Documentation only: `swift package generate-documentation --target CourierCore` builds the DocC catalog.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The session, requests, responses and the `Transport` protocol: everything but a transport
        // on a particular HTTP client. It does not link AsyncHTTPClient (issue 43).
        .target(
            name: "CourierCore",
            dependencies: [
                "CourierDigest",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                // The trust policy's certificates and the TLS failures a transport reports.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                "CCourierZlib",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The default transport, on AsyncHTTPClient; it sees only CourierCore's public API.
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: [
                "CourierCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // What users import: CourierCore and CourierAsyncHTTPClient, and the managers' initialisers
        // whose default transport is `AsyncHTTPClientTransport.shared`.
        .target(name: "Courier", dependencies: ["CourierCore", "CourierAsyncHTTPClient"]),
        // zlib, which decodes gzip and deflate response bodies (ContentDecoder). AsyncHTTPClient
        // already links it, through swift-nio-extras.
        .systemLibrary(
            name: "CCourierZlib",
            providers: [.apt(["zlib1g-dev"]), .yum(["zlib-devel"])]
        ),
        // SHA-256 for the test server, the demo and the tests: one C file instead of swift-crypto,
        // whose second copy of BoringSSL was compiled in every cold build, sanitizer builds too
        // (fresh-clone CI, 2026-11-26: ASan build 684 s with it, 572 s without).
        .target(name: "CCourierSHA256"),
        .target(name: "CourierDigest", dependencies: ["CCourierSHA256"]),
        // ScriptedTransport, for users' tests and Courier's own: Courier, and the two modules its
        // public API is written in (ByteBuffer, HTTPFields).
        .target(
            name: "CourierTesting",
            dependencies: [
                // CourierCore and CourierAsyncHTTPClient beside the umbrella that re-exports them, so
                // that DocC's combined site resolves this module's links to their symbols.
                "Courier", "CourierCore", "CourierAsyncHTTPClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "CourierTestServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "CourierDigest",
            ]
        ),
        .executableTarget(
            name: "CourierCLI",
            dependencies: [
                "Courier",
                "CourierURLSession",
                "CourierTestServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "CourierDigest",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Test support shared by the test targets: child processes without Foundation's `Process`.
        .target(name: "CourierTestSupport", path: "Tests/Support"),
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "Courier",
                "CourierCore",
                "CourierAsyncHTTPClient",
                "CourierTesting",
                "CourierTestServer",
                "CourierTestSupport",
                .product(name: "MultipartKit", package: "multipart-kit"),
                "CourierDigest",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                // See CourierTesting: named for DocC's links; `Courier` re-exports both.
                "Courier", "CourierCore", "CourierAsyncHTTPClient",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The example's client, generated once from Examples/OpenAPI/openapi.yaml and committed
        // (the generator plugin would add minutes to every cold build); built here so that the
        // tests run it without a second package and build folder.
        .target(
            name: "CourierOpenAPIExample",
            dependencies: [
                "Courier",
                "CourierOpenAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Examples/OpenAPI/Sources/CourierOpenAPIExample"
        ),
        .testTarget(
            name: "CourierOpenAPITests",
            dependencies: [
                "Courier",
                "CourierOpenAPI",
                "CourierOpenAPIExample",
                "CourierTestServer",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                "CourierDigest",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "CourierCLITests",
            dependencies: [
                "CourierCLI",
                "CourierTestServer",
                "CourierTestSupport",
                "CourierDigest",
            ]
        ),
        .target(
            name: "CourierURLSession",
            dependencies: [
                "Courier",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(name: "CourierXML", dependencies: ["Courier"]),
        .testTarget(
            name: "CourierXMLTests",
            dependencies: ["Courier", "CourierXML", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        .testTarget(
            name: "CourierURLSessionTests",
            dependencies: [
                "Courier",
                "CourierURLSession",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The README's Swift blocks, compiled as written: `.ci/readme-snippets.sh` writes each into
        // a file of its own here (git-ignored) and builds this target; the placeholders the blocks
        // leave to the reader (a file to upload, a tracer) are declared in Placeholders.swift.
        .testTarget(
            name: "CourierReadmeTests",
            dependencies: [
                "Courier",
                "CourierTesting",
                "CourierURLSession",
                "CourierOpenAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // One transport conformance suite, run against every transport (issue 19).
        .testTarget(
            name: "CourierConformanceTests",
            dependencies: [
                "Courier",
                "CourierURLSession",
                "CourierTesting",
                "CourierTestServer",
                "CourierTestSupport",
                "CourierDigest",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// AddressSanitizer on Courier's own targets only, for `.ci/sanitizers.sh`. Unlike ThreadSanitizer,
// which must see every atomic and lock to judge an access, AddressSanitizer checks each access
// in the code it instruments against the poisoned memory its runtime keeps for every allocation,
// so uninstrumented dependencies only go unchecked themselves. Instrumenting our targets alone lets
// the run reuse the dependencies of the ordinary `.build` folder instead of compiling them all a
// third time (117 s instead of 262 s on one 2-core machine; RELIABILITY.md). Set
// COURIER_ASAN_OWN_TARGETS=1 for both `swift build --build-tests` and `swift test`; the next
// build without it recompiles Courier's targets, not the dependencies. lld links: gold warns
// about every outlined ASan check it cannot export.
if Context.environment["COURIER_ASAN_OWN_TARGETS"] == "1" {
    for target in package.targets where target.type != .system {
        if target.name.hasPrefix("CCourier") {
            target.cSettings = (target.cSettings ?? []) + [.unsafeFlags(["-fsanitize=address"])]
        } else {
            target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=address"])]
        }
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=address", "-use-ld=lld"])]
    }
}
