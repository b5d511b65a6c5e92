import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// A download whose body the transport decoded from a content coding keeps nothing for a
/// resume: the bytes on disk are decoded, and a `Range` would count the coded ones.
@Suite("Session: no resume of a decoded download")
struct DecodedDownloadResumeTests {
    /// Answers every request with a coded head (ETag and Content-Encoding), 64 KiB of body, and
    /// then nothing until cancelled; says whether the body was decoded as it is told.
    struct HalfSentTransport: Transport {
        let bodyIsDecoded: Bool

        func send(_ request: Request, context: ExchangeContext) async throws -> TransportResponse {
            var fields = HTTPFields()
            fields[.eTag] = "\"v1\""
            fields[.contentEncoding] = "gzip"
            let head = ResponseHead(status: .ok, headerFields: fields, url: request.url)
            let body = BodyChunks(makeNext: {
                var sent = false
                return {
                    if !sent {
                        sent = true
                        return ByteBuffer(repeating: 0x61, count: 64 * 1024)
                    }
                    try await Task.sleep(for: .seconds(60))
                    return nil
                }
            })
            return TransportResponse(head: head, body: body, bodyIsDecoded: bodyIsDecoded)
        }

        func shutdown() async throws {}
    }

    /// Starts a download to `destination`, waits for its first bytes, and cancels it asking
    /// for resume data.
    static func cancelHalfway(_ task: SessionTask, received: Recorder<Int64>) async throws -> ResumeData? {
        task.resume()
        var spins = 0
        while received.values.isEmpty, spins < 10_000_000 {
            spins += 1
            await Task.yield()
        }
        try #require(!received.values.isEmpty)
        return await task.cancel(producingResumeData: true)
    }

    @Test(
        "cancelled with resume data asked for: resume data only when the body was not decoded",
        arguments: [false, true])
    func resumeDataOnlyForUndecodedBodies(decoded: Bool) async throws {
        let manager = SessionManager(transport: HalfSentTransport(bodyIsDecoded: decoded))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-decoded-resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let received = Recorder<Int64>()
        let task = manager.downloadTask(
            with: Request(url: URL(string: "http://127.0.0.1:9/coded")!),
            progress: { received.append($0.completedUnitCount) },
            destination: { _, _ in directory.appendingPathComponent("file") })
        let resumeData = try await Self.cancelHalfway(task, received: received)
        if decoded {
            #expect(resumeData == nil)
        } else {
            let kept = try #require(resumeData)
            #expect(kept.bytesWritten == 64 * 1024)
            try? FileManager.default.removeItem(at: kept.partialFileURL)
        }
        try await manager.shutdown()
    }

    @Test("a partial file beside the destination gets no sidecar when the body was decoded", arguments: [false, true])
    func noSidecarForDecodedBodies(decoded: Bool) async throws {
        let manager = SessionManager(transport: HalfSentTransport(bodyIsDecoded: decoded))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-decoded-partial-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file")
        let received = Recorder<Int64>()
        let task = try manager.downloadTask(
            with: Request(url: URL(string: "http://127.0.0.1:9/coded")!), to: destination,
            options: .resumesPartialFile, progress: { received.append($0.completedUnitCount) })
        _ = try await Self.cancelHalfway(task, received: received)
        let partial = URL(fileURLWithPath: destination.path + ".part")
        #expect((ResumeData(partialFile: partial) != nil) == !decoded)
        try await manager.shutdown()
    }
}
