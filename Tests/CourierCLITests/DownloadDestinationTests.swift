import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `courier -d -o PATH` writes where the user points, as the user's file (issue 48): what is
/// at PATH is written through, never replaced; new files follow the umask; the resume record
/// is private, keeps no query and takes no file of the user's.
@Suite(.timeLimit(.minutes(3))) struct DownloadDestinationTests {
    func withServer(_ body: (String, URL) async throws -> Void) async throws {
        try await CourierProcess.withServer(body)
    }

    func status(_ path: String, following: Bool = false) -> stat {
        var info = stat()
        _ = following ? stat(path, &info) : lstat(path, &info)
        return info
    }

    func expected(_ count: Int) -> Data { Data(TestServer.expectedBytes(count: count)) }

    /// Only what the scratch directory should hold: no scratch directory, no temporary file.
    func names(in directory: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    @Test func aDeviceNodeStaysADevice() async throws {
        try await withServer { base, directory in
            guard let node = CourierProcess.makeNullDevice(in: directory) else { return }
            let result = try await CourierProcess.run(["-d", "-o", node.path, "\(base)/bytes/100000"])
            #expect(result.status == 0, "\(result.stderr)")
            let info = status(node.path)
            #expect(info.st_mode & S_IFMT == S_IFCHR)
            #expect(info.st_rdev == dev_t((1 << 8) | 3))
            // -c cannot continue a device: it says so and writes the whole body.
            let again = try await CourierProcess.run(["-d", "-c", "-o", node.path, "\(base)/bytes/100000"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stderr.contains("not a regular file"), "\(again.stderr)")
            #expect(status(node.path).st_mode & S_IFMT == S_IFCHR)
            #expect(try names(in: directory) == ["mynull"])
        }
    }

    @Test func aSymbolicLinkStaysOneAndItsTargetGetsTheBytes() async throws {
        try await withServer { base, directory in
            let target = directory.appendingPathComponent("target.bin")
            try Data("old".utf8).write(to: target)
            let link = directory.appendingPathComponent("link.bin")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "target.bin")
            let result = try await CourierProcess.run(["-d", "-o", link.path, "\(base)/bytes/100000"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(status(link.path).st_mode & S_IFMT == S_IFLNK)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "target.bin")
            #expect(try Data(contentsOf: target) == expected(100_000))

            // A dangling link: its target is created, as curl and `>` create it.
            let dangling = directory.appendingPathComponent("dangling.bin")
            try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: "made.bin")
            let made = try await CourierProcess.run(["-d", "-o", dangling.path, "\(base)/bytes/5000"])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(status(dangling.path).st_mode & S_IFMT == S_IFLNK)
            #expect(try Data(contentsOf: directory.appendingPathComponent("made.bin")) == expected(5000))

            // An interrupted download keeps its record beside the bytes, the link's target, where
            // a split download keeps its own, and --continue through the link finds it.
            let cut = "\(base)/fault/close-mid-response?after=300000&total=600000&etag=1"
            let failed = try await CourierProcess.run(["-d", "-o", link.path, cut])
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(
                FileManager.default.fileExists(
                    atPath: directory.appendingPathComponent(".target.bin.courier-resume").path))
            #expect(
                !FileManager.default.fileExists(
                    atPath: directory.appendingPathComponent(".link.bin.courier-resume").path))
            let resumed = try await CourierProcess.run(["-d", "-c", "-v", "-o", link.path, cut])
            #expect((resumed.stdoutText + resumed.stderr).contains("If-Range: \"cut-600000\""), "\(resumed.stderr)")
        }
    }

    @Test func anExistingFileKeepsItsInodeModeAndHardLinks() async throws {
        try await withServer { base, directory in
            let file = directory.appendingPathComponent("private.bin")
            try Data(repeating: 0x41, count: 300_000).write(to: file)
            chmod(file.path, 0o600)
            let other = directory.appendingPathComponent("other-name.bin")
            #expect(link(file.path, other.path) == 0)
            let before = status(file.path)
            let result = try await CourierProcess.run(["-d", "-o", file.path, "\(base)/bytes/100000"])
            #expect(result.status == 0, "\(result.stderr)")
            let after = status(file.path)
            #expect(after.st_ino == before.st_ino)
            #expect(after.st_mode & 0o7777 == 0o600)
            #expect(after.st_nlink == 2)
            #expect(after.st_uid == before.st_uid)
            // Truncated to the new length, and the other name sees the same bytes.
            #expect(try Data(contentsOf: file) == expected(100_000))
            #expect(try Data(contentsOf: other) == expected(100_000))
        }
    }

    @Test func aFIFOStaysOneAndItsReaderGetsTheBytes() async throws {
        try await withServer { base, directory in
            let fifo = directory.appendingPathComponent("fifo")
            #expect(mkfifo(fifo.path, 0o600) == 0)
            let received = try await withThrowingTaskGroup(of: Data?.self) { group in
                group.addTask {
                    try await CourierProcess.offThePool { CourierProcess.readAll(fifo.path) }
                }
                group.addTask {
                    let result = try await CourierProcess.run(
                        ["-d", "-o", fifo.path, "\(base)/bytes/200000"], limit: 60)
                    #expect(result.status == 0, "\(result.stderr)")
                    // Should courier have failed before opening it, the reader still gets its end.
                    let unblock = open(fifo.path, O_WRONLY | O_NONBLOCK)
                    if unblock >= 0 { close(unblock) }
                    return nil
                }
                var bytes = Data()
                for try await value in group { if let value { bytes = value } }
                return bytes
            }
            #expect(received == expected(200_000))
            #expect(status(fifo.path).st_mode & S_IFMT == S_IFIFO)
        }
    }

    @Test("a new file follows the umask", arguments: [("077", 0o600), ("022", 0o644), ("002", 0o664)])
    func aNewFileFollowsTheUmask(umask: String, mode: Int) async throws {
        try await withServer { base, directory in
            let file = directory.appendingPathComponent("new.bin")
            let result = try await CourierProcess.run(
                ["-d", "-o", file.path, "\(base)/bytes/1000"], shell: .init(umask: umask))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Int(status(file.path).st_mode & 0o7777) == mode)
            // A name chosen from the response too (stdout a terminal: else the body goes there).
            let chosen = try await CourierProcess.run(
                ["-d", "\(base)/bytes/1000"], environment: ["COURIER_FORCE_TTY": "1"], directory: directory,
                shell: .init(umask: umask))
            #expect(chosen.status == 0, "\(chosen.stderr)")
            // And --output without --download, which saves what would have been printed.
            let printed = directory.appendingPathComponent("printed.txt")
            let saved = try await CourierProcess.run(
                ["-o", printed.path, "\(base)/get"], shell: .init(umask: umask))
            #expect(saved.status == 0, "\(saved.stderr)")
            #expect(Int(status(printed.path).st_mode & 0o7777) == mode)
            let named = try names(in: directory).subtracting(["new.bin", "printed.txt"])
            #expect(named.count == 1)
            for name in named {
                #expect(Int(status(directory.appendingPathComponent(name).path).st_mode & 0o7777) == mode)
            }
        }
    }

    @Test func theResumeRecordIsPrivateHoldsNoQueryAndTakesNoUsersFile() async throws {
        try await withServer { base, directory in
            // The user's own file, under the name earlier versions gave the record.
            let users = directory.appendingPathComponent("data.courier")
            try Data("the user's data".utf8).write(to: users)
            let plain = try await CourierProcess.run(["-d", "-o", "data", "\(base)/bytes/1000"], directory: directory)
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(try Data(contentsOf: users) == Data("the user's data".utf8))

            let url = "\(base)/fault/close-mid-response?after=300000&total=600000&etag=1&token=s3cr3t"
            let failed = try await CourierProcess.run(["-d", "-o", "data", url], directory: directory)
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("kept in \"data\""), "\(failed.stderr)")
            let record = directory.appendingPathComponent(".data.courier-resume")
            #expect(status(record.path).st_mode & 0o777 == 0o600)
            let text = String(decoding: try Data(contentsOf: record), as: UTF8.self)
            #expect(text.contains("cut-600000"))
            #expect(!text.contains("s3cr3t") && !text.contains("token"), "\(text)")
            #expect(try Data(contentsOf: users) == Data("the user's data".utf8))
            #expect(try names(in: directory) == ["data", "data.courier", ".data.courier-resume"])

            // --continue sends the kept validator for the same path, whatever the query.
            let resumed = try await CourierProcess.run(
                ["-d", "-c", "-v", "-o", "data", "\(base)/fault/close-mid-response?after=1&total=2&token=new"],
                directory: directory)
            let shown = resumed.stdoutText + resumed.stderr
            #expect(shown.contains("If-Range: \"cut-600000\""), "\(shown)")
            #expect(try Data(contentsOf: users) == Data("the user's data".utf8))
        }
    }
}
