import Foundation
import NIOHTTPCompression

/// Content codings: what the transport asks for, and the typed error for a decompression bomb
/// (see ``AsyncHTTPClientTransport/Configuration/decompressesResponses``).
extension AsyncHTTPClientTransport {
    /// The `Accept-Encoding` added to requests that set none: the codings AsyncHTTPClient decodes
    /// (RFC 9110 §12.5.3), or nil when decoding is off, so that no server is invited to send
    /// bytes the caller would then receive encoded.
    var acceptEncoding: String? {
        configuration.decompressesResponses ? "gzip, deflate" : nil
    }

    /// swift-nio-extras' `NIOHTTPDecompression.DecompressionError.limit`, which AsyncHTTPClient's
    /// decoder throws past the ratio limit, as a Courier error; nil for any other error.
    static func decompressionLimitError(_ error: any Error, url: URL) -> CourierError? {
        guard let error = error as? NIOHTTPDecompression.DecompressionError, error == .limit else { return nil }
        let target = url.absoluteString
        return CourierError(
            .decompressionLimitExceeded,
            "the response from \(target) decodes to more than the decompression ratio limit allows (Configuration.decompressionRatioLimit): refusing what looks like a decompression bomb",
            offendingInput: target, underlyingError: error)
    }
}
