import Foundation
import NIOSSL

extension CourierError {
    /// The ``CourierError`` for a TLS failure during a request to `url`, or nil when `error`
    /// did not come from TLS (so the transport maps it some other way).
    ///
    /// A refused certificate (untrusted chain, not pinned, expired, wrong host name) is
    /// `serverTrustFailed`; any other handshake failure is `tlsHandshakeFailed`. The
    /// swift-nio-ssl error is kept as `underlyingError`.
    public static func tlsFailure(_ error: any Error, url: URL) -> CourierError? {
        let host = url.host ?? url.absoluteString
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return CourierError(
                .serverTrustFailed, "The certificate of \(host) is not valid for the name \"\(host)\"",
                offendingInput: host, underlyingError: error)
        }
        guard let sslError = error as? NIOSSLError else { return nil }
        switch sslError {
        case .handshakeFailed(let boringError):
            if "\(boringError)".contains("CERTIFICATE_VERIFY_FAILED") {
                return CourierError(
                    .serverTrustFailed,
                    "The server \(host) presented a certificate that the trust policy refuses (untrusted, not pinned, expired or for another name)",
                    offendingInput: host, underlyingError: error)
            }
            let text = "\(boringError)"
            if text.contains("UNSUPPORTED_PROTOCOL") || text.contains("PROTOCOL_VERSION") {
                // Seen against servers that offer only TLS 1.0 or 1.1 (RFC 8996 deprecates both).
                return CourierError(
                    .tlsHandshakeFailed,
                    "The TLS handshake with \(host) failed: the server offers no TLS version Courier accepts (TLS 1.2 or later unless AsyncHTTPClientTransport.Configuration.minimumTLSVersion, or the CLI's --ssl, allows older)",
                    offendingInput: host, underlyingError: error)
            }
            return CourierError(
                .tlsHandshakeFailed, "The TLS handshake with \(host) failed", offendingInput: host,
                underlyingError: error)
        case .noCertificateToValidate, .unableToValidateCertificate:
            return CourierError(
                .serverTrustFailed, "The certificate of \(host) could not be validated: \(sslError)",
                offendingInput: host,
                underlyingError: error)
        case .uncleanShutdown:
            return CourierError(
                .tlsHandshakeFailed, "The TLS connection to \(host) failed: \(sslError)", offendingInput: host,
                underlyingError: error)
        default:
            return CourierError(
                .tlsHandshakeFailed, "TLS with \(host) failed: \(sslError)", offendingInput: host,
                underlyingError: error)
        }
    }
}
