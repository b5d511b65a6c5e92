import Foundation
import NIOCore
import NIOHTTP1

/// Fixed-content, authentication, cookie and header endpoints: /html, /json, /xml,
/// /encoding/utf8, /robots.txt, /base64/{value}, /basic-auth/{user}/{passwd},
/// /hidden-basic-auth/{user}/{passwd}, /bearer, /cookies, /cookies/set, /cookies/delete,
/// /response-headers, /gzip, /deflate.
enum ContentEndpoints {
    static func route(_ request: ServerRequest) -> (any RequestBodyConsumer)? {
        let segments = request.segments
        switch (segments.first ?? "", segments.count) {
        case ("html", 1): return DiscardingBody(.text(SampleDocuments.html, contentType: "text/html; charset=utf-8"))
        case ("json", 1): return DiscardingBody(.json(SampleDocuments.json))
        case ("xml", 1): return DiscardingBody(.text(SampleDocuments.xml, contentType: "application/xml"))
        case ("encoding", 2) where segments[1] == "utf8":
            return DiscardingBody(.text(SampleDocuments.utf8, contentType: "text/html; charset=utf-8"))
        case ("robots.txt", 1): return DiscardingBody(.text("User-agent: *\nDisallow: /deny\n"))
        case ("base64", 2): return base64(segments[1])
        case ("basic-auth", 3): return basicAuth(request, user: segments[1], password: segments[2], hidden: false)
        case ("hidden-basic-auth", 3): return basicAuth(request, user: segments[1], password: segments[2], hidden: true)
        case ("bearer", 1): return bearer(request)
        case ("cookies", 1): return DiscardingBody(.json(["cookies": cookiesJSON(request)]))
        case ("cookies", 2) where segments[1] == "set": return setCookies(request.query)
        case ("cookies", 4) where segments[1] == "set": return setCookies([(segments[2], segments[3])])
        case ("cookies", 2) where segments[1] == "delete": return deleteCookies(request)
        case ("response-headers", 1): return responseHeaders(request)
        case ("gzip", 1), ("deflate", 1): return compressed(request, gzip: segments[0] == "gzip")
        default: return nil
        }
    }

    static func base64(_ text: String) -> any RequestBodyConsumer {
        var normalized = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while normalized.utf8.count % 4 != 0 { normalized += "=" }
        guard let data = Data(base64Encoded: normalized) else {
            return DiscardingBody(.text("Incorrect Base64 data try: SFRUUEJJTiBpcyBhd2Vzb21l", status: .badRequest))
        }
        return DiscardingBody(.bytes(Array(data), contentType: "text/html; charset=utf-8"))
    }

    /// Checks `Authorization: Basic …` against the path's user and password.
    static func basicAuth(_ request: ServerRequest, user: String, password: String, hidden: Bool)
        -> any RequestBodyConsumer
    {
        var authorized = false
        if let header = request.header("Authorization"), header.lowercased().hasPrefix("basic "),
            let data = Data(base64Encoded: header.dropFirst(6).trimmingWhitespace()),
            let credentials = String(data: data, encoding: .utf8)
        {
            authorized = credentials == "\(user):\(password)"
        }
        if authorized {
            return DiscardingBody(.json(["authenticated": true, "user": .string(user)]))
        }
        if hidden { return DiscardingBody(.error(.notFound, "not found")) }
        return DiscardingBody(.empty(.unauthorized, headers: [("WWW-Authenticate", "Basic realm=\"Fake Realm\"")]))
    }

    static func bearer(_ request: ServerRequest) -> any RequestBodyConsumer {
        guard let header = request.header("Authorization"), header.hasPrefix("Bearer ") else {
            return DiscardingBody(.empty(.unauthorized, headers: [("WWW-Authenticate", "Bearer")]))
        }
        return DiscardingBody(.json(["authenticated": true, "token": .string(String(header.dropFirst(7)))]))
    }

    static func cookiesJSON(_ request: ServerRequest) -> TestServerJSON {
        var cookies: [String: TestServerJSON] = [:]
        for header in request.head.headers["Cookie"] {
            for item in header.split(separator: ";") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = pair[0].trimmingWhitespace()
                guard !name.isEmpty else { continue }
                cookies[name] = .string(pair.count == 2 ? pair[1].trimmingWhitespace() : "")
            }
        }
        return .object(cookies)
    }

    static func setCookies(_ pairs: [(name: String, value: String)]) -> any RequestBodyConsumer {
        var headers: [(name: String, value: String)] = [("Location", "/cookies")]
        for pair in pairs {
            guard isSafeCookieText(pair.name), !pair.name.isEmpty, isSafeCookieText(pair.value) else {
                return DiscardingBody(
                    .error(
                        .badRequest,
                        "cookie names and values may not contain CR, LF, NUL, ';' or '=' (name): \(pair.name.debugDescription)=\(pair.value.debugDescription)"
                    ))
            }
            headers.append(("Set-Cookie", "\(pair.name)=\(pair.value); Path=/"))
        }
        return DiscardingBody(.empty(.found, headers: headers))
    }

    static func deleteCookies(_ request: ServerRequest) -> any RequestBodyConsumer {
        var headers: [(name: String, value: String)] = [("Location", "/cookies")]
        for pair in request.query where isSafeCookieText(pair.name) && !pair.name.isEmpty {
            headers.append(("Set-Cookie", "\(pair.name)=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"))
        }
        return DiscardingBody(.empty(.found, headers: headers))
    }

    private static func isSafeCookieText(_ text: String) -> Bool {
        !text.utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: ";") }
    }

    /// Echoes the query as response headers and as a JSON body, as httpbin does.
    static func responseHeaders(_ request: ServerRequest) -> any RequestBodyConsumer {
        var headers: [(name: String, value: String)] = []
        var document: [String: [String]] = [:]
        for pair in request.query {
            let validName = !pair.name.isEmpty && pair.name.utf8.allSatisfy { HeaderText.isTokenByte($0) }
            guard validName, HeaderText.isSafeValue(pair.value) else {
                return DiscardingBody(
                    .error(
                        .badRequest, "cannot send header \(pair.name.debugDescription): \(pair.value.debugDescription)")
                )
            }
            headers.append((pair.name, pair.value))
            document[pair.name, default: []].append(pair.value)
        }
        var json = document.mapValues { values -> TestServerJSON in
            values.count == 1 ? .string(values[0]) : .array(values.map(TestServerJSON.string))
        }
        if json["Content-Type"] == nil { json["Content-Type"] = "application/json" }
        let hasType = headers.contains { $0.name.lowercased() == "content-type" }
        return DiscardingBody(
            .bytes(
                TestServerJSON.object(json).serialized(), contentType: hasType ? nil : "application/json",
                headers: headers))
    }

    /// /gzip and /deflate: the echo document, compressed, with Content-Encoding.
    static func compressed(_ request: ServerRequest, gzip: Bool) -> any RequestBodyConsumer {
        let document: TestServerJSON = [
            gzip ? "gzipped" : "deflated": true, "headers": request.headersJSON,
            "method": .string(request.method.rawValue), "origin": .string(request.remoteIP),
        ]
        let plain = document.serialized()
        let body = gzip ? StoredDeflate.gzip(plain) : StoredDeflate.zlib(plain)
        return DiscardingBody(
            .bytes(
                body, contentType: "application/json",
                headers: [("Content-Encoding", gzip ? "gzip" : "deflate")]))
    }
}

/// Checks on text that goes into response headers.
enum HeaderText {
    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// No CR, LF or NUL, which would end or corrupt the header block.
    static func isSafeValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }
}
