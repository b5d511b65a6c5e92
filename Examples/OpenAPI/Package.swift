// swift-tools-version:6.1
// The CourierOpenAPI example as a package of its own: `swift run courier-openapi-example` calls
// every operation of openapi.yaml through the committed generated client over Courier's
// transport, against a test server it starts in-process (or the URL given as an argument).
import PackageDescription

let package = Package(
    name: "CourierOpenAPIExample",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // One module: the generated client is internal (swift-openapi-generator's public imports
        // warn with Swift 6.3), so the tour and the command line live beside it.
        .executableTarget(
            name: "courier-openapi-example",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierOpenAPI", package: "Courier"),
                .product(name: "CourierTestServer", package: "Courier"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources",
            sources: ["CourierOpenAPIExample", "courier-openapi-example"]
        )
    ],
    swiftLanguageModes: [.v6]
)
