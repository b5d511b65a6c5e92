import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `--proxy`, the `*_proxy` variables and NO_PROXY through the test server's forward proxy, a
/// comparison with `curl -x`, and `--continue` with the validators kept beside the file.
@Suite(.timeLimit(.minutes(3))) struct ProxyAndContinueTests {
    /// No proxy variable of the machine running the tests leaks in.
    static let clean: [String: String] = [
        "http_proxy": "", "HTTP_PROXY": "", "https_proxy": "", "HTTPS_PROXY": "", "all_proxy": "", "ALL_PROXY": "",
        "no_proxy": "", "NO_PROXY": "",
    ]

    func environment(_ extra: [String: String]) -> [String: String] {
        Self.clean.merging(extra) { $1 }
    }

    func withServerAndProxy<T>(
        credentials: (user: String, password: String)? = nil, _ body: (TestServer, TestForwardProxy) async throws -> T
    ) async throws -> T {
        let server = try await TestServer.start()
        let proxy = try await TestForwardProxy.start(credentials: credentials)
        do {
            let result = try await body(server, proxy)
            try await proxy.shutdown()
            try await server.shutdown()
            return result
        } catch {
            try? await proxy.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    @Test func theEnvironmentIsHonouredByDefault() async throws {
        try await withServerAndProxy { server, proxy in
            let result = try await CourierProcess.run(
                ["GET", server.url("/get").absoluteString],
                environment: environment(["http_proxy": proxy.url]))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(proxy.records.map(\.target) == [server.url("/get").absoluteString])
        }
    }

    @Test func proxyOptionSendsCredentialsAndNoProxyGoesDirect() async throws {
        try await withServerAndProxy(credentials: ("me", "hunter2")) { server, proxy in
            let url = server.url("/get").absoluteString
            let through = "http:http://me:hunter2@127.0.0.1:\(proxy.port)"
            let result = try await CourierProcess.run(["--proxy", through, "GET", url], environment: environment([:]))
            #expect(result.status == 0, "\(result.stderr)")
            let expected = "Basic " + Data("me:hunter2".utf8).base64EncodedString()
            #expect(proxy.records.map(\.proxyAuthorization) == [expected])
            let direct = try await CourierProcess.run(
                ["--proxy", through, "GET", url], environment: environment(["NO_PROXY": "127.0.0.1"]))
            #expect(direct.status == 0, "\(direct.stderr)")
            #expect(proxy.records.count == 1)
        }
    }

    @Test func refusedProxyCredentialsAreRedactedInTheError() async throws {
        try await withServerAndProxy(credentials: ("me", "right")) { server, proxy in
            let result = try await CourierProcess.run(
                ["GET", server.url("/get").absoluteString],
                environment: environment(["http_proxy": "http://me:hunter2@127.0.0.1:\(proxy.port)"]))
            #expect(result.status == 1)
            #expect(result.stderr.contains("407"), "\(result.stderr)")
            #expect(result.stderr.contains("me:<redacted>@127.0.0.1"), "\(result.stderr)")
            #expect(!result.stderr.contains("hunter2"))
            #expect(!result.stdoutText.contains("hunter2"))
        }
    }

    @Test func badProxyValuesAreOneLineErrors() async throws {
        let option = try await CourierProcess.run(
            ["--proxy", "ftp:http://u:hunter2@h:1", "--offline", "GET", "http://example.test/"],
            environment: environment([:]))
        #expect(option.status == 1)
        #expect(option.stderr.contains("http, https or all"), "\(option.stderr)")
        #expect(!option.stderr.contains("hunter2"))
        let variable = try await CourierProcess.run(
            ["GET", "http://127.0.0.1:9/"], environment: environment(["https_proxy": "socks4://h:1"]))
        #expect(variable.status == 1)
        #expect(variable.stderr.contains("https_proxy"), "\(variable.stderr)")
    }

    /// curl sends plain HTTP in absolute form (`-x`) and tunnels with `-p`; courier sends it in
    /// absolute form too, to the same target as `curl -x`.
    @Test func theSameTargetAsCurl() async throws {
        try await withServerAndProxy { server, proxy in
            let url = server.url("/get?from=compare").absoluteString
            let curl = ChildProcess()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            guard FileManager.default.isExecutableFile(atPath: curl.executableURL?.path ?? "") else { return }
            curl.arguments = ["-s", "-o", "/dev/null", "-x", proxy.url, url]
            try curl.run()
            curl.waitUntilExit()
            let tunnel = ChildProcess()
            tunnel.executableURL = curl.executableURL
            tunnel.arguments = ["-s", "-o", "/dev/null", "-p", "-x", proxy.url, url]
            try tunnel.run()
            tunnel.waitUntilExit()
            let courier = try await CourierProcess.run(
                ["--proxy", "http:\(proxy.url)", "GET", url], environment: environment([:]))
            #expect(courier.status == 0, "\(courier.stderr)")
            let records = proxy.records
            #expect(records.count == 3)
            #expect(records.map(\.method) == ["GET", "CONNECT", "GET"])
            #expect(records.map(\.target) == [url, "127.0.0.1:\(server.port)", url])
        }
    }

    @Test func continueSendsTheKeptValidatorAndAChangedOneStartsOver() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("alphabet.txt")
        let url = server.url("/range/30000")
        // The resume record beside the file (hidden, so that it takes no name of the user's).
        let recordURL = directory.appendingPathComponent(".alphabet.txt.courier-resume")
        func leave(_ count: Int, etag: String) throws {
            try Data(TestServer.expectedRangeBytes(count: count)).write(to: output)
            let record =
                "{\"format\":\"courier-resume/1\",\"url\":\"\(url.absoluteString)\",\"entityTag\":\"\(etag.replacingOccurrences(of: "\"", with: "\\\""))\"}"
            try Data(record.utf8).write(to: recordURL)
        }
        try leave(10_000, etag: "\"range30000\"")
        let resumed = try await CourierProcess.run(
            ["-d", "-c", "-o", output.path, url.absoluteString], environment: environment([:]))
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(server.stats.lastRequestHead?.value("If-Range") == "\"range30000\"")
        #expect(server.stats.lastRequestHead?.value("Range") == "bytes=10000-")
        #expect(Array(try Data(contentsOf: output)) == TestServer.expectedRangeBytes(count: 30_000))
        #expect(!FileManager.default.fileExists(atPath: recordURL.path))

        // Bytes of another version: the server answers 200 and the file is replaced whole.
        try Data(repeating: 0x21, count: 5000).write(to: output)
        try leave(5000, etag: "\"old\"")
        try Data(repeating: 0x21, count: 5000).write(to: output)
        let replaced = try await CourierProcess.run(
            ["-d", "-c", "-o", output.path, url.absoluteString], environment: environment([:]))
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(Array(try Data(contentsOf: output)) == TestServer.expectedRangeBytes(count: 30_000))
    }
}
