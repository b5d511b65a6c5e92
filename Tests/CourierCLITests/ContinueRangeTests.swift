import CourierTestServer
import Foundation
import Testing

/// `--continue` appends a 206 only when its bytes are exactly those its `Content-Range`
/// names, ending the file; a 416 means "complete" only when it gives the partial file's
/// length (issue 48). Anything else fails and leaves the partial file as it was.
@Suite(.timeLimit(.minutes(3))) struct ContinueRangeTests {
    func withPartialFile(_ body: (String, URL) async throws -> Void) async throws {
        let server = try await TestServer.start()
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("part.bin")
        try Data("01234".utf8).write(to: file)
        do {
            try await body(server.baseURL.absoluteString + "/fault/range", file)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    func resume(_ file: URL, _ url: String) async throws -> CourierProcess.Result {
        try await CourierProcess.run(["-d", "-c", "-o", file.path, url])
    }

    @Test(
        "a 206 of the wrong length is refused",
        arguments: [
            ("sent=3", 3), ("sent=7", 7), ("sent=8&framing=chunked", 8), ("sent=11&framing=close", 11),
            ("sent=3&framing=close", 3),
        ])
    func aWrongLengthIsRefused(query: String, sent: Int) async throws {
        try await withPartialFile { url, file in
            let result = try await resume(file, "\(url)?\(query)")
            #expect(result.status == 1, "\(result.stderr)")
            #expect(
                result.stderr.contains("the server sent \(sent) bytes for bytes 5-9; the partial file was kept"),
                "\(result.stderr)")
            #expect(try Data(contentsOf: file) == Data("01234".utf8))
        }
    }

    @Test func aRangeThatStopsShortOfTheEndIsRefused() async throws {
        try await withPartialFile { url, file in
            let result = try await resume(file, "\(url)?length=20")
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("bytes 5-9 of 20, not the rest"), "\(result.stderr)")
            #expect(try Data(contentsOf: file) == Data("01234".utf8))
        }
    }

    @Test func theRightBytesAreAppended() async throws {
        try await withPartialFile { url, file in
            for query in ["", "?framing=chunked", "?framing=close", "?length=*"] {
                try Data("01234".utf8).write(to: file)
                let result = try await resume(file, url + query)
                #expect(result.status == 0, "\(query): \(result.stderr)")
                #expect(try Data(contentsOf: file) == Data("01234xxxxx".utf8), "\(query)")
            }
        }
    }

    @Test func a416IsCompleteOnlyForThePartialFilesLength() async throws {
        try await withPartialFile { url, file in
            let complete = try await resume(file, "\(url)?status=416&length=5")
            #expect(complete.stderr.contains("\"\(file.path)\" is already complete"), "\(complete.stderr)")
            #expect(complete.status == 0, "\(complete.stderr)")
            #expect(!complete.stderr.contains("warning"), "\(complete.stderr)")
            for (query, said) in [
                ("status=416&length=99", "says the file has 99 bytes"), ("status=416", "without the file's length"),
            ] {
                let result = try await resume(file, "\(url)?\(query)")
                #expect(result.status == 1, "\(result.stderr)")
                #expect(!result.stderr.contains("already complete"), "\(result.stderr)")
                #expect(result.stderr.contains(said), "\(result.stderr)")
                #expect(result.stderr.contains("the partial file was kept"), "\(result.stderr)")
                #expect(try Data(contentsOf: file) == Data("01234".utf8))
            }
        }
    }
}
