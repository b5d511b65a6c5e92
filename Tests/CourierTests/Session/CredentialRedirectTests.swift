import Courier
import Foundation
import Testing

@testable import CourierCore

/// Credentials on a redirect chain: two hosts of the scripted test server are two origins, so
/// what the first one was sent must not reach the second.
@Suite("Trust: credentials never follow a redirect to another origin", .timeLimit(.minutes(3)))
struct CredentialRedirectTests {
    static let secrets = [
        "Authorization": "Bearer top-secret", "Cookie": "sid=secret-cookie",
        "Proxy-Authorization": "Basic c2VjcmV0",
    ]

    func headersSeenAfterRedirect(from server: ScriptedTestServer, to target: URL, manager: SessionManager) async throws
        -> [String: String]
    {
        let query = target.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        var request = Request(url: server.url("/redirect-to?url=\(query)"))
        for (name, value) in Self.secrets { try request.setValue(value, forHTTPHeaderField: name) }
        try request.setValue("kept", forHTTPHeaderField: "X-Harmless")
        let response = try await manager.data(for: request)
        #expect(response.response.statusCode == 200)
        #expect(response.response.url == target)
        let headers = try #require(try jsonObject(response.data)["headers"] as? [String: Any])
        var lowercased: [String: String] = [:]
        for (name, value) in headers { lowercased[name.lowercased()] = value as? String }
        return lowercased
    }

    @Test func aRedirectToAnotherOriginArrivesWithoutCredentials() async throws {
        try await withScriptedSession { server, manager, _ in
            let other = server.url("/headers", host: "other.test")
            let seen = try await headersSeenAfterRedirect(from: server, to: other, manager: manager)
            for name in Self.secrets.keys {
                #expect(seen[name.lowercased()] == nil, "\(name) reached the other origin")
            }
            #expect(seen["x-harmless"] == "kept")
        }
    }

    /// The control: the same headers survive a redirect that stays on the origin.
    @Test func aRedirectOnTheSameOriginKeepsThem() async throws {
        try await withScriptedSession { server, manager, _ in
            let seen = try await headersSeenAfterRedirect(from: server, to: server.url("/headers"), manager: manager)
            for (name, value) in Self.secrets { #expect(seen[name.lowercased()] == value, "\(name)") }
        }
    }
}
