import Foundation
import HTTPTypes

/// Whether a response may be stored, and what of it (RFC 9111 §3), for a private cache.
enum CacheStorage {
    /// Status codes this cache understands, for `must-understand` (§5.2.2.3).
    static let understoodStatuses: Set<Int> = [200, 203, 204, 300, 301, 302, 303, 307, 308, 404, 405, 410, 414, 501]

    /// Whether the response to a GET `request` may be stored (§3):
    /// - a final status other than 206 (partial content is not stored) and 304;
    /// - neither the request nor the response says `no-store` (unless the response says
    ///   `must-understand` and the status is understood, §5.2.2.3);
    /// - with `Authorization` in the request, only when the response says `public`,
    ///   `s-maxage` or `must-revalidate` (§3.5). §3 asks this of shared caches only; Courier asks
    ///   it of itself too, because one process's cache often serves requests made with several
    ///   credentials, and `Vary` rarely names `Authorization`;
    /// - the response can be reused at all: it is fresh when received (explicitly, or by a
    ///   heuristic §4.2.2 allows), or it has a validator to revalidate with, and it is not
    ///   `Vary: *`.
    static func mayStore(
        status: Int, response: CachedResponse, requestFields: HTTPFields, requestDirectives: CacheControl
    ) -> Bool {
        guard status >= 200, status != 206, status != 304, !requestDirectives.noStore else { return false }
        let directives = response.cacheControl
        if directives.mustUnderstand {
            guard understoodStatuses.contains(status) else { return false }
        } else if directives.noStore {
            return false
        }
        if requestFields[.authorization] != nil,
            !(directives.isPublic || directives.sharedMaxAge != nil || directives.mustRevalidate)
        {
            return false
        }
        let hasExplicitPermission =
            directives.maxAge != nil || directives.isPublic || directives.isPrivate
            || response.headerFields[.expires] != nil || directives.sharedMaxAge != nil
        guard hasExplicitPermission || CacheFreshness.heuristicallyCacheable.contains(status) else { return false }
        guard !response.variesOnEverything else { return false }
        return response.lifetime.seconds > response.initialAge || response.hasValidator
    }

    /// The fields a cache keeps (§3.1): without `Connection` and the fields it names, and
    /// without the other hop-by-hop fields (`Keep-Alive`, `Proxy-Connection`, `TE`,
    /// `Transfer-Encoding`, `Upgrade`).
    static func storableFields(_ fields: HTTPFields) -> HTTPFields {
        var dropped: Set<String> = [
            "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
        ]
        for field in fields where field.name == .connection {
            for name in field.value.split(separator: ",") {
                dropped.insert(CacheControl.trimmed(String(name)).lowercased())
            }
        }
        guard fields.contains(where: { dropped.contains($0.name.canonicalName) }) else { return fields }
        var kept = HTTPFields()
        for field in fields where !dropped.contains(field.name.canonicalName) { kept.append(field) }
        return kept
    }

    /// Request directives, with `Pragma: no-cache` read as `Cache-Control: no-cache` when the
    /// request has no `Cache-Control` (§5.4).
    static func requestDirectives(_ fields: HTTPFields) -> CacheControl {
        var directives = CacheControl(fields)
        if fields[.cacheControl] == nil,
            fields.contains(where: {
                $0.name.canonicalName == "pragma" && $0.value.lowercased().contains("no-cache")
            })
        {
            directives.noCache = true
        }
        return directives
    }

    /// Methods that §4.4 calls unsafe: a non-error response to one invalidates stored responses.
    static func isUnsafe(_ method: HTTPMethod) -> Bool {
        switch method {
        case .get, .head, .options, .trace: return false
        default: return true
        }
    }

    /// The cache key of a URL (§4.1): the URI without its fragment.
    static func key(_ url: URL) -> String {
        let text = url.absoluteString
        guard let hash = text.firstIndex(of: "#") else { return text }
        return String(text[..<hash])
    }
}
