import CourierTestServer
import CourierTestSupport
import Foundation
import NIOSSL

/// A self-signed certificate for 127.0.0.1, made once per test process with `openssl`: no
/// transport trusts it, so a server using it is a TLS trust failure for every client.
enum SelfSignedCertificate {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let context: Result<NIOSSLContext, any Error> = Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-conformance-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=courier-conformance", "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ]
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl req failed with status \(process.terminationStatus)")
        }
        let certificates = try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("cert.pem").path)
        let key = try NIOSSLPrivateKey(file: directory.appendingPathComponent("key.pem").path, format: .pem)
        return try TestServer.makeTLSContext(certificateChain: certificates, privateKey: key)
    }
}
