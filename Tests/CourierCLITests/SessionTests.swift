import CourierTestServer
import Foundation
import Testing

/// `--session` and `--session-read-only`: headers, auth and cookies kept between runs, in
/// httpie's session-file format, named sessions per host under `$XDG_CONFIG_HOME/courier`.
@Suite(.timeLimit(.minutes(3))) struct SessionTests {
    func headers(_ result: CourierProcess.Result) throws -> [String: String] {
        let object = try #require(
            try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any], "\(result.stderr)")
        return try #require(object["headers"] as? [String: String])
    }

    @Test func aNamedSessionKeepsHeadersAuthAndCookiesPerHost() async throws {
        let server = try await TestServer.start()
        let config = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: config) }
        let environment = ["XDG_CONFIG_HOME": config.path]
        let base = server.baseURL.absoluteString

        let first = try await CourierProcess.run(
            [
                "--session=work", "-a", "ann:pw", "\(base)/cookies/set?sid=abc", "X-Team:blue", "Content-Type:text/x",
                "If-None-Match:x",
            ],
            environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let file = config.appendingPathComponent("courier/sessions/127.0.0.1_\(server.port)/work.json")
        let saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        #expect((saved["headers"] as? [[String: String]]) == [["name": "X-Team", "value": "blue"]])
        #expect((saved["auth"] as? [String: String]) == ["type": "basic", "raw_auth": "ann:pw"])
        let cookie = try #require((saved["cookies"] as? [[String: Any]])?.first)
        #expect(cookie["name"] as? String == "sid")
        #expect(cookie["value"] as? String == "abc")
        #expect(cookie["domain"] as? String == "127.0.0.1")
        #expect(cookie["expires"] is NSNull)
        #expect(((saved["__meta__"] as? [String: Any])?["about"] as? String) == "HTTPie session file")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let second = try await CourierProcess.run(["--session=work", "\(base)/headers"], environment: environment)
        let sent = try headers(second)
        #expect(sent["X-Team"] == "blue")
        #expect(sent["Authorization"] == "Basic YW5uOnB3")
        #expect(sent["Cookie"] == "sid=abc")

        // An item wins over the session; read-only leaves the file as it was.
        let before = try Data(contentsOf: file)
        let readOnly = try await CourierProcess.run(
            ["--session-read-only=work", "\(base)/headers", "X-Team:red", "X-New:1"], environment: environment)
        #expect(try headers(readOnly)["X-Team"] == "red")
        #expect(try Data(contentsOf: file) == before)

        // Another host does not see the session.
        let other = try await CourierProcess.run(
            ["--session=work", "http://localhost:\(server.port)/headers"], environment: environment)
        #expect(try headers(other)["X-Team"] == nil)
        try await server.shutdown()
    }

    @Test func aFileWrittenByHttpieIsRead() async throws {
        let server = try await TestServer.start()
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // As httpie 3.2.4 writes it for localhost (Python's cookie jar adds ".local"), plus an
        // expired cookie and one for another path.
        let session = directory.appendingPathComponent("httpie.json")
        try Data(
            """
            {"__meta__": {"about": "HTTPie session file", "help": "https://httpie.io/docs#sessions", "httpie": "3.2.4"},
             "auth": {"raw_auth": "tok123", "type": "bearer"},
             "cookies": [
               {"domain": "localhost.local", "expires": null, "name": "sid", "path": "/", "secure": false, "value": "abc"},
               {"domain": "localhost.local", "expires": 1000, "name": "old", "path": "/", "secure": false, "value": "x"},
               {"domain": "localhost.local", "expires": null, "name": "deep", "path": "/other", "secure": false, "value": "y"},
               {"domain": "localhost.local", "expires": null, "name": "tls", "path": "/", "secure": true, "value": "z"}],
             "headers": [{"name": "X-Foo", "value": "bar"}]}
            """.utf8
        ).write(to: session)
        let result = try await CourierProcess.run([
            "--session=\(session.path)", "http://localhost:\(server.port)/headers",
        ])
        let sent = try headers(result)
        #expect(sent["X-Foo"] == "bar")
        #expect(sent["Authorization"] == "Bearer tok123")
        #expect(sent["Cookie"] == "sid=abc")
        let rewritten = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: session)) as? [String: Any])
        let names = Set(((rewritten["cookies"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
        #expect(names == ["sid", "deep", "tls"])
        #expect((rewritten["auth"] as? [String: String]) == ["type": "bearer", "raw_auth": "tok123"])
        try await server.shutdown()
    }

    /// Cookies without a domain, as httpie 3 writes those of a `Cookie:` item (`"domain": ""`)
    /// and httpie before 3.1 wrote all (an object keyed by name, no domain), are sent to the
    /// request's host and written back bound to it, as httpie's `sessions upgrade` binds them;
    /// they were dropped, and lost when the file was written back.
    @Test(arguments: [
        #"[{"domain": "", "expires": null, "name": "sid", "path": "/", "secure": false, "value": "abc"}]"#,
        #"{"sid": {"value": "abc", "path": "/", "secure": false, "expires": null}}"#,
    ])
    func cookiesWithoutADomainAreBoundToTheHostNotLost(cookies: String) async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = directory.appendingPathComponent("old.json")
        try Data(#"{"__meta__": {"httpie": "3.2.4"}, "cookies": \#(cookies), "headers": []}"#.utf8).write(to: session)
        let result = try await CourierProcess.run([
            "--session=\(session.path)", "http://127.0.0.1:\(server.port)/headers",
        ])
        #expect(try headers(result)["Cookie"] == "sid=abc")
        let rewritten = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: session)) as? [String: Any])
        let kept = try #require((rewritten["cookies"] as? [[String: Any]])?.first)
        #expect(kept["name"] as? String == "sid")
        #expect(kept["domain"] as? String == "127.0.0.1")
    }

    /// A `Cookie:` item is sent with the session's cookies, as httpie does, the item winning
    /// for a name both have; and `-v` shows the session's cookies as one `Cookie` line, as sent.
    @Test func cookieItemsJoinTheSessionsCookies() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = directory.appendingPathComponent("s.json").path
        let base = server.baseURL.absoluteString
        let set = try await CourierProcess.run(["--session=\(session)", "\(base)/cookies/set?b=2&c=3"])
        #expect(set.status == 0, "\(set.stderr)")

        let merged = try await CourierProcess.run([
            "--session-read-only=\(session)", "-b", "\(base)/cookies", "Cookie:c=9; d=4",
        ])
        #expect(
            try JSONSerialization.jsonObject(with: merged.stdout) as? [String: [String: String]] == [
                "cookies": ["b": "2", "c": "9", "d": "4"]
            ])
        let verbose = try await CourierProcess.run(["--session-read-only=\(session)", "--print=H", "\(base)/cookies"])
        #expect(verbose.stdoutText.contains("\r\nCookie: b=2; c=3\r\n"), "\(verbose.stdoutText)")
    }

    @Test func badSessionNameIsAUsageError() async throws {
        let result = try await CourierProcess.run(["--offline", "--session=a b", "x.org"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--session \"a b\""))
    }
}
