import NIOCore
import NIOHTTP1

/// A request head with what endpoints need from it already worked out.
struct ServerRequest {
    let head: HTTPRequestHead
    /// The path without the query, percent-decoded per segment.
    let path: String
    /// The path's segments, so `/status/200,201` is `["status", "200,201"]`.
    let segments: [String]
    /// Query items in order.
    let query: [(name: String, value: String)]
    /// The client's IP address, for `origin`.
    let remoteIP: String
    /// `http` or `https`.
    let scheme: String
    /// The `host:port` the server is reachable at, for absolute URLs when the request has no Host.
    let localAuthority: String
    /// State shared across the server (fault counters).
    let server: ServerState

    init(head: HTTPRequestHead, remoteAddress: SocketAddress?, localAddress: SocketAddress?, server: ServerState) {
        self.head = head
        self.server = server
        scheme = server.scheme
        let target = head.uri
        let rawPath: Substring
        if let mark = target.firstIndex(of: "?") {
            rawPath = target[..<mark]
            query = FormURLDecoding.pairs(target[target.index(after: mark)...])
        } else {
            rawPath = Substring(target)
            query = []
        }
        segments = rawPath.split(separator: "/", omittingEmptySubsequences: true).map {
            FormURLDecoding.decode($0, plusIsSpace: false)
        }
        path = "/" + segments.joined(separator: "/")
        remoteIP = remoteAddress?.ipAddress ?? "127.0.0.1"
        if let localAddress, let ip = localAddress.ipAddress, let port = localAddress.port {
            localAuthority = ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        } else {
            localAuthority = "127.0.0.1"
        }
    }

    var method: HTTPMethod { head.method }

    /// The first value of header `name`.
    func header(_ name: String) -> String? { head.headers.first(name: name) }

    /// The first query value named `name`.
    func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// A query value as an integer, nil when absent or not a number.
    func queryInt(_ name: String) -> Int? { queryValue(name).flatMap { Int($0) } }

    /// The authority clients used (the Host header), or the listening address.
    var authority: String { header("Host") ?? localAuthority }

    /// The full URL of the request, as httpbin's `url`.
    var url: String { "\(scheme)://\(authority)\(head.uri)" }

    /// Absolute URL for a server path.
    func absoluteURL(_ path: String) -> String { "\(scheme)://\(authority)\(path)" }

    /// Request headers as httpbin shows them: Title-Case names, repeated fields joined by commas.
    var headersJSON: TestServerJSON {
        var merged: [String: String] = [:]
        for (name, value) in head.headers {
            let title = ServerRequest.titleCase(name)
            if let existing = merged[title] {
                merged[title] = existing + "," + value
            } else {
                merged[title] = value
            }
        }
        return .object(merged.mapValues(TestServerJSON.string))
    }

    /// `args` as httpbin shows them.
    var argsJSON: TestServerJSON { FormURLDecoding.multiDictionary(query) }

    static func titleCase(_ name: String) -> String {
        name.split(separator: "-", omittingEmptySubsequences: false)
            .map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }
            .joined(separator: "-")
    }
}
