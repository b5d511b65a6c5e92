import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CourierCore

/// Downloads that stream into `destination.part` with their validators in
/// `.destination.part.courier-resume`, and continue from what a dead process left there.
@Suite("Resumable partial files beside the destination", .timeLimit(.minutes(3)))
struct PartialDownloadTests {
    /// Leaves `bytes` in `destination.part` and a sidecar naming `url` and `etag`, as a process
    /// killed mid-download would.
    func leaveBehind(_ bytes: [UInt8], for destination: URL, url: URL, etag: String?, lastModified: String? = nil)
        throws
    {
        try Data(bytes).write(to: URL(fileURLWithPath: destination.path + ".part"))
        let record = try #require(ResumeRecord(url: url, entityTag: etag, lastModified: lastModified))
        try record.write(to: recordPath(destination))
    }

    /// The resume record beside `destination.part`.
    func recordPath(_ destination: URL) -> URL {
        ResumeRecord.location(for: URL(fileURLWithPath: destination.path + ".part"))
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test func continuesWhatADeadProcessLeftWithRangeAndIfRange() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("alphabet.txt")
            let url = server.url("/range/50000")
            try leaveBehind(
                TestServer.expectedRangeBytes(count: 12_345), for: destination, url: url, etag: "\"range50000\"")
            let response = try await manager.download(
                Request(url: url), to: destination, options: [.resumesPartialFile])
            #expect(response.response.statusCode == 206)
            #expect(response.fileURL == destination)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedRangeBytes(count: 50_000))
            let sent = try #require(server.stats.lastRequestHead)
            #expect(sent.value("Range") == "bytes=12345-")
            #expect(sent.value("If-Range") == "\"range50000\"")
            #expect(!exists(destination.path + ".part"))
            #expect(!exists(recordPath(destination).path))
        }
    }

    @Test func aChangedValidatorStartsOver() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("changed.bin")
            let url = server.url("/bytes/40000?seed=3")
            try leaveBehind(Array(repeating: 0x58, count: 9000), for: destination, url: url, etag: "\"an-old-version\"")
            let response = try await manager.download(
                Request(url: url), to: destination, options: [.resumesPartialFile])
            #expect(response.response.statusCode == 200)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: 40_000, seed: 3))
            #expect(server.stats.lastRequestHead?.value("If-Range") == "\"an-old-version\"")
            #expect(!exists(recordPath(destination).path))
        }
    }

    @Test func lastModifiedServesWhenThereIsNoStrongETag() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("weak.txt")
            let url = server.url("/range/3000")
            try leaveBehind(
                TestServer.expectedRangeBytes(count: 1000), for: destination, url: url, etag: "W/\"weak\"",
                lastModified: "Thu, 01 Jan 2026 00:00:00 GMT")
            let response = try await manager.download(
                Request(url: url), to: destination, options: [.resumesPartialFile])
            #expect(server.stats.lastRequestHead?.value("If-Range") == "Thu, 01 Jan 2026 00:00:00 GMT")
            #expect(response.response.statusCode == 206)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedRangeBytes(count: 3000))
        }
    }

    @Test func aWholePartialFileIsCompletedByA416() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("whole.txt")
            let url = server.url("/range/2048")
            try leaveBehind(
                TestServer.expectedRangeBytes(count: 2048), for: destination, url: url, etag: "\"range2048\"")
            let response = try await manager.download(
                Request(url: url), to: destination, options: [.resumesPartialFile])
            #expect(response.response.statusCode == 416)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedRangeBytes(count: 2048))
            #expect(!exists(destination.path + ".part"))
        }
    }

    @Test func aPartialFileLongerThanTheResourceIsRemovedAndTheNextAttemptStartsOver() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("shrunk.txt")
            let url = server.url("/range/1000")
            try leaveBehind(
                TestServer.expectedRangeBytes(count: 1500), for: destination, url: url, etag: "\"range1000\"")
            let error = await expectCode(.invalidResumeData) {
                try await manager.download(Request(url: url), to: destination, options: [.resumesPartialFile])
            }
            #expect(error?.message.contains("starts over") == true)
            #expect(!exists(destination.path + ".part"))
            #expect(!exists(destination.path))
            _ = try await manager.download(Request(url: url), to: destination, options: [.resumesPartialFile])
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedRangeBytes(count: 1000))
        }
    }

    @Test func anErrorStatusLeavesThePartialFileAlone() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("gone.bin")
            let kept = TestServer.expectedRangeBytes(count: 700)
            try leaveBehind(kept, for: destination, url: server.url("/status/404"), etag: "\"x\"")
            await expectCode(.downloadFailed) {
                try await manager.download(
                    Request(url: server.url("/status/404")), to: destination, options: [.resumesPartialFile])
            }
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: destination.path + ".part"))) == kept)
            #expect(exists(recordPath(destination).path))
        }
    }

    @Test func aStoppedDownloadKeepsItsBytesAndValidatorsForAnotherManager() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("stopped.bin")
            let length = 8 * 1024 * 1024
            let url = server.url("/bytes/\(length)?seed=5")
            // The first chunk stops the task: the loop checks for a stop before the next one.
            manager.hooks.didReceiveData = { task, _ in task.cancel() }
            await expectCode(.cancelled) {
                try await manager.download(Request(url: url), to: destination, options: [.resumesPartialFile])
            }
            manager.hooks.didReceiveData = nil
            let partial = URL(fileURLWithPath: destination.path + ".part")
            let keptCount = try Data(contentsOf: partial).count
            #expect(keptCount > 0 && keptCount < length)
            let record = try #require(ResumeRecord.read(at: recordPath(destination)))
            #expect(record.entityTag == "\"bytes-\(length)-5\"")
            #expect(!exists(destination.path))

            // A new manager, as a new process would make, continues from the kept bytes.
            let second = SessionManager(transport: server.transport)
            let response = try await second.download(Request(url: url), to: destination, options: [.resumesPartialFile])
            try await second.shutdown()
            #expect(response.response.statusCode == 206)
            #expect(server.stats.lastRequestHead?.value("Range") == "bytes=\(keptCount)-")
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: length, seed: 5))
            #expect(!exists(partial.path))
        }
    }

    @Test func anExistingDestinationIsRefusedBeforeAnyRequest() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("here.bin")
            try Data("keep".utf8).write(to: destination)
            server.resetStats()
            await expectCode(.downloadDestinationExists) {
                try await manager.download(
                    Request(url: server.url("/bytes/10")), to: destination, options: [.resumesPartialFile])
            }
            #expect(server.stats.requestsReceived == 0)
            _ = try await manager.download(
                Request(url: server.url("/bytes/10")), to: destination,
                options: [.resumesPartialFile, .removePreviousFile])
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: 10))
        }
    }

    /// The entry-point manager's `download(_:to:)` is the same destination-first download: it
    /// continues a partial file with `.resumesPartialFile`, and refuses an existing destination
    /// or a missing directory before any request (it once ignored the option and fetched the
    /// whole body before refusing).
    @Test func theEntryPointManagerDownloadsDestinationFirst() async throws {
        try await withScriptedSession { server, manager, directory in
            let api = HTTPSessionManager(baseURL: server.baseURL, session: manager)
            let destination = directory.appendingPathComponent("alphabet.txt")
            try leaveBehind(
                TestServer.expectedRangeBytes(count: 2_000), for: destination, url: server.url("/range/9000"),
                etag: "\"range9000\"")
            let resumed = try await api.download("range/9000", to: destination, options: [.resumesPartialFile])
            #expect(resumed.response.statusCode == 206)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedRangeBytes(count: 9_000))

            server.resetStats()
            await expectCode(.downloadDestinationExists) { try await api.download("bytes/10", to: destination) }
            let nowhere = directory.appendingPathComponent("missing/dir/x.bin")
            let missing = await expectCode(.downloadFailed) { try await api.download("bytes/10", to: nowhere) }
            #expect(missing?.message.contains("does not exist") == true)
            // The completion-handler form refuses it the same way, and starts no task.
            let refused = Slot<CourierError>()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let task = api.download("bytes/10", to: destination) { result in
                    if case .failure(let error) = result { refused.value = error }
                    continuation.resume()
                }
                #expect(task == nil)
            }
            #expect(refused.value?.code == .downloadDestinationExists)
            #expect(server.stats.requestsReceived == 0)
        }
    }

    /// Without the option the bytes still go straight beside the destination, in a hidden file
    /// renamed at the end (never through the temporary directory, which may be another file
    /// system), and a failure removes that file.
    @Test func withoutTheOptionAFixedDestinationIsWrittenBesideItThenRenamed() async throws {
        try await withScriptedSession { server, manager, temporary in
            let directory = temporary.appendingPathComponent("destination-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            let destination = directory.appendingPathComponent("plain.bin")
            let seen = NIOLockedValueBox<(beside: [String], temporary: [String])>(([], []))
            _ = try await manager.download(Request(url: server.url("/bytes/300000")), to: destination) { _ in
                let beside = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                let elsewhere = ((try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? [])
                    .filter { $0.hasSuffix(".download") }
                seen.withLockedValue { $0 = (beside, elsewhere) }
            }
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: 300_000))
            let (beside, elsewhere) = seen.withLockedValue { $0 }
            #expect(beside.count == 1 && beside[0].hasPrefix(".courier-") && beside[0].hasSuffix(".download"))
            #expect(elsewhere.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["plain.bin"])

            let failed = directory.appendingPathComponent("failed.bin")
            await #expect(throws: CourierError.self) {
                try await manager.download(
                    Request(url: server.url("/fault/close-mid-response?after=100000")), to: failed)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["plain.bin"])
        }
    }
}
