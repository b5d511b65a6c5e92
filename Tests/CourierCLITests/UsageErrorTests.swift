import Foundation
import Testing

/// Bad command lines exit 1 with one line on stderr that quotes the offending token.
@Suite struct UsageErrorTests {
    func expectError(_ arguments: [String], _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try CourierProcess.run(arguments)
        #expect(result.status == 1, sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
        #expect(result.stderr.hasPrefix("courier: error: "), sourceLocation: sourceLocation)
        #expect(result.stderr.contains(fragment), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.filter { $0 == "\n" }.count == 1, sourceLocation: sourceLocation)
    }

    @Test func notAnItem() throws { try expectError(["--offline", "x.org", "bad"], "\"bad\": not a request item") }
    @Test func missingFile() throws {
        try expectError(["--offline", "-f", "x.org", "f@/nonexistent/file"], "\"f@/nonexistent/file\": no such file")
    }
    @Test func missingRawBodyFile() throws { try expectError(["--offline", "x.org", "@/nonexistent"], "no such file") }
    @Test func missingDataFile() throws { try expectError(["--offline", "x.org", "a=@/nonexistent"], "\"a=@/nonexistent\"") }
    @Test func invalidJSON() throws { try expectError(["--offline", "x.org", "a:=nojson"], "\"a:=nojson\": not valid JSON") }
    @Test func headerWithValueAfterSemicolon() throws { try expectError(["--offline", "x.org", "a;b"], "\"a;b\"") }
    @Test func invalidHeaderName() throws { try expectError(["--offline", "x.org", "a b:c"], "\"a b:c\"") }
    @Test func fileFieldNeedsForm() throws { try expectError(["--offline", "x.org", "f@/etc/hostname"], "--form") }
    @Test func rawJSONNeedsJSON() throws { try expectError(["--offline", "-f", "x.org", "a:=1"], "\"a:=1\"") }
    @Test func badURL() throws { try expectError(["--offline", "ftp://x.org/"], "\"ftp://x.org/\"") }
    @Test func badPrint() throws { try expectError(["--offline", "--print=Hx", "x.org"], "--print") }
    @Test func badPretty() throws { try expectError(["--offline", "--pretty=loud", "x.org"], "--pretty") }
    @Test func unknownOption() throws { try expectError(["--nope", "x.org"], "--nope") }
    @Test func missingURL() throws { try expectError(["--offline"], "URL") }
    @Test func continueNeedsOutput() throws { try expectError(["-d", "-c", "x.org"], "--continue") }
    @Test func boundaryNeedsMultipart() throws { try expectError(["--offline", "--boundary=xyz", "x.org", "a=1"], "--boundary") }
}
