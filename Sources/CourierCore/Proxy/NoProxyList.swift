import Foundation

/// The hosts that go direct even when a proxy is set: `NO_PROXY` / curl's `--noproxy`.
///
/// The list is the text of `NO_PROXY`: entries separated by commas or white space, matched as
/// curl 8 does (its `CURLOPT_NOPROXY` documentation), plus ports as Go and Python allow:
/// - `*` matches every host: nothing goes through a proxy.
/// - A name matches itself and every name below it, case-insensitively: `example.com` and
///   `.example.com` both match `example.com` and `www.example.com`, never `notexample.com`. A
///   trailing dot on either side is ignored.
/// - An IP address matches that address only, and `192.168.0.0/16` or `fd00::/8` (CIDR) a
///   network; an IPv6 address may be written with or without brackets. Names never match an
///   IP address by suffix, and the list does no DNS lookups.
/// - `host:port` (`[::1]:8080` for IPv6) matches that host on that port only (the URL's port,
///   or 80/443 from its scheme).
public struct NoProxyList: Sendable, Hashable, CustomStringConvertible {
    /// One entry of the list.
    enum Entry: Sendable, Hashable {
        case everything
        case domain(String, port: Int?)
        case network(IPAddressBytes, prefixLength: Int, port: Int?)
    }

    /// The entries, in the order written; an entry that is none of the forms above is kept
    /// out (curl also skips what it cannot use).
    let entries: [Entry]
    /// The text the list was made from.
    public let description: String

    /// Parses a `NO_PROXY` value; an empty text bypasses nothing.
    public init(_ text: String) {
        description = text
        entries = text.split(whereSeparator: { $0 == "," || $0.isWhitespace }).compactMap {
            Self.entry(String($0))
        }
    }

    /// True when the list is empty (nothing bypasses the proxy).
    public var isEmpty: Bool { entries.isEmpty }

    /// Whether `url` goes direct.
    public func matches(_ url: URL) -> Bool {
        guard !entries.isEmpty, var host = url.host?.lowercased() else { return false }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        let address = IPAddressBytes(host)
        for entry in entries {
            switch entry {
            case .everything:
                return true
            case .domain(let name, let wanted):
                guard address == nil, wanted == nil || wanted == port else { continue }
                if host == name || host.hasSuffix("." + name) { return true }
            case .network(let network, let prefixLength, let wanted):
                guard let address, wanted == nil || wanted == port else { continue }
                if address.isIn(network, prefixLength: prefixLength) { return true }
            }
        }
        return false
    }

    private static func entry(_ token: String) -> Entry? {
        var text = token.lowercased()
        if text == "*" { return .everything }
        var port: Int?
        if text.hasPrefix("[") {
            // [v6] or [v6]:port
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let value = Int(rest.dropFirst()), (1...65535).contains(value) else { return nil }
                port = value
            } else if !rest.isEmpty {
                return nil
            }
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            // name:port or v4:port (a bare IPv6 address has several colons).
            let after = text[text.index(after: colon)...]
            guard let value = Int(after), (1...65535).contains(value) else { return nil }
            port = value
            text = String(text[..<colon])
        }
        var prefixLength: Int?
        if let slash = text.firstIndex(of: "/") {
            guard let bits = Int(text[text.index(after: slash)...]) else { return nil }
            prefixLength = bits
            text = String(text[..<slash])
        }
        if let address = IPAddressBytes(text) {
            let maximum = address.bytes.count * 8
            let bits = prefixLength ?? maximum
            guard (0...maximum).contains(bits) else { return nil }
            return .network(address, prefixLength: bits, port: port)
        }
        guard prefixLength == nil else { return nil }
        while text.hasPrefix(".") { text.removeFirst() }
        while text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty else { return nil }
        return .domain(text, port: port)
    }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address, parsed with inet_pton.
struct IPAddressBytes: Sendable, Hashable {
    let bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// Whether the first `prefixLength` bits equal those of `network` (same family only).
    func isIn(_ network: IPAddressBytes, prefixLength: Int) -> Bool {
        guard bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(bytes, network.bytes) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if mine & mask != theirs & mask { return false }
            remaining -= bits
        }
        return true
    }
}
