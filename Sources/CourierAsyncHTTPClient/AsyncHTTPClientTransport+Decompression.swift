import CourierCore
import Foundation

/// Content codings: what the transport asks for, how it decodes what comes back, and the typed
/// errors for a body that does not decode (see ``AsyncHTTPClientTransport/Configuration/decompressesResponses``).
///
/// Courier decodes rather than AsyncHTTPClient: its decoder is a handler in every connection's
/// pipeline that every response passes through, coded or not, at about 5% of the instructions
/// of a small GET; here a response without a coding costs one look at its header fields.
extension AsyncHTTPClientTransport {
    /// The `Accept-Encoding` added to requests that set none: the codings the transport decodes
    /// (RFC 9110 §12.5.3), or nil when decoding is off, so that no server is invited to send
    /// bytes the caller would then receive encoded.
    var acceptEncoding: String? {
        configuration.decompressesResponses ? "gzip, deflate" : nil
    }

    /// The response as the caller sees it: its body decoded as it is read when decoding is on and
    /// `head` names gzip or deflate, else as it arrived.
    func response(head: ResponseHead, body: BodyChunks, readAhead: ReadAheadControl = .fixed) -> TransportResponse {
        guard configuration.decompressesResponses else {
            return TransportResponse(head: head, body: body, readAhead: readAhead)
        }
        return TransportResponse(
            head: head, decoding: body, ratioLimit: configuration.decompressionRatioLimit,
            ratioFreeSize: configuration.decompressionRatioFreeSize, readAhead: readAhead)
    }
}
