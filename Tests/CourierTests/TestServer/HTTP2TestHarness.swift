import AsyncHTTPClient
import CourierTestServer
import CourierTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// Helpers for the HTTP/2 tests of the test server: a TLS server offering `h2`, its certificate
/// as a PEM file for curl, curl itself, and an AsyncHTTPClient that trusts the certificate.
/// None of it goes through Courier.
enum HTTP2TestHarness {
    /// A running HTTP/2 server and what clients need to trust it.
    struct Context: Sendable {
        var server: TestServer
        var certificate: NIOSSLCertificate
        /// The server's self-signed certificate in PEM, for `curl --cacert`.
        var certificateFile: URL
        var directory: URL
    }

    /// Runs `body` against a fresh TLS server with HTTP/2 `options`, then shuts it down and
    /// removes the temporary files, whatever happens.
    static func withServer<T>(
        _ options: HTTP2Options = HTTP2Options(), _ body: (Context) async throws -> T
    ) async throws -> T {
        let identity = try TestCertificates.shared.get().selfSigned
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificateFile = directory.appendingPathComponent("server.pem")
        try pem(identity.certificate).write(to: certificateFile)
        let tls = try TestServer.makeTLSContext(
            certificateChain: [identity.certificate], privateKey: identity.key, http2Only: options.onlyHTTP2)
        let server = try await TestServer.start(tls: tls, http2: options)
        let context = Context(
            server: server, certificate: identity.certificate, certificateFile: certificateFile, directory: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let result = try await body(context)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    static func pem(_ certificate: NIOSSLCertificate) throws -> Data {
        let base64 = Data(try certificate.toDERBytes()).base64EncodedString(options: [
            .lineLength64Characters, .endLineWithLineFeed,
        ])
        return Data("-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n".utf8)
    }

    // MARK: - curl

    /// What one curl run produced.
    struct CurlResult: Sendable {
        var exitCode: Int32
        var stdout: String
        var stderr: String
    }

    /// Whether this machine's curl can speak HTTP/2 (its `-V` lists the HTTP2 feature).
    static let curlSpeaksHTTP2: Bool = {
        guard let result = try? runSynchronously(["-V"]) else { return false }
        return result.exitCode == 0 && result.stdout.contains("HTTP2")
    }()

    /// Runs curl with `arguments` (plus `--silent --show-error --max-time 60`, so nothing can
    /// hang) and returns its exit code and output.
    static func curl(_ arguments: [String]) async throws -> CurlResult {
        let full = ["--silent", "--show-error", "--max-time", "60"] + arguments
        return try await withCheckedThrowingContinuation { continuation in
            do {
                let (process, stdout, stderr) = try makeProcess(full)
                process.terminationHandler = { finished in
                    continuation.resume(returning: collect(finished, stdout: stdout, stderr: stderr))
                }
                try process.run()
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// curl's usual arguments for a request to `path` on `context`'s server over HTTP/2.
    static func curlHTTP2(_ context: Context, _ path: String, _ extra: [String] = []) async throws -> CurlResult {
        try await curl(
            ["--http2", "--cacert", context.certificateFile.path] + extra + [context.server.url(path).absoluteString])
    }

    private static func runSynchronously(_ arguments: [String]) throws -> CurlResult {
        let (process, stdout, stderr) = try makeProcess(arguments)
        try process.run()
        process.waitUntilExit()
        return collect(process, stdout: stdout, stderr: stderr)
    }

    /// Output goes to files, not pipes, so a chatty curl cannot block on a full pipe.
    private static func makeProcess(_ arguments: [String]) throws -> (ChildProcess, URL, URL) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("courier-curl-\(UUID().uuidString)")
        let stdout = base.appendingPathExtension("out")
        let stderr = base.appendingPathExtension("err")
        try Data().write(to: stdout)
        try Data().write(to: stderr)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        return (process, stdout, stderr)
    }

    private static func collect(_ process: ChildProcess, stdout: URL, stderr: URL) -> CurlResult {
        defer {
            try? FileManager.default.removeItem(at: stdout)
            try? FileManager.default.removeItem(at: stderr)
        }
        let out = (try? String(contentsOf: stdout, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: stderr, encoding: .utf8)) ?? ""
        return CurlResult(exitCode: process.terminationStatus, stdout: out, stderr: err)
    }

    // MARK: - AsyncHTTPClient

    /// A client that trusts the test certificate, negotiates HTTP/2 when offered and never
    /// follows redirects. Shut it down after use.
    static func makeClient(trusting certificate: NIOSSLCertificate, http1Only: Bool = false) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([certificate])
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        // Patient: on a loaded 2-core machine the parallel suite has starved TLS handshakes past 10 s.
        configuration.timeout = .init(connect: .seconds(60), read: .seconds(30))
        configuration.decompression = .disabled
        configuration.httpVersion = http1Only ? .http1Only : .automatic
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// The answer to one request made through AsyncHTTPClient.
    struct Reply: Sendable {
        var status: HTTPResponseStatus
        var version: HTTPVersion
        var headers: HTTPHeaders
        var body: ByteBuffer
        var text: String { String(decoding: body.readableBytesView, as: UTF8.self) }
        func json() throws -> TestServerJSON { try #require(TestServerJSON.parse(body.readableBytesView)) }
    }

    /// Sends one request with a body known in full (never a streamed upload: AsyncHTTPClient
    /// 1.37 crashes when an HTTP/2 server answers while a streamed body is still going).
    static func fetch(
        _ client: HTTPClient, _ context: Context, _ path: String, method: HTTPMethod = .GET, body: [UInt8]? = nil
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: context.server.url(path).absoluteString)
        request.method = method
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let collected = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Reply(status: response.status, version: response.version, headers: response.headers, body: collected)
    }
}
