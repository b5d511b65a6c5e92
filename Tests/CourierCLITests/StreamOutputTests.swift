import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `--stream`, event streams printed as they arrive, a body written once (no temporary file),
/// and what a failed write to stdout does: a closed pipe or a full disk stops the exchange at
/// once with one line on stderr and a non-zero exit.
@Suite(.timeLimit(.minutes(3))) struct StreamOutputTests {
    func withServer<T>(_ body: (TestServer, String) async throws -> T) async throws -> T {
        let server = try await TestServer.start()
        do {
            let result = try await body(server, server.baseURL.absoluteString)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// Polls `condition` every 10 ms for at most `bound` seconds; the caller asserts on the
    /// outcome, never on the time it took.
    func eventually(within bound: Double = 30, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(bound)
        while !condition() {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// Starts `courier` with stdout on a pipe the test reads, stderr to a file.
    func start(_ arguments: [String], environment: [String: String] = [:]) throws -> (ChildProcess, Pipe, URL) {
        let process = ChildProcess()
        process.executableURL = try CourierProcess.executable()
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "COURIER_FORCE_TTY")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let errURL = try CourierProcess.scratchDirectory().appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        return (process, pipe, errURL)
    }

    func finish(_ process: ChildProcess, errURL: URL) async -> (status: Int32, stderr: String) {
        if await !eventually({ !process.isRunning }) {
            process.terminate()
            Issue.record("courier did not exit")
        }
        process.waitUntilExit()
        let stderr = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: errURL.deletingLastPathComponent())
        return (process.terminationStatus, stderr)
    }

    @Test func ndjsonLinesAreFormattedOneByOneWithStream() async throws {
        try await withServer { _, base in
            let result = try await CourierProcess.run(["--stream", "--pretty=format", "\(base)/ndjson?count=2"])
            #expect(result.status == 0)
            #expect(
                result.stdoutText
                    == "{\n    \"id\": 1,\n    \"name\": \"item 1\"\n}\n{\n    \"id\": 2,\n    \"name\": \"item 2\"\n}\n"
            )
            let raw = try await CourierProcess.run(["-S", "\(base)/ndjson?count=2&crlf=1"])
            #expect(raw.stdoutText == "{\"id\":1,\"name\":\"item 1\"}\r\n{\"id\":2,\"name\":\"item 2\"}\r\n")
        }
    }

    @Test func eventStreamLinesColouredOnATerminal() async throws {
        try await withServer { _, base in
            let result = try await CourierProcess.run(
                ["-b", "\(base)/sse?count=1&event=tick"], environment: ["COURIER_FORCE_TTY": "1"])
            #expect(result.status == 0)
            let name = { (text: String) in "\u{1B}[36m\(text)\u{1B}[0m" }
            #expect(result.stdoutText == "\(name("id")): 1\n\(name("event")): tick\n\(name("data")): event 1\n\n")
        }
    }

    @Test func anEventStreamIsPrintedAsItArrivesWithoutTheFlag() async throws {
        try await withServer { _, base in
            // One event a second for a day: the first must be out long before the body ends.
            let (process, pipe, errURL) = try start(["\(base)/sse?count=86400&delay_ms=1000"])
            var received = Data()
            let reader = pipe.fileHandleForReading
            while !String(decoding: received, as: UTF8.self).contains("data: event 1\n\n") {
                // What the pipe has now (read(upToCount:) would wait for the whole count).
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                received.append(chunk)
            }
            #expect(String(decoding: received, as: UTF8.self).hasPrefix("id: 1\ndata: event 1\n\n"))
            #expect(process.isRunning, "the first event arrived only when the body ended")
            process.terminate()
            let outcome = await finish(process, errURL: errURL)
            #expect(outcome.status == 143)
        }
    }

    @Test func aClosedPipeStopsTheExchangeAtOnceWith141() async throws {
        try await withServer { server, base in
            let (process, pipe, errURL) = try start(["\(base)/stream-bytes/\(10 << 30)"])
            let head = try pipe.fileHandleForReading.read(upToCount: 10)
            #expect(head?.count == 10)
            try pipe.fileHandleForReading.close()
            let outcome = await finish(process, errURL: errURL)
            #expect(outcome.status == 141)
            #expect(outcome.stderr == "courier: error: output closed before everything was written (broken pipe)\n")
            // The exchange was cancelled, not left to download 10 GiB.
            #expect(await eventually { server.stats.connectionsOpen == 0 })
        }
    }

    @Test func aFullDiskIsAnErrorNotATruncatedSuccess() async throws {
        try await withServer { _, base in
            for arguments in [
                ["\(base)/bytes/1000000"], ["--pretty=format", "\(base)/json"], ["-S", "\(base)/ndjson"],
            ] {
                let process = ChildProcess()
                process.executableURL = try CourierProcess.executable()
                process.arguments = arguments
                process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
                process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
                let errURL = try CourierProcess.scratchDirectory().appendingPathComponent("stderr")
                _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
                process.standardError = try FileHandle(forWritingTo: errURL)
                try process.run()
                let outcome = await finish(process, errURL: errURL)
                #expect(outcome.status == 1, "\(arguments)")
                #expect(outcome.stderr == "courier: error: cannot write output: No space left on device\n")
            }
        }
    }

    @Test func aPrintedBodyLeavesNoTemporaryFile() async throws {
        try await withServer { _, base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            // A body that is still arriving when the check runs: the temporary directory stays
            // empty throughout, not only after the cleanup.
            let (process, pipe, errURL) = try start(
                ["\(base)/drip?numbytes=200&duration=60"], environment: ["TMPDIR": directory.path])
            let first = try pipe.fileHandleForReading.read(upToCount: 1)
            #expect(first == Data("*".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
            process.terminate()
            #expect(await finish(process, errURL: errURL).status == 143)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
        }
    }
}
