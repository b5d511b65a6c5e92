import CourierTestServer
import Foundation
import Testing

/// `courier -d --split N`: one file over N ranged connections, and `-c` continuing the ranges a
/// stopped split download lists in its record.
@Suite(.timeLimit(.minutes(3))) struct SplitDownloadCLITests {
    static let length = 5_000_000

    @Test func aSplitDownloadSavesTheFileWhole() async throws {
        try await CourierProcess.withServer { base, directory in
            let file = directory.appendingPathComponent("split.bin")
            let result = try await CourierProcess.run(
                ["-d", "--split", "4", "-o", file.path, "\(base)/split/\(Self.length)?id=cli"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Array(try Data(contentsOf: file)) == TestServer.expectedBytes(count: Self.length, seed: 1))
            #expect(
                !FileManager.default.fileExists(
                    atPath: directory.appendingPathComponent(".split.bin.courier-resume").path))
        }
    }

    @Test func aFileChangedMidwayIsAnErrorAndNoFile() async throws {
        try await CourierProcess.withServer { base, directory in
            let file = directory.appendingPathComponent("changed.bin")
            let result = try await CourierProcess.run(
                ["-d", "--split", "4", "-o", file.path, "\(base)/split/\(Self.length)?id=cli-changed&change_after=1"])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("changed"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: file.path))
        }
    }

    @Test(arguments: [["--split", "2"], []])
    func continueFetchesOnlyTheMissingRanges(split: [String]) async throws {
        try await CourierProcess.withServer { base, directory in
            let file = directory.appendingPathComponent("resumed.bin")
            let url = "\(base)/split/\(Self.length)?id=cli-resumed-\(split.count)"
            var left = TestServer.expectedBytes(count: Self.length, seed: 1)
            left.replaceSubrange(1_000_000..<3_000_000, with: repeatElement(0, count: 2_000_000))
            try Data(left).write(to: file)
            let record = """
                {"format":"courier-resume/2","url":"\(base)/split/\(Self.length)","entityTag":"\\"split-\(Self.length)-v1\\"","length":\(Self.length),"missing":[[1000000,3000000]]}
                """
            let recordPath = directory.appendingPathComponent(".resumed.bin.courier-resume").path
            #expect(
                FileManager.default.createFile(
                    atPath: recordPath, contents: Data(record.utf8), attributes: [.posixPermissions: 0o600]))
            let result = try await CourierProcess.run(["-d", "-c"] + split + ["-o", file.path, url])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Array(try Data(contentsOf: file)) == TestServer.expectedBytes(count: Self.length, seed: 1))
            #expect(!FileManager.default.fileExists(atPath: recordPath))
        }
    }

    @Test func splitNeedsDownload() async throws {
        let result = try await CourierProcess.run(["--split", "4", "http://127.0.0.1:9/"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("--split needs --download"), "\(result.stderr)")
    }
}
