import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// SIGINT and SIGTERM during a transfer: a download keeps its bytes where `--continue` finds
/// them, one line says so, the exit code is 130 or 143, and no temporary file is left.
@Suite(.timeLimit(.minutes(3))) struct InterruptTests {
    /// Starts `courier`, waits until `ready` holds (at most 60 s), sends `signal`, and returns
    /// the exit status and stderr.
    func interrupt(
        _ arguments: [String], signal: Int32, directory: URL, environment: [String: String] = [:],
        ready: () -> Bool
    ) async throws -> (status: Int32, stderr: String) {
        let process = ChildProcess()
        process.executableURL = try CourierProcess.executable()
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "COURIER_FORCE_TTY")
        for (key, value) in environment { env[key] = value }
        // The session's files would go here if they escaped the scratch directory.
        env["TMPDIR"] = directory.appendingPathComponent("tmp").path
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        process.environment = env
        let errURL = directory.appendingPathComponent("stderr.txt")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        // Polled with Task.sleep, which gives the cooperative thread back between looks.
        while !ready() && process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(process.isRunning, "courier ended before it was interrupted")
        kill(process.processIdentifier, signal)
        let exitDeadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < exitDeadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            process.terminate()
            Issue.record("courier did not exit after the signal")
        }
        process.waitUntilExit()
        let stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        try FileManager.default.removeItem(at: errURL)
        return (process.terminationStatus, stderr)
    }

    /// Bytes in the session's file inside courier's scratch directory.
    func inProgressBytes(in directory: URL) -> Int64 {
        let manager = FileManager.default
        guard
            let scratch = (try? manager.contentsOfDirectory(atPath: directory.path))?.first(where: {
                $0.hasPrefix(".courier-")
            }),
            let files = try? manager.contentsOfDirectory(atPath: directory.appendingPathComponent(scratch).path)
        else { return 0 }
        // "kept" is a second name of the file in progress (ScratchDirectory.keepPartialFile).
        return files.filter { $0 != "kept" }.reduce(0) { total, name in
            let path = directory.appendingPathComponent(scratch).appendingPathComponent(name).path
            return total + ((try? manager.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0)
        }
    }

    func leftovers(in directory: URL) throws -> [String] {
        let top = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix(".courier-")
        }
        let temporary = try FileManager.default.contentsOfDirectory(
            atPath: directory.appendingPathComponent("tmp").path)
        return top + temporary
    }

    @Test func sigintKeepsTheBytesAtTheDestinationAndContinueResumesThem() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let base = server.baseURL.absoluteString
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("big.bin")

        let result = try await interrupt(
            ["-d", "-o", "big.bin", "\(base)/drip?numbytes=4000000&duration=20"], signal: SIGINT, directory: directory
        ) { inProgressBytes(in: directory) > 10_000 }
        #expect(result.status == 130)
        // The response head is CRLF-terminated; "\r\n" is one Character, so normalize before splitting.
        let lines = result.stderr.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
            .filter { $0.hasPrefix("courier:") }
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.contains("kept in \"big.bin\"") == true, "\(result.stderr)")
        let kept = try Data(contentsOf: destination)
        #expect(kept.count > 10_000 && kept.count < 4_000_000)
        #expect(kept.allSatisfy { $0 == UInt8(ascii: "*") })
        #expect(try leftovers(in: directory) == [])

        // --continue asks for the rest from where the file ends.
        let resumed = try await CourierProcess.run(
            ["-d", "-c", "-o", "big.bin", "\(base)/bytes/4000000?seed=2"], directory: directory)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("206"))
        let whole = try Data(contentsOf: destination)
        #expect(whole.count == 4_000_000)
        #expect(whole.prefix(kept.count) == kept)
        #expect(
            whole.suffix(from: kept.count)
                == Data(TestServer.expectedBytes(count: 4_000_000, seed: 2)).suffix(from: kept.count))
    }

    /// Bytes stored in `file`: its allocated blocks, not its length, which a split download's
    /// holes (segments not yet arrived) make the end of its furthest segment.
    func bytesOnDisk(of file: URL) -> Int64 {
        var info = stat()
        guard stat(file.path, &info) == 0 else { return 0 }
        return Int64(info.st_blocks) * 512
    }

    @Test func sigintStopsASplitDownloadAndContinueFetchesOnlyWhatIsMissing() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let base = server.baseURL.absoluteString
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let length = 16 << 20
        let file = directory.appendingPathComponent("split.bin")
        let recordFile = directory.appendingPathComponent(".split.bin.courier-resume")

        // 64 KiB every 100 ms on each connection: about 7 s for the file over 4 of them.
        let result = try await interrupt(
            ["-d", "--split", "4", "-o", "split.bin", "\(base)/split/\(length)?id=sigint&pace_ms=100"], signal: SIGINT,
            directory: directory
        ) { bytesOnDisk(of: file) >= 1 << 20 }
        #expect(result.status == 130, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("courier:") }
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(
            lines.first?.contains("kept in \"split.bin\" (--download --continue --split 4 --output \"split.bin\"")
                == true, "\(result.stderr)")
        #expect(try leftovers(in: directory) == [])

        // The record lists what is missing; every other byte is on disk and right.
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: recordFile)) as? [String: Any])
        #expect(record["format"] as? String == "courier-resume/2")
        #expect(record["length"] as? Int == length)
        let missing = try #require(record["missing"] as? [[Int]]).compactMap { pair in
            pair.count == 2 ? pair[0]..<pair[1] : nil
        }
        let missingBytes = missing.reduce(0) { $0 + $1.count }
        #expect(missingBytes > 0 && missingBytes < length - (1 << 20) / 2, "\(missing)")
        let expected = TestServer.expectedBytes(count: length, seed: 1)
        let kept = Array(try Data(contentsOf: file))
        var cursor = 0
        for range in missing + [length..<length] {
            let present = cursor..<range.lowerBound
            if !present.isEmpty {
                #expect(present.upperBound <= kept.count, "the record lists bytes \(present) the file lacks")
                if present.upperBound <= kept.count {
                    #expect(kept[present] == expected[present], "bytes \(present) were kept wrong")
                }
            }
            cursor = range.upperBound
        }

        // -c continues every missing range, and only those: the server hands out about the
        // missing bytes (paced, so that a connection dropped at a range's end leaves little in flight).
        let before = server.stats.recentRequestHeads.count
        let resumed = try await CourierProcess.run(
            ["-d", "-c", "--split", "4", "-o", "split.bin", "\(base)/split/\(length)?id=sigint-resumed&pace_ms=5"],
            directory: directory)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(Array(try Data(contentsOf: file)) == expected)
        #expect(!FileManager.default.fileExists(atPath: recordFile.path))
        let asked = server.stats.recentRequestHeads.dropFirst(before).compactMap { $0.value("Range") }
        #expect(!asked.contains("bytes=0-"), "\(asked)")
        let fetched = server.splitBytesSent(id: "sigint-resumed")
        #expect(fetched >= missingBytes)
        #expect(fetched <= missingBytes + missingBytes / 10 + (1 << 20), "\(fetched) for \(missingBytes) missing")
    }

    @Test func sigtermKeepsTheBytesUnderTheChosenNameAndExits143() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await interrupt(
            ["-d", "--progress=always", "\(server.baseURL.absoluteString)/drip?numbytes=4000000&duration=20"],
            signal: SIGTERM,
            directory: directory, environment: ["COURIER_FORCE_TTY": "1"]
        ) { inProgressBytes(in: directory) > 10_000 }
        #expect(result.status == 143)
        #expect(result.stderr.contains("kept in \"drip.bin\""), "\(result.stderr)")
        #expect(result.stderr.hasSuffix("\n"))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("drip.bin").path))
        #expect(try leftovers(in: directory) == [])
    }

    @Test func anInterruptedRequestLeavesNoTemporaryFile() async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await interrupt(
            ["\(server.baseURL.absoluteString)/drip?numbytes=4000000&duration=20"], signal: SIGINT, directory: directory
        ) {
            // A printed body goes to stdout as it arrives (no scratch directory); interrupt it
            // once the request is in.
            server.stats.requestsReceived > 0
        }
        #expect(result.status == 130)
        #expect(result.stderr == "courier: error: interrupted\n")
        #expect(try leftovers(in: directory) == [])
    }
}
