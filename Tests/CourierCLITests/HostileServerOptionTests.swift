import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@testable import CourierCLI

/// The CLI against what issue 48 found: bodies that compress well are not bombs, and TLS 1.0
/// and 1.1 need `--ssl` (an `openssl s_server` that offers nothing newer, where openssl exists).
@Suite(.timeLimit(.minutes(3))) struct HostileServerOptionTests {
    /// 8 MiB of zeros at 158:1, as nginx's `gzip on` makes of a repetitive log (about 120:1):
    /// printed whole, where the old 100:1 limit past 1 MiB stopped it.
    @Test func aWellCompressedBodyIsPrintedWhole() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let result = try await CourierProcess.run(["\(server.baseURL.absoluteString)/gzip-bomb?size=8388608"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.count == 8_388_355)
    }

    @Test(arguments: [("off", 0), ("1000", 0), ("0", 1), ("lots", 1)])
    func decompressionRatioTakesANumberOrOff(value: String, status: Int32) async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let result = try await CourierProcess.run([
            "--decompression-ratio", value, "\(server.baseURL.absoluteString)/gzip",
        ])
        #expect(result.status == status, "\(result.stderr)")
    }

    /// `openssl s_server` offering TLS 1.1 at most: refused by default with a line that names
    /// `--ssl`, reached with `--ssl tls1.1`, as curl needs `--tlsv1.1` (and a lowered OpenSSL
    /// security level) for it.
    @Test func tlsBelow12NeedsTheSSLOption() async throws {
        guard
            let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { return }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        let made = try Self.runToEnd(
            openssl,
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=127.0.0.1",
            ])
        try #require(made == 0)
        let port = try Self.freePort()
        let server = ChildProcess()
        server.executableURL = URL(fileURLWithPath: openssl)
        server.arguments = [
            "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-tls1_1",
            "-cipher", "DEFAULT@SECLEVEL=0", "-www", "-quiet",
        ]
        server.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        server.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        server.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try server.run()
        defer {
            // SIGKILL: the test runner may leave SIGTERM ignored, and children inherit that.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        let url = "https://127.0.0.1:\(port)/"
        var refused = try await CourierProcess.run(["--verify", "no", url], limit: 30)
        for _ in 0..<50 where refused.stderr.contains("refused") || refused.stderr.contains("connect") {
            // s_server may not listen yet.
            try await Task.sleep(for: .milliseconds(100))
            refused = try await CourierProcess.run(["--verify", "no", url], limit: 30)
        }
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("--ssl"), "\(refused.stderr)")
        let reached = try await CourierProcess.run(["--verify", "no", "--ssl", "tls1", url], limit: 30)
        #expect(reached.status == 0, "\(reached.stderr)")
    }

    private static func runToEnd(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    private static func freePort() throws -> Int {
        let listener = try SilentListener()
        defer { listener.close() }
        return listener.port
    }
}

/// `--max-time` bounds connecting and the TLS handshake, as curl's does: against a listener that
/// never accepts, the process ends with the deadline's message instead of waiting out the
/// transport's 10 s connect timeout (the run's limit is 9 s, under that timeout).
@Suite(.timeLimit(.minutes(3))) struct MaxTimeStageTests {
    @Test func maxTimeBoundsAStalledHandshake() async throws {
        let listener = try SilentListener()
        defer { listener.close() }  // and alive until then: ARC may end an object after its last use
        let port = listener.port
        let result = try await CourierProcess.run(
            ["--max-time", "1", "--verify", "no", "https://127.0.0.1:\(port)/"], limit: 9)
        #expect(result.status == 2, "\(result.stderr)")
        // The session's deadline and the connect timeout it bounds run out together: whichever
        // is first names the stage ("before the response began", or AsyncHTTPClient's
        // "TLS handshake timeout").
        #expect(
            result.stderr.contains("before the response began") || result.stderr.contains("handshake"),
            "\(result.stderr)")
    }
}

/// What the hunt for more of issue 48 found in the command line's own input and output.
@Suite struct HostileShapesTests {
    /// 500 nested arrays around 20,000 zeros: 41 KB that indent to about 40 MB (a 400 KB one
    /// took 847 MB and 9.5 s; 2 MB aborted the process). Past 16 times the body it is printed as
    /// it came, as text that is not JSON is.
    @Test func aBodyThatWouldIndentToHundredsOfTimesItsSizeIsPrintedAsSent() throws {
        let hostile =
            String(repeating: "[", count: 500) + Array(repeating: "0", count: 20_000).joined(separator: ",")
            + String(repeating: "]", count: 500)
        let output = JSONOutput.reindented(JSONPrinter(pretty: true, colors: false))
        #expect(output.render(Array(hostile.utf8)) == nil)
        let ordinary = #"{"b": [1, 2], "a": {"c": null}}"#
        let formatted = try #require(output.render(Array(ordinary.utf8)))
        #expect(String(decoding: formatted, as: UTF8.self).contains("\n    \"a\": {\n        \"c\": null"))
    }

    /// `a[x][x]…` 5,000 deep ended in SIGSEGV (the printer's recursion overflowed the stack)
    /// before anything was sent; key paths now stop at the depth JSON values stop at.
    @Test func aKeyPathDeeperThanJSONAllowsIsAUsageError() async throws {
        let deep = "a" + String(repeating: "[x]", count: 5_000) + "=1"
        let result = try await CourierProcess.run(["--offline", "POST", "http://127.0.0.1:9/", deep])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("nesting deeper than 512"), "\(result.stderr)")
        let fine = "a" + String(repeating: "[x]", count: 400) + "=1"
        #expect(try await CourierProcess.run(["--offline", "POST", "http://127.0.0.1:9/", fine]).status == 0)
    }

    /// `field=@/dev/zero` grew to 6 GB in 15 s (`:=@` to 9 GB); an embedded file now stops at
    /// 64 MiB with a line that points to the items that stream a file.
    @Test(arguments: ["f=@/dev/zero", "f:=@/dev/zero"])
    func anEndlessFileEmbeddedInTheBodyIsRefusedAtItsLimit(item: String) async throws {
        let result = try await CourierProcess.run(["--offline", "POST", "http://127.0.0.1:9/", item])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("too large to embed"), "\(result.stderr)")
    }
}

/// `-o -` is stdout, as curl and httpie read it; it wrote a file named `-`.
@Suite(.timeLimit(.minutes(3))) struct OutputDashTests {
    @Test func outputDashIsStdout() async throws {
        let server = try await TestServer.start()
        defer { Task { try await server.shutdown() } }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await CourierProcess.run(
            ["-b", "-o", "-", "\(server.baseURL.absoluteString)/get"], directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains("\"url\""))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("-").path))
        let download = try await CourierProcess.run(
            ["-d", "-o", "-", "\(server.baseURL.absoluteString)/get"], directory: directory)
        #expect(download.status != 0)
        #expect(download.stderr.contains("stdout"), "\(download.stderr)")
    }
}
