import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `courier` started with stdin, stdout or stderr closed (`<&-`, as under cron or a daemon
/// wrapper; issue 48): a closed stdin is no body, a closed stdout is an ordinary write error,
/// and no descriptor of the event loop is taken for one of them.
@Suite(.timeLimit(.minutes(3))) struct ClosedStandardDescriptorTests {
    func withServer(_ body: (String) async throws -> Void) async throws {
        try await CourierProcess.withServer { base, _ in try await body(base) }
    }

    @Test func aClosedStdinSendsAGetWithoutABody() async throws {
        try await withServer { base in
            let result = try await CourierProcess.run(["\(base)/anything"], shell: .init(redirections: "<&-"))
            #expect(result.status == 0, "\(result.stderr)")
            let echo = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
            #expect(echo["method"] as? String == "GET", "\(result.stdoutText)")
            #expect(echo["data"] as? String == "", "\(result.stdoutText)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            // A download too.
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let download = try await CourierProcess.run(
                ["-d", "-o", "x.bin", "\(base)/bytes/100000"], directory: directory,
                shell: .init(redirections: "<&-"))
            #expect(download.status == 0, "\(download.stderr)")
            #expect(
                try Data(contentsOf: directory.appendingPathComponent("x.bin"))
                    == Data(TestServer.expectedBytes(count: 100_000)))
        }
    }

    @Test func aClosedStdoutIsAOneLineErrorNotASignal() async throws {
        try await withServer { base in
            let result = try await CourierProcess.run(
                ["\(base)/bytes/100000"], shell: .init(redirections: "<&- >&-"), limit: 30)
            #expect(result.status == 1, "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("stdout was closed"), "\(result.stderr)")
        }
    }

    @Test func aClosedStderrStillPrintsTheBody() async throws {
        try await withServer { base in
            let result = try await CourierProcess.run(["\(base)/bytes/1000"], shell: .init(redirections: "2>&-"))
            #expect(result.status == 0)
            #expect(result.stdout == Data(TestServer.expectedBytes(count: 1000)))
            // A failure with nowhere to say so still exits non-zero, without a signal.
            let failed = try await CourierProcess.run(
                ["http://127.0.0.1:9/refused"], shell: .init(redirections: "<&- >&- 2>&-"), limit: 30)
            #expect(failed.status == 1)
        }
    }
}
