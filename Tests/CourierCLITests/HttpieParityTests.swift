import CourierTestServer
import Foundation
import Testing

@testable import CourierCLI

/// Behaviours found by running courier and httpie side by side, each pinned here: what the
/// options do to the exchange, checked against the in-process test server.
@Suite(.timeLimit(.minutes(3))) struct HttpieParityTests {
    func withServer(_ body: (String) async throws -> Void) async throws {
        let server = try await TestServer.start()
        do {
            try await body(server.baseURL.absoluteString)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// `-o FILE` without `-d` saves what would have been printed, as httpie's `--output` does:
    /// the body alone, uncoloured, even when stdout is a terminal.
    @Test func outputWithoutDownloadWritesThePrintedBodyToTheFile() async throws {
        try await withServer { base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("out.json")
            let result = try await CourierProcess.run(
                ["-o", file.path, "\(base)/get", "q==1"], environment: ["COURIER_FORCE_TTY": "1"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.isEmpty)
            let saved = try Data(contentsOf: file)
            #expect(!saved.contains(0x1B), "no colours in the file")
            let object = try #require(try JSONSerialization.jsonObject(with: saved) as? [String: Any])
            #expect((object["args"] as? [String: Any])?["q"] as? String == "1")

            let unwritable = try await CourierProcess.run(["-o", directory.path + "/missing/x", "\(base)/get"])
            #expect(unwritable.status == 1)
            #expect(unwritable.stderr.contains("--output"))
        }
    }

    /// `Accept-Encoding:` removes the header, as any other `Name:` item removes a default one.
    @Test func removingAcceptEncodingSendsNone() async throws {
        try await withServer { base in
            let result = try await CourierProcess.run(["\(base)/headers", "Accept-Encoding:"])
            let object = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
            let headers = try #require(object["headers"] as? [String: Any])
            #expect(headers["Accept-Encoding"] == nil, "\(headers)")
            let kept = try await CourierProcess.run(["\(base)/headers"])
            #expect(kept.stdoutText.contains("gzip, deflate"))
        }
    }

    /// Download mode follows redirects and exits 4 for a 404 without saving it, as httpie's.
    @Test func downloadFollowsRedirectsAndChecksTheStatus() async throws {
        try await withServer { base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let tty = ["COURIER_FORCE_TTY": "1"]
            let target = directory.appendingPathComponent("r.bin")
            let redirected = try await CourierProcess.run(
                ["-d", "--progress=never", "-o", target.path, "\(base)/redirect-to?url=/bytes/100%3Fseed%3D2"],
                environment: tty)
            #expect(redirected.status == 0, "\(redirected.stderr)")
            #expect(try Data(contentsOf: target) == Data(TestServer.expectedBytes(count: 100, seed: 2)))

            let missing = directory.appendingPathComponent("404.bin")
            let notFound = try await CourierProcess.run(
                ["-d", "--progress=never", "-o", missing.path, "\(base)/status/404"], environment: tty)
            #expect(notFound.status == 4)
            #expect(!FileManager.default.fileExists(atPath: missing.path))
        }
    }

    /// `-q` prints nothing but errors, and a download under it saves silently; `-qq` also drops
    /// the `--check-status` warning.
    @Test func quietPrintsNothingButErrors() async throws {
        try await withServer { base in
            let directory = try CourierProcess.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let quiet = try await CourierProcess.run(["-q", "\(base)/get"], environment: ["COURIER_FORCE_TTY": "1"])
            #expect(quiet.status == 0)
            #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty)
            let file = directory.appendingPathComponent("q.bin")
            let download = try await CourierProcess.run(["-q", "-d", "-o", file.path, "\(base)/bytes/10"])
            #expect(download.status == 0)
            #expect(download.stderr.isEmpty && download.stdout.isEmpty)
            #expect(try Data(contentsOf: file).count == 10)
            let warned = try await CourierProcess.run(["-q", "--check-status", "\(base)/status/500"])
            #expect(warned.status == 5)
            #expect(warned.stderr.contains("500"))
            let silent = try await CourierProcess.run(["-qq", "--check-status", "\(base)/status/500"])
            #expect(silent.status == 5)
            #expect(silent.stderr.isEmpty && silent.stdout.isEmpty)
            let refused = try await CourierProcess.run(["-qq", "http://127.0.0.1:1/"])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("refused"))
        }
    }

    /// `--curl` carries the options that act outside the request.
    @Test func curlCommandCarriesConnectionOptions() async throws {
        let result = try await CourierProcess.run([
            "--curl", "-F", "--max-redirects=3", "--verify=no", "--http1.1", "--proxy=https:http://127.0.0.1:9",
            "HEAD", "https://example.org/",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.hasPrefix("curl -L --max-redirs 3 -k --http1.1 -x http://127.0.0.1:9 --compressed "))
        let download = try await CourierProcess.run(["--curl", "-d", "-c", "-o", "x.bin", "http://example.org/f"])
        #expect(download.stdoutText.contains("-L --max-redirs 30 -o x.bin -C - "))
        #expect(!download.stdoutText.contains("--compressed"))
        let plain = CurlOptions(verify: "/etc/ca.pem", proxies: ["all:"], compressed: false)
        #expect(plain.arguments == ["--cacert", "/etc/ca.pem", "--noproxy", "*"])
    }

    /// Text in another charset is decoded for the terminal; text without a usable one is shown
    /// with U+FFFD where it does not decode; anything else stays "binary data not shown".
    @Test func nonUTF8TextIsDecodedForTheTerminal() {
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]  // "café" in ISO-8859-1
        #expect(MessagePrinter.terminalText(latin1, contentType: "text/plain; charset=ISO-8859-1") == "café")
        #expect(MessagePrinter.terminalText(latin1, contentType: "text/html; charset=windows-1252") == "café")
        #expect(MessagePrinter.terminalText(latin1, contentType: "text/plain") == "caf\u{FFFD}")
        #expect(MessagePrinter.terminalText(latin1, contentType: "application/octet-stream") == nil)
        #expect(MessagePrinter.terminalText(latin1, contentType: nil) == nil)
    }

    /// Streamed lines under `--response-charset`: each decoded before it is formatted, as httpie
    /// decodes them; what does not decode shows U+FFFD.
    @Test func streamedLinesAreDecodedFromAForcedCharset() {
        let formatter = LineFormatter(
            format: .jsonLines, pretty: .format, json: JSONOutput(pretty: .format, format: FormatOptions()),
            charset: .isoLatin1)
        var output: [UInt8] = []
        formatter.append(line: [0x7B, 0x22, 0x6E, 0x22, 0x3A, 0x22, 0x63, 0x61, 0x66, 0xE9, 0x22, 0x7D], to: &output)
        formatter.append(line: [0x63, 0x61, 0x66, 0xE9], to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "{\n    \"n\": \"café\"\n}\ncafé\n")
        let strict = LineFormatter(format: .text, pretty: .format, json: .asIs, charset: .utf8)
        output = []
        strict.append(line: [0x63, 0x61, 0x66, 0xE9], to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "caf\u{FFFD}\n")
    }

    /// `--response-mime` and `--response-charset` replace what Content-Type says for display:
    /// the type, the charset, or both; a charset alone over no Content-Type reads as text.
    @Test func responseMimeAndCharsetReplaceTheServedType() throws {
        let both = try ResponseDisplayType.parse(mime: "Application/JSON", charset: "Latin1")
        #expect(both.contentType(for: "text/html; charset=utf-8; q=1") == "application/json; charset=latin1")
        let mime = try ResponseDisplayType.parse(mime: "application/json", charset: nil)
        #expect(mime.contentType(for: "text/plain; charset=ISO-8859-2") == "application/json; charset=iso-8859-2")
        #expect(mime.contentType(for: nil) == "application/json")
        let charset = try ResponseDisplayType.parse(mime: nil, charset: "windows-1252")
        #expect(charset.contentType(for: "text/html") == "text/html; charset=windows-1252")
        #expect(charset.contentType(for: nil) == "text/plain; charset=windows-1252")
        #expect(try ResponseDisplayType.parse(mime: nil, charset: nil).contentType(for: "a/b; x=1") == "a/b; x=1")
        // What the terminal then shows of UTF-8 bytes read as Latin-1, as httpie shows them.
        let utf8: [UInt8] = Array("café".utf8)
        #expect(MessagePrinter.terminalText(utf8, contentType: charset.contentType(for: nil)) == "cafÃ©")
        // A forced charset the bytes do not decode in still shows text, never the binary note.
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
        #expect(
            MessagePrinter.terminalText(latin1, contentType: "application/json; charset=utf-8", lossy: true)
                == "caf\u{FFFD}")
        #expect(MessagePrinter.terminalText(latin1, contentType: "application/json; charset=utf-8") == nil)
        #expect(MessagePrinter.encoding(forCharset: "ISO_8859-1") == .isoLatin1)
        #expect(MessagePrinter.encoding(forCharset: "UTF_8") == .utf8)
        // As httpie: parameters of a given type are dropped, and one slash is all it takes.
        #expect(try ResponseDisplayType.parse(mime: "Text/Plain; charset=x", charset: nil).mime == "text/plain")
        #expect(try ResponseDisplayType.parse(mime: nil, charset: "Latin-1").contentType(for: nil) != nil)
        for (mime, charset) in [("json", nil), ("a/b/c", nil), (nil, "klingon"), (nil, "")] {
            #expect(throws: CLIError.self) { try ResponseDisplayType.parse(mime: mime, charset: charset) }
        }
    }
}
