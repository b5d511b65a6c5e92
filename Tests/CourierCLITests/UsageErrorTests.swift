import Foundation
import Testing

/// Bad command lines exit 1 with one line on stderr that quotes the offending token.
@Suite struct UsageErrorTests {
    func expectError(_ arguments: [String], _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let result = try await CourierProcess.run(arguments)
        #expect(result.status == 1, sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("courier: error: "), sourceLocation: sourceLocation)
        #expect(result.stderr.contains(fragment), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, sourceLocation: sourceLocation)
    }

    /// Checked before connecting (port 9 answers nothing), without NIOSSL's error or a build path.
    @Test(arguments: ["/etc/passwd", "/dev/zero"])
    func verifyFileThatIsNotACABundle(_ path: String) async throws {
        try await expectError(["--verify", path, "https://127.0.0.1:9/"], "--verify \"\(path)\": not a")
    }
    @Test func notAnItem() async throws {
        try await expectError(["--offline", "x.org", "bad"], "\"bad\": not a request item")
    }
    @Test func missingFile() async throws {
        try await expectError(
            ["--offline", "-f", "x.org", "f@/nonexistent/file"], "\"f@/nonexistent/file\": no such file")
    }
    @Test func missingRawBodyFile() async throws {
        try await expectError(["--offline", "x.org", "@/nonexistent"], "no such file")
    }
    @Test func missingDataFile() async throws {
        try await expectError(["--offline", "x.org", "a=@/nonexistent"], "\"a=@/nonexistent\"")
    }
    @Test func invalidJSON() async throws {
        try await expectError(["--offline", "x.org", "a:=nojson"], "\"a:=nojson\": not valid JSON")
    }
    @Test func headerWithValueAfterSemicolon() async throws {
        try await expectError(["--offline", "x.org", "a;b"], "\"a;b\"")
    }
    @Test func invalidHeaderName() async throws { try await expectError(["--offline", "x.org", "a b:c"], "\"a b:c\"") }
    @Test func fileFieldNeedsForm() async throws {
        try await expectError(["--offline", "x.org", "f@/etc/hostname"], "--form")
    }
    @Test(arguments: ["a:=[1]", "a:={\"k\":1}", "a:=null"])
    func aFormFieldHoldsNoNullArrayOrObject(item: String) async throws {
        try await expectError(["--offline", "-f", "x.org", item], "\"\(item)\": a form field holds a string")
        try await expectError(["--offline", "--multipart", "x.org", item], "\"\(item)\": a form field holds a string")
    }
    @Test func badURL() async throws { try await expectError(["--offline", "ftp://x.org/"], "\"ftp://x.org/\"") }
    @Test(arguments: [
        ("ht!tp://bad url", "unknown scheme \"ht!tp\""),
        ("htp://x", "unknown scheme \"htp\""),
        ("http://exa mple.com", "\"exa mple.com\" is not a valid host name"),
        ("http://[::1", "no closing"),
        ("http://[::g]/", "not a valid IPv6 address"),
        ("http://example.com:65536/", "the port \"65536\""),
        ("example.com:99999", "the port \"99999\""),
        ("http://:8080/", "the host is missing"),
    ])
    func badURLIsOneLineQuotingIt(url: String, fragment: String) async throws {
        try await expectError(["--offline", "GET", url], "\"\(url)\"")
        try await expectError(["--offline", "GET", url], fragment)
    }

    @Test func urlPasswordIsRedactedInErrors() async throws {
        try await expectError(["--offline", "htp://ann:hunter2@x.org/"], "\"htp://ann:<redacted>@x.org/\"")
        let result = try await CourierProcess.run(["--offline", "http://ann:hunter2@exa mple.org/"])
        #expect(!result.stderr.contains("hunter2"))
    }

    @Test func badPrint() async throws { try await expectError(["--offline", "--print=Hx", "x.org"], "--print") }
    @Test func badPretty() async throws { try await expectError(["--offline", "--pretty=loud", "x.org"], "--pretty") }
    @Test func unknownOption() async throws { try await expectError(["--nope", "x.org"], "--nope") }
    @Test func missingURL() async throws { try await expectError(["--offline"], "URL") }
    @Test func continueNeedsOutput() async throws { try await expectError(["-d", "-c", "x.org"], "--continue") }
    @Test func boundaryNeedsMultipart() async throws {
        try await expectError(["--offline", "--boundary=xyz", "x.org", "a=1"], "--boundary")
    }
}

/// `courier --help` as httpie's `http --help`; completion scripts at the root.
@Suite struct HelpTests {
    @Test func rootHelpShowsTheRequestFirstThenTheSubcommands() async throws {
        for arguments in [["--help"], ["help"], ["--offline", "--help"]] {
            let result = try await CourierProcess.run(arguments)
            #expect(result.status == 0)
            let text = result.stdoutText
            #expect(text.hasPrefix("USAGE: courier [<options>] [METHOD] URL [ITEM ...]\n"), "\(arguments)")
            let offline = try #require(text.range(of: "--offline"))
            let subcommands = try #require(text.range(of: "SUBCOMMANDS:"))
            #expect(offline.lowerBound < subcommands.lowerBound)
            for option in ["--form", "--download", "--session", "--curl", "--verbose"] {
                #expect(text.contains(option))
            }
            #expect(text[subcommands.upperBound...].contains("serve"))
        }
        let serve = try await CourierProcess.run(["serve", "--help"])
        #expect(serve.stdoutText.contains("USAGE: courier serve"))
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsAreGeneratedAtTheRoot(shell: String) async throws {
        let result = try await CourierProcess.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains("courier"))
        #expect(result.stdoutText.contains("--follow"))
    }
}
