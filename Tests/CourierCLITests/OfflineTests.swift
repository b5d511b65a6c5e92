import Foundation
import Testing

/// `--offline` prints the request exactly as it would be sent; these compare bytes. JSON bodies
/// come from JSONRequestSerializer (compact, sorted keys); forms keep command-line order.
@Suite struct OfflineTests {
    @Test func jsonItemsBuildAnObject() async throws {
        let result = try await CourierProcess.run([
            "--offline", "POST", "example.org/post", "a=1", "b:=2", "X-A:1", "q==x y", "c:=[true,null]",
        ])
        #expect(result.status == 0)
        let expected =
            "POST /post?q=x%20y HTTP/1.1\r\nUser-Agent: courier/0.1\r\nAccept: application/json, */*;q=0.5\r\n"
            + "Content-Type: application/json\r\nX-A: 1\r\nContent-Length: 31\r\nHost: example.org\r\n\r\n"
            + "{\"a\":\"1\",\"b\":2,\"c\":[true,null]}"
        #expect(result.stdoutText == expected)
    }

    @Test func formFieldsAreURLEncoded() async throws {
        let result = try await CourierProcess.run(["--offline", "-f", ":8080/post", "a=1 2", "b=&", "a=3"])
        #expect(result.status == 0)
        let expected =
            "POST /post HTTP/1.1\r\nUser-Agent: courier/0.1\r\nAccept: */*\r\n"
            + "Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\nContent-Length: 17\r\n"
            + "Host: localhost:8080\r\n\r\na=1%202&b=%26&a=3"
        #expect(result.stdoutText == expected)
    }

    @Test func methodIsInferredAndHeadersCanBeEmptiedOrRemoved() async throws {
        let result = try await CourierProcess.run(["--offline", "x.org", "Accept:text/x", "User-Agent:", "Empty;"])
        #expect(result.stdoutText == "GET / HTTP/1.1\r\nAccept: text/x\r\nEmpty: \r\nHost: x.org\r\n\r\n")
        let explicit = try await CourierProcess.run(["--offline", "--print=H", "DELETE", "http://x.org:81/a/b"])
        #expect(explicit.stdoutText.hasPrefix("DELETE /a/b HTTP/1.1\r\n"))
        #expect(explicit.stdoutText.hasSuffix("Host: x.org:81\r\n\r\n"))
    }

    @Test func backslashEscapesASeparator() async throws {
        let result = try await CourierProcess.run([
            "--offline", "--print=B", "x.org", "a\\=b=c", "d\\:e:=1", "path=C:\\dir",
        ])
        #expect(result.stdoutText == "{\"a=b\":\"c\",\"d:e\":1,\"path\":\"C:\\\\dir\"}")
    }

    @Test func nestedJSONKeys() async throws {
        let result = try await CourierProcess.run([
            "--offline", "--print=B", "x.org", "a[b]=1", "a[c]:=2", "l[]:=1", "l[]=x",
        ])
        #expect(result.stdoutText == "{\"a\":{\"b\":\"1\",\"c\":2},\"l\":[1,\"x\"]}")
    }

    @Test func rawBodyFromFileIsExactlyTheFileBytes() async throws {
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bytes = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let file = directory.appendingPathComponent("blob.bin")
        try bytes.write(to: file)
        let result = try await CourierProcess.run(["--offline", "--print=B", "x.org", "@\(file.path)"])
        #expect(result.status == 0)
        #expect(result.stdout == bytes)
        let head = try await CourierProcess.run(["--offline", "--print=H", "x.org", "@\(file.path)"])
        #expect(head.stdoutText.hasPrefix("POST / HTTP/1.1\r\n"))
        #expect(head.stdoutText.contains("Content-Length: 5000\r\n"))
    }

    @Test func stdinIsTheBodyUnlessIgnored() async throws {
        let piped = try await CourierProcess.run(
            ["--offline", "--print=B", "PUT", "x.org"], stdin: Data("from stdin".utf8))
        #expect(piped.stdoutText == "from stdin")
        let ignored = try await CourierProcess.run(
            ["--offline", "--print=B", "-I", "x.org", "a=1"], stdin: Data("from stdin".utf8))
        #expect(ignored.stdoutText == "{\"a\":\"1\"}")
        let mixed = try await CourierProcess.run(["--offline", "x.org", "a=1"], stdin: Data("from stdin".utf8))
        #expect(mixed.status == 1)
        #expect(mixed.stderr.contains("cannot be mixed"))
    }

    @Test func rawOptionAndAuth() async throws {
        let result = try await CourierProcess.run(["--offline", "-a", "user:pa:ss", "--raw", "hello", "PATCH", "x.org"])
        #expect(result.stdoutText.contains("Authorization: Basic dXNlcjpwYTpzcw==\r\n"))
        #expect(result.stdoutText.hasPrefix("PATCH / HTTP/1.1\r\n"))
        #expect(result.stdoutText.hasSuffix("\r\n\r\nhello"))
    }

    @Test func shorthandsAndIPv6HostsStay() async throws {
        for (url, host) in [
            (":8080/x", "localhost:8080"), ("example.com", "example.com"), ("http://[::1]:81/", "[::1]:81"),
            ("HTTPS://Example.com:443/", "example.com"), ("127.0.0.1:9/x", "127.0.0.1:9"),
        ] {
            let result = try await CourierProcess.run(["--offline", "--print=H", url])
            #expect(result.status == 0, "\(url): \(result.stderr)")
            #expect(
                result.stdoutText.lowercased().contains("host: \(host.lowercased())\r\n"),
                "\(url): \(result.stdoutText)")
        }
    }

    @Test func urlCredentialsBecomeBasicAuthAndLeaveTheURL() async throws {
        let result = try await CourierProcess.run(["--offline", "http://ann:p%40ss@x.org/basic-auth/ann/p@ss"])
        #expect(result.status == 0)
        // base64("ann:p@ss")
        #expect(result.stdoutText.contains("Authorization: Basic YW5uOnBAc3M=\r\n"))
        #expect(result.stdoutText.contains("Host: x.org\r\n"))
        #expect(!result.stdoutText.contains("p%40ss@"))
        let explicit = try await CourierProcess.run(["--offline", "-a", "bob:pw", "http://ann:secret@x.org/"])
        #expect(explicit.stdoutText.contains("Authorization: Basic Ym9iOnB3\r\n"))
        #expect(!explicit.stdoutText.contains("secret"))
        let header = try await CourierProcess.run(["--offline", "http://ann:secret@x.org/", "Authorization:Bearer t"])
        #expect(header.stdoutText.contains("Authorization: Bearer t\r\n"))
        #expect(!header.stdoutText.contains("Basic"))
    }

    @Test func chunkedShowsTransferEncoding() async throws {
        let result = try await CourierProcess.run(["--offline", "--print=H", "--chunked", "x.org", "a=1"])
        #expect(result.stdoutText.contains("Transfer-Encoding: chunked\r\n"))
        #expect(!result.stdoutText.contains("Content-Length"))
    }

    @Test func prettyOutputOnATerminal() async throws {
        let result = try await CourierProcess.run(
            ["--offline", "--print=B", "--pretty=format", "x.org", "b:=2", "a=1"],
            environment: ["COURIER_FORCE_TTY": "1"])
        #expect(result.stdoutText == "{\n    \"a\": \"1\",\n    \"b\": 2\n}\n")
        let colored = try await CourierProcess.run(
            ["--offline", "--print=B", "x.org", "a:=1"], environment: ["COURIER_FORCE_TTY": "1"])
        #expect(colored.stdoutText.contains("\u{1B}[34m\"a\"\u{1B}[0m"))
    }

    @Test func binaryBodyIsNotWrittenToATerminal() async throws {
        let result = try await CourierProcess.run(
            ["--offline", "--print=B", "x.org"], stdin: Data([0, 1, 2, 255]), environment: ["COURIER_FORCE_TTY": "1"])
        #expect(result.stdoutText.contains("NOTE: binary data not shown in terminal"))
    }

    @Test func multipartWithAFixedBoundaryIsExact() async throws {
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("hello".utf8).write(to: directory.appendingPathComponent("f.txt"))
        try Data([0, 1, 2]).write(to: directory.appendingPathComponent("raw.dat"))
        let result = try await CourierProcess.run(
            [
                "--offline", "-f", "--boundary=XYZ", ":8080/post", "a=1", "f@f.txt",
                "g@raw.dat;type=application/x-test", "b=\"q\"",
            ],
            directory: directory)
        #expect(result.status == 0)
        let body =
            "--XYZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
            + "--XYZ\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n\"q\"\r\n"
            + "--XYZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n"
            + "--XYZ\r\nContent-Disposition: form-data; name=\"g\"; filename=\"raw.dat\"\r\nContent-Type: application/x-test\r\n\r\n\u{0}\u{1}\u{2}\r\n"
            + "--XYZ--\r\n"
        let expected =
            "POST /post HTTP/1.1\r\nUser-Agent: courier/0.1\r\nAccept: */*\r\n"
            + "Content-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Host: localhost:8080\r\n\r\n" + body
        #expect(result.stdoutText == expected)
        let bodyOnly = try await CourierProcess.run(
            ["--offline", "--multipart", "--boundary=XYZ", "--print=B", "x.org", "a=1"], directory: directory)
        #expect(bodyOnly.stdoutText == "--XYZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XYZ--\r\n")
    }

    @Test func badBoundaryIsAUsageError() async throws {
        let result = try await CourierProcess.run(["--offline", "--multipart", "--boundary=bad\"b", "x.org", "a=1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("bad\"b"))
    }
}
