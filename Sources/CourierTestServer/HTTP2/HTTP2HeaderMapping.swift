import NIOHPACK
import NIOHTTP1

/// Translates between HTTP/2 header blocks and the HTTP/1 vocabulary the router and endpoints
/// speak, so every endpoint serves both protocols unchanged.
enum HTTP2HeaderMapping {
    /// The request head an HTTP/1 endpoint expects: `:method` and `:path` become the request
    /// line, `:authority` becomes `Host` (unless the client sent a `host` field), and the
    /// other fields follow in arrival order. Nil when `:method` or `:path` is missing.
    static func requestHead(_ headers: HPACKHeaders) -> HTTPRequestHead? {
        var method: String?
        var path: String?
        var authority: String?
        var fields: [(String, String)] = []
        for (name, value, _) in headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case ":authority": authority = value
            case ":scheme": break
            default:
                if !name.hasPrefix(":") { fields.append((name, value)) }
            }
        }
        guard let method, let path else { return nil }
        var httpHeaders = HTTPHeaders()
        if let authority, !fields.contains(where: { $0.0 == "host" }) {
            httpHeaders.add(name: "host", value: authority)
        }
        httpHeaders.add(contentsOf: fields)
        return HTTPRequestHead(
            version: HTTPVersion(major: 2, minor: 0), method: HTTPMethod(rawValue: method), uri: path,
            headers: httpHeaders)
    }

    /// Fields that describe an HTTP/1 connection and are forbidden in HTTP/2 (RFC 9113 §8.2.2).
    private static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "content-length",
    ]

    /// The response header block for `spec`: `:status`, `server`, the endpoint's fields with
    /// lower-case names (connection-specific ones dropped), and `content-length` when the
    /// length is known (never on 204 or 304, as in HTTP/1).
    static func responseHeaders(_ spec: ResponseHeadSpec, contentLength: Int?) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(spec.status.code))
        headers.add(name: "server", value: "CourierTestServer")
        for header in spec.headers {
            let name = header.name.lowercased()
            if connectionSpecific.contains(name) { continue }
            headers.add(name: name, value: header.value)
        }
        if let contentLength, spec.status != .noContent, spec.status != .notModified {
            headers.add(name: "content-length", value: String(contentLength))
        }
        return headers
    }

    /// An interim `100 Continue` head.
    static let continueHeaders: HPACKHeaders = [":status": "100"]
}
