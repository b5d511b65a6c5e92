import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// A download whose file writer stops holds the server back by the read-ahead, whoever was
/// writing the file (the event loop it was lent to, or the task it goes back to when the task
/// pauses): the transport stops reading once the unwritten bytes reach the download's limit, so
/// what the server could send is bounded, not the body. The writer here is the slowest there is,
/// one that stops: the task is paused from its progress handler, which runs right after a write.
/// Measured at the server, by the bytes its socket took (HTTP/1.1) or the stream's flow (HTTP/2),
/// never by timing; resumed, the download completes with every byte in place.
@Suite("Session: downloads under backpressure", .serialized, .timeLimit(.minutes(3)))
struct DownloadBackpressureTests {
    /// Where a paused download stopped: the file's size when the task paused, and the task.
    struct PausedDownload {
        let task: SessionTask
        let writtenAtPause: Int64
    }

    /// Starts a download of `url` to `destination` and pauses it from its progress handler once at
    /// least `after` bytes are in its file; returns once the task is suspended.
    static func startAndPause(
        _ manager: SessionManager, _ url: URL, after: Int64, destination: URL
    ) async throws -> PausedDownload {
        let slot = NIOLockedValueBox<SessionTask?>(nil)
        let pausedAt = NIOLockedValueBox<Int64?>(nil)
        let task = manager.downloadTask(
            with: Request(url: url),
            progress: { progress in
                let pauses = pausedAt.withLockedValue { paused in
                    guard paused == nil, progress.completedUnitCount >= after else { return false }
                    paused = progress.completedUnitCount
                    return true
                }
                if pauses { slot.withLockedValue { $0 }?.suspend() }
            },
            destination: { _, _ in destination })
        slot.withLockedValue { $0 = task }
        task.resume()
        for _ in 0..<3_000 where task.state != .suspended {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(task.state == .suspended)
        return PausedDownload(task: task, writtenAtPause: try #require(pausedAt.withLockedValue { $0 }))
    }

    /// Expects `file` to hold `length` bytes for which `expected(offset, count)` gives each run,
    /// read a mebibyte at a time (other suites measure the process's memory beside this one).
    static func expectFile(_ file: URL, length: Int, expected: (Int, Int) -> [UInt8]) throws {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var offset = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            guard Array(chunk) == expected(offset, chunk.count) else {
                Issue.record("the file differs in the mebibyte at \(offset)")
                return
            }
            offset += chunk.count
        }
        #expect(offset == length)
    }

    @Test("HTTP/1.1: a paused download stops the server short of the body; resumed, it completes")
    func aPausedDownloadHoldsTheServerBackOverHTTP1() async throws {
        let length = 256 << 20
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bp-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        let server = try await PumpServer.start(bodyLength: length)
        let transport = AsyncHTTPClientTransport()
        let manager = SessionManager(transport: transport)
        do {
            let paused = try await Self.startAndPause(manager, server.url, after: 4 << 20, destination: destination)
            #expect(await server.waitUntilStalled())
            let written = server.bytesWritten
            // The file's bytes, the 8 MiB read-ahead, one read beyond it and the kernel's socket
            // buffers (a few MiB on loopback, up to 32 MiB where tcp_rmem allows): a transport
            // that read on for the stopped writer would let the server write all 256 MiB.
            #expect(written < 64 << 20, "the server wrote \(written >> 20) MiB to a paused download")
            #expect(written > Int(paused.writtenAtPause))

            paused.task.resume()
            let response = try await paused.task.response()
            #expect(response.response.statusCode == 200)
            try Self.expectFile(destination, length: length) { _, count in [UInt8](repeating: 0x61, count: count) }
        } catch {
            try? await manager.shutdown()
            try? await transport.shutdown()
            try? await server.shutdown()
            throw error
        }
        try await manager.shutdown()
        try await transport.shutdown()
        try await server.shutdown()
    }

    @Test("HTTP/2: a paused download holds its stream at the read-ahead and the window; resumed, it completes")
    func aPausedDownloadHoldsItsStreamOverHTTP2() async throws {
        let length = 48 << 20
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bp2-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: destination) }
        try await HTTP2TransportTests.withHTTP2 { server, manager in
            let target = "/bytes/\(length)?seed=61"
            let paused = try await Self.startAndPause(
                manager, server.url(target), after: 4 << 20, destination: destination)
            // The server waits for the window once the read-ahead fills; it has settled when a
            // whole exchange on the same connection completes with nothing more granted to the
            // paused download (its stream stays held by the window, not by the connection).
            var held = try await HTTP2BackPressureTests.heldFlow(server, target)
            var settled = false
            for seed in UInt64(62)..<82 where !settled {
                let other = try await manager.data(for: Request(url: server.url("/bytes/1000000?seed=\(seed)")))
                #expect(Array(other.data) == TestServer.expectedBytes(count: 1_000_000, seed: seed))
                let after = try #require(server.stats.http2ResponseFlows[target])
                settled = after == held
                held = after
            }
            #expect(settled, "the paused download's stream was still granted bytes after 20 exchanges")
            // What the file took, the download's read-ahead, and the stream's window (with the
            // part that crossed the limit), exactly: the server waits for the rest of the body.
            let windows = 2 * HTTP2StreamWindow.defaultTarget
            let bound = Int(paused.writtenAtPause) + TaskOverrides.downloadReadAheadLimit + windows
            #expect(held.bodyBytesWritten <= bound, "\(held.bodyBytesWritten) written, bound \(bound)")
            #expect(held.bodyBytesWritten < length)

            paused.task.resume()
            let response = try await paused.task.response()
            #expect(response.response.httpVersion == HTTP2BackPressureTests.http2)
            try Self.expectFile(destination, length: length) { offset, count in
                TestServer.expectedBytes(count: count, seed: 61, offset: offset)
            }
        }
    }
}
