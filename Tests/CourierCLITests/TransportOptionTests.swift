import CourierDigest
import CourierTestServer
import Foundation
import Testing

/// `--transport`: the same command line over AsyncHTTPClient and URLSession gives the same
/// exchange, so the two can be compared from outside.
@Suite(.timeLimit(.minutes(3))) struct TransportOptionTests {
    @Test(arguments: ["asynchttpclient", "urlsession"])
    func sameExchangeOverEitherTransport(_ transport: String) async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let base = server.baseURL.absoluteString
        let echo = try await CourierProcess.run([
            "--transport", transport, "-b", "POST", "\(base)/anything", "name=Ann",
        ])
        #expect(echo.status == 0, "\(echo.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: echo.stdout) as? [String: Any])
        #expect(document["method"] as? String == "POST")
        #expect((document["json"] as? [String: Any])?["name"] as? String == "Ann")

        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: directory.appendingPathComponent("big.bin"))
        let upload = try await CourierProcess.run(
            ["--transport", transport, "-b", "\(base)/upload", "@big.bin"], directory: directory)
        #expect(upload.status == 0, "\(upload.stderr)")
        let sink = try #require(try JSONSerialization.jsonObject(with: upload.stdout) as? [String: Any])
        #expect(sink["bytes"] as? Int == bytes.count)
        #expect(sink["sha256"] as? String == SHA256.hash(data: bytes).hexString)

        let redirected = try await CourierProcess.run(["--transport", transport, "-F", "-b", "\(base)/redirect/2"])
        #expect(redirected.status == 0, "\(redirected.stderr)")
        #expect(redirected.stdoutText.contains("\"url\""))
    }

    @Test func urlSessionRefusesOptionsItCannotHonour() async throws {
        let result = try await CourierProcess.run([
            "--transport", "urlsession", "--verify", "no", "http://127.0.0.1:9/get",
        ])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--verify cannot be used with --transport urlsession"))
    }
}
