import Courier
import Foundation

/// A `--session` in use for one command: the file, what it held, and the cookie jar the
/// exchange reads and fills.
struct CLISessionState: Sendable {
    let location: URL
    let readOnly: Bool
    let jar: CookieJar
    private let loaded: LoadedSession

    /// `SessionFile` holds Foundation JSON values for its meta block; it is only read and
    /// written on the command's own task.
    private final class LoadedSession: @unchecked Sendable {
        var file: SessionFile
        init(_ file: SessionFile) { self.file = file }
    }

    /// Loads the session named by `--session` / `--session-read-only` for `url`.
    /// - Throws: ``CLIError`` for a bad name or a file that is not a session file.
    init(value: String, readOnly: Bool, url: URL) throws {
        location = try SessionLocation.file(for: value, url: url)
        self.readOnly = readOnly
        let file = try SessionFile.load(from: location, host: url.host)
        jar = CookieJar()
        for cookie in file.cookies { jar.setCookie(cookie) }
        loaded = LoadedSession(file)
    }

    /// The session's headers before the command's own, leaving out those the command sets, so
    /// that an item always wins.
    func headers(before items: [(name: String, value: String?)]) -> [(name: String, value: String?)] {
        let given = Set(items.map { $0.name.lowercased() })
        return loaded.file.headers.filter { !given.contains($0.name.lowercased()) }.map { ($0.name, $0.value) } + items
    }

    /// The session's credentials, when the command gives none (no `-a`, no `Authorization`
    /// item, no user-info in the URL): Basic or Digest as `(user, password)`, or a Bearer header item.
    func auth(commandHasAuth: Bool) -> (
        basic: (String, String)?, digest: (user: String, password: String)?, header: (name: String, value: String?)?
    ) {
        guard !commandHasAuth, let auth = loaded.file.auth else { return (nil, nil, nil) }
        let parts = auth.raw.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let pair = (String(parts.first ?? ""), parts.count > 1 ? String(parts[1]) : "")
        switch auth.type.lowercased() {
        case "basic": return (pair, nil, nil)
        case "digest": return (nil, pair, nil)
        case "bearer": return (nil, nil, ("Authorization", "Bearer \(auth.raw)"))
        default: return (nil, nil, nil)
        }
    }

    /// The `Cookie` value httpie sends for a session and a `Cookie:` item: the session's cookies
    /// for the URL that the item does not name, then the item's (the library sends a caller's
    /// `Cookie` header instead of its jar's, so the CLI merges them first).
    static func mergedCookies(stored: String, given: String) -> String {
        func pairs(_ header: String) -> [(name: Substring, pair: Substring)] {
            header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces)[...] }.filter { !$0.isEmpty }
                .map { pair in (pair.prefix { $0 != "=" }, pair) }
        }
        let givenPairs = pairs(given)
        let givenNames = Set(givenPairs.map(\.name))
        let kept = pairs(stored).filter { !givenNames.contains($0.name) }
        return (kept + givenPairs).map { String($0.pair) }.joined(separator: "; ")
    }

    /// Records what the request added and writes the file, unless read-only.
    /// - Throws: ``CLIError`` when the file cannot be written.
    func save(headerItems: [(name: String, value: String?)], auth: (type: String, raw: String)?, url: URL) throws {
        guard !readOnly else { return }
        loaded.file.update(headerItems: headerItems, auth: auth, url: url, jar: jar)
        try loaded.file.save(to: location)
    }
}
