import Courier
import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import CourierCore

@Suite(
    "SessionManager against the in-process test server: task kinds, progress, caps, cancellation",
    .timeLimit(.minutes(3)))
struct SessionTaskTests {
    @Test func dataTaskGetsAndReportsDownloadProgress() async throws {
        try await withSession { server, manager, _ in
            let progress = Recorder<TransferProgress>()
            let task = manager.dataTask(
                with: Request(url: server.url("/bytes/200000?seed=5")), downloadProgress: { progress.append($0) })
            #expect(task.state == .suspended)
            task.resume()
            let response = try await task.response()
            #expect(task.state == .completed)
            #expect(response.response.statusCode == 200)
            #expect(Array(response.data) == TestServer.expectedBytes(count: 200_000, seed: 5))
            expectWellFormedProgress(progress.values, total: 200_000)
            #expect(task.downloadProgress.isFinished)
        }
    }

    @Test func uploadFromDataArrivesIntactWithContentLength() async throws {
        try await withSession { server, manager, _ in
            let body = patternData(count: 3_000_000)
            let progress = Recorder<TransferProgress>()
            let response = try await manager.upload(
                .data(body), with: Request(method: .post, url: server.url("/upload")), progress: { progress.append($0) }
            )
            let sink = try jsonObject(response.data)
            #expect(sink["sha256"] as? String == sha256Hex(body))
            #expect(sink["bytes"] as? Int == body.count)
            #expect(sink["content_length"] as? String == "\(body.count)")
            #expect(sink["transfer_encoding"] is NSNull)
            expectWellFormedProgress(progress.values, total: Int64(body.count))
        }
    }

    @Test func uploadFromFileStreamsWithContentLength() async throws {
        try await withSession { server, manager, directory in
            let body = patternData(count: 2_500_000, seed: 9)
            let file = try temporaryFile(body, in: directory)
            let progress = Recorder<TransferProgress>()
            let response = try await manager.upload(
                try .file(file), with: Request(method: .put, url: server.url("/upload")),
                progress: { progress.append($0) })
            let sink = try jsonObject(response.data)
            #expect(sink["sha256"] as? String == sha256Hex(body))
            #expect(sink["method"] as? String == "PUT")
            #expect(sink["content_length"] as? String == "\(body.count)")
            expectWellFormedProgress(progress.values, total: Int64(body.count))
        }
    }

    @Test func streamOfUnknownLengthGoesChunked() async throws {
        try await withSession { server, manager, _ in
            let pieces = (0..<5).map { patternData(count: 40_000, seed: UInt8($0)) }
            let whole = pieces.reduce(Data(), +)
            let body = RequestBody.stream(length: nil) {
                AsyncStream<ByteBuffer> { continuation in
                    for piece in pieces { continuation.yield(ByteBuffer(data: piece)) }
                    continuation.finish()
                }
            }
            let progress = Recorder<TransferProgress>()
            let task = manager.uploadTask(
                with: Request(method: .post, url: server.url("/upload"), body: body),
                progress: { progress.append($0) })
            task.resume()
            let sink = try jsonObject(try await task.response().data)
            #expect(sink["sha256"] as? String == sha256Hex(whole))
            #expect(sink["transfer_encoding"] as? String == "chunked")
            #expect(sink["content_length"] is NSNull)
            expectWellFormedProgress(progress.values, total: Int64(whole.count))
        }
    }

    @Test func bufferedResponsesAreCappedWithAPointerToDownloads() async throws {
        try await withSession(configure: { $0.maximumBufferedResponseSize = 10_000 }) { server, manager, _ in
            let declared = await expectCode(.responseTooLarge) {
                try await manager.data(for: Request(url: server.url("/bytes/50000")))
            }
            #expect(declared?.message.contains("download task") == true)
            #expect(declared?.response?.statusCode == 200)
            // Without Content-Length the cap applies while reading.
            await expectCode(.responseTooLarge) {
                try await manager.data(for: Request(url: server.url("/stream-bytes/50000")))
            }
        }
    }

    @Test func cancellingTheSwiftTaskCancelsTheRequest() async throws {
        try await withSession { server, manager, _ in
            let request = Request(url: server.url("/fault/never-answer"))
            let caller = Task { try await manager.data(for: request) }
            caller.cancel()
            await expectCode(.cancelled) { try await caller.value }
            // A task handle cancelled while waiting for a server that never answers.
            let task = manager.dataTask(with: request)
            task.resume()
            task.cancel()
            await expectCode(.cancelled) { try await task.response() }
            #expect(task.state == .completed)
            // Cancelled before it ever started.
            let unstarted = manager.dataTask(with: request)
            unstarted.cancel()
            await expectCode(.cancelled) { try await unstarted.response() }
            #expect(manager.tasks.isEmpty)
        }
    }

    @Test func connectionFailuresAreTyped() async throws {
        try await withSession { server, manager, _ in
            await expectCode(.connectionFailed) {
                try await manager.data(for: Request(url: server.url("/fault/close-mid-response")))
            }
            // Port 1: a port freed by a closed server may be handed to a parallel test's server.
            let refused = try #require(URL(string: "http://127.0.0.1:1/get"))
            await expectCode(.connectionFailed) { try await manager.data(for: Request(url: refused)) }
        }
    }

    @Test func suspendPausesAndResumeContinues() async throws {
        try await withSession { server, manager, _ in
            let slot = Slot<SessionTask>()
            let pausedAt = Recorder<Int64>()
            let task = manager.dataTask(
                with: Request(url: server.url("/range/400000?chunk_size=16384")),
                downloadProgress: { progress in
                    if pausedAt.values.isEmpty, progress.completedUnitCount > 0 {
                        pausedAt.append(progress.completedUnitCount)
                        slot.value?.suspend()
                    }
                })
            slot.value = task
            task.resume()
            // Bounded by time, not by a count of yields: on a loaded machine the first progress
            // report can take longer than any fixed number of spins.
            let giveUp = ContinuousClock.now + .seconds(60)
            while task.state != .suspended, ContinuousClock.now < giveUp {
                try await Task.sleep(for: .milliseconds(5))
            }
            try #require(task.state == .suspended)
            #expect(task.downloadProgress.completedUnitCount == pausedAt.values.first)
            task.resume()
            let response = try await task.response()
            #expect(Array(response.data) == TestServer.expectedRangeBytes(count: 400_000))
        }
    }
}
