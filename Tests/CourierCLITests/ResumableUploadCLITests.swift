import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `courier --resumable`: the upload URL on stderr, the store under `$XDG_STATE_HOME`, Ctrl-C
/// exiting 130 with the upload resumable, and the same command finishing it.
@Suite(.timeLimit(.minutes(3))) struct ResumableUploadCLITests {
    static func report(_ url: String) async throws -> [String: Any] {
        let result = try await CourierProcess.run(["-b", url])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
    }

    static func uploadURL(in stderr: String) -> String? {
        stderr.split(separator: "\n").last { $0.hasPrefix("courier: upload URL: ") }
            .map { String($0.dropFirst("courier: upload URL: ".count)) }
    }

    static func sha256Hex(of file: URL) throws -> String {
        let result = Process()
        result.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        result.arguments = [file.path]
        let pipe = Pipe()
        result.standardOutput = pipe
        try result.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        result.waitUntilExit()
        return String(String(decoding: data, as: UTF8.self).prefix(64))
    }

    /// `@FILE` and `< FILE` with tus, and `@FILE` with `--resumable=ietf`.
    @Test(arguments: ["@", "<", "ietf"])
    func aFileIsUploadedAndTheStoreLeftEmpty(form: String) async throws {
        try await CourierProcess.withServer { base, directory in
            let file = directory.appendingPathComponent("upload.bin")
            let bytes = Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try bytes.write(to: file)
            let state = directory.appendingPathComponent("state")
            let flag = form == "ietf" ? "--resumable=ietf" : "--resumable"
            let arguments = [flag, "--chunk-size", "256K", "\(base)/files/?cut=100000&cwu=0"]
            let result = try await CourierProcess.run(
                arguments + (form == "<" ? [] : ["@\(file.path)"]), stdin: form == "<" ? bytes : nil,
                environment: ["XDG_STATE_HOME": state.path], directory: directory)
            #expect(result.status == 0, "\(result.stderr)")
            let url = try #require(Self.uploadURL(in: result.stderr))
            let report = try await Self.report(url)
            #expect(report["sha256"] as? String == (try Self.sha256Hex(of: file)))
            #expect(report["appends"] as? Int == 4)
            #expect(report["draft"] as? Bool == (form == "ietf"))
            if form == "ietf" {
                // The draft's last append is answered by the target resource: its JSON goes to stdout.
                #expect(result.stdoutText.contains(try Self.sha256Hex(of: file)))
            }
            let entries = try FileManager.default.contentsOfDirectory(
                atPath: state.appendingPathComponent("courier/uploads").path)
            #expect(entries.isEmpty)
        }
    }

    @Test func aPipeIsRefusedWithAReason() async throws {
        try await CourierProcess.withServer { base, directory in
            let result = try await CourierProcess.run(
                ["--resumable", "\(base)/files/"], stdin: Data("abc".utf8), pipeStdin: true,
                environment: ["XDG_STATE_HOME": directory.path], directory: directory)
            #expect(result.status == 1)
            #expect(result.stderr.contains("--resumable uploads a file"))
        }
    }

    @Test func ctrlCLeavesTheUploadResumableAndTheSameCommandFinishesIt() async throws {
        try await CourierProcess.withServer { base, directory in
            let file = directory.appendingPathComponent("upload.bin")
            try Data((0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: file)
            let state = directory.appendingPathComponent("state")
            // `hold=1`: the server never answers the first PATCH, so the command is mid-upload.
            let arguments = ["--resumable", "\(base)/files/?hold=1&cwu=0", "@\(file.path)"]
            let process = ChildProcess()
            process.executableURL = try CourierProcess.executable()
            process.arguments = arguments
            process.currentDirectoryURL = directory
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_STATE_HOME"] = state.path
            process.environment = environment
            let errURL = directory.appendingPathComponent("stderr.txt")
            let outURL = directory.appendingPathComponent("stdout.txt")
            _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: errURL)
            process.standardOutput = try FileHandle(forWritingTo: outURL)
            try process.run()
            func stderr() -> String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }
            let deadline = Date().addingTimeInterval(60)
            while Self.uploadURL(in: stderr()) == nil && process.isRunning && Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(process.isRunning, "courier ended before it was interrupted: \(stderr())")
            kill(process.processIdentifier, SIGINT)
            let exitDeadline = Date().addingTimeInterval(60)
            while process.isRunning && Date() < exitDeadline { try await Task.sleep(for: .milliseconds(20)) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            #expect(process.terminationStatus == 130)
            #expect(stderr().contains("the same command continues the upload"))
            let first = try #require(Self.uploadURL(in: stderr()))
            let stored = try FileManager.default.contentsOfDirectory(
                atPath: state.appendingPathComponent("courier/uploads").path)
            #expect(stored.count == 1)

            let again = try await CourierProcess.run(
                arguments, environment: ["XDG_STATE_HOME": state.path], directory: directory)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(Self.uploadURL(in: again.stderr) == first)
            #expect(try await Self.report(first)["sha256"] as? String == (try Self.sha256Hex(of: file)))
            #expect(try await Self.report("\(base)/files/")["creations"] as? Int == 1)
            #expect(
                try FileManager.default.contentsOfDirectory(
                    atPath: state.appendingPathComponent("courier/uploads").path
                ).isEmpty)
        }
    }
}
