import Courier
import Foundation
import Testing

@testable import CourierCore

/// HTTP Digest authentication: MD5's own vectors, RFC 7616's worked example, the challenge
/// grammar, and the interceptor's decisions. (Against real httpbin: HttpbinInteropTests.)
@Suite struct DigestAuthenticatorTests {
    /// RFC 1321, appendix A.5.
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"), ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"), ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func md5Vectors(_ input: String, _ digest: String) {
        #expect(MD5.hex(input.utf8) == digest)
    }

    static let exampleChallenge =
        #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, "#
        + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "#
        + #"opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#

    /// RFC 7616 §3.9.1: the same challenge answered with SHA-256 and with MD5.
    @Test(arguments: [
        ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
    ])
    func rfc7616Example(_ algorithm: String, _ response: String) throws {
        let value = Self.exampleChallenge.replacingOccurrences(of: "algorithm=SHA-256", with: "algorithm=\(algorithm)")
        let challenge = try #require(DigestChallenge.first(in: [value]))
        #expect(challenge.realm == "http-auth@example.org")
        #expect(challenge.offersAuthQuality)
        let answer = challenge.authorization(
            user: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html", count: 1,
            clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
        #expect(answer.contains(#"response="\#(response)""#), "\(answer)")
        #expect(answer.contains("nc=00000001, "))
        #expect(answer.contains(#"opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#))
        #expect(answer.hasPrefix(#"Digest username="Mufasa", realm="http-auth@example.org", "#))
    }

    /// Several challenges in one value, quoted strings with escapes and commas, unknown
    /// algorithms and `auth-int` alone skipped.
    @Test func challengeGrammar() throws {
        let listed = try #require(
            DigestChallenge.first(in: [
                #"Basic realm="x", Digest realm="a \"b\", c", nonce=n1, algorithm=SHA-512-256"#,
                #"Newauth token68==, DIGEST Realm="r", Nonce="n2", QOP="auth-int", stale=TRUE"#,
                #"Digest realm="r0", nonce="n0", algorithm=MD5-sess"#,
                #"Digest realm="r3", nonce="n3", stale=TRUE, algorithm=md5-SESS, qop=auth"#,
            ]))
        #expect(listed.realm == "r3")
        #expect(listed.algorithm == .md5Session)
        #expect(listed.isStale)
        #expect(listed.offersAuthQuality)
        // Offered both, the client takes SHA-256 (RFC 7616 §3.7).
        let both = try #require(
            DigestChallenge.first(in: [
                #"Digest realm="a", nonce="1", algorithm=MD5, qop="auth""#,
                #"Digest realm="a", nonce="1", algorithm=SHA-256, qop="auth""#,
            ]))
        #expect(both.algorithm == .sha256)
        let parameters = DigestChallenge.challenges(in: #"Basic realm="x", Digest realm="a \"b\", c", nonce=n1"#)
        #expect(parameters == [["realm": #"a "b", c"#, "nonce": "n1"]])
        #expect(DigestChallenge.first(in: ["Basic realm=\"x\""]) == nil)
    }

    /// Given `origins`, a challenge from anywhere else (a host a redirect led to) is not answered.
    @Test func onlyTheGivenOriginsChallengesAreAnswered() async throws {
        let home = try #require(URL(string: "http://127.0.0.1:9/start"))
        let authenticator = DigestAuthenticator(user: "u", password: "p", origins: [home])
        let elsewhere = Request(url: try #require(URL(string: "http://127.0.0.1:10/x")))
        let challenge = ResponseHead(
            status: .init(code: 401), headerFields: [.wwwAuthenticate: Self.exampleChallenge], url: elsewhere.url)
        #expect(await authenticator.retry(elsewhere, response: challenge, error: nil, retryCount: 0) == .doNotRetry)
        let there = Request(url: try #require(URL(string: "http://127.0.0.1:9/other?q")))
        #expect(await authenticator.retry(there, response: challenge, error: nil, retryCount: 0) == .retry)
    }

    @Test func theInterceptorAnswersAfterAChallengeAndOnlyThere() async throws {
        let authenticator = DigestAuthenticator(user: "Mufasa", password: "Circle of Life")
        let request = Request(url: try #require(URL(string: "http://127.0.0.1:9/dir/index.html?x=1")))
        #expect(try await authenticator.adapt(request).value(forHTTPHeaderField: "Authorization") == nil)
        var challenged = ResponseHead(
            status: .init(code: 401), headerFields: [.wwwAuthenticate: Self.exampleChallenge], url: request.url)
        #expect(await authenticator.retry(request, response: challenged, error: nil, retryCount: 0) == .retry)
        let answered = try await authenticator.adapt(request)
        let header = try #require(answered.value(forHTTPHeaderField: "Authorization"))
        #expect(header.contains(#"uri="/dir/index.html?x=1""#))
        #expect(header.contains("nc=00000001"))
        // A retry starts from the answered request: its answer is replaced, the count goes up.
        let again = try await authenticator.adapt(answered)
        #expect(again.value(forHTTPHeaderField: "Authorization")?.contains("nc=00000002") == true)
        // Refused although answered: wrong credentials, delivered as they are; a stale nonce, a
        // new nonce, or an answer made for another target (a redirect's hop) is answered again.
        #expect(await authenticator.retry(answered, response: challenged, error: nil, retryCount: 1) == .doNotRetry)
        let newNonce = ResponseHead(
            status: .init(code: 401),
            headerFields: [.wwwAuthenticate: Self.exampleChallenge.replacingOccurrences(of: "7ypf", with: "8zqg")],
            url: request.url)
        #expect(await authenticator.retry(answered, response: newNonce, error: nil, retryCount: 1) == .retry)
        #expect(await authenticator.retry(answered, response: newNonce, error: nil, retryCount: 3) == .doNotRetry)
        var hop = answered
        hop.url = try #require(URL(string: "http://127.0.0.1:9/dir/"))
        let hopAnswered = try await authenticator.adapt(answered)
        hop.headerFields[.authorization] = hopAnswered.headerFields[.authorization]
        #expect(await authenticator.retry(hop, response: newNonce, error: nil, retryCount: 1) == .retry)
        let rehop = try await authenticator.adapt(hop)
        #expect(rehop.value(forHTTPHeaderField: "Authorization")?.contains(#"uri="/dir/""#) == true)
        challenged = ResponseHead(
            status: .init(code: 401), headerFields: [.wwwAuthenticate: Self.exampleChallenge + ", stale=true"],
            url: request.url)
        #expect(await authenticator.retry(answered, response: challenged, error: nil, retryCount: 1) == .retry)
        // Another origin, and a request with its own Authorization, are left alone.
        let elsewhere = Request(url: try #require(URL(string: "http://127.0.0.1:10/dir/index.html")))
        #expect(try await authenticator.adapt(elsewhere).value(forHTTPHeaderField: "Authorization") == nil)
        var own = request
        try own.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        #expect(try await authenticator.adapt(own).value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }
}
