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

/// `--session PATH` saves where the user points without replacing what is there (issue 48):
/// a device stays a device, a symbolic link a link, a hard-linked file keeps its inode.
@Suite(.timeLimit(.minutes(3))) struct SessionFileDestinationTests {
    func withServer(_ body: (String, URL) async throws -> Void) async throws {
        try await CourierProcess.withServer(body)
    }

    func status(_ path: String) -> stat {
        var info = stat()
        _ = lstat(path, &info)
        return info
    }

    func savedHeaders(_ path: URL) throws -> [[String: String]]? {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any]
        return object?["headers"] as? [[String: String]]
    }

    @Test func aDeviceNodeStaysADevice() async throws {
        try await withServer { base, directory in
            guard let node = CourierProcess.makeNullDevice(in: directory) else { return }
            for _ in 0..<2 {
                // Read (empty) and written through, twice: the second run reads the device again.
                let result = try await CourierProcess.run(["--session", node.path, "\(base)/get", "X-Team:blue"])
                #expect(result.status == 0, "\(result.stderr)")
                let info = status(node.path)
                #expect(info.st_mode & S_IFMT == S_IFCHR)
                #expect(info.st_rdev == dev_t((1 << 8) | 3))
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["mynull"])
        }
    }

    @Test func aSymbolicLinkStaysOneAndItsTargetGetsTheSession() async throws {
        try await withServer { base, directory in
            let dotfiles = directory.appendingPathComponent("dotfiles")
            try FileManager.default.createDirectory(at: dotfiles, withIntermediateDirectories: true)
            let target = dotfiles.appendingPathComponent("session.json")
            try Data("{}".utf8).write(to: target)
            chmod(target.path, 0o640)
            let link = directory.appendingPathComponent("session.json")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "dotfiles/session.json")
            let result = try await CourierProcess.run(["--session", link.path, "\(base)/get", "X-Team:blue"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(status(link.path).st_mode & S_IFMT == S_IFLNK)
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "dotfiles/session.json")
            #expect(try savedHeaders(target) == [["name": "X-Team", "value": "blue"]])
            // Replaced by rename in the target's directory, keeping the mode it had.
            #expect(status(target.path).st_mode & 0o7777 == 0o640)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dotfiles.path) == ["session.json"])
        }
    }

    @Test func aHardLinkedFileKeepsItsInodeAndLinks() async throws {
        try await withServer { base, directory in
            let file = directory.appendingPathComponent("s.json")
            try Data(String(repeating: " ", count: 5000).utf8).write(to: file)
            let other = directory.appendingPathComponent("other.json")
            #expect(link(file.path, other.path) == 0)
            let before = status(file.path)
            let result = try await CourierProcess.run(["--session", file.path, "\(base)/get", "X-Team:blue"])
            #expect(result.status == 0, "\(result.stderr)")
            let after = status(file.path)
            #expect(after.st_ino == before.st_ino)
            #expect(after.st_nlink == 2)
            #expect(try savedHeaders(other) == [["name": "X-Team", "value": "blue"]])
        }
    }

    @Test func aDirectoryIsNotReplaced() async throws {
        try await withServer { base, directory in
            let result = try await CourierProcess.run(["--session", directory.path + "/", "\(base)/get"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("is a directory"), "\(result.stderr)")
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory))
            #expect(isDirectory.boolValue)
        }
    }

    @Test func aNamedSessionUnderAMissingHomeIsAnError() async throws {
        let directory = try CourierProcess.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let home = directory.appendingPathComponent("nonexistent")
        let result = try await CourierProcess.run(
            ["--offline", "--session", "work", "x.org"], environment: ["HOME": home.path, "XDG_CONFIG_HOME": ""])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\"\(home.path)\" does not exist"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.path))
    }
}
