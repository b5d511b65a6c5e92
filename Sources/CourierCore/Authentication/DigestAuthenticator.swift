import Foundation
import NIOConcurrencyHelpers

/// HTTP Digest authentication (RFC 7616; MD5 and SHA-256, each with `-sess`, `qop=auth` or
/// none), as a ``RequestInterceptor``: the manager's (``SessionManager/init(configuration:transport:interceptor:eventMonitors:)``),
/// whose adapter runs before each attempt.
///
/// A request goes out without credentials; a 401 with a `WWW-Authenticate: Digest` challenge is
/// sent again, answered. The challenge is kept, so later requests answer it at once (with the
/// nonce count going up). A 401 to an answer is answered again when it brings a new nonce, says
/// the old one went stale, or the answer was for another target (a redirect's hop carries the
/// answer for the request before it); a 401 to an answer of the same nonce means the
/// credentials are wrong, and is delivered as it is. At most three answers per request.
///
/// Only requests to the origin (scheme, host and port) whose challenge is kept answer it, and
/// only challenges from `origins` are taken up when it is given: without it, any server that
/// answers a request of the manager with a challenge (one reached by a redirect too) gets an
/// answer, a hash of the password it could try to guess from. A request whose `Authorization`
/// is not a Digest answer is left alone.
public final class DigestAuthenticator: RequestInterceptor, Sendable {
    private struct State {
        var challenge: DigestChallenge?
        /// Where the challenge came from (scheme, host, port): only requests there answer it.
        var origin: String?
        /// Uses of the challenge's nonce so far.
        var nonceCount = 0
    }

    private let user: String
    private let password: String
    private let origins: Set<String>?
    private let state = NIOLockedValueBox(State())

    /// Answers challenges as `user` with `password`: any server's, or only those of `origins`
    /// (their scheme, host and port; paths do not matter).
    public init(user: String, password: String, origins: [URL]? = nil) {
        self.user = user
        self.password = password
        self.origins = origins.map { Set($0.map(Self.origin(of:))) }
    }

    /// Adds the answer to the challenge kept for the request's origin, when there is one and the
    /// request has no `Authorization` other than an earlier Digest answer (which a retry or a
    /// redirect starts from, and which is replaced).
    /// - Throws: nothing; the signature is ``RequestAdapter``'s.
    public func adapt(_ request: Request) async throws -> Request {
        if let own = request.value(forHTTPHeaderField: "Authorization"), !own.hasPrefix("Digest ") { return request }
        let origin = Self.origin(of: request.url)
        guard
            let (challenge, count) = state.withLockedValue({ state -> (DigestChallenge, Int)? in
                guard let challenge = state.challenge, state.origin == origin else { return nil }
                state.nonceCount += 1
                return (challenge, state.nonceCount)
            })
        else { return request }
        var answered = request
        let value = challenge.authorization(
            user: user, password: password, method: request.method.rawValue, uri: Self.target(of: request.url),
            count: count, clientNonce: Self.clientNonce())
        try answered.setValue(value, forHTTPHeaderField: "Authorization")
        return answered
    }

    /// Sends a request again, to be answered, after a 401 with a Digest challenge that its own
    /// answer (if any) did not already meet.
    public func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
        -> RetryDecision
    {
        guard let response, response.statusCode == 401, retryCount < 3,
            let challenge = DigestChallenge.first(in: response.headerFields[values: .wwwAuthenticate])
        else { return .doNotRetry }
        let origin = Self.origin(of: request.url)
        if let origins, !origins.contains(origin) { return .doNotRetry }
        if let answer = request.value(forHTTPHeaderField: "Authorization"), answer.hasPrefix("Digest ") {
            let sent = DigestChallenge.challenges(in: answer).first ?? [:]
            let sameNonce = sent["nonce"] == challenge.nonce
            let sameTarget = sent["uri"] == Self.target(of: request.url)
            // This very challenge was answered, and refused: the credentials are wrong.
            if sameNonce && sameTarget && !challenge.isStale { return .doNotRetry }
        }
        state.withLockedValue { state in
            state.challenge = challenge
            state.origin = origin
            state.nonceCount = 0
        }
        return .retry
    }

    /// The request target as the request line carries it: path and query, percent-encoded.
    static func target(of url: URL) -> String {
        var target = url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = url.query(percentEncoded: true) { target += "?" + query }
        return target
    }

    static func origin(of url: URL) -> String {
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(port)"
    }

    private static func clientNonce() -> String {
        (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
    }
}
