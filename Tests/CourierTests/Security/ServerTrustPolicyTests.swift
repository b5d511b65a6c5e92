import Courier
import Foundation
import NIOSSL
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

@Suite struct ServerTrustPolicyConfigurationTests {
    @Test func defaultVerifiesChainAndHostAgainstSystemRoots() throws {
        let configuration = try ServerTrustPolicy.default.makeTLSConfiguration()
        #expect(configuration.certificateVerification == .fullVerification)
        #expect(configuration.trustRoots == .default)
    }

    @Test func pinnedCertificatesAreTheOnlyAnchors() throws {
        let certificates = try TestCertificates.shared.get()
        for mode in [ServerTrustPolicy.PinningMode.certificate, .publicKey] {
            var policy = ServerTrustPolicy.pinning(mode, to: [certificates.selfSigned.certificate])
            policy.additionalTrustRoots = [certificates.authority.certificate]
            var base = TLSConfiguration.makeClientConfiguration()
            base.applicationProtocols = ["http/1.1"]
            base.additionalTrustRoots = [.certificates([certificates.otherKey.certificate])]
            let configuration = try policy.makeTLSConfiguration(base: base)
            #expect(configuration.trustRoots == .certificates([certificates.selfSigned.certificate]))
            #expect(configuration.additionalTrustRoots.isEmpty)
            #expect(configuration.certificateVerification == .fullVerification)
            #expect(configuration.applicationProtocols == ["http/1.1"])
            policy.validatesDomainName = false
            #expect(try policy.makeTLSConfiguration().certificateVerification == .noHostnameVerification)
        }
    }

    @Test func unenforceablePoliciesAreRefused() throws {
        let pinningNothing = ServerTrustPolicy(pinningMode: .certificate)
        #expect(throws: CourierError.self) { try pinningNothing.makeTLSConfiguration() }
        let invalidButNamed = ServerTrustPolicy(allowInvalidCertificates: true)
        do {
            _ = try invalidButNamed.makeTLSConfiguration()
            Issue.record("expected invalidTrustPolicy")
        } catch let error as CourierError {
            #expect(error.code == .invalidTrustPolicy)
        }
        let invalidUnnamed = ServerTrustPolicy(validatesDomainName: false, allowInvalidCertificates: true)
        #expect(try invalidUnnamed.makeTLSConfiguration().certificateVerification == CertificateVerification.none)
    }

    @Test func certificateLoading() throws {
        let certificates = try TestCertificates.shared.get()
        let der = Data(try certificates.selfSigned.certificate.toDERBytes())
        #expect(try ServerTrustPolicy.certificates(from: der) == [certificates.selfSigned.certificate])
        do {
            _ = try ServerTrustPolicy.certificates(from: Data("not a certificate".utf8))
            Issue.record("expected invalidCertificate")
        } catch let error as CourierError {
            #expect(error.code == .invalidCertificate)
        }
        let missing = URL(fileURLWithPath: "/nonexistent/courier.pem")
        do {
            _ = try ServerTrustPolicy.certificates(contentsOf: missing)
            Issue.record("expected invalidCertificate")
        } catch let error as CourierError {
            #expect(error.code == .invalidCertificate)
            #expect(error.offendingInput == "/nonexistent/courier.pem")
        }
    }
}

/// Handshakes against a real loopback TLS server with certificates made for the test.
@Suite(.timeLimit(.minutes(3))) struct ServerTrustHandshakeTests {
    func withServer(
        _ identity: KeyPath<TestCertificates, TestCertificates.Identity>,
        _ body: (TLSTestServer, TestCertificates) async throws -> Void
    ) async throws {
        let certificates = try TestCertificates.shared.get()
        let served = certificates[keyPath: identity]
        let server = try await TLSTestServer.start(chain: [served.certificate], key: served.key)
        do {
            try await body(server, certificates)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    func expectRefused(_ result: Result<String, CourierError>, sourceLocation: SourceLocation = #_sourceLocation) {
        switch result {
        case .success(let body): Issue.record("expected a refusal, got \(body)", sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(error.code == .serverTrustFailed, "\(error)", sourceLocation: sourceLocation)
            #expect(error.offendingInput == "127.0.0.1", sourceLocation: sourceLocation)
            #expect(error.underlyingError != nil, sourceLocation: sourceLocation)
        }
    }

    func expectAccepted(_ result: Result<String, CourierError>, sourceLocation: SourceLocation = #_sourceLocation) {
        switch result {
        case .success(let body): #expect(body == "ok", sourceLocation: sourceLocation)
        case .failure(let error):
            Issue.record("expected the handshake to succeed: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func defaultTrustRejectsSelfSigned() async throws {
        try await withServer(\.selfSigned) { server, _ in
            expectRefused(try await TLSProbe.get(server, policy: .default))
        }
    }

    @Test func certificatePinningAcceptsThePinnedCertificate() async throws {
        try await withServer(\.selfSigned) { server, certificates in
            let policy = ServerTrustPolicy.pinning(
                .certificate, to: [certificates.otherKey.certificate, certificates.selfSigned.certificate])
            expectAccepted(try await TLSProbe.get(server, policy: policy))
        }
    }

    @Test func certificatePinningRejectsAnotherCertificate() async throws {
        try await withServer(\.selfSigned) { server, certificates in
            expectRefused(
                try await TLSProbe.get(server, policy: .pinning(.certificate, to: [certificates.otherKey.certificate])))
            expectRefused(
                try await TLSProbe.get(server, policy: .pinning(.certificate, to: [certificates.authority.certificate]))
            )
        }
    }

    @Test func publicKeyPinningTrustsWhatAPinnedKeySigned() async throws {
        try await withServer(\.issuedLeaf) { server, certificates in
            // The pin is the CA re-issued with the same key; the server's leaf was signed by the original.
            expectAccepted(
                try await TLSProbe.get(
                    server, policy: .pinning(.publicKey, to: [certificates.reissuedAuthority.certificate])))
            expectRefused(
                try await TLSProbe.get(server, policy: .pinning(.publicKey, to: [certificates.otherKey.certificate])))
        }
    }

    @Test func publicKeyPinningOfASelfSignedServer() async throws {
        try await withServer(\.selfSigned) { server, certificates in
            expectAccepted(
                try await TLSProbe.get(server, policy: .pinning(.publicKey, to: [certificates.selfSigned.certificate])))
            expectRefused(
                try await TLSProbe.get(server, policy: .pinning(.publicKey, to: [certificates.otherKey.certificate])))
        }
        // Documented limitation: BoringSSL matches a self-signed server certificate against the
        // anchors exactly, so a self-signed certificate re-issued with the pinned key is refused.
        try await withServer(\.reissued) { server, certificates in
            expectRefused(
                try await TLSProbe.get(server, policy: .pinning(.publicKey, to: [certificates.selfSigned.certificate])))
        }
    }

    @Test func pinningTheIssuingAuthorityAcceptsItsLeaf() async throws {
        try await withServer(\.issuedLeaf) { server, certificates in
            for mode in [ServerTrustPolicy.PinningMode.certificate, .publicKey] {
                expectAccepted(
                    try await TLSProbe.get(server, policy: .pinning(mode, to: [certificates.authority.certificate])))
            }
            // Documented limitation: a CA-issued leaf cannot be pinned alone (no partial chains).
            expectRefused(
                try await TLSProbe.get(
                    server, policy: .pinning(.certificate, to: [certificates.issuedLeaf.certificate])))
            expectRefused(try await TLSProbe.get(server, policy: .default))
            let trustingTheCA = ServerTrustPolicy(additionalTrustRoots: [certificates.authority.certificate])
            expectAccepted(try await TLSProbe.get(server, policy: trustingTheCA))
        }
    }

    @Test func wrongHostNameDependsOnValidatesDomainName() async throws {
        try await withServer(\.wrongHost) { server, certificates in
            let pinned = ServerTrustPolicy.pinning(.certificate, to: [certificates.wrongHost.certificate])
            expectRefused(try await TLSProbe.get(server, policy: pinned))
            let pinnedNoName = ServerTrustPolicy.pinning(
                .certificate, to: [certificates.wrongHost.certificate], validatesDomainName: false)
            expectAccepted(try await TLSProbe.get(server, policy: pinnedNoName))
        }
    }

    @Test func allowInvalidCertificatesWithoutNameCheckAcceptsAnything() async throws {
        try await withServer(\.wrongHost) { server, _ in
            let anything = ServerTrustPolicy(validatesDomainName: false, allowInvalidCertificates: true)
            expectAccepted(try await TLSProbe.get(server, policy: anything))
        }
    }

    @Test func aServerThatDoesNotSpeakTLSIsAHandshakeFailure() async throws {
        let server = try await TLSTestServer.start(chain: nil, key: nil)
        let result = try await TLSProbe.get(server, policy: .default)
        await server.stop()
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .tlsHandshakeFailed, "\(error)")
        #expect(error.offendingInput == "127.0.0.1")
    }
}
