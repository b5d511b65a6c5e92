import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// `/auth/…`: a bearer-token service for token-refresh tests.
///
/// - `/auth/token?realm=R` issues a new token for realm `R` (any method, body ignored) and
///   counts the refresh; `refuse=1` refuses it with 401 (still counted); `delay_ms=N` (at most
///   5000) holds the answer, so concurrent requests pile up behind one refresh.
/// - `/auth/protected?realm=R` answers 200 only to `Authorization: Bearer <current token>`, and
///   401 with `WWW-Authenticate: Bearer` otherwise; `reject=all` refuses every token (a
///   credential that a refresh never fixes). A request body is read and discarded.
///
/// Realms live for the whole process, across servers: each test names its own (a UUID), so
/// tests running in parallel never share counters.
enum AuthEndpoints {
    static func route(_ request: ServerRequest, name: String) -> any RequestBodyConsumer {
        let realm = request.queryValue("realm") ?? "default"
        switch name {
        case "token": return DiscardingBody(token(request, realm: realm))
        case "protected": return DiscardingBody(protected(request, realm: realm))
        default: return DiscardingBody(.error(.notFound, "no auth endpoint named \(name.debugDescription)"))
        }
    }

    private static func token(_ request: ServerRequest, realm: String) -> ResponsePlan {
        let refused = request.queryValue("refuse") == "1"
        let issued = AuthRealms.shared.refresh(realm, refused: refused)
        let plan: ResponsePlan
        if let token = issued.token {
            plan = .json(["token": .string(token), "refreshes": .int(Int64(issued.refreshes))])
        } else {
            plan = .json(
                ["error": .string("refresh refused"), "refreshes": .int(Int64(issued.refreshes))],
                status: .unauthorized)
        }
        let delay = min(max(0, request.queryInt("delay_ms") ?? 0), 5000)
        return delay > 0 ? .delayed(.milliseconds(Int64(delay)), plan) : plan
    }

    private static func protected(_ request: ServerRequest, realm: String) -> ResponsePlan {
        let presented = bearerToken(request.header("Authorization"))
        let rejectsAll = request.queryValue("reject") == "all"
        let accepted = AuthRealms.shared.check(realm, token: presented, rejectsAll: rejectsAll)
        if accepted, let presented {
            return .json(["authenticated": .bool(true), "token": .string(presented)])
        }
        return .json(
            ["authenticated": .bool(false), "token": presented.map(TestServerJSON.string) ?? .null],
            status: .unauthorized, headers: [("WWW-Authenticate", "Bearer realm=\"courier-test\"")])
    }

    private static func bearerToken(_ header: String?) -> String? {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return nil }
        return String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
    }
}

/// What a test reads about one realm of the `/auth` endpoints.
package struct AuthRealmStats: Sendable, Equatable {
    /// Calls to `/auth/token`, refused ones included.
    package var refreshes = 0
    /// The token `/auth/protected` accepts now (nil before the first granted refresh).
    package var currentToken: String?
    /// Requests `/auth/protected` accepted.
    package var accepted = 0
    /// Requests `/auth/protected` refused with 401.
    package var rejected = 0
}

/// The realms' state, shared by every connection on every event loop, hence the lock.
final class AuthRealms: Sendable {
    static let shared = AuthRealms()

    private let realms = NIOLockedValueBox<[String: AuthRealmStats]>([:])

    /// Counts a refresh; a granted one replaces the realm's token with `"<realm>-<n>"`.
    func refresh(_ realm: String, refused: Bool) -> (token: String?, refreshes: Int) {
        realms.withLockedValue { realms in
            var stats = realms[realm, default: AuthRealmStats()]
            stats.refreshes += 1
            if !refused { stats.currentToken = "\(realm)-\(stats.refreshes)" }
            realms[realm] = stats
            return (refused ? nil : stats.currentToken, stats.refreshes)
        }
    }

    /// Whether `token` is the realm's current one; counts the answer.
    func check(_ realm: String, token: String?, rejectsAll: Bool) -> Bool {
        realms.withLockedValue { realms in
            var stats = realms[realm, default: AuthRealmStats()]
            let accepted = !rejectsAll && token != nil && token == stats.currentToken
            if accepted { stats.accepted += 1 } else { stats.rejected += 1 }
            realms[realm] = stats
            return accepted
        }
    }

    func stats(_ realm: String) -> AuthRealmStats {
        realms.withLockedValue { $0[realm] ?? AuthRealmStats() }
    }
}

extension TestServer {
    /// The counters of one realm of the `/auth` endpoints (process-wide; see ``AuthRealmStats``).
    package func authStats(realm: String) -> AuthRealmStats { AuthRealms.shared.stats(realm) }
}
