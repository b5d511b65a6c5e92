import Foundation
import NIOConcurrencyHelpers

/// HTTP Digest authentication (RFC 7616; MD5 and SHA-256, each with `-sess`, `qop=auth` or
/// none), as a ``RequestInterceptor`` for ``SessionManager/Configuration`` or a task.
///
/// A request goes out without credentials; a 401 with a `WWW-Authenticate: Digest` challenge is
/// sent again once, answered. The challenge is kept, so later requests answer it at once (with
/// the nonce count going up) until the server refuses it: a `stale=true` challenge is taken up
/// and answered again, any other 401 after an answer is delivered as it is. Only requests to the
/// origin (scheme, host and port) that sent the challenge answer it, and a request that sets its
/// own `Authorization` is left alone. The authenticator keeps one challenge, the last one seen.
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
    private let state = NIOLockedValueBox(State())

    /// Answers challenges as `user` with `password`.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Adds the answer to the last challenge seen, when there is one and the request has no
    /// `Authorization` of its own (an earlier answer, which a retry starts from, is replaced).
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

    /// Sends a request again, answered, after a 401 with a new Digest challenge (or a stale one).
    public func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
        -> RetryDecision
    {
        guard let response, response.statusCode == 401,
            let challenge = DigestChallenge.first(in: response.headerFields[values: .wwwAuthenticate])
        else { return .doNotRetry }
        let answeredBefore = request.value(forHTTPHeaderField: "Authorization")?.hasPrefix("Digest ") == true
        // Refused although answered: the credentials are wrong, unless the nonce only went stale.
        if answeredBefore && !challenge.isStale { return .doNotRetry }
        guard retryCount < 3 else { return .doNotRetry }
        let origin = Self.origin(of: request.url)
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

    private static func origin(of url: URL) -> String {
        "\(url.scheme?.lowercased() ?? "")://\(url.host?.lowercased() ?? ""):\(url.port.map(String.init) ?? "")"
    }

    private static func clientNonce() -> String {
        (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
    }
}
