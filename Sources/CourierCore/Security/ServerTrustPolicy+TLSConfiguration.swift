import Foundation
import NIOSSL

extension ServerTrustPolicy {
    /// The client `TLSConfiguration` that enforces this policy, starting from `base` (whose
    /// protocol versions, ciphers, ALPN and client certificate are kept).
    ///
    /// This is the hook for the transport: put the result in
    /// `HTTPClient.Configuration.tlsConfiguration`, or use `AsyncHTTPClientTransport.Configuration.apply(_:)`.
    /// - Throws: ``CourierError`` `invalidTrustPolicy` when pinning without certificates, or when
    ///   ``allowInvalidCertificates`` and ``validatesDomainName`` are both set without pinning.
    public func makeTLSConfiguration(base: TLSConfiguration = .makeClientConfiguration()) throws -> TLSConfiguration {
        var configuration = base
        let verifiedChain: CertificateVerification = validatesDomainName ? .fullVerification : .noHostnameVerification
        switch pinningMode {
        case .none:
            if allowInvalidCertificates {
                guard !validatesDomainName else {
                    throw CourierError(
                        .invalidTrustPolicy,
                        "allowInvalidCertificates with validatesDomainName needs pinning: the name in an untrusted certificate proves nothing; pin the certificate or set validatesDomainName to false"
                    )
                }
                configuration.certificateVerification = .none
            } else {
                configuration.certificateVerification = verifiedChain
                if !additionalTrustRoots.isEmpty {
                    configuration.additionalTrustRoots.append(.certificates(additionalTrustRoots))
                }
            }
        case .certificate, .publicKey:
            guard !pinnedCertificates.isEmpty else {
                throw CourierError(
                    .invalidTrustPolicy,
                    "Pinning mode \(pinningMode) needs at least one pinned certificate, and none was given"
                )
            }
            // Pinned certificates replace every other anchor; allowInvalidCertificates does not
            // loosen this, as in AFNetworking, where the pinned evaluation always applies.
            configuration.certificateVerification = verifiedChain
            configuration.trustRoots = .certificates(pinnedCertificates)
            configuration.additionalTrustRoots = []
        }
        return configuration
    }
}

extension ServerTrustPolicy {
    /// Reads every certificate in a PEM file, or the one certificate in a DER file
    /// (AFSecurityPolicy's `certificatesInBundle:`, for files the app ships).
    /// - Throws: ``CourierError`` `invalidCertificate` quoting the path.
    public static func certificates(contentsOf fileURL: URL) throws -> [NIOSSLCertificate] {
        let bytes: Data
        do {
            bytes = try Data(contentsOf: fileURL)
        } catch {
            throw CourierError(
                .invalidCertificate, "Cannot read the certificate file \"\(fileURL.path)\"",
                offendingInput: fileURL.path, underlyingError: error)
        }
        do {
            return try certificates(from: bytes)
        } catch let error as CourierError {
            throw CourierError(
                error.code, "The file \"\(fileURL.path)\" holds no readable certificate",
                offendingInput: fileURL.path, underlyingError: error.underlyingError)
        }
    }

    /// Reads certificates from PEM text (one or more) or DER bytes (one).
    /// - Throws: ``CourierError`` `invalidCertificate`.
    public static func certificates(from bytes: Data) throws -> [NIOSSLCertificate] {
        let isPEM = bytes.range(of: Data("-----BEGIN".utf8)) != nil
        do {
            let certificates =
                isPEM
                ? try NIOSSLCertificate.fromPEMBytes(Array(bytes))
                : [try NIOSSLCertificate(bytes: Array(bytes), format: .der)]
            guard !certificates.isEmpty else {
                throw CourierError(.invalidCertificate, "No certificate found in \(bytes.count) bytes of PEM")
            }
            return certificates
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(
                .invalidCertificate, "Cannot parse \(bytes.count) bytes as a \(isPEM ? "PEM" : "DER") certificate",
                underlyingError: error)
        }
    }
}
