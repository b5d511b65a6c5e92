import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// URLSession's errors as Courier's codes, the same codes ``Courier/AsyncHTTPClientTransport``
/// gives for the same failures.
///
/// FoundationNetworking reports many of libcurl's failures as `URLError.unknown` (-1) with only
/// libcurl's message to tell them apart: an untrusted certificate ("SSL certificate problem:
/// self-signed certificate"), a body cut short ("transfer closed with 1000 bytes remaining to
/// read"), a header line without a colon. Those are told apart by the message, as a last resort.
enum URLSessionErrors {
    /// The ``CourierError`` for `error`, keeping it as the underlying error.
    static func courierError(from error: any Error, url: URL) -> CourierError {
        if let error = error as? CourierError { return error }
        let target = url.absoluteString
        let host = url.host ?? target
        guard let urlError = error as? URLError else {
            if error is CancellationError {
                return CourierError(.cancelled, "the request to \(target) was cancelled", offendingInput: target)
            }
            return CourierError(
                .transportFailed, "the request to \(target) failed: \(error)", offendingInput: target,
                underlyingError: error)
        }
        let detail = message(of: urlError)
        func make(_ code: CourierError.Code, _ text: String, input: String = target) -> CourierError {
            CourierError(
                code, detail.isEmpty ? text : "\(text): \(detail)", offendingInput: input, underlyingError: urlError)
        }
        switch urlError.code {
        case .cancelled:
            return make(.cancelled, "the request to \(target) was cancelled")
        case .timedOut:
            return make(.timedOut, "the request to \(target) timed out (no byte within the read timeout)")
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .networkConnectionLost,
            .notConnectedToInternet, .internationalRoamingOff, .callIsActive, .dataNotAllowed:
            return make(.connectionFailed, "cannot connect to \(target) or the connection broke")
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot:
            return make(
                .serverTrustFailed, "the server \(host) presented a certificate that is not trusted", input: host)
        case .secureConnectionFailed, .clientCertificateRejected, .clientCertificateRequired:
            return make(.tlsHandshakeFailed, "the TLS handshake with \(host) failed", input: host)
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData,
            .zeroByteResource:
            return make(.transportFailed, "the response from \(target) is malformed")
        case .unsupportedURL, .badURL:
            guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                !(url.host ?? "").isEmpty
            else {
                return make(.unsupportedScheme, "\(target) is not an http or https URL with a host")
            }
            // FoundationNetworking reports an unparseable status line (libcurl's "Unsupported
            // response code", "Received HTTP/0.9") with this code too.
            return make(.transportFailed, "the response from \(target) is malformed")
        case .dataLengthExceedsMaximum:
            return make(.unsupportedBody, "URLSession refused the body of the request to \(target)")
        default:
            return classifyByMessage(detail, urlError: urlError, url: url)
        }
    }

    /// libcurl's message, which FoundationNetworking keeps as the localized description.
    static func message(of error: URLError) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        let text =
            (underlying?.userInfo[NSLocalizedDescriptionKey] as? String)
            ?? ((error as NSError).userInfo[NSLocalizedDescriptionKey] as? String) ?? ""
        return text == "(null)" ? "" : text
    }

    /// The code for an error known only by libcurl's message.
    private static func classifyByMessage(_ detail: String, urlError: URLError, url: URL) -> CourierError {
        let target = url.absoluteString
        let host = url.host ?? target
        let lowered = detail.lowercased()
        let suffix = detail.isEmpty ? "" : ": \(detail)"
        if lowered.contains("certificate") || lowered.contains("no alternative certificate subject name") {
            return CourierError(
                .serverTrustFailed, "the server \(host) presented a certificate that is not trusted\(suffix)",
                offendingInput: host, underlyingError: urlError)
        }
        if lowered.contains("ssl") || lowered.contains("tls") {
            return CourierError(
                .tlsHandshakeFailed, "the TLS handshake with \(host) failed\(suffix)", offendingInput: host,
                underlyingError: urlError)
        }
        let brokenConnection = [
            "transfer closed", "recv failure", "send failure", "connection reset", "empty reply", "connection refused",
            "couldn't connect", "failed to connect", "partial file",
        ]
        if brokenConnection.contains(where: { lowered.contains($0) }) {
            return CourierError(
                .connectionFailed, "cannot connect to \(target) or the connection broke\(suffix)",
                offendingInput: target, underlyingError: urlError)
        }
        let malformed = ["header", "nul byte", "http/0.9", "response code", "weird server reply", "invalid"]
        if malformed.contains(where: { lowered.contains($0) }) {
            return CourierError(
                .transportFailed, "the response from \(target) is malformed\(suffix)", offendingInput: target,
                underlyingError: urlError)
        }
        return CourierError(
            .transportFailed, "the request to \(target) failed (URLError \(urlError.code.rawValue))\(suffix)",
            offendingInput: target, underlyingError: urlError)
    }
}
