import Courier
import Foundation
import Testing

@testable import CourierCore

/// Credentials in a URL reach the server as Basic authorization however the request was made:
/// by a serializer, by hand through `data(for:)`, or as a stream (issue 43: a hand-made request
/// got a 401).
@Suite("Session: credentials in the URL", .timeLimit(.minutes(3)))
struct SessionURLCredentialsTests {
    @Test func aHandMadeRequestWithUserInfoIsAuthorizedAndSendsNoUserInfo() async throws {
        let server = ScriptedTestServer()
        let manager = SessionManager(transport: server.transport)
        let url = try #require(URL(string: "http://user:p%40ss@scripted.test/basic-auth/user/p@ss"))
        let response = try await manager.data(for: Request(url: url))
        #expect(response.response.status.code == 200)
        #expect(response.request.url.user == nil && response.request.url.password == nil)
        #expect(
            response.request.headerFields[.authorization] == "Basic \(Data("user:p@ss".utf8).base64EncodedString())")
        let stream = try await manager.stream(Request(url: url))
        #expect(stream.head.statusCode == 200)
        for try await _ in stream.body {}
        try await manager.shutdown()
    }

    @Test func anAuthorizationHeaderOfTheCallersOwnWins() {
        var request = Request(url: URL(string: "http://a:b@example.test/x")!)
        request.headerFields[.authorization] = "Bearer t"
        let moved = request.movingURLCredentialsToAuthorization()
        #expect(moved.headerFields[.authorization] == "Bearer t")
        #expect(moved.url.absoluteString == "http://example.test/x")
        let plain = Request(url: URL(string: "http://example.test/x")!)
        #expect(plain.movingURLCredentialsToAuthorization().url == plain.url)
    }
}
