import AsyncHTTPClient
import Courier
import CourierTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

@testable import CourierCore

/// Certificates made for the TLS tests by running `openssl` into a temporary directory.
struct TestCertificates: Sendable {
    struct Identity: Sendable {
        var certificate: NIOSSLCertificate
        var key: NIOSSLPrivateKey
    }

    /// Self-signed, CN=courier-test, valid for 127.0.0.1 and localhost.
    var selfSigned: Identity
    /// The same key and subject as ``selfSigned``, re-issued with another serial and validity.
    var reissued: Identity
    /// Another key, same subject and names as ``selfSigned``.
    var otherKey: Identity
    /// Self-signed for the name wrong.example only.
    var wrongHost: Identity
    /// A CA certificate, and a leaf for 127.0.0.1 that it signed.
    var authority: Identity
    var issuedLeaf: Identity
    /// The CA re-issued with the same key and subject (another serial and validity).
    var reissuedAuthority: Identity

    /// Made once per test process; every test reads the same files.
    static let shared: Result<TestCertificates, any Error> = Result { try TestCertificates.generate() }

    static func generate() throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let localNames = ["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", "a.key", "-out", "a.pem", "-days", "2", "-subj", "/CN=courier-test", "-set_serial", "1",
            ] + localNames, in: directory)
        try openssl(
            [
                "req", "-x509", "-key", "a.key", "-out", "a2.pem", "-days", "3", "-subj", "/CN=courier-test",
                "-set_serial", "2",
            ] + localNames, in: directory)
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", "b.key", "-out", "b.pem", "-days", "2", "-subj", "/CN=courier-test", "-set_serial", "3",
            ] + localNames, in: directory)
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", "w.key", "-out", "w.pem", "-days", "2", "-subj", "/CN=wrong.example", "-set_serial", "4",
                "-addext", "subjectAltName=DNS:wrong.example",
            ], in: directory)
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Courier Test CA", "-set_serial", "5",
            ], in: directory)
        try openssl(
            [
                "req", "-x509", "-key", "ca.key", "-out", "ca2.pem", "-days", "3", "-subj", "/CN=Courier Test CA",
                "-set_serial", "7",
            ], in: directory)
        try openssl(
            ["req", "-new"] + curve + ["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=courier-leaf"],
            in: directory)
        try Data("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".utf8).write(
            to: directory.appendingPathComponent("leaf.ext"))
        try openssl(
            [
                "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "6", "-days",
                "2", "-extfile", "leaf.ext", "-out", "leaf.pem",
            ], in: directory)

        func identity(_ name: String, key: String? = nil) throws -> Identity {
            let certificates = try ServerTrustPolicy.certificates(
                contentsOf: directory.appendingPathComponent("\(name).pem"))
            let keyPath = directory.appendingPathComponent("\(key ?? name).key").path
            return Identity(certificate: certificates[0], key: try NIOSSLPrivateKey(file: keyPath, format: .pem))
        }
        return TestCertificates(
            selfSigned: try identity("a"), reissued: try identity("a2", key: "a"), otherKey: try identity("b"),
            wrongHost: try identity("w"), authority: try identity("ca"), issuedLeaf: try identity("leaf"),
            reissuedAuthority: try identity("ca2", key: "ca"))
    }

    private static func openssl(_ arguments: [String], in directory: URL) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CourierError(
                .init("openssl"),
                "openssl \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}

/// A loopback HTTPS (or plain TCP) server that answers every request with 200 "ok".
final class TLSTestServer: Sendable {
    let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }

    private init(channel: any Channel) { self.channel = channel }

    /// Serves over TLS with `chain` and `key`; with `chain` nil, serves plain HTTP (for "not TLS" failures).
    static func start(chain: [NIOSSLCertificate]?, key: NIOSSLPrivateKey?) async throws -> TLSTestServer {
        let context: NIOSSLContext? = try chain.map { chain in
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key!))
            configuration.minimumTLSVersion = .tlsv12
            return try NIOSSLContext(configuration: configuration)
        }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let context { try pipeline.addHandler(NIOSSLServerHandler(context: context)) }
                    try pipeline.configureHTTPServerPipeline()
                    try pipeline.addHandler(OKResponder())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TLSTestServer(channel: channel)
    }

    func stop() async {
        try? await channel.close()
    }
}

private final class OKResponder: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let head = HTTPResponseHead(
            version: .http1_1, status: .ok, headers: ["Content-Length": "2", "Content-Type": "text/plain"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok")))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

enum TLSProbe {
    /// Sends GET / to `server` through AsyncHTTPClient configured with `policy`; returns the
    /// body, or the ``CourierError`` the failure maps to.
    static func get(_ server: TLSTestServer, policy: ServerTrustPolicy, host: String = "127.0.0.1") async throws
        -> Result<String, CourierError>
    {
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = try policy.makeTLSConfiguration()
        configuration.connectionPool.retryConnectionEstablishment = false
        // Patient: on a loaded 2-core machine the parallel suite has starved TLS handshakes past 10 s.
        configuration.timeout.connect = .seconds(60)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        let url = URL(string: "https://\(host):\(server.port)/")!
        let result: Result<String, CourierError>
        do {
            let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(90))
            let body = try await response.body.collect(upTo: 1024)
            result = .success(String(buffer: body))
        } catch {
            result = .failure(
                CourierError.tlsFailure(error, url: url)
                    ?? CourierError(.init("notTLS"), "unmapped: \(error)", underlyingError: error))
        }
        try await client.shutdown()
        return result
    }
}
