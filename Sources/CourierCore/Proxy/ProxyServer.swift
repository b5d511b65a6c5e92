import Foundation

extension ProxyConfiguration {
    /// One proxy server: where it is, how it is spoken to, and its optional Basic credentials.
    ///
    /// Its ``description`` never shows the password (``HeaderRedaction/placeholder`` stands in),
    /// so a server can be printed, logged or put in an error message as it is.
    public struct Server: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The protocol spoken to the proxy.
        public enum Kind: String, Sendable, Hashable {
            /// An HTTP proxy: plain HTTP goes to it in absolute form (`GET http://host/path`); for
            /// https each connection is opened with `CONNECT host:port` and carries TLS end to end.
            case http
            /// A SOCKS5 proxy, without authentication (AsyncHTTPClient 1.37 has none for SOCKS).
            /// The target's host name is sent to the proxy, which resolves it (curl's `socks5h`).
            case socks5
        }

        /// The protocol spoken to the proxy.
        public var kind: Kind
        /// The proxy's host name or IP address (an IPv6 address without brackets).
        public var host: String
        /// The proxy's port.
        public var port: Int
        /// The user name for `Proxy-Authorization: Basic`, if the proxy wants one.
        public var username: String?
        /// The password for `Proxy-Authorization: Basic`.
        public var password: String?

        /// Makes a server; credentials are sent only to an HTTP proxy.
        public init(kind: Kind = .http, host: String, port: Int, username: String? = nil, password: String? = nil) {
            self.kind = kind
            self.host = host
            self.port = port
            self.username = username
            self.password = password
        }

        /// Parses a proxy URL as curl's `-x` and the `*_proxy` variables take it:
        /// `[scheme://][user[:password]@]host[:port]`, where the scheme is `http` (the default)
        /// or `socks5`/`socks5h`, the port defaults to 1080 (curl's default), user and password
        /// are percent-decoded, and an IPv6 address is written in brackets.
        /// - Throws: ``CourierError`` `.invalidProxyConfiguration` for a scheme Courier cannot
        ///   speak to a proxy (`https`, `socks4`), a missing host, or a bad port; the message
        ///   shows the text with its password redacted.
        public init(url text: String) throws {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let shown = HeaderRedaction.redactingURLPasswords(in: trimmed)
            let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
            guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased()
            else {
                throw CourierError(
                    .invalidProxyConfiguration,
                    "\"\(shown)\" is not a proxy URL ([http://][user:password@]host[:port])",
                    offendingInput: shown)
            }
            switch scheme {
            case "http": kind = .http
            case "socks5", "socks5h": kind = .socks5
            default:
                throw CourierError(
                    .invalidProxyConfiguration,
                    "the proxy \"\(shown)\" uses \(scheme)://; Courier speaks to proxies over http:// (CONNECT) or socks5://",
                    offendingInput: shown)
            }
            var host = components.percentEncodedHost ?? ""
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else {
                throw CourierError(
                    .invalidProxyConfiguration, "the proxy \"\(shown)\" names no host", offendingInput: shown)
            }
            let port = components.port ?? 1080
            guard (1...65535).contains(port) else {
                throw CourierError(
                    .invalidProxyConfiguration, "the proxy \"\(shown)\" has a port outside 1-65535",
                    offendingInput: shown)
            }
            self.host = host
            self.port = port
            self.username = components.percentEncodedUser.map { $0.removingPercentEncoding ?? $0 }
            self.password = components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 }
            if kind == .socks5, username != nil {
                throw CourierError(
                    .invalidProxyConfiguration,
                    "the SOCKS proxy \"\(shown)\" has credentials; Courier's transport has no SOCKS authentication",
                    offendingInput: shown)
            }
        }

        /// The server as a URL, with the password replaced by ``HeaderRedaction/placeholder``.
        public var description: String {
            var text = "\(kind.rawValue)://"
            if let username {
                text += username
                if password != nil { text += ":" + HeaderRedaction.placeholder }
                text += "@"
            }
            text += host.contains(":") ? "[\(host)]" : host
            return text + ":\(port)"
        }

        /// The same as ``description``: no password.
        public var debugDescription: String { "ProxyConfiguration.Server(\(description))" }
    }
}
