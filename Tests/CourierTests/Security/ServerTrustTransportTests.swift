import Courier
import CourierTestServer
import Foundation
import NIOSSL
import Testing

@testable import CourierCore

/// The trust policy applied through the transport's own configuration, against the team's test server over TLS.
@Suite(.timeLimit(.minutes(3))) struct ServerTrustTransportTests {
    func serve(_ identity: TestCertificates.Identity) async throws -> TestServer {
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(identity.certificate)], privateKey: .privateKey(identity.key))
        return try await TestServer.start(tls: try NIOSSLContext(configuration: configuration))
    }

    @Test func pinnedCertificateThroughTheTransport() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await serve(certificates.selfSigned)
        var configuration = AsyncHTTPClientTransport.Configuration()
        try configuration.apply(.pinning(.certificate, to: [certificates.selfSigned.certificate]))
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let result: Result<Int, any Error>
        do {
            let response = try await transport.send(Request(url: server.url("/get")), context: ExchangeContext())
            for try await _ in response.body {}
            result = .success(response.head.statusCode)
        } catch {
            result = .failure(error)
        }
        try await transport.shutdown()
        try await server.shutdown()
        #expect(try result.get() == 200)
    }

    @Test func refusedCertificateThroughTheTransportIsATypedError() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await serve(certificates.selfSigned)
        var configuration = AsyncHTTPClientTransport.Configuration()
        try configuration.apply(.default)
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        // A bound, in case AsyncHTTPClient retries failed connection attempts until the deadline;
        // generous, since the parallel suite on two cores can delay a handshake by seconds.
        let request = Request(url: server.url("/get"), timeoutInterval: 60)
        var caught: (any Error)?
        do {
            _ = try await transport.send(request, context: ExchangeContext())
        } catch {
            caught = error
        }
        try await transport.shutdown()
        try await server.shutdown()
        // The transport maps TLS failures through CourierError.tlsFailure.
        let error = try #require(caught as? CourierError)
        #expect(error.code == .serverTrustFailed, "\(error)")
    }
}
