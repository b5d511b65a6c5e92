import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// Uploads whose file parts go out with sendfile (`FileRegionBody` through AsyncHTTPClient's
/// delegate API), checked at the test server's hashing `/upload` sink.
@Suite(.timeLimit(.minutes(3))) struct SendfileUploadTests {
    @Test func aMultipartFilePartGoesOutBySendfileWithTheExactBytes() async throws {
        try await withTransport { server, transport, directory in
            // Over two 4 MiB regions and a ragged tail, between two in-memory fields.
            let content = patternData(count: (9 << 20) + 12_345)
            let file = try temporaryFile(content, in: directory, name: "big.bin")
            var form = MultipartFormData()
            form.append("hello", name: "greeting")
            try form.append(fileURL: file, name: "file", fileName: "big.bin", mimeType: "application/octet-stream")
            form.append("after", name: "trailer")
            var request = Request(method: .post, url: server.url("/upload"), body: .source(form))
            request.headerFields[.contentType] = form.contentType
            #expect(AsyncHTTPClientTransport.sendfileSegments(of: request) != nil)
            // The same body through the chunk reader, an independent path, is what must arrive.
            let expected = try await collect(try request.body.makeChunks())

            let response = try await transport.send(request, context: ExchangeContext())
            #expect(response.head.statusCode == 200)
            let sink = try jsonObject(try await collect(response.body))
            #expect(sink["bytes"] as? Int == expected.count)
            #expect(sink["sha256"] as? String == sha256Hex(expected))
            #expect(sink["content_length"] as? String == "\(expected.count)")
            #expect(sink["transfer_encoding"] is NSNull)
            let parts = try #require(sink["parts"] as? [[String: Any]])
            #expect(parts.count == 3)
            let filePart = try #require(parts.first { $0["name"] as? String == "file" })
            #expect(filePart["size"] as? Int == content.count)
            #expect(filePart["sha256"] as? String == sha256Hex(content))
        }
    }

    @Test func aFileRangeGoesOutBySendfileWithProgressRisingToTheTotal() async throws {
        try await withTransport { server, transport, directory in
            let content = patternData(count: 10 << 20, seed: 3)
            let file = try temporaryFile(content, in: directory)
            let offset = 1_000
            let length = (9 << 20) + 1
            let request = Request(
                method: .put, url: server.url("/upload"),
                body: try .file(file, offset: Int64(offset), length: Int64(length)))
            #expect(AsyncHTTPClientTransport.sendfileSegments(of: request) != nil)
            let reports = Recorder<Int64>()

            let response = try await transport.send(
                request, context: ExchangeContext(uploadProgress: { reports.append($0) }))
            let sink = try jsonObject(try await collect(response.body))
            #expect(sink["bytes"] as? Int == length)
            #expect(sink["sha256"] as? String == sha256Hex(content[offset..<(offset + length)]))
            #expect(sink["content_length"] as? String == "\(length)")

            let values = reports.values
            // The first region is 4 MiB; later ones grow while they go out fast, as on a loopback.
            #expect(values.first == Int64(FileRegionBody.regionSize), "not reported per region: \(values)")
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "not rising: \(values)")
            #expect(values.last == Int64(length))
        }
    }

    @Test func sessionUploadProgressIsMonotoneToTheTotalOnTheSendfilePath() async throws {
        try await withSession { server, manager, directory in
            let content = patternData(count: (6 << 20) + 17, seed: 11)
            let file = try temporaryFile(content, in: directory)
            var form = MultipartFormData()
            try form.append(fileURL: file, name: "file", fileName: "f.bin", mimeType: "application/octet-stream")
            var request = Request(method: .post, url: server.url("/upload"), body: .source(form))
            request.headerFields[.contentType] = form.contentType
            let total = try #require(request.body.contentLength)
            let reports = Recorder<TransferProgress>()

            let response = try await manager.data(for: request, uploadProgress: { reports.append($0) })
            let sink = try jsonObject(response.data)
            let parts = try #require(sink["parts"] as? [[String: Any]])
            #expect(parts.first?["sha256"] as? String == sha256Hex(content))
            #expect(sink["bytes"] as? Int == Int(total))
            expectWellFormedProgress(reports.values, total: total)
        }
    }

    @Test(arguments: [false, true])
    func aFileTruncatedWhileItUploadsIsABodyLengthMismatch(asMultipart: Bool) async throws {
        try await withTransport { server, transport, directory in
            let file = try temporaryFile(Data(repeating: 0x42, count: 32 << 20), in: directory)
            var request = Request(method: .post, url: server.url("/upload"))
            if asMultipart {
                var form = MultipartFormData()
                try form.append(fileURL: file, name: "file", fileName: "f.bin", mimeType: "application/octet-stream")
                request.body = .source(form)
            } else {
                request.body = try .file(file)
            }
            let error = await expectCode(.bodyLengthMismatch) {
                let response = try await transport.send(
                    request, context: ExchangeContext(uploadProgress: Self.truncating(file)))
                return try await collect(response.body)
            }
            #expect(error?.offendingInput == file.path)
        }
    }

    /// An upload-progress handler that cuts `file` to 1 KiB at the first report, so the file
    /// shrinks under the sender.
    static func truncating(_ file: URL) -> @Sendable (Int64) -> Void {
        let truncated = Slot<Bool>()
        return { _ in
            guard truncated.value == nil else { return }
            truncated.value = true
            _ = truncate(file.path, 1024)
        }
    }

    /// The size watchdog sees a shrink while NIO is sending from the file: NIO marks the file's
    /// handle in use during each sendfile, and a check through that handle was refused, so a
    /// connection on another event loop (sending without pause) was never stopped and spun at
    /// 100% CPU for ever. The check now goes through a descriptor of its own.
    @Test func theWatchdogSeesAShrinkWhileTheFileIsBeingSent() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-watch-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try temporaryFile(Data(repeating: 0x42, count: 1 << 20), in: directory)
        let body = try FileRegionBody(segments: [.file(path: file.path, offset: 0, length: 1 << 20)])
        defer { body.close() }
        #expect(body.shrinkError() == nil)
        _ = truncate(file.path, 1024)
        let handle = try #require(body.files.first?.handle)
        let seen = try handle.withUnsafeFileDescriptor { _ in body.shrinkError() }
        #expect(seen?.code == .bodyLengthMismatch)
    }

    /// A request can fail (a reset, a deadline) while NIO is in the middle of a sendfile from the
    /// body's file on the connection's event loop. NIO refuses to close a handle in use, and the
    /// refusal used to be dropped: the handle leaked its descriptor, and a debug build trapped in
    /// its deinit once the last queued region let go of it (this killed a whole CI test run).
    /// A refused close is now tried again on the request's event loop until it succeeds.
    @Test func aHandleInUseWhenTheBodyClosesIsClosedOnceItIsFree() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-busy-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try temporaryFile(Data(repeating: 0x42, count: 1 << 16), in: directory)
        let body = try FileRegionBody(segments: [.file(path: file.path, offset: 0, length: 1 << 16)])
        let handle = try #require(body.files.first?.handle)
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        // As NIO holds it during a sendfile: the close comes while the handle is in use.
        try handle.withUnsafeFileDescriptor { _ in body.close(retryingOn: eventLoop) }
        var polls = 0
        while handle.isOpen, polls < 1000 {
            try await Task.sleep(for: .milliseconds(10))
            polls += 1
        }
        #expect(!handle.isOpen, "the handle is still open after \(polls) polls")
        #expect(throws: IOError.self) { try handle.withUnsafeFileDescriptor { _ in } }
        // Without the retry the handle would still be open here; close it so its deinit passes.
        try? handle.close()
    }

    /// End to end, over kept-alive connections (which may run on another event loop than the
    /// request): each file is cut when the first region has been sent, while the next one is
    /// usually already on its way, and every round fails with `.bodyLengthMismatch`, none spins.
    @Test func aFileTruncatedMidUploadOverAReusedConnectionIsABodyLengthMismatch() async throws {
        try await withTransport { server, transport, directory in
            for _ in 0..<4 {
                _ = try await collect(transport.send(Request(url: server.url("/get")), context: ExchangeContext()).body)
                let file = try temporaryFile(Data(repeating: 0x42, count: 64 << 20), in: directory)
                let request = Request(method: .post, url: server.url("/upload"), body: try .file(file))
                await expectCode(.bodyLengthMismatch) {
                    let response = try await transport.send(
                        request, context: ExchangeContext(uploadProgress: Self.truncating(file)))
                    return try await collect(response.body)
                }
            }
        }
    }

    @Test func cancellingTheCallingTaskMidUploadIsCancelled() async throws {
        try await withTransport { server, transport, directory in
            let file = try temporaryFile(Data(repeating: 0x17, count: 16 << 20), in: directory)
            // The server reads the whole body and never answers, so only cancellation ends the wait.
            let request = Request(method: .post, url: server.url("/fault/never-answer"), body: try .file(file))
            let started = AsyncStream<Void>.makeStream()
            let task = Task {
                try await transport.send(
                    request, context: ExchangeContext(uploadProgress: { _ in started.continuation.yield() }))
            }
            for await _ in started.stream { break }
            task.cancel()
            await expectCode(.cancelled) { try await task.value }
        }
    }

    @Test func aServerThatNeverAnswersHitsTheRequestDeadline() async throws {
        try await withTransport { server, transport, directory in
            let file = try temporaryFile(Data(repeating: 0x17, count: 5 << 20), in: directory)
            let request = Request(
                method: .post, url: server.url("/fault/never-answer"), body: try .file(file), timeoutInterval: 0.5)
            // The session owns the deadline's one timer; the transport is told it and keeps none.
            await expectCode(.timedOut) { try await SessionManager(transport: transport).data(for: request) }
        }
    }

    @Test func aServerClosingMidUploadIsATypedConnectionError() async throws {
        try await withTransport { server, transport, directory in
            let file = try temporaryFile(Data(repeating: 0x17, count: 16 << 20), in: directory)
            let request = Request(
                method: .post, url: server.url("/fault/close-after-request-bytes?n=100000"), body: try .file(file))
            do {
                let response = try await transport.send(request, context: ExchangeContext())
                _ = try await collect(response.body)
                Issue.record("the upload to a closing server succeeded")
            } catch let error as CourierError {
                #expect([.connectionFailed, .transportFailed].contains(error.code), "\(error)")
            }
        }
    }

    @Test func onlyPlainHTTPBodiesWithFilePartsUseSendfile() throws {
        let directory = FileManager.default.temporaryDirectory
        let file = try temporaryFile(Data(repeating: 1, count: 10), in: directory)
        defer { try? FileManager.default.removeItem(at: file) }
        let plain = try #require(URL(string: "http://127.0.0.1:9/upload"))
        let tls = try #require(URL(string: "https://127.0.0.1:9/upload"))

        #expect(
            AsyncHTTPClientTransport.sendfileSegments(of: Request(method: .post, url: plain, body: try .file(file)))
                != nil)
        // TLS encrypts in user space: large reads instead.
        #expect(
            AsyncHTTPClientTransport.sendfileSegments(of: Request(method: .post, url: tls, body: try .file(file)))
                == nil)
        // Nothing in a file: nothing to gain.
        #expect(
            AsyncHTTPClientTransport.sendfileSegments(of: Request(method: .post, url: plain, body: .data(Data([1]))))
                == nil)
        // An empty range of a file.
        let empty = Request(method: .post, url: plain, body: try .file(file, offset: 10, length: 0))
        #expect(AsyncHTTPClientTransport.sendfileSegments(of: empty) == nil)
        // A throttled form is paced by the chunk reader, so it has no segments.
        var form = MultipartFormData()
        try form.append(fileURL: file, name: "file")
        form.throttle = .init(packetSize: 16 << 10, delay: 0.001)
        #expect(
            AsyncHTTPClientTransport.sendfileSegments(of: Request(method: .post, url: plain, body: .source(form)))
                == nil)
    }
}

/// Starts a test server and a transport (with `configuration`); tears both down.
func withTransport<R>(
    configuration: AsyncHTTPClientTransport.Configuration = .init(),
    _ body: (TestServer, AsyncHTTPClientTransport, URL) async throws -> R
) async throws -> R {
    let server = try await TestServer.start()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-transport-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let transport = AsyncHTTPClientTransport(configuration: configuration)
    do {
        let result = try await body(server, transport, directory)
        try await transport.shutdown()
        try await server.shutdown()
        try? FileManager.default.removeItem(at: directory)
        return result
    } catch {
        try? await transport.shutdown()
        try? await server.shutdown()
        try? FileManager.default.removeItem(at: directory)
        throw error
    }
}

/// Every byte of a body, in order.
func collect(_ chunks: BodyChunks) async throws -> Data {
    var data = Data()
    for try await chunk in chunks { data.append(contentsOf: chunk.readableBytesView) }
    return data
}
