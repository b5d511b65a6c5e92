import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a download does to the files around its destination (issue 48): the mode of a new
/// file, what `.removePreviousFile` will not replace, and a resume record that is private,
/// keeps no query and never takes a file of the user's.
@Suite("Download destinations and resume records", .timeLimit(.minutes(3)))
struct DownloadDestinationFileTests {
    func mode(_ path: String) -> mode_t {
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        return info.st_mode
    }

    @Test func aNewFileGetsTheUmasksModeNotThePrivateTemporaryOne() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("new.bin")
            _ = try await manager.download(Request(url: server.url("/bytes/1000")), to: destination)
            #expect(mode(destination.path) & 0o7777 == NewFileMode.bits)
            let chosen = directory.appendingPathComponent("chosen.bin")
            _ = try await manager.download(Request(url: server.url("/bytes/1000"))) { _, _ in chosen }
            #expect(mode(chosen.path) & 0o7777 == NewFileMode.bits)
        }
    }

    @Test func replacingARegularFileKeepsItsMode() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("private.bin")
            try Data("old".utf8).write(to: destination)
            chmod(destination.path, 0o600)
            _ = try await manager.download(
                Request(url: server.url("/bytes/1000")), to: destination, options: [.removePreviousFile])
            #expect(mode(destination.path) & 0o7777 == 0o600)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: 1000))
        }
    }

    @Test func removePreviousFileNeverReplacesALinkOrAFIFO() async throws {
        try await withScriptedSession { server, manager, directory in
            let target = directory.appendingPathComponent("target.txt")
            try Data("target".utf8).write(to: target)
            let link = directory.appendingPathComponent("link.bin")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            let fifo = directory.appendingPathComponent("fifo")
            #expect(mkfifo(fifo.path, 0o600) == 0)
            server.resetStats()
            for destination in [link, fifo] {
                // Refused before any request, by the destination-first form.
                let refused = await expectCode(.downloadDestinationExists) {
                    try await manager.download(
                        Request(url: server.url("/bytes/100")), to: destination, options: [.removePreviousFile])
                }
                #expect(refused?.message.contains("only a regular file") == true)
                // And at the end, by the form whose destination a closure chooses.
                await expectCode(.downloadDestinationExists) {
                    try await manager.download(Request(url: server.url("/bytes/100")), options: [.removePreviousFile]) {
                        _, _ in destination
                    }
                }
            }
            #expect(mode(link.path) & S_IFMT == S_IFLNK)
            #expect(try Data(contentsOf: target) == Data("target".utf8))
            #expect(mode(fifo.path) & S_IFMT == S_IFIFO)
            #expect(server.stats.requestsReceived == 2)
        }
    }

    @Test func theResumeRecordIsPrivateKeepsNoQueryAndResumesAnotherToken() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("signed.bin")
            let length = 8 * 1024 * 1024
            // A user's file under the name earlier versions used for the record.
            let legacy = URL(fileURLWithPath: destination.path + ".part.courier")
            try Data("the user's notes".utf8).write(to: legacy)
            manager.hooks.didReceiveData = { task, _ in task.cancel() }
            await expectCode(.cancelled) {
                try await manager.download(
                    Request(url: server.url("/bytes/\(length)?seed=5&token=secret-1")), to: destination,
                    options: [.resumesPartialFile])
            }
            manager.hooks.didReceiveData = nil
            let record = ResumeRecord.location(for: URL(fileURLWithPath: destination.path + ".part"))
            #expect(record.lastPathComponent == ".signed.bin.part.courier-resume")
            #expect(mode(record.path) & 0o777 == 0o600)
            let text = String(decoding: try Data(contentsOf: record), as: UTF8.self)
            #expect(!text.contains("secret") && !text.contains("token") && !text.contains("seed"))
            #expect(ResumeRecord.read(at: record)?.url == server.url("/bytes/\(length)"))

            // A new token for the same path continues the bytes (the server's ETag ignores it).
            let response = try await manager.download(
                Request(url: server.url("/bytes/\(length)?seed=5&token=secret-2")), to: destination,
                options: [.resumesPartialFile])
            #expect(response.response.statusCode == 206)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: length, seed: 5))
            #expect(!FileManager.default.fileExists(atPath: record.path))
            #expect(try Data(contentsOf: legacy) == Data("the user's notes".utf8))
        }
    }

    @Test func aFileAtTheRecordsPathThatIsNotARecordIsNeverReplacedOrRemoved() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("mine.bin")
            let partial = URL(fileURLWithPath: destination.path + ".part")
            let record = ResumeRecord.location(for: partial)
            try Data("not a record".utf8).write(to: record)
            let failure = await expectCode(.downloadFailed) {
                try await manager.download(
                    Request(url: server.url("/bytes/1000")), to: destination, options: [.resumesPartialFile])
            }
            #expect(failure?.message.contains("not a Courier resume record") == true)
            ResumeData.removeValidators(besidePartialFile: partial)
            #expect(try Data(contentsOf: record) == Data("not a record".utf8))
        }
    }

    @Test func aRecordsURLMatchesBySchemeHostPortAndPath() throws {
        let stored = try #require(
            ResumeRecord(
                url: URL(string: "http://user:pw@example.com/a/b.bin?token=1#frag")!, entityTag: "\"e\"",
                lastModified: nil))
        #expect(stored.url.absoluteString == "http://example.com/a/b.bin")
        let data = ResumeData(
            url: stored.url, bytesWritten: 1, entityTag: "\"e\"", lastModified: nil,
            partialFileURL: URL(fileURLWithPath: "/tmp/x"))
        #expect(data.continues(URL(string: "http://example.com/a/b.bin?token=2")!))
        #expect(data.continues(URL(string: "http://EXAMPLE.com:80/a/b.bin")!))
        #expect(!data.continues(URL(string: "https://example.com/a/b.bin")!))
        #expect(!data.continues(URL(string: "http://example.com:8080/a/b.bin")!))
        #expect(!data.continues(URL(string: "http://example.com/a/c.bin")!))
        // Resume data with a query (from a cancel in this process) is matched exactly.
        let exact = ResumeData(
            url: URL(string: "http://example.com/a?x=1")!, bytesWritten: 1, entityTag: "\"e\"", lastModified: nil,
            partialFileURL: URL(fileURLWithPath: "/tmp/x"))
        #expect(!exact.continues(URL(string: "http://example.com/a?x=2")!))
        #expect(exact.continues(URL(string: "http://example.com/a?x=1")!))
    }
}
