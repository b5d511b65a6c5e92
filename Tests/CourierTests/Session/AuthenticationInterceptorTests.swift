import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// A bearer token; the tests say up front whether it counts as expired.
struct BearerToken: AuthenticationCredential {
    var token: String
    var requiresRefresh: Bool
}

/// The refresh endpoint said no.
struct RefreshRefused: Error, Equatable {
    var status: Int
}

/// Authenticates against the test server's `/auth` endpoints: refreshes through a separate
/// session (a refresh through the intercepted one would wait for itself).
struct TestServerAuthenticator: Authenticator {
    let tokenClient: SessionManager
    let tokenURL: URL
    let refreshes = Recorder<String>()

    func apply(_ credential: BearerToken, to request: inout Request) {
        request.headerFields[.authorization] = "Bearer \(credential.token)"
    }

    func refresh(_ credential: BearerToken) async throws -> BearerToken {
        refreshes.append(credential.token)
        let response = try await tokenClient.data(for: Request(method: .post, url: tokenURL))
        guard response.response.statusCode == 200 else { throw RefreshRefused(status: response.response.statusCode) }
        let token = try #require(try jsonObject(response.data)["token"] as? String)
        return BearerToken(token: token, requiresRefresh: false)
    }

    func didRequest(_ request: Request, with response: ResponseHead, failDueToAuthenticationError error: (any Error)?)
        -> Bool
    {
        response.statusCode == 401
    }

    func isRequest(_ request: Request, authenticatedWith credential: BearerToken) -> Bool {
        request.headerFields[.authorization] == "Bearer \(credential.token)"
    }
}

@Suite("AuthenticationInterceptor against the scripted test server's /auth endpoints", .timeLimit(.minutes(3)))
struct AuthenticationInterceptorTests {
    /// A scripted server, a token client and an interceptor for a fresh realm; tears them down.
    func withAuth(
        credential: BearerToken, tokenQuery: String = "",
        window: AuthenticationInterceptor<TestServerAuthenticator>.RefreshWindow = .init(),
        _ body: (ScriptedTestServer, String, SessionManager, AuthenticationInterceptor<TestServerAuthenticator>)
            async throws ->
            Void
    ) async throws {
        let realm = UUID().uuidString
        try await withScriptedSession { server, tokenClient, _ in
            let authenticator = TestServerAuthenticator(
                tokenClient: tokenClient, tokenURL: server.url("/auth/token?realm=\(realm)\(tokenQuery)"))
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator, credential: credential, refreshWindow: window)
            let manager = SessionManager(transport: server.transport, interceptor: interceptor)
            do {
                try await body(server, realm, manager, interceptor)
                try await manager.shutdown()
            } catch {
                try? await manager.shutdown()
                throw error
            }
        }
    }

    /// Sends `count` GETs to `/auth/protected` at once; each result is a status or an error.
    func concurrentGets(_ count: Int, manager: SessionManager, url: URL) async -> [Result<Int, any Error>] {
        await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do {
                        return .success(try await manager.data(for: Request(url: url)).response.statusCode)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            var results: [Result<Int, any Error>] = []
            for await result in group { results.append(result) }
            return results
        }
    }

    /// The task's error when it is the interceptor's own: the session passes a CourierError
    /// from an adapter through unwrapped (the issue: a failed refresh fails them all with the
    /// refresh's error), so no `.requestAdaptationFailed` is in the way.
    func authenticationError(_ error: any Error) -> CourierError? {
        guard let error = error as? CourierError, error.code != .requestAdaptationFailed else { return nil }
        return error
    }

    /// Expired on the client (`requiresRefresh`) or refused by the server (401): either way one
    /// refresh serves all 50 requests.
    @Test(arguments: [true, false])
    func fiftyConcurrentRequestsShareOneRefresh(expiredOnClient: Bool) async throws {
        let old = BearerToken(token: "old", requiresRefresh: expiredOnClient)
        try await withAuth(credential: old, tokenQuery: "&delay_ms=200") { server, realm, manager, interceptor in
            let results = await concurrentGets(50, manager: manager, url: server.url("/auth/protected?realm=\(realm)"))
            let statuses = results.compactMap { try? $0.get() }
            #expect(statuses == Array(repeating: 200, count: 50))
            let stats = server.authStats(realm: realm)
            #expect(stats.refreshes == 1)
            #expect(interceptor.authenticator.refreshes.values == ["old"])
            #expect(stats.accepted == 50)
            #expect(stats.rejected == (expiredOnClient ? 0 : 50))
            #expect(interceptor.credential?.token == "\(realm)-1")
        }
    }

    @Test(arguments: [true, false])
    func refusedRefreshFailsEveryWaiterWithOneError(expiredOnClient: Bool) async throws {
        let old = BearerToken(token: "old", requiresRefresh: expiredOnClient)
        try await withAuth(credential: old, tokenQuery: "&refuse=1&delay_ms=200") {
            server, realm, manager, interceptor in
            let results = await concurrentGets(50, manager: manager, url: server.url("/auth/protected?realm=\(realm)"))
            let errors = results.compactMap { result -> CourierError? in
                guard case .failure(let error) = result else { return nil }
                return authenticationError(error)
            }
            #expect(errors.count == 50)
            #expect(errors.allSatisfy { $0.code == .authenticationRefreshFailed })
            #expect(errors.allSatisfy { ($0.underlyingError as? RefreshRefused) == RefreshRefused(status: 401) })
            #expect(Set(errors.map(\.message)).count == 1, "messages: \(Set(errors.map(\.message)))")
            let stats = server.authStats(realm: realm)
            #expect(stats.refreshes == 1)
            #expect(interceptor.authenticator.refreshes.values.count == 1)
            #expect(stats.accepted == 0)
            // The server saw each request once, before the refresh (none when expired on the client).
            #expect(stats.rejected == (expiredOnClient ? 0 : 50))
        }
    }

    @Test func refreshLoopStopsWithTypedError() async throws {
        let window = AuthenticationInterceptor<TestServerAuthenticator>.RefreshWindow(
            interval: .seconds(60), maximumAttempts: 3)
        try await withAuth(credential: BearerToken(token: "old", requiresRefresh: false), window: window) {
            server, realm, manager, interceptor in
            let url = server.url("/auth/protected?realm=\(realm)&reject=all")
            let error = await #expect(throws: CourierError.self) { try await manager.data(for: Request(url: url)) }
            #expect(error.flatMap(authenticationError)?.code == .authenticationRefreshLoop)
            let stats = server.authStats(realm: realm)
            #expect(stats.refreshes == 3)
            #expect(stats.rejected == 4)
            #expect(interceptor.authenticator.refreshes.values.count == 3)
            // A second request meets the remembered failure instead of refreshing again.
            let again = await #expect(throws: CourierError.self) { try await manager.data(for: Request(url: url)) }
            #expect(again.flatMap(authenticationError)?.code == .authenticationRefreshLoop)
            #expect(server.authStats(realm: realm).refreshes == 3)
        }
    }

    /// Between adapting a request with the first token and its 401, someone else installs a
    /// newer token: the request is sent again with it and nothing is refreshed.
    @Test func staleCredentialIsRetriedWithoutRefresh() async throws {
        let realm = UUID().uuidString
        try await withScriptedSession { server, tokenClient, _ in
            let tokenURL = server.url("/auth/token?realm=\(realm)")
            let freshToken: @Sendable () async throws -> BearerToken = {
                let response = try await tokenClient.data(for: Request(method: .post, url: tokenURL))
                return BearerToken(
                    token: try #require(try jsonObject(response.data)["token"] as? String), requiresRefresh: false)
            }
            let first = try await freshToken()
            let authenticator = TestServerAuthenticator(tokenClient: tokenClient, tokenURL: tokenURL)
            let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: first)
            let racing = RacingRefresh(inner: interceptor, refreshElsewhere: freshToken)
            let manager = SessionManager(transport: server.transport, interceptor: racing)
            let response = try await manager.data(for: Request(url: server.url("/auth/protected?realm=\(realm)")))
            try await manager.shutdown()
            #expect(response.response.statusCode == 200)
            #expect(try jsonObject(response.data)["token"] as? String == "\(realm)-2")
            #expect(authenticator.refreshes.values.isEmpty)
            let stats = server.authStats(realm: realm)
            #expect(stats.refreshes == 2)
            #expect(stats.rejected == 1)
            #expect(stats.accepted == 1)
        }
    }

    /// The session never asks a retrier about a body it cannot replay: the 401 is delivered,
    /// the server saw the body once, and nothing was refreshed.
    @Test func oneShotBodyIsNotResent() async throws {
        try await withAuth(credential: BearerToken(token: "old", requiresRefresh: false)) {
            server, realm, manager, interceptor in
            let chunks = AsyncStream<ByteBuffer> { continuation in
                continuation.yield(ByteBuffer(string: "sent once"))
                continuation.finish()
            }
            let request = Request(
                method: .post, url: server.url("/auth/protected?realm=\(realm)"),
                body: .oneShotStream(length: 9, chunks))
            let response = try await manager.data(for: request)
            #expect(response.response.statusCode == 401)
            let stats = server.authStats(realm: realm)
            #expect(stats.rejected == 1)
            #expect(stats.refreshes == 0)
            #expect(interceptor.authenticator.refreshes.values.isEmpty)
        }
    }

    @Test func missingCredentialFailsTyped() async throws {
        let tokenClient = SessionManager()
        defer { Task { try? await tokenClient.shutdown() } }
        let url = try #require(URL(string: "http://127.0.0.1:9/x"))
        let authenticator = TestServerAuthenticator(tokenClient: tokenClient, tokenURL: url)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: nil)
        let error = await #expect(throws: CourierError.self) { try await interceptor.adapt(Request(url: url)) }
        #expect(error?.code == .authenticationCredentialMissing)
    }
}

/// Wraps an interceptor: after the first adaptation, a newer token is fetched and installed,
/// as if another part of the app refreshed while the request was on its way.
final class RacingRefresh: RequestInterceptor {
    let inner: AuthenticationInterceptor<TestServerAuthenticator>
    let refreshElsewhere: @Sendable () async throws -> BearerToken
    private let adaptations = Recorder<Int>()

    init(
        inner: AuthenticationInterceptor<TestServerAuthenticator>,
        refreshElsewhere: @escaping @Sendable () async throws -> BearerToken
    ) {
        self.inner = inner
        self.refreshElsewhere = refreshElsewhere
    }

    func adapt(_ request: Request) async throws -> Request {
        let adapted = try await inner.adapt(request)
        if adaptations.values.isEmpty {
            adaptations.append(1)
            inner.credential = try await refreshElsewhere()
        }
        return adapted
    }

    func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
        -> RetryDecision
    {
        await inner.retry(request, response: response, error: error, retryCount: retryCount)
    }
}
