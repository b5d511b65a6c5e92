/// The codes of the security layer: trust policies, certificates and TLS handshakes.
extension CourierError.Code {
    /// A ``ServerTrustPolicy`` that cannot be enforced (pinning with no certificates, or
    /// accepting invalid certificates while validating the domain name without pinning).
    ///
    /// Thrown when the policy is turned into a TLS configuration, before any connection.
    public static let invalidTrustPolicy = CourierError.Code("invalidTrustPolicy")

    /// A certificate file or PEM/DER bytes could not be read.
    ///
    /// Thrown when a ``ServerTrustPolicy``'s pinned certificates are loaded.
    public static let invalidCertificate = CourierError.Code("invalidCertificate")

    /// The server's certificate was refused: untrusted chain, not pinned, wrong host name, expired.
    ///
    /// Thrown by the transport, through ``CourierError/tlsFailure(_:url:)``.
    public static let serverTrustFailed = CourierError.Code("serverTrustFailed")

    /// The TLS handshake failed for another reason (protocol or cipher mismatch, not TLS at all, closed).
    ///
    /// Thrown by the transport, through ``CourierError/tlsFailure(_:url:)``.
    public static let tlsHandshakeFailed = CourierError.Code("tlsHandshakeFailed")
}
