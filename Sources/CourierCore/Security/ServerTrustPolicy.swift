import Foundation
import NIOSSL

/// How a client decides whether to trust a TLS server (AFNetworking's AFSecurityPolicy).
///
/// The default verifies the server's chain against the system's trust roots and its name
/// against the URL's host (RFC 6125), as every TLS client should. Pinning narrows trust to
/// certificates the app ships with, so a certificate from another (even publicly trusted)
/// authority is refused.
///
/// How it is enforced: AsyncHTTPClient 1.37 takes only a `TLSConfiguration`, and
/// swift-nio-ssl 2.37's `TLSConfiguration` carries no custom verification callback, so
/// ``makeTLSConfiguration(base:)`` expresses the policy as BoringSSL settings: pinned
/// certificates become the *only* trust anchors. A chain is then accepted only when it is
/// signed by, and names as issuer, a pinned certificate. Consequences, by mode:
/// - ``PinningMode/certificate``: pin self-signed server certificates or the root of the
///   chain. A leaf issued by a CA cannot be pinned alone (BoringSSL in swift-nio-ssl does not
///   accept partial chains); pin its root instead.
/// - ``PinningMode/publicKey``: for an issuer, what is checked is the pinned certificate's
///   key and subject name, so a CA certificate re-issued with the same key (new serial, new
///   dates) keeps trusting every leaf that key signs. A *self-signed* server certificate is
///   matched against the anchors exactly, so re-issuing it, even with the same key, needs a new pin.
///
/// Exact AFNetworking semantics (any certificate of the chain equal to a pin; any key of the
/// chain equal to a pinned key) need a verification callback, which AsyncHTTPClient 1.37
/// does not expose.
public struct ServerTrustPolicy: Sendable, Hashable {
    /// What to pin, as AFSSLPinningMode.
    public enum PinningMode: Sendable, Hashable {
        /// No pinning: trust what the system's roots (plus ``ServerTrustPolicy/additionalTrustRoots``) trust.
        case none
        /// Trust only chains that end at one of the pinned certificates.
        case certificate
        /// Trust only chains signed by the public key of one of the pinned certificates.
        case publicKey
    }

    /// What to pin.
    public var pinningMode: PinningMode
    /// The certificates whose identity (``PinningMode/certificate``) or key
    /// (``PinningMode/publicKey``) is trusted; ignored by ``PinningMode/none``.
    public var pinnedCertificates: [NIOSSLCertificate]
    /// Whether the server's certificate must name the host being connected to. Default true.
    public var validatesDomainName: Bool
    /// Whether to accept any certificate at all (expired, self-signed, untrusted) when not
    /// pinning. Default false. Only for development servers: it turns TLS into encryption
    /// without authentication. As in AFNetworking it cannot be combined with
    /// ``validatesDomainName`` unless pinning, because an untrusted certificate's name proves nothing.
    public var allowInvalidCertificates: Bool
    /// Extra trust roots added to the system's for ``PinningMode/none`` (a company CA).
    public var additionalTrustRoots: [NIOSSLCertificate]

    /// Makes a policy.
    public init(
        pinningMode: PinningMode = .none,
        pinnedCertificates: [NIOSSLCertificate] = [],
        validatesDomainName: Bool = true,
        allowInvalidCertificates: Bool = false,
        additionalTrustRoots: [NIOSSLCertificate] = []
    ) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
        self.validatesDomainName = validatesDomainName
        self.allowInvalidCertificates = allowInvalidCertificates
        self.additionalTrustRoots = additionalTrustRoots
    }

    /// The system's roots, full chain and host-name verification: what Courier uses unless told otherwise.
    public static let `default` = ServerTrustPolicy()

    /// A policy that pins `certificates` (AFSecurityPolicy's `policyWithPinningMode:withPinnedCertificates:`).
    public static func pinning(
        _ mode: PinningMode, to certificates: [NIOSSLCertificate], validatesDomainName: Bool = true
    ) -> ServerTrustPolicy {
        ServerTrustPolicy(pinningMode: mode, pinnedCertificates: certificates, validatesDomainName: validatesDomainName)
    }
}
