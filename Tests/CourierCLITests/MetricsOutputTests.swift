import CourierTestServer
import Foundation
import Testing

/// `--meta` and `-v` print the exchange's metrics (issue 17); status lines name the version the
/// response came in.
@Suite(.timeLimit(.minutes(3))) struct MetricsOutputTests {
    private func withServer<T>(_ body: (TestServer, String) async throws -> T) async throws -> T {
        let server = try await TestServer.start()
        do {
            let result = try await body(server, "http://127.0.0.1:\(server.port)")
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    @Test func metaPrintsOnlyTheMetrics() async throws {
        try await withServer { server, base in
            let result = try await CourierProcess.run(["--meta", "\(base)/get"])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdoutText.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("Elapsed time: ") == true)
            #expect(lines.contains("Attempt 1: GET \(base)/get → 200"))
            #expect(lines.contains("  connection: HTTP/1.1, new connection, remote 127.0.0.1:\(server.port)"))
            #expect(
                lines.contains {
                    $0.hasPrefix("  time: start ") && $0.contains("first byte") && $0.contains("output done")
                })
            #expect(lines.contains("  bytes: sent 0 B"))
            #expect(!result.stdoutText.contains("\"url\""))
        }
    }

    @Test func eachRedirectHopIsAnAttempt() async throws {
        try await withServer { _, base in
            let result = try await CourierProcess.run(["--meta", "--follow", "\(base)/redirect/1"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText.contains("Attempt 1: GET \(base)/redirect/1 → 302\n"))
            #expect(result.stdoutText.contains("Attempt 2: GET \(base)/get (redirect) → 200\n"))
            #expect(result.stdoutText.contains("reused connection"))
        }
    }

    @Test func doubleVerboseEndsWithTheMetricsAndKeepsPasswordsOut() async throws {
        try await withServer { server, _ in
            let single = try await CourierProcess.run(["-v", "http://127.0.0.1:\(server.port)/get"])
            #expect(single.stdoutText.contains("HTTP/1.1 200 OK\r\n"))
            #expect(!single.stdoutText.contains("Elapsed time: "), "-v is httpie's: the exchange without metrics")
            let result = try await CourierProcess.run(["-vv", "http://ann:hunter2@127.0.0.1:\(server.port)/get"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText.contains("HTTP/1.1 200 OK\r\n"))
            #expect(result.stdoutText.contains("\nElapsed time: "))
            #expect(!result.stdoutText.contains("hunter2"))
            #expect(result.stdoutText.hasSuffix("\n"))
        }
    }

    @Test func printWithoutMLeavesTheMetricsOut() async throws {
        try await withServer { _, base in
            let result = try await CourierProcess.run(["--print=h", "\(base)/get"])
            #expect(result.stdoutText.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(!result.stdoutText.contains("Elapsed time"))
        }
    }
}
