import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `courier --curl ...` prints a curl command line; running it with curl must make the test
/// server receive what `courier ...` itself sends. Skipped when curl is not installed, unless
/// `CI=true`, where that fails.
@Suite(.timeLimit(.minutes(3))) struct CurlExportTests {
    static func curlAvailable() -> Bool {
        let found = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].contains {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        if !found, ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("curl must be installed when CI=true")
        }
        return found
    }

    /// Each case: courier's arguments (`{base}` is the server's URL); the body is the stdin of both tools when given.
    static let cases: [(arguments: [String], stdin: String?)] = [
        (["{base}/anything", "q==a b", "X-Quote:it's \"quoted\"", "X-Empty;"], nil),
        (["POST", "{base}/anything", "name=Ann", "age:=30", "nested[k]=v"], nil),
        (["-f", "PUT", "{base}/anything", "a=1", "b=x y&z", "a=2"], nil),
        (
            [
                "--multipart", "{base}/anything", "text=it's", "doc@{dir}/it's a file.txt;type=text/x-note",
                "plain@{dir}/plain.bin",
            ], nil
        ),
        (["-a", "ann:p@ss word", "DELETE", "{base}/anything"], nil),
        (
            ["--raw", "binary\u{01}\u{7F}\\%'", "PATCH", "{base}/anything", "Content-Type:application/octet-stream"],
            nil
        ),
        (["PUT", "{base}/anything", "Content-Type:text/plain"], "from stdin\n"),
        (["HEAD", "{base}/anything"], nil),
    ]

    @Test(arguments: cases.indices)
    func curlSendsWhatCourierSends(index: Int) async throws {
        guard Self.curlAvailable() else { return }
        let server = try await TestServer.start()
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("note body\n".utf8).write(to: directory.appendingPathComponent("it's a file.txt"))
        try Data([0, 1, 2, 255]).write(to: directory.appendingPathComponent("plain.bin"))
        let (arguments, stdin) = Self.cases[index]
        let expanded = arguments.map {
            $0.replacingOccurrences(of: "{base}", with: server.baseURL.absoluteString).replacingOccurrences(
                of: "{dir}", with: directory.path)
        }
        let input = stdin.map { Data($0.utf8) }
        let sent = try await CourierProcess.run(
            ["--ignore-stdin"].filter { _ in input == nil } + ["--print=hb"] + expanded, stdin: input)
        let printed = try await CourierProcess.run(
            ["--curl"] + ["--ignore-stdin"].filter { _ in input == nil } + expanded, stdin: input)
        #expect(printed.status == 0, "\(printed.stderr)")
        let command = printed.stdoutText.trimmingCharacters(in: .newlines)
        let curl = try Self.runShell(command + " -s -i", stdin: input)
        try await server.shutdown()
        #expect(curl.status == 0, "\(command): \(curl.stderr)")
        #expect(try Self.received(curl.stdout) == Self.received(sent.stdout), "\(command)")
    }

    /// What the server says it received, without what curl legitimately does its own way:
    /// the multipart boundary, Content-Length and the raw text of a multipart body; and without
    /// Accept-Encoding, which Courier's transport adds as it sends (it is not in the `Request`).
    static func received(_ output: Data) throws -> String {
        let text = String(decoding: output, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        let status = text.split(separator: "\n").first.map(String.init) ?? ""
        guard let bodyStart = text.range(of: "\n\n"), !text[bodyStart.upperBound...].isEmpty else { return status }
        let body = Data(text[bodyStart.upperBound...].utf8)
        var object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        if var headers = object["headers"] as? [String: Any] {
            headers["Content-Length"] = nil
            headers["Accept-Encoding"] = nil
            if let type = headers["Content-Type"] as? String, type.hasPrefix("multipart/") {
                headers["Content-Type"] = "multipart/form-data"
                object["data"] = nil
            }
            object["headers"] = headers
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
        return status + "\n" + String(decoding: data, as: UTF8.self)
    }

    static func runShell(_ command: String, stdin: Data?) throws -> CourierProcess.Result {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin == nil ? FileHandle(forReadingAtPath: "/dev/null") : input
        try process.run()
        if let stdin {
            try input.fileHandleForWriting.write(contentsOf: stdin)
            try input.fileHandleForWriting.close()
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CourierProcess.Result(
            status: process.terminationStatus, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }
}
