import Foundation
import Testing

/// `--offline` prints the request exactly as it would be sent; these compare bytes. JSON bodies
/// are written as httpie writes them (`{"a": "1", "b": 2}`, keys in command-line order, number
/// literals as typed); forms keep command-line order too.
@Suite struct OfflineTests {
    @Test func jsonItemsBuildAnObject() async throws {
        let result = try await CourierProcess.run([
            "--offline", "POST", "example.org/post", "a=1", "b:=2", "X-A:1", "q==x y", "c:=[true,null]",
        ])
        #expect(result.status == 0)
        let expected =
            "POST /post?q=x%20y HTTP/1.1\r\nUser-Agent: courier/0.1\r\nAccept: application/json, */*;q=0.5\r\n"
            + "Content-Type: application/json\r\nX-A: 1\r\nAccept-Encoding: gzip, deflate\r\nContent-Length: 37\r\nHost: example.org\r\n\r\n"
            + "{\"a\": \"1\", \"b\": 2, \"c\": [true, null]}"
        #expect(result.stdoutText == expected)
    }

    @Test func formFieldsAreURLEncoded() async throws {
        let result = try await CourierProcess.run(["--offline", "-f", ":8080/post", "a=1 2", "b=&", "a=3"])
        #expect(result.status == 0)
        let expected =
            "POST /post HTTP/1.1\r\nUser-Agent: courier/0.1\r\nAccept: */*\r\n"
            + "Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\nAccept-Encoding: gzip, deflate\r\n"
            + "Content-Length: 17\r\nHost: localhost:8080\r\n\r\na=1%202&b=%26&a=3"
        #expect(result.stdoutText == expected)
    }

    @Test func rawJSONScalarsInAFormAreSentAsTyped() async throws {
        // httpie sends these too, but as Python prints them (`True`, `1.5`); the literal as typed is kept here.
        let form = try await CourierProcess.run([
            "--offline", "--print=B", "-f", "x.org", "n:=1.50", "b:=true", "s:=\"a b\"", "e:=1E400",
        ])
        #expect(form.status == 0)
        #expect(form.stdoutText == "n=1.50&b=true&s=a%20b&e=1E400")
        let multipart = try await CourierProcess.run([
            "--offline", "--print=B", "--multipart", "--boundary=XYZ", "x.org", "n:=-2", "f:=false",
        ])
        #expect(multipart.status == 0)
        #expect(
            multipart.stdoutText
                == "--XYZ\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\n-2\r\n"
                + "--XYZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nfalse\r\n--XYZ--\r\n")
    }

    @Test func methodIsInferredAndHeadersCanBeEmptiedOrRemoved() async throws {
        let result = try await CourierProcess.run(["--offline", "x.org", "Accept:text/x", "User-Agent:", "Empty;"])
        #expect(
            result.stdoutText
                == "GET / HTTP/1.1\r\nAccept: text/x\r\nEmpty: \r\nAccept-Encoding: gzip, deflate\r\nHost: x.org\r\n\r\n"
        )
        let explicit = try await CourierProcess.run(["--offline", "--print=H", "DELETE", "http://x.org:81/a/b"])
        #expect(explicit.stdoutText.hasPrefix("DELETE /a/b HTTP/1.1\r\n"))
        #expect(explicit.stdoutText.hasSuffix("Host: x.org:81\r\n\r\n"))
    }

    /// `--json` without data still asks for JSON and says it sends JSON, as httpie's does;
    /// without the flag a bodyless request asks for anything.
    @Test func jsonFlagWithoutDataAsksForJSON() async throws {
        let json = try await CourierProcess.run(["--offline", "-j", "x.org"])
        #expect(
            json.stdoutText
                == "GET / HTTP/1.1\r\nUser-Agent: courier/0.1\r\nAccept: application/json, */*;q=0.5\r\n"
                + "Content-Type: application/json\r\nAccept-Encoding: gzip, deflate\r\nHost: x.org\r\n\r\n")
        let plain = try await CourierProcess.run(["--offline", "x.org"])
        #expect(plain.stdoutText.contains("Accept: */*\r\n"))
        #expect(!plain.stdoutText.contains("Content-Type"))
    }

    /// The `Accept-Encoding` the exchange would send is shown: asked for by default, a caller's
    /// own kept, none after an `Accept-Encoding:` item or for a download (which keeps the bytes
    /// as stored).
    @Test func acceptEncodingIsShownAsItWouldBeSent() async throws {
        let cases: [([String], String?)] = [
            ([], "gzip, deflate"),
            (["Accept-Encoding:br"], "br"),
            (["Accept-Encoding:"], nil),
            (["-d"], nil),
        ]
        for (extra, expected) in cases {
            let result = try await CourierProcess.run(["--offline", "--print=H", "x.org"] + extra)
            #expect(result.status == 0)
            let line = result.stdoutText.split(separator: "\r\n").first { $0.hasPrefix("Accept-Encoding:") }
            #expect(line.map(String.init) == expected.map { "Accept-Encoding: \($0)" }, "\(extra)")
        }
    }

    @Test func backslashEscapesASeparator() async throws {
        let result = try await CourierProcess.run([
            "--offline", "--print=B", "x.org", "a\\=b=c", "d\\:e:=1", "path=C:\\dir",
        ])
        #expect(result.stdoutText == "{\"a=b\": \"c\", \"d:e\": 1, \"path\": \"C:\\\\dir\"}")
    }

    @Test func nestedJSONKeys() async throws {
        let result = try await CourierProcess.run([
            "--offline", "--print=B", "x.org", "a[b]=1", "a[c]:=2", "l[]:=1", "l[]=x",
        ])
        #expect(result.stdoutText == "{\"a\": {\"b\": \"1\", \"c\": 2}, \"l\": [1, \"x\"]}")
    }

    /// httpie's key-path grammar: `\[`, `\]` and `\\` are literal, a path may start with `[` for a
    /// top-level array, and a malformed path is a usage error quoting the item.
    @Test func nestedJSONKeysFollowHttpiesGrammar() async throws {
        let cases: [([String], String)] = [
            (["a\\[b\\]=c", "k\\\\=v", "a\\\\[b]=c"], #"{"a[b]": "c", "k\\": "v", "a\\": {"b": "c"}}"#),
            (["[]=x", "[]:=2", "[4]=y"], #"["x", 2, null, null, "y"]"#),
            (["a[b\\]]=c", "y[][]=z", "x[01]=1"], #"{"a": {"b]": "c"}, "y": [["z"]], "x": [null, "1"]}"#),
            (["=x", "a[1a]=b"], #"{"": "x", "a": {"1a": "b"}}"#),
        ]
        for (items, expected) in cases {
            let result = try await CourierProcess.run(["--offline", "--print=B", "-I", "x.org"] + items)
            #expect(result.status == 0, "\(items): \(result.stderr)")
            #expect(result.stdoutText == expected, "\(items)")
        }
        for item in ["a[b]c=x", "a]b=x", "c[=1", "[a]=x", "a[-1]=x", "a[99999]=x"] {
            let result = try await CourierProcess.run(["--offline", "-I", "x.org", item])
            #expect(result.status == 1, "\(item)")
            #expect(result.stderr.contains("\"\(item)\""), "\(item): \(result.stderr)")
        }
        let conflict = try await CourierProcess.run(["--offline", "-I", "x.org", "[]=x", "a=b"])
        #expect(conflict.status == 1)
        #expect(conflict.stderr.contains("conflicts"))
    }

    /// Numbers go out as typed: an ID past 2^64 is not rounded through a Double.
    @Test func rawJSONNumbersKeepTheirLiterals() async throws {
        let result = try await CourierProcess.run([
            "--offline", "--print=B", "-I", "x.org", "id:=18446744073709551615", "n:=-9223372036854775809",
            "f:=1.50", "e:=1E400", "nested:={\"big\": 123456789012345678901234567890}",
        ])
        #expect(
            result.stdoutText
                == #"{"id": 18446744073709551615, "n": -9223372036854775809, "f": 1.50, "e": 1E400, "nested": {"big": 123456789012345678901234567890}}"#
        )
    }

    @Test func methodsAreUpperCasedAsHttpieSendsThem() async throws {
        let result = try await CourierProcess.run(["--offline", "--print=H", "delete", "x.org/a"])
        #expect(result.stdoutText.hasPrefix("DELETE /a HTTP/1.1\r\n"))
        let custom = try await CourierProcess.run(["--offline", "--print=H", "purge", "x.org/a", "a==1"])
        #expect(custom.stdoutText.hasPrefix("PURGE /a?a=1 HTTP/1.1\r\n"))
    }

    /// A raw body under --form is a urlencoded form, as `echo 'a=1' | http -f URL` sends it.
    @Test func rawBodyUnderFormIsDeclaredAForm() async throws {
        let piped = try await CourierProcess.run(["--offline", "-f", "x.org/post"], stdin: Data("x=1".utf8))
        #expect(piped.stdoutText.contains("Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"))
        #expect(piped.stdoutText.hasSuffix("\r\n\r\nx=1"))
        let raw = try await CourierProcess.run(["--offline", "-f", "--raw", "y=2", "-I", "x.org/post"])
        #expect(raw.stdoutText.contains("Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"))
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
        #expect(ignored.stdoutText == "{\"a\": \"1\"}")
        let mixed = try await CourierProcess.run(["--offline", "x.org", "a=1"], stdin: Data("from stdin".utf8))
        #expect(mixed.status == 1)
        #expect(mixed.stderr.contains("cannot be mixed"))
    }

    /// A field's value can come from a pipe (`@/dev/stdin`, `@<(command)`), read to its end, as
    /// in httpie; it used to be refused as unreadable.
    @Test func fieldValuesFromAPipe() async throws {
        let text = try await CourierProcess.run(
            ["--offline", "--print=B", "-I", "x.org", "a=@/dev/stdin"], stdin: Data("piped\n".utf8), pipeStdin: true)
        #expect(text.stdoutText == #"{"a": "piped\n"}"#, "\(text.stderr)")
        let json = try await CourierProcess.run(
            ["--offline", "--print=B", "-I", "x.org", "b:=@/dev/stdin"], stdin: Data("[1, {\"k\": null}]".utf8),
            pipeStdin: true)
        #expect(json.stdoutText == #"{"b": [1, {"k": null}]}"#, "\(json.stderr)")
        let empty = try await CourierProcess.run(["--offline", "--print=B", "x.org", "c=@/dev/null"])
        #expect(empty.stdoutText == #"{"c": ""}"#, "\(empty.stderr)")
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
        // As httpie: credentials win over an Authorization item, which applies without them.
        let header = try await CourierProcess.run(["--offline", "http://ann:secret@x.org/", "Authorization:Bearer t"])
        #expect(header.stdoutText.contains("Authorization: Basic YW5uOnNlY3JldA==\r\n"))
        #expect(!header.stdoutText.contains("Bearer"))
        let option = try await CourierProcess.run(["--offline", "-a", "u:p", "x.org", "Authorization:Bearer t"])
        #expect(option.stdoutText.contains("Authorization: Basic dTpw\r\n"))
        #expect(!option.stdoutText.contains("Bearer"))
        let bearer = try await CourierProcess.run(["--offline", "x.org", "Authorization:Bearer t"])
        #expect(bearer.stdoutText.contains("Authorization: Bearer t\r\n"))
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
            // Command-line order, files among the fields, as httpie 3 sends them.
            "--XYZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
            + "--XYZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n"
            + "--XYZ\r\nContent-Disposition: form-data; name=\"g\"; filename=\"raw.dat\"\r\nContent-Type: application/x-test\r\n\r\n\u{0}\u{1}\u{2}\r\n"
            + "--XYZ\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n\"q\"\r\n"
            + "--XYZ--\r\n"
        let expected =
            "POST /post HTTP/1.1\r\nUser-Agent: courier/0.1\r\nAccept: */*\r\n"
            + "Content-Type: multipart/form-data; boundary=XYZ\r\nAccept-Encoding: gzip, deflate\r\n"
            + "Content-Length: \(body.utf8.count)\r\nHost: localhost:8080\r\n\r\n" + body
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
