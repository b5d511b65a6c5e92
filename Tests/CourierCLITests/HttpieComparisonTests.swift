import CourierTestSupport
import Foundation
import Testing

/// Sends the same command lines with httpie (`$COURIER_HTTPIE`, the `http` from PyPI's
/// `httpie`) and with `courier` to a real httpbin (`$COURIER_HTTPBIN_URL`), and compares what
/// httpbin says it received. Skipped when either is unset, unless `CI=true`, where that fails.
///
/// Differences Courier documents and that are removed before comparing: User-Agent,
/// Accept-Encoding and Connection (httpie asks for gzip and keep-alive explicitly), the
/// multipart boundary, `+` for a space in a query (Courier writes `%20`), Content-Length (httpie
/// escapes non-ASCII JSON text as `\u`, Courier sends UTF-8; boundaries differ in length) and
/// the raw `data` text of JSON and multipart bodies (their parsed `json`, `form` and `files`
/// are compared instead).
@Suite struct HttpieComparisonTests {
    struct Setup {
        let httpie: String
        let httpbin: String
    }

    static func setup() throws -> Setup? {
        let environment = ProcessInfo.processInfo.environment
        guard let httpie = environment["COURIER_HTTPIE"], let httpbin = environment["COURIER_HTTPBIN_URL"] else {
            if environment["CI"] == "true" {
                Issue.record("COURIER_HTTPIE and COURIER_HTTPBIN_URL must be set when CI=true")
            }
            return nil
        }
        return Setup(httpie: httpie, httpbin: httpbin.hasSuffix("/") ? String(httpbin.dropLast()) : httpbin)
    }

    /// Each case: the arguments after the URL path (`{url}` is replaced by httpbin's base URL).
    static let cases: [[String]] = [
        ["GET", "{url}/anything", "q==1", "q==two words", "x==ü"],
        ["POST", "{url}/anything", "name=Ann", "age:=30", "tags:=[\"a\",\"b\"]", "nested[k]=v"],
        ["--form", "POST", "{url}/anything", "a=1", "b=x y&z", "a=2"],
        ["--form", "POST", "{url}/anything", "n:=42", "s:=\"quoted text\"", "plain=x"],
        ["--form", "POST", "{url}/anything", "field=value", "file@{fixture}"],
        ["--multipart", "PUT", "{url}/anything", "only=field"],
        ["GET", "{url}/anything", "X-Custom:abc", "X-Empty;", "Accept:text/plain"],
        ["--auth", "user:secret", "GET", "{url}/anything"],
        ["--follow", "GET", "{url}/redirect/2"],
        ["--follow", "POST", "{url}/redirect-to?url=/anything&status_code=307", "kept=yes"],
        ["--raw", "raw body text", "PATCH", "{url}/anything", "Content-Type:text/plain"],
        ["GET", "{authurl}/basic-auth/user/pass"],
        ["--auth", "other:creds", "GET", "{authurl}/anything"],
        ["--auth", "user:secret", "GET", "{url}/anything", "Authorization:Bearer item"],
        ["GET", "{authurl}/anything", "Authorization:Bearer item"],
        ["GET", "{url}/anything", "Authorization:Bearer item"],
        ["GET", "{url}/anything/a/./b/../c"],
        ["--path-as-is", "GET", "{url}/anything/a/./b/../c"],
        ["--form", "POST", "{url}/anything", "a=1", "doc@{fixture};type=text/x-note"],
        ["--follow", "--max-redirects", "5", "GET", "{url}/relative-redirect/3"],
        ["delete", "{url}/anything", "x==1"],
        ["POST", "{url}/anything", "[]=x", "[]:=2", "[3]:={\"k\": [1]}"],
        ["POST", "{url}/anything", "a\\[b\\]=c", "k\\\\=v", "id:=18446744073709551615", "d[x][]:=1.5"],
        ["-A", "digest", "--auth", "user:passwd", "GET", "{url}/digest-auth/auth/user/passwd/MD5"],
        ["-A", "digest", "--auth", "user:passwd", "GET", "{url}/digest-auth/auth/user/passwd/SHA-256"],
        ["-A", "bearer", "--auth", "tok123", "GET", "{url}/bearer"],
    ]

    @Test(arguments: cases.indices)
    func httpbinReceivesTheSame(index: Int) async throws {
        guard let setup = try Self.setup() else { return }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = directory.appendingPathComponent("fixture.txt")
        try Data("fixture file contents\n".utf8).write(to: fixture)
        let arguments = Self.cases[index].map {
            $0.replacingOccurrences(of: "{url}", with: setup.httpbin).replacingOccurrences(
                of: "{fixture}", with: fixture.path
            )
            .replacingOccurrences(
                of: "{authurl}", with: setup.httpbin.replacingOccurrences(of: "://", with: "://user:pass@"))
        }

        let courier = try await CourierProcess.run(["--ignore-stdin", "--print=b", "--pretty=none"] + arguments)
        let httpie = try await Self.runHttpieOffThePool(
            setup.httpie, ["--ignore-stdin", "--print=b", "--pretty=none"] + arguments)
        #expect(courier.status == 0, "courier: \(courier.stderr)")
        #expect(httpie.status == 0, "http: \(httpie.stderr)")
        let courierView = try Self.normalized(courier.stdout)
        let httpieView = try Self.normalized(httpie.stdout)
        #expect(courierView == httpieView, "arguments: \(arguments)")
    }

    /// What each tool prints under `--pretty=format`, the format options and `--response-mime`:
    /// headers sorted or not, JSON reindented, its keys sorted or not, left as it came, a body
    /// formatted by the type given rather than the one served (`Date` and `Server` removed).
    @Test(arguments: [
        ["--pretty=format"], ["--pretty=format", "--unsorted"],
        ["--pretty=format", "--format-options=json.indent:2,json.sort_keys:false"],
        ["--pretty=format", "--unsorted", "--format-options=headers.sort:true"],
        ["--pretty=format", "--format-options", "json.indent:0", "--sorted"],
        ["--pretty=format", "--sorted", "--format-options=json.format:false"],
        ["--pretty=format", "--response-mime=application/octet-stream"],
        ["--pretty=format", "--response-mime=application/json", "{url}/response-headers?Content-Type=x/y&b=1&a=2"],
    ])
    func formattedOutputIsPrintedTheSame(options: [String]) async throws {
        guard let setup = try Self.setup() else { return }
        let url = options.last?.hasPrefix("{url}") == true ? "" : "{url}/response-headers?Zeta=1&alpha=2&Beta=3"
        let arguments = (["--ignore-stdin", "--print=hb"] + options + [url]).filter { !$0.isEmpty }.map {
            $0.replacingOccurrences(of: "{url}", with: setup.httpbin)
        }
        let courier = try await CourierProcess.run(arguments)
        let httpie = try await Self.runHttpieOffThePool(setup.httpie, arguments)
        #expect(courier.status == 0, "courier: \(courier.stderr)")
        #expect(httpie.status == 0, "http: \(httpie.stderr)")
        func view(_ output: Data) -> String {
            // CRLF is one Character to Swift, so lines are split on any line end.
            String(decoding: output, as: UTF8.self).split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
                .filter { !$0.hasPrefix("Date:") && !$0.hasPrefix("Server:") }.joined(separator: "\n")
        }
        #expect(view(courier.stdout) == view(httpie.stdout), "\(options)")
        #expect(view(courier.stdout).contains("\"Content-Length\": "), "a body was printed")
    }

    /// Coloured output has httpie's text once the colours are taken out (their palettes differ):
    /// `--pretty=colors` and `json.format:false` colour JSON in its own layout, `--pretty=all`
    /// reindents it, and a coloured body ends with a line feed, as httpie's does.
    @Test(arguments: [["--pretty=colors"], ["--pretty=all", "--format-options=json.format:false"], ["--pretty=all"]])
    func colouredOutputHasTheSameText(options: [String]) async throws {
        guard let setup = try Self.setup() else { return }
        for path in ["/json", "/response-headers?Zeta=1&alpha=2"] {
            let arguments = ["--ignore-stdin", "--print=b"] + options + [setup.httpbin + path]
            let courier = try await CourierProcess.run(arguments)
            let httpie = try await Self.runHttpieOffThePool(setup.httpie, arguments)
            #expect(courier.status == 0 && httpie.status == 0, "\(courier.stderr) \(httpie.stderr)")
            func text(_ output: Data) -> String {
                String(decoding: output, as: UTF8.self).replacing(/\u{1B}\[[0-9;]*m/, with: "")
            }
            #expect(text(courier.stdout) == text(httpie.stdout), "\(options) \(path)")
            #expect(courier.stdout.contains(0x1B), "coloured")
        }
    }

    /// A session written by one tool is used by the other: headers, auth and cookies arrive the same.
    @Test func sessionsCarryTheSameStateAcrossBothTools() async throws {
        guard let setup = try Self.setup() else { return }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let common = ["--ignore-stdin", "--print=b", "--pretty=none"]
        var views: [String] = []
        for (writer, reader) in [("courier", "http"), ("http", "courier"), ("courier", "courier"), ("http", "http")] {
            let file = directory.appendingPathComponent("\(writer)-\(reader).json").path
            let first = [
                "--session=\(file)", "-a", "ann:pw", "\(setup.httpbin)/cookies/set?sid=abc&theme=dark", "X-Team:blue",
            ]
            let second = ["--session=\(file)", "\(setup.httpbin)/anything", "X-Extra:1"]
            func run(_ tool: String, _ arguments: [String]) async throws -> CourierProcess.Result {
                tool == "courier"
                    ? try await CourierProcess.run(common + arguments)
                    : try await Self.runHttpieOffThePool(setup.httpie, common + arguments)
            }
            #expect(try await run(writer, first).status == 0)
            let result = try await run(reader, second)
            #expect(result.status == 0, "\(writer) -> \(reader): \(result.stderr)")
            views.append(try Self.normalized(result.stdout))
        }
        #expect(Set(views).count == 1, "\(views)")
    }

    /// `--download --output` and `--download --continue` leave the same file with both tools.
    @Test func downloadsAndContinueLeaveTheSameFile() async throws {
        guard let setup = try Self.setup() else { return }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [Data] = []
        for tool in ["courier", "http"] {
            let whole = directory.appendingPathComponent("\(tool)-whole.bin").path
            let partial = directory.appendingPathComponent("\(tool)-partial.bin")
            let url = "\(setup.httpbin)/range/5000"
            try Data(String(repeating: "abcdefghijklmnopqrstuvwxyz", count: 100).utf8.prefix(1000)).write(to: partial)
            for arguments in [
                ["--download", "--output", whole, url], ["--download", "--continue", "--output", partial.path, url],
            ] {
                let all = ["--ignore-stdin"] + arguments
                let result =
                    tool == "courier"
                    ? try await CourierProcess.run(all) : try await Self.runHttpieOffThePool(setup.httpie, all)
                #expect(result.status == 0, "\(tool): \(result.stderr)")
            }
            files.append(try Data(contentsOf: URL(fileURLWithPath: whole)))
            files.append(try Data(contentsOf: partial))
        }
        #expect(files.allSatisfy { $0 == files[0] } && files[0].count == 5000)
    }

    /// ``runHttpie(_:_:)`` on a thread of its own (see ``CourierProcess/run(_:stdin:pipeStdin:environment:directory:shell:limit:)``).
    static func runHttpieOffThePool(_ path: String, _ arguments: [String]) async throws -> CourierProcess.Result {
        try await CourierProcess.offThePool { try runHttpie(path, arguments) }
    }

    static func runHttpie(_ path: String, _ arguments: [String]) throws -> CourierProcess.Result {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CourierProcess.Result(
            status: process.terminationStatus, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// httpbin's answer without the documented differences, re-serialized with sorted keys.
    static func normalized(_ body: Data) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any], "not JSON")
        if var headers = object["headers"] as? [String: Any] {
            for name in ["User-Agent", "Accept-Encoding", "Connection", "Content-Length"] { headers[name] = nil }
            if let type = headers["Content-Type"] as? String, let range = type.range(of: "boundary=") {
                headers["Content-Type"] = String(type[..<range.upperBound]) + "B"
            }
            object["headers"] = headers
        }
        // Courier escapes a space in a query as %20 (AFNetworking's set), httpie as +.
        if let url = object["url"] as? String { object["url"] = url.replacingOccurrences(of: "+", with: "%20") }
        let type = ((object["headers"] as? [String: Any])?["Content-Type"] as? String) ?? ""
        if type.hasPrefix("multipart/") || !(object["json"] is NSNull) { object["data"] = nil }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
        return String(decoding: data, as: UTF8.self)
    }
}
