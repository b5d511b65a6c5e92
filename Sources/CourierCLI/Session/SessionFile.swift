import Courier
import Foundation

/// An httpie session file (`--session`): headers, auth and cookies kept between runs, in
/// httpie's own JSON layout so that one file works with both tools.
///
/// ```json
/// {"__meta__": {"about": "HTTPie session file", "help": "https://httpie.io/docs#sessions", "httpie": "3.2.4"},
///  "auth": {"raw_auth": "ann:pw", "type": "basic"},
///  "cookies": [{"domain": "example.org", "expires": null, "name": "sid", "path": "/", "secure": false, "value": "abc"}],
///  "headers": [{"name": "X-Foo", "value": "bar"}]}
/// ```
///
/// Older layouts httpie still reads are read too (headers and cookies as objects keyed by
/// name). Cookie domains follow Python's cookie jar: a leading dot for a domain cookie, and
/// `.local` added to a host name without a dot (`localhost.local`).
struct SessionFile {
    /// Headers sent with every request of the session, in order.
    var headers: [(name: String, value: String)] = []
    /// `basic` or `bearer`, and the text after `-a`.
    var auth: (type: String, raw: String)?
    var cookies: [Cookie] = []
    /// Members of the file Courier does not use, written back unchanged.
    var meta: [String: Any] = [:]

    /// The headers a session keeps from a request: not `Content-*` or `If-*`, which belong to
    /// one request, and not `Cookie`, whose pairs go to the cookies.
    static func keeps(header name: String) -> Bool {
        let lower = name.lowercased()
        return !lower.hasPrefix("content-") && !lower.hasPrefix("if-") && lower != "cookie"
    }

    /// Reads `url`; a missing file, or one with nothing in it (`/dev/null`), is an empty session.
    /// Cookies without a domain (httpie 3 writes `"domain": ""` for those of a `Cookie:` item,
    /// and httpie before 3.1 wrote none) are bound to `host`, as httpie's `sessions upgrade`
    /// binds them, rather than dropped and lost when the file is written back.
    /// - Throws: ``CLIError`` quoting the path when the file cannot be read or is not a session file.
    static func load(from url: URL, host: String? = nil) throws -> SessionFile {
        guard let data = try SessionFileStorage.contents(of: url.path),
            !data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 })
        else { return SessionFile() }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw CLIError.failure("\(url.path) is not an httpie session file (not a JSON object)")
        }
        var session = SessionFile()
        session.meta = root["__meta__"] as? [String: Any] ?? [:]
        if let list = root["headers"] as? [[String: Any]] {
            session.headers = list.compactMap { entry in
                guard let name = entry["name"] as? String, let value = entry["value"] as? String else { return nil }
                return (name, value)
            }
        } else if let object = root["headers"] as? [String: Any] {
            session.headers = object.keys.sorted().compactMap { name in (object[name] as? String).map { (name, $0) } }
        }
        if let auth = root["auth"] as? [String: Any], let type = auth["type"] as? String {
            if let raw = auth["raw_auth"] as? String {
                session.auth = (type, raw)
            } else if let user = auth["username"] as? String {
                session.auth = (type, "\(user):\(auth["password"] as? String ?? "")")
            }
        }
        var entries: [[String: Any]] = []
        if let list = root["cookies"] as? [[String: Any]] {
            entries = list
        } else if let object = root["cookies"] as? [String: Any] {
            entries = object.keys.sorted().compactMap { name in
                (object[name] as? [String: Any]).map { $0.merging(["name": name]) { current, _ in current } }
            }
        }
        session.cookies = entries.compactMap { cookie(from: $0, unboundTo: host) }
        return session
    }

    /// Folds what this request added into the session: its header items replace those of the
    /// same name (`Name:` removes one), `-a` replaces the auth, a `Cookie` item's pairs become
    /// cookies for the host, and the cookies are the jar's, expired ones dropped.
    mutating func update(
        headerItems: [(name: String, value: String?)], auth newAuth: (type: String, raw: String)?, url: URL,
        jar: CookieJar
    ) {
        for item in headerItems where item.name.lowercased() == "cookie" {
            for pair in (item.value ?? "").split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let host = url.host,
                    let cookie = try? Cookie(name: parts[0], value: parts[1], domain: host, hostOnly: true, path: "/")
                else { continue }
                jar.setCookie(cookie)
            }
        }
        let given = headerItems.filter { Self.keeps(header: $0.name) }
        let givenNames = Set(given.map { $0.name.lowercased() })
        var merged = headers.filter { !givenNames.contains($0.name.lowercased()) }
        merged += given.compactMap { item in item.value.map { (item.name, $0) } }
        headers = merged
        if let newAuth { auth = newAuth }
        jar.removeExpiredCookies()
        cookies = jar.allCookies
    }

    private static func cookie(from entry: [String: Any], unboundTo host: String?) -> Cookie? {
        guard let name = entry["name"] as? String, let value = entry["value"] as? String,
            var domain = (entry["domain"] as? String).flatMap({ $0.isEmpty ? nil : $0 }) ?? host
        else { return nil }
        let hostOnly = !domain.hasPrefix(".")
        if !hostOnly { domain.removeFirst() }
        if domain.hasSuffix(".local"), !domain.dropLast(6).contains(".") { domain = String(domain.dropLast(6)) }
        let expires = (entry["expires"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) }
        return try? Cookie(
            name: name, value: value, domain: domain, hostOnly: hostOnly, path: entry["path"] as? String ?? "/",
            expires: expires, secure: entry["secure"] as? Bool ?? false)
    }

    /// Writes the session as httpie does, keys sorted, to what `url` names (see ``SessionFileStorage``).
    /// - Throws: ``CLIError`` when the file or its directory cannot be written.
    func save(to url: URL) throws {
        var meta = self.meta
        meta["about"] = "HTTPie session file"
        meta["help"] = "https://httpie.io/docs#sessions"
        if meta["httpie"] == nil { meta["httpie"] = "3.2.4" }
        var root: [String: Any] = ["__meta__": meta]
        root["headers"] = headers.map { ["name": $0.name, "value": $0.value] }
        root["auth"] =
            auth.map { ["type": $0.type, "raw_auth": $0.raw] as [String: Any] }
            ?? ["type": NSNull(), "username": NSNull(), "password": NSNull()]
        root["cookies"] = cookies.map { cookie -> [String: Any] in
            var domain = cookie.domain
            if !domain.contains("."), !domain.contains(":") { domain += ".local" }
            return [
                "name": cookie.name, "value": cookie.value, "domain": cookie.hostOnly ? domain : "." + domain,
                "path": cookie.path, "secure": cookie.secure,
                "expires": cookie.expires.map { NSNumber(value: Int64($0.timeIntervalSince1970)) } ?? NSNull(),
            ]
        }
        let data: Data
        do {
            data = try JSONSerialization.data(
                withJSONObject: root, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        } catch {
            throw CLIError.failure("cannot write the session file \(url.path): \(error.localizedDescription)")
        }
        try SessionFileStorage.save(data + [UInt8(ascii: "\n")], to: url.path)
    }
}
