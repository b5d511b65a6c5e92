import CourierDigest
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The CLI as a subprocess against the in-process test server on 127.0.0.1: every item kind
/// reaches the server as sent, and every exit code is produced by a real exchange.
@Suite(.timeLimit(.minutes(3))) struct LiveServerTests {
    /// Runs `courier` with `arguments` against a fresh server; `{base}` in an argument is its base URL.
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

    func json(_ result: CourierProcess.Result) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: result.stdout)
        return try #require(object as? [String: Any], "not a JSON object: \(result.stdoutText) / \(result.stderr)")
    }

    @Test func jsonQueryAndHeaders() async throws {
        try await withServer { _, base in
            let result = try await CourierProcess.run([
                "POST", "\(base)/post", "q==a b", "X-Token:t1", "name=Ann", "age:=30", "tags:=[\"x\"]",
            ])
            #expect(result.status == 0)
            let body = try json(result)
            #expect((body["args"] as? [String: Any])?["q"] as? String == "a b")
            let sent = try #require(body["json"] as? [String: Any])
            #expect(sent["name"] as? String == "Ann")
            #expect(sent["age"] as? Int == 30)
            #expect(sent["tags"] as? [String] == ["x"])
            let headers = try #require(body["headers"] as? [String: Any])
            #expect(headers["X-Token"] as? String == "t1")
            #expect(headers["Content-Type"] as? String == "application/json")
        }
    }

    @Test func formAndMultipartWithFiles() async throws {
        try await withServer { _, base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try Data("file text".utf8).write(to: directory.appendingPathComponent("note.txt"))
            try Data("from file".utf8).write(to: directory.appendingPathComponent("value.txt"))
            let form = try await CourierProcess.run(
                ["-f", "\(base)/post", "a=1", "a=2", "b=@value.txt"], directory: directory)
            let formBody = try json(form)
            #expect((formBody["form"] as? [String: Any])?["b"] as? String == "from file")
            #expect((formBody["form"] as? [String: Any])?["a"] as? [String] == ["1", "2"])

            let multipart = try await CourierProcess.run(
                ["-f", "\(base)/post", "a=1", "doc@note.txt;type=text/x-note"], directory: directory)
            let multipartBody = try json(multipart)
            #expect((multipartBody["files"] as? [String: Any])?["doc"] as? String == "file text")
            #expect((multipartBody["form"] as? [String: Any])?["a"] as? String == "1")
        }
    }

    @Test func largeFileUploadStreamsIntact() async throws {
        try await withServer { _, base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let payload = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
            try payload.write(to: directory.appendingPathComponent("big.bin"))
            let digest = SHA256.hash(data: payload).hexString
            let raw = try await CourierProcess.run(["\(base)/upload", "@big.bin"], directory: directory)
            let rawBody = try json(raw)
            #expect(rawBody["sha256"] as? String == digest)
            #expect(rawBody["content_length"] as? String == "3000000")
            let chunked = try await CourierProcess.run(
                ["--chunked", "\(base)/upload", "@big.bin"], directory: directory)
            let chunkedBody = try json(chunked)
            #expect(chunkedBody["sha256"] as? String == digest)
            #expect(chunkedBody["transfer_encoding"] as? String == "chunked")
            let multipart = try await CourierProcess.run(
                ["--multipart", "\(base)/upload", "f@big.bin"], directory: directory)
            let parts = try #require(try json(multipart)["parts"] as? [[String: Any]])
            #expect(parts.first?["sha256"] as? String == digest)
        }
    }

    @Test func stdinBodyAndAuth() async throws {
        try await withServer { _, base in
            let piped = try await CourierProcess.run(
                ["PUT", "\(base)/put", "Content-Type:text/plain"], stdin: Data("piped".utf8))
            #expect(try json(piped)["data"] as? String == "piped")
            let auth = try await CourierProcess.run(["-a", "user:pw", "\(base)/get"])
            #expect(auth.status == 0)
            #expect((try json(auth)["headers"] as? [String: Any])?["Authorization"] as? String == "Basic dXNlcjpwdw==")
        }
    }

    @Test func stdinStreamsChunkedFromAPipeAndWithALengthFromAFile() async throws {
        try await withServer { _, base in
            let payload = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) })
            let digest = SHA256.hash(data: payload).hexString
            let piped = try await CourierProcess.run(["POST", "\(base)/upload"], stdin: payload, pipeStdin: true)
            let pipedBody = try json(piped)
            #expect(pipedBody["sha256"] as? String == digest)
            #expect(pipedBody["transfer_encoding"] as? String == "chunked")
            let file = try await CourierProcess.run(["POST", "\(base)/upload"], stdin: payload)
            let fileBody = try json(file)
            #expect(fileBody["sha256"] as? String == digest)
            #expect(fileBody["content_length"] as? String == "3000000")
            let small = try await CourierProcess.run(
                ["POST", "\(base)/upload"], stdin: Data("short".utf8), pipeStdin: true)
            #expect(try json(small)["content_length"] as? String == "5")
            let empty = try await CourierProcess.run(["\(base)/get", "a==1"], stdin: Data(), pipeStdin: true)
            #expect(empty.status == 0, "\(empty.stderr)")
            let verbose = try await CourierProcess.run(
                ["-v", "POST", "\(base)/upload"], stdin: payload, pipeStdin: true)
            #expect(verbose.stdoutText.contains("NOTE: streamed body (stdin) not shown"))
            #expect(verbose.stdoutText.contains(digest))
        }
    }

    @Test func urlCredentialsAuthenticateAndStayOutOfMessages() async throws {
        try await withServer { server, _ in
            let authority = "ann:hunter2@127.0.0.1:\(server.port)"
            let ok = try await CourierProcess.run(["http://\(authority)/basic-auth/ann/hunter2"])
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(try json(ok)["authenticated"] as? Bool == true)
            let overridden = try await CourierProcess.run([
                "--check-status", "-a", "ann:wrong", "http://\(authority)/basic-auth/ann/hunter2",
            ])
            #expect(overridden.status == 4)
            let verbose = try await CourierProcess.run(["-v", "http://\(authority)/get"])
            #expect(!verbose.stdoutText.contains("hunter2"))
            #expect(
                verbose.stdoutText.contains("\"url\": \"http://127.0.0.1:\(server.port)/get\"")
                    || verbose.stdoutText.contains("http://127.0.0.1:\(server.port)/get"))
            let refused = try await CourierProcess.run(["http://ann:hunter2@127.0.0.1:1/x"])
            #expect(refused.status == 1)
            #expect(!refused.stderr.contains("hunter2"), "\(refused.stderr)")
        }
    }

    @Test func terminalOutputEndsWithALineBreakAfterTheLastColourReset() async throws {
        try await withServer { _, base in
            let tty = ["COURIER_FORCE_TTY": "1"]
            for arguments in [
                ["\(base)/get"], ["-v", "\(base)/post", "a=1"], ["\(base)/robots.txt"],
                ["--pretty=none", "\(base)/get"],
                ["--pretty=colors", "\(base)/get"], ["\(base)/base64/aGk="],
            ] {
                let result = try await CourierProcess.run(arguments, environment: tty)
                #expect(result.status == 0)
                #expect(
                    result.stdoutText.hasSuffix("\n"), "\(arguments): \(result.stdoutText.suffix(40).debugDescription)")
                #expect(!result.stdoutText.hasSuffix("\n\n\n"), "\(arguments)")
                #expect(!result.stdoutText.contains("\n\u{1B}[0m"), "\(arguments)")
            }
            let colored = try await CourierProcess.run(["\(base)/get"], environment: tty)
            #expect(colored.stdoutText.hasSuffix("\u{1B}[0m\n}\n") || colored.stdoutText.hasSuffix("}\n"))
            #expect(colored.stdoutText.contains("\u{1B}[34m\"args\"\u{1B}[0m"))
            let file = try await CourierProcess.run(["\(base)/get"])
            #expect(!file.stdoutText.contains("\u{1B}"))
        }
    }

    @Test func clientCertificateFilesAreCheckedAndProtocolOptionsAccepted() async throws {
        try await withServer { _, base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let openssl = ChildProcess()
            openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            openssl.arguments = [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "key.pem", "-out", "cert.pem", "-subj", "/CN=courier-test", "-days", "1",
            ]
            openssl.currentDirectoryURL = directory
            openssl.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            openssl.standardError = FileHandle(forWritingAtPath: "/dev/null")
            guard (try? openssl.run()) != nil else {
                if ProcessInfo.processInfo.environment["CI"] == "true" {
                    Issue.record("openssl is needed when CI=true")
                }
                return
            }
            openssl.waitUntilExit()
            let ok = try await CourierProcess.run(
                ["--cert", "cert.pem", "--cert-key", "key.pem", "--http1.1", "\(base)/get"], directory: directory)
            #expect(ok.status == 0, "\(ok.stderr)")
            let noKey = try await CourierProcess.run(["--cert", "cert.pem", "\(base)/get"], directory: directory)
            #expect(noKey.status == 1)
            #expect(noKey.stderr.contains("--cert \"cert.pem\""))
            let notACertificate = try await CourierProcess.run(
                ["--cert", "key.pem", "--cert-key", "key.pem", "\(base)/get"], directory: directory)
            #expect(notACertificate.status == 1)
            #expect(notACertificate.stderr.contains("key.pem"))
            let both = try await CourierProcess.run(["--http1.1", "--http2", "\(base)/get"])
            #expect(both.status == 1)
        }
    }

    @Test func printOptionsShowTheExchange() async throws {
        try await withServer { _, base in
            let verbose = try await CourierProcess.run(["-v", "\(base)/post", "a=1"])
            #expect(verbose.stdoutText.hasPrefix("POST /post HTTP/1.1\r\n"))
            #expect(verbose.stdoutText.contains("\r\n\r\n{\"a\": \"1\"}\n\nHTTP/1.1 200 OK\r\n"))
            let headers = try await CourierProcess.run(["-h", "\(base)/get"])
            #expect(headers.stdoutText.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(headers.stdoutText.hasSuffix("\r\n\r\n"))
            let bytes = try await CourierProcess.run(["--print=b", "\(base)/bytes/5000?seed=3"])
            #expect(bytes.stdout == Data(TestServer.expectedBytes(count: 5000, seed: 3)))
            let terminal = try await CourierProcess.run(["\(base)/bytes/100"], environment: ["COURIER_FORCE_TTY": "1"])
            #expect(terminal.stdoutText.contains("NOTE: binary data not shown in terminal"))
            let pretty = try await CourierProcess.run(["--pretty=format", "-b", "\(base)/get"])
            #expect(pretty.stdoutText.hasPrefix("{\n    \"args\": {},\n"))
        }
    }

    /// With `--follow`, `-v` and `--all` print each redirect's response head and the request
    /// after it as they happen, as httpie does; without either only the final exchange is shown.
    @Test func verboseAndAllPrintEachRedirectFollowed() async throws {
        try await withServer { _, base in
            func startLines(_ arguments: [String]) async throws -> [String] {
                let result = try await CourierProcess.run(arguments)
                #expect(result.status == 0)
                return result.stdoutText.split(whereSeparator: \.isNewline).map(String.init).filter {
                    $0.hasPrefix("GET ") || $0.hasPrefix("HTTP/1.1 ")
                }
            }
            let chain = [
                "GET /redirect/2 HTTP/1.1", "HTTP/1.1 302 Found", "GET /relative-redirect/1 HTTP/1.1",
                "HTTP/1.1 302 Found",
                "GET /get HTTP/1.1", "HTTP/1.1 200 OK",
            ]
            let verbose = try await startLines(["-v", "-F", "\(base)/redirect/2"])
            #expect(verbose == chain)
            let all = try await startLines(["--all", "--print=Hh", "-F", "\(base)/redirect/2"])
            #expect(all == chain)
            let responses = try await startLines(["--all", "--print=h", "-F", "\(base)/redirect/2"])
            #expect(responses == chain.filter { $0.hasPrefix("HTTP") })
            let finalOnly = try await startLines(["--print=Hh", "-F", "\(base)/redirect/2"])
            #expect(finalOnly == ["GET /redirect/2 HTTP/1.1", "HTTP/1.1 200 OK"])
        }
    }

    /// A download that fails mid-body (here the server closes after 300,000 of 600,000 bytes)
    /// keeps what arrived at its destination for `--continue`, as curl and httpie leave it, and
    /// says so in its one error line; no scratch directory is left behind.
    @Test func aDownloadThatFailsMidBodyKeepsItsBytesForContinue() async throws {
        try await withServer { _, base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await CourierProcess.run(
                ["-d", "-o", "part.bin", "\(base)/fault/close-mid-response?after=300000&total=600000"],
                directory: directory)
            #expect(result.status == 1)
            #expect(result.stderr.contains("kept in \"part.bin\""), "\(result.stderr)")
            #expect(result.stderr.hasSuffix("resumes it)\n"))
            let kept = try Data(contentsOf: directory.appendingPathComponent("part.bin"))
            #expect(kept.count == 300_000)
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(left == ["part.bin"])
        }
    }

    /// `-A bearer -a TOKEN` sends the token, over an `Authorization` item, as httpie does;
    /// `-A basic` is the default spelled out; an unknown type is refused in one line. (Digest,
    /// against httpbin: HttpieComparisonTests.)
    @Test func authTypes() async throws {
        try await withServer { _, base in
            let bearer = try await CourierProcess.run(
                ["-A", "bearer", "-a", "tok123", "-b", "\(base)/bearer", "Authorization:Bearer other"])
            #expect(bearer.status == 0, "\(bearer.stderr)")
            #expect(bearer.stdoutText.contains("\"token\": \"tok123\""), "\(bearer.stdoutText)")
            let basic = try await CourierProcess.run(
                ["--check-status", "-A", "basic", "-a", "u:p", "-b", "\(base)/basic-auth/u/p"])
            #expect(basic.status == 0, "\(basic.stderr)")
            let unknown = try await CourierProcess.run(["-A", "ntlm", "-a", "u:p", "\(base)/get"])
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("--auth-type \"ntlm\""))
        }
    }

    /// A request without credentials takes the host's from `$NETRC`, as httpie does;
    /// `--ignore-netrc` and `-a` do without them.
    @Test func netrcCredentials() async throws {
        try await withServer { server, base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let netrc = directory.appendingPathComponent("netrc")
            try Data("machine 127.0.0.1 login ann password pw\n".utf8).write(to: netrc)
            let environment = ["NETRC": netrc.path]
            let url = "\(base)/basic-auth/ann/pw"
            let taken = try await CourierProcess.run(["--check-status", "-b", url], environment: environment)
            #expect(taken.status == 0, "\(taken.stderr)")
            let ignored = try await CourierProcess.run(
                ["--check-status", "--ignore-netrc", "-b", url], environment: environment)
            #expect(ignored.status == 4)
            let given = try await CourierProcess.run(
                ["--check-status", "-a", "ann:wrong", "-b", url], environment: environment)
            #expect(given.status == 4)
        }
    }

    /// As httpie: a body that parses as JSON is formatted under a text or javascript media type
    /// too; one that does not is left as it is.
    @Test func jsonUnderATextTypeIsFormatted() async throws {
        try await withServer { _, base in
            let json = try await CourierProcess.run(
                ["--pretty=format", "-b", "\(base)/response-headers?Content-Type=text/plain", "a==1"])
            #expect(json.stdoutText.hasPrefix("{\n    \""), "\(json.stdoutText)")
            let html = try await CourierProcess.run(["--pretty=format", "-b", "\(base)/html"])
            #expect(html.stdoutText.hasPrefix("<!DOCTYPE html>"), "\(html.stdoutText)")
        }
    }

    @Test func exitCodes() async throws {
        try await withServer { _, base in
            #expect(try await CourierProcess.run(["\(base)/status/404"]).status == 0)
            let notFound = try await CourierProcess.run(["--check-status", "\(base)/status/404"])
            #expect(notFound.status == 4)
            #expect(notFound.stderr.contains("404"))
            #expect(try await CourierProcess.run(["--check-status", "\(base)/status/503"]).status == 5)
            #expect(try await CourierProcess.run(["--check-status", "\(base)/redirect/1"]).status == 3)
            #expect(try await CourierProcess.run(["--check-status", "-F", "\(base)/redirect/1"]).status == 0)
            let tooMany = try await CourierProcess.run(["-F", "--max-redirects=2", "\(base)/redirect/4"])
            #expect(tooMany.status == 6)
            #expect(tooMany.stderr.hasPrefix("courier: error: "))
            let timeout = try await CourierProcess.run(["--timeout=0.5", "\(base)/delay/5"])
            #expect(timeout.status == 2)
            let refused = try await CourierProcess.run(["http://127.0.0.1:1/"])
            #expect(refused.status == 1)
            #expect(refused.stderr.hasPrefix("courier: error: "))
            #expect(refused.stderr.filter { $0 == "\n" }.count == 1)
        }
    }

    @Test func redirect307ResendsTheBody() async throws {
        try await withServer { _, base in
            let result = try await CourierProcess.run(["-F", "\(base)/redirect-to?url=/post&status_code=307", "a=1"])
            let body = try json(result)
            #expect((body["json"] as? [String: Any])?["a"] as? String == "1")
        }
    }

    @Test func downloadsNameResumeAndNeverOverwrite() async throws {
        try await withServer { _, base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let tty = ["COURIER_FORCE_TTY": "1"]
            let expected = Data(TestServer.expectedBytes(count: 200_000, seed: 1))
            let first = try await CourierProcess.run(
                ["-d", "--progress=never", "\(base)/bytes/200000?seed=1"], environment: tty, directory: directory)
            #expect(first.status == 0)
            let second = try await CourierProcess.run(
                ["-d", "--progress=never", "\(base)/bytes/200000?seed=1"], environment: tty, directory: directory)
            #expect(second.status == 0)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(names == ["200000.bin", "200000-1.bin"].sorted())
            #expect(try Data(contentsOf: directory.appendingPathComponent("200000.bin")) == expected)

            let hostile = try await CourierProcess.run(
                ["-d", "\(base)/fault/content-disposition?filename=../../evil.txt"], environment: tty,
                directory: directory)
            #expect(hostile.status == 0)
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("evil.txt").path))
            #expect(
                !FileManager.default.fileExists(
                    atPath: directory.deletingLastPathComponent().appendingPathComponent("evil.txt").path))

            let partial = directory.appendingPathComponent("partial.bin")
            try expected.prefix(70_000).write(to: partial)
            let resumed = try await CourierProcess.run(
                ["-d", "-c", "-o", partial.path, "\(base)/bytes/200000?seed=1"], directory: directory)
            #expect(resumed.status == 0)
            #expect(resumed.stderr.contains("206"))
            #expect(try Data(contentsOf: partial) == expected)

            let redirected = try await CourierProcess.run(["-d", "\(base)/bytes/1000?seed=1"], directory: directory)
            #expect(redirected.stdout == expected.prefix(1000))
        }
    }

    @Test func hostileStarEncodedContentDispositionStaysInTheDirectory() async throws {
        try await withServer { _, base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            // filename*=UTF-8''..%2F..%2F.profile%E2%80%AE: a path, a hidden name and a bidi override.
            let result = try await CourierProcess.run(
                ["-d", "\(base)/fault/content-disposition?form=star&filename=..%2F..%2F.profile%E2%80%AE"],
                environment: ["COURIER_FORCE_TTY": "1"], directory: directory)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["profile.bin"])
            #expect(
                try Data(contentsOf: directory.appendingPathComponent("profile.bin"))
                    == Data("hostile file name\n".utf8))
            #expect(
                !FileManager.default.fileExists(
                    atPath: directory.deletingLastPathComponent().appendingPathComponent(".profile").path))
        }
    }

    @Test func serveAnswersRequests() async throws {
        // `courier serve` on a fixed free port: found by binding the test server once, then freeing it.
        let probe = try await TestServer.start()
        let port = probe.port
        try await probe.shutdown()
        let process = ChildProcess()
        process.executableURL = try CourierProcess.executable()
        process.arguments = ["serve", "--port", String(port), "--quiet"]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        var answered: CourierProcess.Result?
        for _ in 0..<100 {
            let result = try await CourierProcess.run(["http://127.0.0.1:\(port)/get", "x==1"])
            if result.status == 0 {
                answered = result
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let result = try #require(answered)
        #expect(try json(result)["args"] as? [String: String] == ["x": "1"])
    }

    @Test func demoRunsEndToEnd() async throws {
        let result = try await CourierProcess.run(["demo", "--upload-megabytes", "5", "--download-megabytes", "4"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains("All 6 steps passed"))
    }
}
