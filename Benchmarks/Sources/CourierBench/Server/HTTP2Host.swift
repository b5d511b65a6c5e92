import CourierTestServer
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Courier's test server in its HTTP/2 mode (TLS, ALPN `h2` then `http/1.1`) on an ephemeral
/// loopback port, with a self-signed certificate made for the run, and a plain-HTTP listener
/// that answers any request with the server's counters, so that the driver can check which
/// protocol each side of the HTTP/2 rows really used.
struct HTTP2Host {
    private let server: TestServer
    private let statsChannel: any Channel

    /// Makes a certificate for 127.0.0.1 in `certificateDirectory` (`server.pem`, `server.key`),
    /// starts the server and the counters listener, and writes their ports to `portFile` and
    /// `statsPortFile`; with no port file, nothing is started.
    static func start(portFile: String, statsPortFile: String, certificateDirectory: String) async throws -> HTTP2Host?
    {
        guard !portFile.isEmpty else { return nil }
        guard !statsPortFile.isEmpty, !certificateDirectory.isEmpty else {
            throw BenchError("--h2-port-file needs --h2-stats-port-file and --h2-cert-dir")
        }
        let directory = URL(fileURLWithPath: certificateDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificateFile = directory.appendingPathComponent("server.pem").path
        let keyFile = directory.appendingPathComponent("server.key").path
        try SelfSignedCertificate.make(certificate: certificateFile, key: keyFile)
        let certificates = try NIOSSLCertificate.fromPEMFile(certificateFile)
        let key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        let tls = try TestServer.makeTLSContext(certificateChain: certificates, privateKey: key)
        // Streams enough for the scale row's 10,000 held requests on one connection; the other
        // HTTP/2 rows keep 16 in flight, which any limit allows.
        let server = try await TestServer.start(
            host: "127.0.0.1", port: 0, tls: tls, http2: HTTP2Options(maxConcurrentStreams: 20_000))
        let statsChannel = try await StatsListener.start(group: MultiThreadedEventLoopGroup.singleton) { server.stats }
        try String(statsChannel.localAddress?.port ?? 0).write(toFile: statsPortFile, atomically: true, encoding: .utf8)
        try String(server.port).write(toFile: portFile, atomically: true, encoding: .utf8)
        return HTTP2Host(server: server, statsChannel: statsChannel)
    }

    func stop() async throws {
        try await statsChannel.close()
        try await server.shutdown()
    }
}

/// A self-signed P-256 certificate for 127.0.0.1 and localhost, made by the openssl CLI (as the
/// test suite's `TestCertificates` does); valid for two days, enough for any run.
enum SelfSignedCertificate {
    static func make(certificate: String, key: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=courier-bench",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("openssl req failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}
