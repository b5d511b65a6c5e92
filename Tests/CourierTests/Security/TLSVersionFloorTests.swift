import Courier
import CourierTestServer
import Foundation
import NIOSSL
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// TLS 1.0 and 1.1 are refused unless asked for (RFC 8996), as curl and httpie refuse them;
/// swift-nio-ssl's client default would accept 1.0.
@Suite("TLS: 1.2 at least, by default")
struct TLSVersionFloorTests {
    /// A server that offers nothing newer than `maximum`.
    static func withOldServer(maximum: TLSVersion, _ body: (TestServer, NIOSSLCertificate) async throws -> Void)
        async throws
    {
        let identity = try TestCertificates.shared.get().selfSigned
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(identity.certificate)], privateKey: .privateKey(identity.key))
        configuration.minimumTLSVersion = .tlsv1
        configuration.maximumTLSVersion = maximum
        let server = try await TestServer.start(tls: try NIOSSLContext(configuration: configuration))
        do {
            try await body(server, identity.certificate)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    static func manager(trusting certificate: NIOSSLCertificate, minimum: TLSVersion? = nil) -> SessionManager {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([certificate])
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.tlsConfiguration = tls
        if let minimum { configuration.minimumTLSVersion = minimum }
        return SessionManager(transport: AsyncHTTPClientTransport(configuration: configuration))
    }

    @Test(arguments: [TLSVersion.tlsv1, .tlsv11])
    func anOldServerIsRefusedWithAMessageThatSaysHowToAllowIt(maximum: TLSVersion) async throws {
        try await Self.withOldServer(maximum: maximum) { server, certificate in
            let manager = Self.manager(trusting: certificate)
            let error = try await #require(throws: CourierError.self) {
                _ = try await manager.data(for: Request(url: server.url("/get")))
            }
            try? await manager.shutdown()
            #expect(error.code == .tlsHandshakeFailed)
            #expect(error.message.contains("minimumTLSVersion"), "\(error.message)")
        }
    }

    @Test func anOldServerIsReachedWhenTheFloorIsLowered() async throws {
        try await Self.withOldServer(maximum: .tlsv11) { server, certificate in
            let manager = Self.manager(trusting: certificate, minimum: .tlsv1)
            let response = try await manager.data(for: Request(url: server.url("/get")))
            try? await manager.shutdown()
            #expect(response.response.status.code == 200)
        }
    }

    /// A configuration that asks for an older floor itself is raised to the transport's floor.
    @Test func theFloorRaisesACallersOwnConfiguration() {
        var configuration = AsyncHTTPClientTransport.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv1
        tls.maximumTLSVersion = .tlsv11
        configuration.tlsConfiguration = tls
        #expect(configuration.flooredTLSConfiguration.minimumTLSVersion == .tlsv12)
        #expect(configuration.flooredTLSConfiguration.maximumTLSVersion == .tlsv12)
        configuration.minimumTLSVersion = .tlsv1
        #expect(configuration.flooredTLSConfiguration.minimumTLSVersion == .tlsv1)
        #expect(AsyncHTTPClientTransport.Configuration().flooredTLSConfiguration.minimumTLSVersion == .tlsv12)
    }
}
