import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

@Suite("Download tasks: destinations, atomic moves, resume data, cancellation", .timeLimit(.minutes(3)))
struct DownloadTaskTests {
    func leftovers(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
            $0.hasSuffix(".download")
        }
    }

    @Test func downloadsToTheDestinationCreatingDirectories() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("a/b/file.bin")
            let progress = Recorder<TransferProgress>()
            let response = try await manager.download(
                Request(url: server.url("/bytes/300000?seed=11")), options: [.createIntermediateDirectories],
                progress: { progress.append($0) },
                destination: { temporary, head in
                    #expect(head.statusCode == 200)
                    #expect(FileManager.default.fileExists(atPath: temporary.path))
                    return destination
                })
            #expect(response.fileURL == destination)
            #expect(response.data.isEmpty)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: 300_000, seed: 11))
            expectWellFormedProgress(progress.values, total: 300_000)
            #expect(leftovers(in: directory).isEmpty)
        }
    }

    @Test func neverOverwritesSilently() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("existing.bin")
            try Data("keep me".utf8).write(to: destination)
            let request = Request(url: server.url("/bytes/1000"))
            await expectCode(.downloadDestinationExists) {
                try await manager.download(request, destination: { _, _ in destination })
            }
            #expect(try Data(contentsOf: destination) == Data("keep me".utf8))
            #expect(leftovers(in: directory).isEmpty)
            _ = try await manager.download(
                request, options: [.removePreviousFile], destination: { _, _ in destination })
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedBytes(count: 1000))
            // A missing parent without .createIntermediateDirectories is a typed error.
            await expectCode(.downloadFailed) {
                try await manager.download(
                    request, destination: { _, _ in directory.appendingPathComponent("no/such/dir/x") })
            }
        }
    }

    /// Starts a download of `/range/{total}` and suspends it once at least `total / 2` bytes are on disk.
    func startAndPauseHalfway(_ manager: SessionManager, _ url: URL, total: Int64, destination: URL) async throws
        -> SessionTask
    {
        let slot = Slot<SessionTask>()
        let paused = Recorder<Bool>()
        let task = manager.downloadTask(
            with: Request(url: url),
            progress: { progress in
                if paused.values.isEmpty, progress.completedUnitCount >= total / 2 {
                    paused.append(true)
                    slot.value?.suspend()
                }
            },
            destination: { _, _ in destination })
        slot.value = task
        task.resume()
        var spins = 0
        while task.state != .suspended, spins < 10_000_000 {
            spins += 1
            await Task.yield()
        }
        try #require(task.state == .suspended)
        return task
    }

    @Test func downloadCutHalfwayAndResumedGivesTheExactFile() async throws {
        try await withScriptedSession { server, manager, directory in
            let total: Int64 = 1_000_000
            let destination = directory.appendingPathComponent("resumed.bin")
            let task = try await startAndPauseHalfway(
                manager, server.url("/range/\(total)?chunk_size=8192"), total: total, destination: destination)
            let resumeData = try #require(await task.cancel(producingResumeData: true))
            #expect(resumeData.bytesWritten >= total / 2 && resumeData.bytesWritten < total)
            #expect(resumeData.entityTag == "\"range\(total)\"")
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            #expect(FileManager.default.fileExists(atPath: resumeData.partialFileURL.path))

            let stored = try ResumeData(data: resumeData.encoded())
            let progress = Recorder<TransferProgress>()
            let resumed = manager.downloadTask(
                with: Request(url: stored.url), resumingFrom: stored, progress: { progress.append($0) },
                destination: { _, _ in destination })
            resumed.resume()
            let response = try await resumed.response()
            #expect(response.response.statusCode == 206)
            #expect(response.request.value(forHTTPHeaderField: "Range") == "bytes=\(resumeData.bytesWritten)-")
            #expect(response.request.value(forHTTPHeaderField: "If-Range") == "\"range\(total)\"")
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedRangeBytes(count: Int(total)))
            #expect(progress.values.first?.completedUnitCount ?? 0 >= resumeData.bytesWritten)
            expectWellFormedProgress(progress.values, total: total)
            #expect(!FileManager.default.fileExists(atPath: resumeData.partialFileURL.path))
        }
    }

    @Test func resumeStartsOverWhenTheServerIgnoresTheRange() async throws {
        try await withScriptedSession { server, manager, directory in
            let total: Int64 = 600_000
            let destination = directory.appendingPathComponent("restarted.bin")
            let task = try await startAndPauseHalfway(
                manager, server.url("/range/\(total)?chunk_size=8192"), total: total, destination: destination)
            var resumeData = try #require(await task.cancel(producingResumeData: true))
            // A validator the server no longer matches: it answers 200 with the whole body.
            resumeData.entityTag = "\"changed\""
            let response = try await manager.download(
                Request(url: resumeData.url), resumingFrom: resumeData, destination: { _, _ in destination })
            #expect(response.response.statusCode == 200)
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedRangeBytes(count: Int(total)))
        }
    }

    @Test func cancelledDownloadLeavesNoFile() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("cancelled.bin")
            let task = try await startAndPauseHalfway(
                manager, server.url("/range/800000?chunk_size=8192"), total: 800_000, destination: destination)
            task.cancel()
            await expectCode(.cancelled) { try await task.response() }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            #expect(leftovers(in: directory).isEmpty)
            // cancel(producingResumeData:) on a data task gives nothing.
            let dataTask = manager.dataTask(with: Request(url: server.url("/fault/never-answer")))
            dataTask.resume()
            #expect(await dataTask.cancel(producingResumeData: true) == nil)
        }
    }
}
