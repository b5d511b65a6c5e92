import Courier
import Foundation
import Testing

@testable import CourierCLI

/// The pure pieces: item grammar, URL shorthand, file names, the progress line.
@Suite struct HelperTests {
    @Test(arguments: [
        ("H:v", RequestItem.Kind.header, "H", "v"),
        ("H;", .emptyHeader, "H", ""),
        ("q==1", .query, "q", "1"),
        ("a=b=c", .dataField, "a", "b=c"),
        ("a:=1", .rawJSONField, "a", "1"),
        ("f@x.txt", .fileField, "f", "x.txt"),
        ("a=@x.txt", .dataFieldFromFile, "a", "x.txt"),
        ("a:=@x.json", .rawJSONFieldFromFile, "a", "x.json"),
        ("@body", .fileField, "", "body"),
        ("url==http://x", .query, "url", "http://x"),
        ("a\\:b=c", .dataField, "a:b", "c"),
        ("a\\==b", .dataField, "a=", "b"),
        ("a\\@b=c\\d", .dataField, "a@b", "c\\d"),
    ])
    func itemGrammar(token: String, kind: RequestItem.Kind, key: String, value: String) throws {
        let item = try RequestItemParser.parse(token)
        #expect(item.kind == kind)
        #expect(item.key == key)
        #expect(item.value == value)
        #expect(item.original == token)
    }

    /// httpie lets the last of `--print`, `-h`, `-b` and `--meta` win, over `-v` too.
    @Test(arguments: [
        ([String](), nil as String?), (["-v"], nil), (["-h", "-b"], "b"), (["-b", "-h"], "h"), (["-v", "-b"], "b"),
        (["-hb"], "b"), (["-bh"], "h"), (["-p", "Hh", "-b"], "b"), (["-b", "--print=Hh"], "Hh"), (["-pHh"], "Hh"),
        (["-h", "--meta"], "m"), (["--body", "--headers"], "h"), (["-a", "-b", "x.org"], nil),
        (["-o", "-h", "-b"], "b"), (["-F", "-h", "x.org", "--", "-b"], "h"), (["-Ab", "-h"], "h"),
        (["-h", "-Ab"], "h"), (["--raw", "-hb", "-h"], "h"), (["--auth", "-bob:pw"], nil),
        (["--raw=-b", "-h"], "h"),
    ])
    func lastPrintChoiceWins(_ arguments: [String], _ expected: String?) {
        #expect(OutputOptions.lastPrintChoice(in: arguments) == expected)
    }

    /// The command line in order: long options with their values (joined by `=` or following),
    /// short clusters split into letters, a value never read as options, nothing after `--`.
    @Test func optionsAreReadInTheOrderTyped() {
        let items = OptionSequence.items(in: [
            "--pretty", "format", "-hb", "--raw", "-v", "--sorted", "-pHh", "-a", "u:p", "x.org",
            "--format-options=a.b:1",
            "--", "--unsorted",
        ])
        #expect(
            items == [
                .long("--pretty", value: "format"), .short("h", value: nil), .short("b", value: nil),
                .long("--raw", value: "-v"), .long("--sorted", value: nil), .short("p", value: "Hh"),
                .short("a", value: "u:p"), .long("--format-options", value: "a.b:1"),
            ])
    }

    /// httpie's format options: its defaults, each key, `--sorted` and `--unsorted` applied in the
    /// order typed among `--format-options` values.
    @Test func formatOptionsApplyInOrder() throws {
        #expect(try FormatOptions.resolve(in: []) == FormatOptions())
        let custom = try FormatOptions.resolve(in: [
            "--unsorted", "--format-options=json.indent:2,headers.sort:true", "--format-options", "json.format:false",
        ])
        #expect(custom.sortsHeaders && !custom.sortsJSONKeys && custom.jsonIndent == 2 && !custom.formatsJSON)
        let resorted = try FormatOptions.resolve(in: ["--format-options=json.sort_keys:false", "--sorted"])
        #expect(resorted.sortsJSONKeys && resorted.sortsHeaders)
        let xml = try FormatOptions.resolve(in: ["--format-options=XML.Format:False,xml.indent:8"])
        #expect(!xml.formatsXML && xml.xmlIndent == 8)
    }

    /// Colours without reindenting: each key, string, number and literal wrapped in its colour,
    /// every other byte (whitespace, punctuation) where it was.
    @Test func colouredJSONKeepsItsLayout() throws {
        let text = "{\n  \"a\" : [1, -2.5e3,true, null],\t\"s\": \"x\\\"y\"}"
        let coloured = try #require(JSONOutput.coloured.render(Array(text.utf8)))
        func paint(_ token: String, _ colour: String) -> String { colour + token + ANSI.reset }
        let expected =
            "{\n  " + paint("\"a\"", ANSI.key) + " : [" + paint("1", ANSI.number) + ", "
            + paint("-2.5e3", ANSI.number) + "," + paint("true", ANSI.literal) + ", " + paint("null", ANSI.literal)
            + "],\t" + paint("\"s\"", ANSI.key) + ": " + paint("\"x\\\"y\"", ANSI.string) + "}"
        #expect(String(decoding: coloured, as: UTF8.self) == expected)
        #expect(JSONOutput.coloured.render(Array("not json".utf8)) == nil)
        #expect(JSONOutput.asIs.render(Array("{}".utf8)) == nil)
    }

    @Test(arguments: [
        "json.indent:x", "json.indent:true", "json.indent:1001", "json.indent:+2", "json.indent:-1", "headers.sort:1",
        "json.foo:true", "jsonindent:2",
        "json.indent", "a.b.c:1", "json.indent:2,", "",
    ])
    func malformedFormatOptionsAreUsageErrors(_ value: String) {
        #expect(throws: CLIError.self) { try FormatOptions.resolve(in: ["--format-options", value]) }
    }

    /// A self-signed CA certificate (P-256, valid until 2126), only ever parsed.
    static let caCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBizCCATGgAwIBAgIUc25lrbldmeDLupPtT1BC3EHdniswCgYIKoZIzj0EAwIw
        GjEYMBYGA1UEAwwPY291cmllci10ZXN0LWNhMCAXDTI2MTEyNzEzMzgyNVoYDzIx
        MjYxMTAzMTMzODI1WjAaMRgwFgYDVQQDDA9jb3VyaWVyLXRlc3QtY2EwWTATBgcq
        hkjOPQIBBggqhkjOPQMBBwNCAAQxM+m2UEBaARnwaSfWN+J1oWfgLh5Juoy7kWue
        +UHagNVDqT/4Xwdpsr0rG2JUsdk2f9u54mHU+TQtmPudeDGPo1MwUTAdBgNVHQ4E
        FgQUSQ9e1o3mtpdFMMQAOlSqdUVDWIswHwYDVR0jBBgwFoAUSQ9e1o3mtpdFMMQA
        OlSqdUVDWIswDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiBIZmHL
        47A2PiWzYx/zML77pSkraxW/kWTQS3/QVIsuNwIhAKWrU2+TWnIz93g9mk7tukve
        bM+3qw7//9FNzwviaBi7
        -----END CERTIFICATE-----
        """

    /// With `--verify` left at yes, the CA bundle variables of requests and curl replace the
    /// system's roots, the first that names a readable file winning.
    @Test func caBundleVariablesAreRead() throws {
        let bundle = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-ca-\(UUID().uuidString).pem")
        try Data(Self.caCertificatePEM.utf8).write(to: bundle)
        defer { try? FileManager.default.removeItem(at: bundle) }
        #expect(try SessionFactory.tlsConfiguration(verify: "yes", environment: [:]) == nil)
        for name in SessionFactory.caBundleVariables {
            #expect(try SessionFactory.tlsConfiguration(verify: "yes", environment: [name: bundle.path]) != nil)
        }
        // A path that names no readable file is passed over: the next variable, or the system's roots.
        #expect(
            try SessionFactory.tlsConfiguration(verify: "yes", environment: ["CURL_CA_BUNDLE": "/nonexistent/ca.pem"])
                == nil)
        #expect(try SessionFactory.tlsConfiguration(verify: "yes", environment: ["SSL_CERT_FILE": "/tmp"]) == nil)
        let next = try SessionFactory.tlsConfiguration(
            verify: "yes", environment: ["REQUESTS_CA_BUNDLE": "/tmp", "CURL_CA_BUNDLE": bundle.path])
        #expect(next?.trustRoots.map { "\($0)" }?.contains(bundle.path) == true)
        // An explicit --verify wins over the environment.
        let none = try SessionFactory.tlsConfiguration(
            verify: "no", environment: ["CURL_CA_BUNDLE": "/nonexistent/ca.pem"])
        #expect(none != nil)
    }

    /// A CA bundle is loaded before anything connects: a readable file that holds no PEM
    /// certificate, given to --verify or named by a variable, is a one-line error naming it.
    @Test func aFileThatIsNotACABundleIsAnErrorNamingIt() throws {
        let garbage = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-garbage-\(UUID().uuidString).pem")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: garbage)
        defer { try? FileManager.default.removeItem(at: garbage) }
        for path in ["/etc/passwd", garbage.path, "/dev/zero"] {
            #expect {
                try SessionFactory.tlsConfiguration(verify: path, environment: [:])
            } throws: { error in
                let message = (error as? CLIError)?.message ?? ""
                return message.hasPrefix("--verify \"\(path)\": not a") && !message.contains("\n")
            }
        }
        for name in SessionFactory.caBundleVariables {
            #expect {
                try SessionFactory.tlsConfiguration(verify: "yes", environment: [name: garbage.path])
            } throws: { error in
                let expected = "\(name)=\"\(garbage.path)\": not a CA bundle (no PEM certificate in it)"
                return (error as? CLIError)?.message == expected
            }
        }
    }

    /// `.netrc` as requests (Python's `netrc`) reads it: machines by host (any case), `default`
    /// for the rest, quoted values, comments, a `macdef` body skipped to its empty line, the last
    /// entry for a host winning.
    @Test func netrcEntries() {
        let netrc = Netrc(
            parsing: """
                machine api.example login ann password "s3cret pass"
                machine API.example login other password x
                macdef init
                  machine evil.example login mallory password m

                machine bare.example
                default login anon password "a\\"b"
                """)
        #expect(netrc.credentials(for: "api.example")! == ("other", "x"))
        #expect(netrc.credentials(for: "bare.example") == nil)
        #expect(netrc.credentials(for: "evil.example")! == ("anon", "a\"b"))
        #expect(netrc.credentials(for: "elsewhere")! == ("anon", "a\"b"))
        #expect(Netrc(parsing: "machine a login b").credentials(for: "a")! == ("b", ""))
        #expect(Netrc(parsing: "").credentials(for: "a") == nil)
        let commented = Netrc(parsing: "# default login me password x\nmachine a login b # password c\n")
        #expect(commented.credentials(for: "elsewhere") == nil)
        #expect(commented.credentials(for: "a")! == ("b", ""))
    }

    @Test func fileFieldType() throws {
        let item = try RequestItemParser.parse("f@a;b.txt;type=text/x")
        #expect(item.value == "a;b.txt")
        #expect(item.mimeType == "text/x")
    }

    @Test func urlShorthand() {
        #expect(URLShorthand.expand(":8080/x") == "http://localhost:8080/x")
        #expect(URLShorthand.expand(":/x") == "http://localhost/x")
        #expect(URLShorthand.expand(":") == "http://localhost")
        #expect(URLShorthand.expand("example.org") == "http://example.org")
        #expect(URLShorthand.expand("https://example.org") == "https://example.org")
        #expect(URLShorthand.expand("127.0.0.1:9/x") == "http://127.0.0.1:9/x")
        #expect(URLShorthand.expand("://127.0.0.1:9/x") == "http://127.0.0.1:9/x")
    }

    /// RFC 3986 §5.2.4 and its §5.4 examples, as curl and httpie squash paths before sending.
    @Test(arguments: [
        ("/a/b/c/./../../g", "/a/g"),
        ("mid/content=5/../6", "mid/6"),
        ("/a/../b", "/b"),
        ("/a/./b/", "/a/b/"),
        ("/a/..", "/"),
        ("/a/.", "/a/"),
        ("/../../x", "/x"),
        ("/a/b/..//c", "/a//c"),
        ("/a/..%2F", "/a/..%2F"),
        ("/.hidden/..x/x..", "/.hidden/..x/x.."),
        ("", ""),
        ("/", "/"),
    ])
    func dotSegmentsAreRemoved(path: String, expected: String) {
        #expect(DotSegments.removed(from: path) == expected)
    }

    @Test func urlsLoseTheirDotSegmentsUnlessKept() throws {
        #expect(try URLShorthand.url(from: "x.org/a/../b?q=/../").absoluteString == "http://x.org/b?q=/../")
        #expect(
            try URLShorthand.url(from: "x.org/a/../b", keepsDotSegments: true).absoluteString == "http://x.org/a/../b")
    }

    @Test func positionals() throws {
        #expect(try Positionals.parse(["localhost", "a=1"]).method == nil)
        #expect(try Positionals.parse(["localhost", "a=1"]).url == "localhost")
        #expect(try Positionals.parse(["GET", "localhost:8080"]).method == "GET")
        #expect(try Positionals.parse(["get", "localhost:8080"]).method == "GET")
        #expect(try Positionals.parse(["PURGE", "localhost:8080"]).method == "PURGE")
        #expect(try Positionals.parse(["example.org"]).url == "example.org")
    }

    @Test func downloadNames() {
        let url = URL(string: "http://x/files/report.pdf?x=1")!
        #expect(DownloadFileName.suggested(contentDisposition: nil, url: url, contentType: nil) == "report.pdf")
        #expect(
            DownloadFileName.suggested(
                contentDisposition: "attachment; filename=\"../../etc/passwd\"", url: url, contentType: nil)
                == "passwd")
        #expect(
            DownloadFileName.suggested(
                contentDisposition: "attachment; filename=\".hidden\"", url: url, contentType: nil)
                == "hidden")
        #expect(
            DownloadFileName.suggested(
                contentDisposition: nil, url: URL(string: "http://x/")!, contentType: "application/json")
                == "index.json")
        #expect(
            DownloadFileName.suggested(
                contentDisposition: nil, url: URL(string: "http://x/bytes/10")!, contentType: "application/octet-stream"
            )
                == "10.bin")
        let taken: Set<String> = ["/d/a.txt", "/d/a-1.txt"]
        #expect(
            DownloadFileName.unique("a.txt", in: URL(fileURLWithPath: "/d"), exists: { taken.contains($0) })
                == "a-2.txt")
        #expect(DownloadFileName.unique("b", in: URL(fileURLWithPath: "/d"), exists: { taken.contains($0) }) == "b")
    }

    @Test func hostileContentDispositionNamesBecomeSafeBaseNames() {
        let url = URL(string: "http://x/files/report.pdf")!
        func name(_ disposition: String, contentType: String? = nil) -> String {
            DownloadFileName.suggested(contentDisposition: disposition, url: url, contentType: contentType)
        }
        // RFC 8187 ext-value smuggling a path, a right-to-left override and a hidden name.
        #expect(name("attachment; filename*=UTF-8''..%2F..%2F%E2%80%AEfdp.exe") == "fdp.exe")
        #expect(name("attachment; filename*=UTF-8''%2E%2E%2F.bashrc; filename=\"fallback.txt\"") == "bashrc")
        #expect(name(#"attachment; filename="C:\\Windows\\evil.bat""#) == "evil.bat")
        #expect(name("attachment; filename*=UTF-8''a%7Fb%C2%85c%0D%0A.txt") == "abc.txt")
        // DEL inside a quoted-string makes the header invalid (RFC 9110 qdtext): the URL's name.
        #expect(name("attachment; filename=\"a\u{7F}b.txt\"") == "report.pdf")
        // Nothing usable in the header: the URL's last segment, as without one.
        #expect(name("attachment; filename=\"../..\"") == "report.pdf")
        #expect(name("attachment; filename=\"x\"; filename=\"y\"") == "report.pdf")
        // A 600-byte name is cut to DownloadFileName.maximumLength bytes, keeping its extension.
        let long = name("attachment; filename=\"\(String(repeating: "é", count: 300)).txt\"")
        #expect(long.utf8.count <= DownloadFileName.maximumLength)
        #expect(long.hasSuffix(".txt"))
        #expect(long.hasPrefix("éé"))
        // The extension comes from a parsed Content-Type, whatever its case and parameters.
        #expect(
            name("attachment; filename=\"data\"", contentType: "Application/JSON ; charset=\"utf-8\"") == "data.json")
        #expect(name("attachment; filename=\"data\"", contentType: "json") == "data")
    }

    @Test func jsonIsReindentedByTheParsedMediaType() {
        let printer = MessagePrinter(pretty: .format, stdoutIsTerminal: false)
        let body = Array(#"{"a":1}"#.utf8)
        let reindented = Array("{\n    \"a\": 1\n}".utf8)
        #expect(printer.formatted(body, contentType: "application/problem+json; charset=utf-8") == reindented)
        #expect(printer.formatted(body, contentType: "Text/X-JSON") == reindented)
        // As httpie: text and javascript types are tried as JSON too; parameters do not count.
        #expect(printer.formatted(body, contentType: "text/plain; note=json") == reindented)
        #expect(printer.formatted(body, contentType: "application/javascript") == reindented)
        #expect(printer.formatted(body, contentType: "application/octet-stream; note=json") == body)
        #expect(printer.formatted(Array("<p>{}</p>".utf8), contentType: "text/html") == Array("<p>{}</p>".utf8))
        #expect(printer.formatted(body, contentType: nil) == reindented)
    }

    @Test func progressLine() {
        #expect(
            ProgressBar.render(completed: 50_000_000, total: 100_000_000, elapsed: 2, width: 100)
                == "[####################                    ]  50.0 MB / 100.0 MB   50%  25.0 MB/s  ETA 0:00:02")
        #expect(
            ProgressBar.render(completed: 100_000_000, total: 100_000_000, elapsed: 4, width: 100)
                == "[########################################]  100.0 MB / 100.0 MB  100%  25.0 MB/s  in 4.00 s")
        #expect(ProgressBar.formatElapsed(0.023) == "0.02 s")
        #expect(ProgressBar.formatElapsed(42.25) == "42.2 s" || ProgressBar.formatElapsed(42.25) == "42.3 s")
        #expect(ProgressBar.formatElapsed(3661) == "1:01:01")
        #expect(ProgressBar.render(completed: 1500, total: nil, elapsed: 1) == "1.5 kB  1.5 kB/s")
        #expect(ProgressBar.formatBytes(999) == "999 B")
        #expect(ProgressBar.formatDuration(3661) == "1:01:01")
    }

    @Test func jsonRoundTrip() throws {
        let text = #"{"b": [1, 2.50, -3e2], "a": {"x": null, "y": true}, "s": "\u00e9\n\"\ud83d\ude00"}"#
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(
            JSONPrinter(pretty: false, colors: false).string(for: value)
                == "{\"b\": [1, 2.50, -3e2], \"a\": {\"x\": null, \"y\": true}, \"s\": \"é\\n\\\"😀\"}")
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array("{\"a\": 1,}".utf8)) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array("\"\\ud800\"".utf8)) }
        #expect(throws: JSONParser.Failure.self) {
            try JSONParser.parse(Array(String(repeating: "[", count: 10_000).utf8))
        }
    }
}
