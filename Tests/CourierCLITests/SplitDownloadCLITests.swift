import CourierTestServer
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier -d --split N`: one file over N ranged connections, and `-c` continuing the ranges a
/// stopped split download lists in its record; `-o` onto a link, a device or a FIFO as plain
/// `-d -o` writes it.
@Suite(.timeLimit(.minutes(3))) struct SplitDownloadCLITests {
    static let length = 5_000_000

    /// Runs `body` with a fresh test server (whose request log the test reads), its base URL and
    /// a scratch directory; stops the server and removes the directory whatever happens.
    func withServer(_ body: (TestServer, String, URL) async throws -> Void) async throws {
        let server = try await TestServer.start()
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try await body(server, server.baseURL.absoluteString, directory)
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    /// The `Range` headers of the `/split/` requests the server saw, in order.
    func ranges(_ server: TestServer) -> [String?] {
        server.stats.recentRequestHeads.filter { $0.uri.hasPrefix("/split/") }.map { $0.value("Range") }
    }

    func status(_ path: String) -> stat {
        var info = stat()
        _ = lstat(path, &info)
        return info
    }

    func names(in directory: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    var expected: Data { Data(TestServer.expectedBytes(count: Self.length, seed: 1)) }

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

    @Test func aSymbolicLinkStaysOneAndItsTargetGetsTheSplitFile() async throws {
        try await withServer { server, base, directory in
            let target = directory.appendingPathComponent("target.bin")
            try Data("old".utf8).write(to: target)
            chmod(target.path, 0o640)
            let link = directory.appendingPathComponent("link.bin")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "target.bin")
            let result = try await CourierProcess.run(
                ["-d", "--split", "4", "-o", link.path, "\(base)/split/\(Self.length)?id=cli-link"],
                shell: .init(umask: "077"))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stderr.contains("removePreviousFile"), "\(result.stderr)")
            #expect(status(link.path).st_mode & S_IFMT == S_IFLNK)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "target.bin")
            #expect(try Data(contentsOf: target) == expected)
            // Written through, as plain -d -o writes: the file keeps its mode.
            #expect(status(target.path).st_mode & 0o7777 == 0o640)
            #expect(ranges(server).count >= 4, "\(ranges(server))")
            #expect(try names(in: directory) == ["link.bin", "target.bin"])

            // A dangling relative link into a subdirectory: the file it names is created, with
            // the umask's mode.
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("sub"), withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(
                atPath: directory.appendingPathComponent("dangling.bin").path, withDestinationPath: "sub/made.bin")
            let made = try await CourierProcess.run(
                ["-d", "--split", "4", "-o", "dangling.bin", "\(base)/split/\(Self.length)?id=cli-dangling"],
                directory: directory, shell: .init(umask: "022"))
            #expect(made.status == 0, "\(made.stderr)")
            let madeFile = directory.appendingPathComponent("sub/made.bin")
            #expect(try Data(contentsOf: madeFile) == expected)
            #expect(status(madeFile.path).st_mode & 0o7777 == 0o644)
            #expect(status(directory.appendingPathComponent("dangling.bin").path).st_mode & S_IFMT == S_IFLNK)
            #expect(try names(in: directory.appendingPathComponent("sub")) == ["made.bin"])
        }
    }

    @Test func aDeviceNodeIsWrittenThroughOverOneConnection() async throws {
        try await withServer { server, base, directory in
            guard let node = CourierProcess.makeNullDevice(in: directory) else { return }
            let result = try await CourierProcess.run(
                ["-d", "--split", "4", "-o", node.path, "\(base)/split/\(Self.length)?id=cli-device"],
                shell: .init(umask: "077"))
            #expect(result.status == 0, "\(result.stderr)")
            let said = result.stderr.split(separator: "\n").filter { $0.hasPrefix("courier:") }
            #expect(
                said == [
                    "courier: warning: --split: \"\(node.path)\" is not a regular file; downloading it over one connection"
                ], "\(result.stderr)")
            let info = status(node.path)
            #expect(info.st_mode & S_IFMT == S_IFCHR)
            #expect(info.st_rdev == dev_t((1 << 8) | 3))
            // One plain GET, as `-d -o` sends it.
            #expect(ranges(server) == [nil])
            #expect(try names(in: directory) == ["mynull"])
        }
    }

    @Test func withoutOutputARedirectedStdoutGetsTheBodyOverOneConnection() async throws {
        try await withServer { server, base, directory in
            let result = try await CourierProcess.run(
                ["-d", "--split", "4", "\(base)/split/\(Self.length)?id=cli-stdout"], directory: directory)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == expected)
            #expect(result.stderr.contains("--split: the body goes to stdout"), "\(result.stderr)")
            #expect(ranges(server) == [nil])
            #expect(try names(in: directory).isEmpty)
            // On a terminal, the file is named from the URL and split.
            let named = try await CourierProcess.run(
                ["-d", "--split", "4", "\(base)/split/\(Self.length)?id=cli-named"],
                environment: ["COURIER_FORCE_TTY": "1"], directory: directory)
            #expect(named.status == 0, "\(named.stderr)")
            #expect(try Data(contentsOf: directory.appendingPathComponent("\(Self.length)")) == expected)
            #expect(ranges(server).count >= 5, "\(ranges(server))")
        }
    }

    @Test func aMissingDirectoryIsSaidInTheCLIsWordsBeforeAnyRequest() async throws {
        try await withServer { server, base, directory in
            let file = directory.appendingPathComponent("nodir/x.bin")
            let result = try await CourierProcess.run(
                ["-d", "--split", "4", "-o", file.path, "\(base)/split/\(Self.length)?id=cli-nodir"])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(
                result.stderr
                    == "courier: error: cannot open \"\(file.path)\" to write the download: No such file or directory\n"
            )
            #expect(ranges(server).isEmpty)
        }
    }

    @Test func aFIFOsReaderGetsTheFileInOrder() async throws {
        try await withServer { server, base, directory in
            let fifo = directory.appendingPathComponent("fifo")
            #expect(mkfifo(fifo.path, 0o600) == 0)
            let received = try await withThrowingTaskGroup(of: Data?.self) { group in
                group.addTask { try await CourierProcess.offThePool { CourierProcess.readAll(fifo.path) } }
                group.addTask {
                    let result = try await CourierProcess.run(
                        ["-d", "--split", "4", "-o", fifo.path, "\(base)/split/\(Self.length)?id=cli-fifo"], limit: 60)
                    #expect(result.status == 0, "\(result.stderr)")
                    #expect(result.stderr.contains("over one connection"), "\(result.stderr)")
                    // Should courier have failed before opening it, the reader still gets its end.
                    let unblock = open(fifo.path, O_WRONLY | O_NONBLOCK)
                    if unblock >= 0 { close(unblock) }
                    return nil
                }
                var bytes = Data()
                for try await value in group { if let value { bytes = value } }
                return bytes
            }
            #expect(received == expected)
            #expect(status(fifo.path).st_mode & S_IFMT == S_IFIFO)
            #expect(ranges(server) == [nil])
        }
    }

    @Test("a new file follows the umask, with stdin closed", arguments: [("077", 0o600), ("022", 0o644)])
    func aNewFileFollowsTheUmaskWithStdinClosed(umask: String, mode: Int) async throws {
        try await withServer { server, base, directory in
            let file = directory.appendingPathComponent("new.bin")
            let result = try await CourierProcess.run(
                ["-d", "--split", "4", "-o", file.path, "\(base)/split/\(Self.length)?id=cli-umask-\(umask)"],
                shell: .init(umask: umask, redirections: "<&-"))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Data(contentsOf: file) == expected)
            #expect(Int(status(file.path).st_mode & 0o7777) == mode)
            #expect(try names(in: directory) == ["new.bin"])
        }
    }

    @Test func splitNeedsDownload() async throws {
        let result = try await CourierProcess.run(["--split", "4", "http://127.0.0.1:9/"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("--split needs --download"), "\(result.stderr)")
    }
}
