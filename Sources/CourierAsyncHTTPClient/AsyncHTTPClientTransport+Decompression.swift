import CourierCore
import Foundation

/// Content codings: how the transport decodes what comes back (`send` asks for what it decodes),
/// and the typed errors for a body that does not decode (see ``AsyncHTTPClientTransport/Configuration/decompressesResponses``).
///
/// Courier decodes rather than AsyncHTTPClient: its decoder is a handler in every connection's
/// pipeline that every response passes through, coded or not, at about 5% of the instructions
/// of a small GET; here a response without a coding costs one look at its header fields.
extension AsyncHTTPClientTransport {
    /// The response as the caller sees it: its body decoded as it is read when decoding is on and
    /// `head` names gzip or deflate, else as it arrived.
    func response(head: ResponseHead, body: BodyChunks, raiseReadAhead: (@Sendable (Int) -> Void)?) -> TransportResponse
    {
        guard configuration.decompressesResponses else {
            return TransportResponse(head: head, body: body, raiseReadAhead: raiseReadAhead)
        }
        return TransportResponse(
            head: head, decoding: body, ratioLimit: configuration.decompressionRatioLimit,
            ratioFreeSize: configuration.decompressionRatioFreeSize, raiseReadAhead: raiseReadAhead)
    }
}
