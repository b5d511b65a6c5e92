import Courier
import CourierDigest
import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import CourierCore

/// Runs `body` with a test server and a session manager on a transport configured by `transport`.
@discardableResult
func withFaultSession<R>(
    transport configureTransport: (inout AsyncHTTPClientTransport.Configuration) -> Void = { _ in },
    configure: (inout SessionManager.Configuration) -> Void = { _ in },
    interceptor: (any RequestInterceptor)? = nil,
    _ body: (TestServer, SessionManager, URL) async throws -> R
) async throws -> R {
    let server = try await TestServer.start()
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("courier-faults-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var transportConfiguration = AsyncHTTPClientTransport.Configuration()
    configureTransport(&transportConfiguration)
    let transport = AsyncHTTPClientTransport(configuration: transportConfiguration)
    var configuration = SessionManager.Configuration()
    configuration.temporaryDirectory = directory
    configuration.sleeper = { _ in }  // retries never sleep in tests
    configure(&configuration)
    let manager = SessionManager(configuration: configuration, transport: transport, interceptor: interceptor)
    let outcome: Result<R, any Error>
    do {
        outcome = .success(try await body(server, manager, directory))
    } catch {
        outcome = .failure(error)
    }
    try? await manager.shutdown()
    try? await transport.shutdown()
    try? await server.shutdown()
    try? FileManager.default.removeItem(at: directory)
    return try outcome.get()
}

/// Expects `body` to throw a ``CourierError`` whose code is one of `codes`; returns it.
@discardableResult
func expectFailure<R>(
    _ codes: Set<CourierError.Code>, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> CourierError? {
    do {
        _ = try await body()
        Issue.record("expected one of \(codes), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CourierError {
        #expect(codes.contains(error.code), "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a CourierError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Each fault of the test server ends its task with a typed ``CourierError``: never a crash, a
/// hang or a silently wrong body. (Close mid-response, refused, the buffering cap, flaky 503 and
/// close retries and a download resumed halfway are in the Session suites.)
@Suite("Faults: every broken server ends in a typed error", .timeLimit(.minutes(3)))
struct FaultInjectionTests {
    @Test func connectionClosedMidUploadIsATypedError() async throws {
        try await withFaultSession { server, manager, _ in
            let body = Data(repeating: 0x5A, count: 4 << 20)
            var request = Request(method: .post, url: server.url("/fault/close-after-request-bytes?n=65536"))
            request.body = .data(body)
            await expectFailure([.connectionFailed, .transportFailed]) {
                try await manager.data(for: request)
            }
            // The manager keeps working afterwards.
            let after = try await manager.data(for: Request(url: server.url("/get")))
            #expect(after.response.statusCode == 200)
        }
    }

    @Test(arguments: ["/fault/reset", "/fault/reset?after=500", "/fault/close-mid-response?after=1000&reset=1"])
    func connectionResetIsATypedError(_ path: String) async throws {
        try await withFaultSession { server, manager, _ in
            await expectFailure([.connectionFailed, .transportFailed]) {
                try await manager.data(for: Request(url: server.url(path)))
            }
        }
    }

    @Test func aServerThatNeverAnswersHitsTheReadTimeout() async throws {
        try await withFaultSession(transport: { $0.readTimeout = .milliseconds(300) }) { server, manager, _ in
            await expectFailure([.timedOut]) {
                try await manager.data(for: Request(url: server.url("/fault/never-answer")))
            }
        }
    }

    @Test func aServerThatNeverAnswersHitsTheRequestTimeout() async throws {
        try await withFaultSession { server, manager, _ in
            var request = Request(url: server.url("/fault/never-answer"))
            request.timeoutInterval = 0.5
            await expectFailure([.timedOut]) { try await manager.data(for: request) }
        }
    }

    @Test func aSlowDripHitsTheReadTimeout() async throws {
        try await withFaultSession(transport: { $0.readTimeout = .milliseconds(300) }) { server, manager, _ in
            await expectFailure([.timedOut]) {
                try await manager.data(for: Request(url: server.url("/fault/drip-forever?interval_ms=2000")))
            }
        }
    }

    @Test func aDripThatNeverEndsHitsTheRequestDeadline() async throws {
        try await withFaultSession { server, manager, _ in
            var request = Request(url: server.url("/fault/drip-forever?interval_ms=50"))
            request.timeoutInterval = 0.5
            await expectFailure([.timedOut]) { try await manager.data(for: request) }
        }
    }

    @Test func aTruncatedChunkedBodyIsATypedError() async throws {
        try await withFaultSession { server, manager, _ in
            await expectFailure([.connectionFailed, .transportFailed]) {
                try await manager.data(for: Request(url: server.url("/fault/truncated-chunked")))
            }
        }
    }

    @Test func aContentLengthLongerThanTheBodyIsATypedError() async throws {
        try await withFaultSession { server, manager, _ in
            await expectFailure([.connectionFailed, .transportFailed, .bodyLengthMismatch]) {
                try await manager.data(
                    for: Request(url: server.url("/fault/wrong-content-length?declared=100&actual=50")))
            }
        }
    }

    /// With `close=0` the server invites reuse of a connection that still carries 50 surplus
    /// bytes; the next request must not read them as its response.
    @Test(arguments: ["", "&close=0"])
    func aContentLengthShorterThanTheBodyNeverDeliversMoreThanDeclared(_ closing: String) async throws {
        try await withFaultSession { server, manager, _ in
            // The extra bytes are not part of the response (RFC 9112 §6.3); at most the declared ones arrive.
            do {
                let response = try await manager.data(
                    for: Request(url: server.url("/fault/wrong-content-length?declared=50&actual=100\(closing)")))
                #expect(response.data.count == 50)
            } catch let error as CourierError {
                #expect([.connectionFailed, .transportFailed].contains(error.code), "\(error)")
            }
            let after = try await manager.data(for: Request(url: server.url("/get")))
            #expect(after.response.statusCode == 200)
            #expect(try JSONSerialization.jsonObject(with: after.data) is [String: Any])
        }
    }

    @Test(arguments: ["/fault/huge-headers?size=1048576", "/fault/huge-headers?size=1048576&single=1"])
    func hugeHeadersAreATypedError(_ path: String) async throws {
        try await withFaultSession { server, manager, _ in
            await expectFailure([.transportFailed, .connectionFailed]) {
                try await manager.data(for: Request(url: server.url(path)))
            }
        }
    }

    @Test(arguments: ["status", "version", "header", "nul"])
    func malformedResponsesAreATypedError(_ kind: String) async throws {
        try await withFaultSession { server, manager, _ in
            await expectFailure([.transportFailed, .connectionFailed]) {
                try await manager.data(for: Request(url: server.url("/fault/malformed-status?kind=\(kind)")))
            }
        }
    }

    /// AsyncHTTPClient 1.37 traps on the body or end of a response whose status is below 100
    /// (it takes it for an interim response): the transport's guard makes it a typed error, and
    /// the manager goes on working.
    @Test(arguments: ["status-099", "status-000", "status-050-chunked", "status-099-then-200"])
    func statusCodesBelow100AreATypedErrorNotATrap(_ kind: String) async throws {
        try await withFaultSession { server, manager, _ in
            let error = await expectFailure([.transportFailed]) {
                try await manager.data(for: Request(url: server.url("/fault/malformed-status?kind=\(kind)")))
            }
            #expect(error?.message.contains("is not an HTTP status") == true)
            #expect(error?.offendingInput?.count == 3)
            let after = try await manager.data(for: Request(url: server.url("/get")))
            #expect(after.response.statusCode == 200)
        }
    }

    /// A connection reset before any answer is treated as a close: an idempotent request goes
    /// out once more on a new connection (as curl does), a POST, which the server may have
    /// processed, does not.
    @Test func aResetBeforeAnyAnswerSendsAGetOnceMoreButNotAPost() async throws {
        try await withFaultSession { server, manager, _ in
            let id = UUID().uuidString
            let get = try await manager.data(
                for: Request(url: server.url("/fault/flaky?id=get-\(id)&failures=1&mode=reset")))
            #expect(get.response.statusCode == 200)
            #expect(try jsonObject(get.data)["attempt"] as? Int == 2)
            // Two resets in a row: one resend, then the error.
            await expectFailure([.connectionFailed]) {
                try await manager.data(
                    for: Request(url: server.url("/fault/flaky?id=twice-\(id)&failures=2&mode=reset")))
            }
            await expectFailure([.connectionFailed]) {
                try await manager.data(
                    for: Request(method: .post, url: server.url("/fault/flaky?id=post-\(id)&failures=1&mode=reset")))
            }
            let after = try await manager.data(
                for: Request(method: .post, url: server.url("/fault/flaky?id=post-\(id)&failures=1&mode=reset")))
            #expect(try jsonObject(after.data)["attempt"] as? Int == 2)
        }
    }

    @Test func invalidJSONIsATypedErrorCarryingTheResponse() async throws {
        try await withFaultSession { server, manager, _ in
            // Random bytes with a 200: not JSON whatever the serializer is told to accept.
            var serializer = JSONResponseSerializer()
            serializer.acceptableContentTypes = nil
            let request = Request(url: server.url("/bytes/100?seed=3"))
            let error = await expectFailure([.invalidJSON]) {
                try await manager.data(for: request, serializer: serializer)
            }
            #expect(error?.response?.statusCode == 200)
            #expect(error?.responseData?.isEmpty == false)
        }
    }

    @Test(arguments: ["reset", "close"])
    func retrySucceedsAfterConnectionFaults(_ mode: String) async throws {
        try await withFaultSession(interceptor: RetryPolicy()) { server, manager, _ in
            let response = try await manager.data(
                for: Request(url: server.url("/fault/flaky?id=retry-\(mode)&failures=2&mode=\(mode)")))
            #expect(response.response.statusCode == 200)
        }
    }

    @Test func aFileTruncatedWhileItUploadsIsATypedError() async throws {
        try await withFaultSession { server, manager, directory in
            let file = directory.appendingPathComponent("shrinking.bin")
            try Data(repeating: 0x42, count: 32 << 20).write(to: file)
            let truncated = LockedSlot<Bool>()
            var request = Request(method: .post, url: server.url("/upload"))
            request.body = try .file(file)
            let error = await expectFailure([
                .bodyLengthMismatch, .transportFailed, .connectionFailed, .invalidFile, .streamReadFailed,
            ]) {
                try await manager.data(
                    for: request,
                    uploadProgress: { _ in
                        // At the first progress report the file shrinks under the reader.
                        if truncated.value == nil {
                            truncated.value = true
                            if let handle = try? FileHandle(forWritingTo: file) {
                                try? handle.truncate(atOffset: 1024)
                                try? handle.close()
                            }
                        }
                    })
            }
            #expect(error != nil)
        }
    }

    @Test func aFileDeletedBeforeItUploadsIsATypedError() async throws {
        try await withFaultSession { server, manager, directory in
            let file = directory.appendingPathComponent("gone.bin")
            try Data(repeating: 0x42, count: 1 << 20).write(to: file)
            var request = Request(method: .post, url: server.url("/upload"))
            request.body = try .file(file)
            try FileManager.default.removeItem(at: file)
            await expectFailure([
                .invalidFile, .bodyLengthMismatch, .transportFailed, .streamReadFailed, .connectionFailed,
            ]) {
                try await manager.data(for: request)
            }
        }
    }

    @Test(arguments: ["quoted", "star", "bare"])
    func aHostileContentDispositionDownloadsToASafeBaseName(_ form: String) async throws {
        try await withFaultSession { server, manager, directory in
            let downloads = directory.appendingPathComponent("downloads", isDirectory: true)
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
            let response = try await manager.download(
                Request(url: server.url("/fault/content-disposition?filename=../../etc/passwd&form=\(form)")),
                destination: { _, head in
                    let header = head.value(forHTTPHeaderField: "Content-Disposition") ?? ""
                    let name = ContentDisposition(header)?.safeFileName ?? "download"
                    return downloads.appendingPathComponent(name)
                })
            let saved = try #require(response.fileURL)
            #expect(saved.deletingLastPathComponent().standardizedFileURL.path == downloads.standardizedFileURL.path)
            // An unquoted `../../etc/passwd` is not an RFC 6266 token, so the header is refused
            // and the caller's fallback name is used; either way the file stays in `downloads`.
            #expect(saved.lastPathComponent == (form == "bare" ? "download" : "passwd"))
        }
    }

    @Test func downloadsInterruptedAtRandomPointsResumeToTheExactBytes() async throws {
        let seed = SeededRandom.seed(default: 0xD0_0D)
        var random = SeededRandom(seed: seed)
        let size = 3_000_000
        let expected = SHA256.hash(data: TestServer.expectedRangeBytes(count: size))
        try await withFaultSession { server, manager, directory in
            for round in 0..<3 {
                let cutAt = Int64.random(in: 1...Int64(size - 1), using: &random)
                let destination = directory.appendingPathComponent("resumed-\(round).bin")
                let handle = LockedSlot<SessionTask>()
                let cutter = LockedSlot<Task<ResumeData?, Never>>()
                let task = manager.downloadTask(
                    with: Request(url: server.url("/range/\(size)")),
                    progress: { progress in
                        guard progress.completedUnitCount >= cutAt, let task = handle.value else { return }
                        if cutter.value == nil {
                            cutter.value = Task { await task.cancel(producingResumeData: true) }
                        }
                    },
                    destination: { _, _ in destination })
                handle.value = task
                task.resume()
                let resumeData: ResumeData
                do {
                    _ = try await task.response()
                    // The whole body arrived before the cut took effect: nothing to resume.
                    #expect(FileManager.default.fileExists(atPath: destination.path))
                    continue
                } catch {
                    let produced = await cutter.value?.value
                    resumeData = try #require(produced, "seed \(seed) round \(round): \(error)")
                }
                #expect(!FileManager.default.fileExists(atPath: destination.path))
                let resumed = try await manager.download(
                    Request(url: resumeData.url), resumingFrom: resumeData, destination: { _, _ in destination })
                let file = try #require(resumed.fileURL)
                let bytes = try Data(contentsOf: file)
                #expect(bytes.count == size, "seed \(seed) round \(round): cut at \(cutAt)")
                #expect(SHA256.hash(data: bytes) == expected, "seed \(seed) round \(round): cut at \(cutAt)")
            }
        }
    }
}

/// A value that callbacks on any thread set and read.
final class LockedSlot<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?

    var value: Value? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
