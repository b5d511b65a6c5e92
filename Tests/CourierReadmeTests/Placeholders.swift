import Courier
import Foundation
import Logging
import Metrics
import OpenAPIRuntime
import Tracing

// The names the README's Swift blocks leave to the reader, declared once so that each block
// compiles as written (see .ci/readme-snippets.sh). Nothing here runs: the blocks are compiled,
// not executed.

/// A file to upload, and where downloads and written bodies go.
let photo = URL(fileURLWithPath: "/tmp/photo.jpg")
let destination = URL(fileURLWithPath: "/tmp/download.bin")
let bodyFile = URL(fileURLWithPath: "/tmp/body.bin")
let cookiesTxt = URL(fileURLWithPath: "/tmp/cookies.txt")
let cachesDirectory = URL(fileURLWithPath: "/tmp/courier-cache")
let pinnedCertificateFile = URL(fileURLWithPath: "/tmp/pinned.pem")

/// A request serializer as the reader configured it.
let serializer = HTTPRequestSerializer()

/// The reader's own service, and a URL of it.
let api = URL(string: "https://api.example.com/v1/")
let feed = URL(fileURLWithPath: "/feed.xml", relativeTo: api)
let url = URL(fileURLWithPath: "/get", relativeTo: api)
let manager = HTTPSessionManager(baseURL: api)

/// Renews whatever credential the README's authenticator keeps.
struct TokenService: Sendable {
    func renew<Credential: Sendable>(_ credential: Credential) async throws -> Credential { credential }
}
let myTokenService = TokenService()

/// The reader's tracer, metrics factory and logger.
let myTracer: any Tracer = NoOpTracer()
let myFactory: any MetricsFactory = NOOPMetricsHandler.instance
let myLogger = Logger(label: "app")

/// Stands for the client swift-openapi-generator writes (Examples/OpenAPI has a real one, internal
/// to its module), with the initializer the generator gives every client.
struct Client {
    init(serverURL: URL, transport: any ClientTransport) {}
}
