import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import Testing

/// The session's own policies (redirects that resend bodies, retry, cookies, resumed downloads,
/// progress, deadlines) over every network transport: they live above the transport, so they
/// must hold over URLSession as over AsyncHTTPClient.
@Suite("Session policies over every transport", .timeLimit(.minutes(3)))
struct SessionOverTransportTests {
    /// A manager over a fresh transport of `kind`, a test server and a download directory.
    func withSession<R>(
        _ kind: TransportKind, interceptor: (any RequestInterceptor)? = nil,
        _ body: (TestServer, SessionManager, URL) async throws -> R
    ) async throws -> R {
        let server = try await TestServer.start()
        let directory = try temporaryDirectory()
        let transport = kind.makeTransport()
        var configuration = SessionManager.Configuration()
        configuration.temporaryDirectory = directory
        configuration.sleeper = { _ in }
        let manager = SessionManager(configuration: configuration, transport: transport, interceptor: interceptor)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let result = try await body(server, manager, directory)
            try await manager.shutdown()
            try? await transport.shutdown()
            try await server.shutdown()
            return result
        } catch {
            try? await manager.shutdown()
            try? await transport.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    @Test("307 and 308 redirects resend the body intact", arguments: TransportKind.network, [307, 308])
    func redirectResendsBody(_ kind: TransportKind, _ status: Int) async throws {
        try await withSession(kind) { server, manager, _ in
            let payload = pattern(count: 200_000, seed: 11)
            let request = Request(
                method: .post, url: server.url("/redirect-to?url=/upload&status_code=\(status)"), body: .data(payload))
            let response = try await manager.data(for: request)
            #expect(response.response.statusCode == 200)
            #expect(response.response.url.path == "/upload")
            let document = try jsonObject(response.data)
            #expect(document["bytes"] as? Int == payload.count)
            #expect(document["sha256"] as? String == sha256Hex(payload))
            #expect(document["method"] as? String == "POST")
        }
    }

    @Test("retry: failed attempts are retried until one succeeds", arguments: TransportKind.network)
    func retry(_ kind: TransportKind) async throws {
        try await withSession(kind, interceptor: RetryPolicy()) { server, manager, _ in
            let statusFailures = try await manager.data(
                for: Request(url: server.url("/fault/flaky?id=\(kind)-s&failures=2&status=503")))
            #expect(statusFailures.response.statusCode == 200)
            #expect(try jsonObject(statusFailures.data)["attempt"] as? Int == 3)
            let closedConnections = try await manager.data(
                for: Request(url: server.url("/fault/flaky?id=\(kind)-c&failures=1&mode=close")))
            #expect(closedConnections.response.statusCode == 200)
        }
    }

    @Test("cookies set on a redirect are stored and sent back by the session", arguments: TransportKind.network)
    func cookies(_ kind: TransportKind) async throws {
        try await withSession(kind) { server, manager, _ in
            let set = try await manager.data(for: Request(url: server.url("/cookies/set?flavour=oat&size=2")))
            #expect(set.response.url.path == "/cookies")
            let cookies = try jsonObject(set.data)["cookies"] as? [String: String]
            #expect(cookies == ["flavour": "oat", "size": "2"])
            let again = try await manager.data(for: Request(url: server.url("/cookies")))
            #expect(try jsonObject(again.data)["cookies"] as? [String: String] == ["flavour": "oat", "size": "2"])
        }
    }

    @Test(
        "a download cancelled halfway resumes with a range and gives the exact file", arguments: TransportKind.network)
    func resumeDownload(_ kind: TransportKind) async throws {
        try await withSession(kind) { server, manager, directory in
            let total: Int64 = 1_000_000
            let destination = directory.appendingPathComponent("resumed.bin")
            let paused = NIOLockedValueBox(false)
            let slot = NIOLockedValueBox<SessionTask?>(nil)
            let task = manager.downloadTask(
                with: Request(url: server.url("/range/\(total)?chunk_size=8192")),
                progress: { progress in
                    let pause = paused.withLockedValue { done -> Bool in
                        guard !done, progress.completedUnitCount >= total / 2 else { return false }
                        done = true
                        return true
                    }
                    if pause { slot.withLockedValue { $0 }?.suspend() }
                },
                destination: { _, _ in destination })
            slot.withLockedValue { $0 = task }
            task.resume()
            var spins = 0
            while task.state != .suspended, spins < 10_000_000 {
                spins += 1
                await Task.yield()
            }
            try #require(task.state == .suspended)
            let resumeData = try #require(await task.cancel(producingResumeData: true))
            #expect(resumeData.bytesWritten > 0 && resumeData.bytesWritten < total)

            let resumed = manager.downloadTask(
                with: Request(url: resumeData.url), resumingFrom: resumeData, destination: { _, _ in destination })
            resumed.resume()
            let response = try await resumed.response()
            #expect(response.response.statusCode == 206)
            #expect(response.request.value(forHTTPHeaderField: "Range") == "bytes=\(resumeData.bytesWritten)-")
            #expect(Array(try Data(contentsOf: destination)) == TestServer.expectedRangeBytes(count: Int(total)))
        }
    }

    @Test("upload and download progress move forward and end at the total", arguments: TransportKind.network)
    func progress(_ kind: TransportKind) async throws {
        try await withSession(kind) { server, manager, directory in
            let payload = pattern(count: 3_000_000, seed: 2)
            let uploads = NIOLockedValueBox<[TransferProgress]>([])
            let uploaded = try await manager.upload(
                .data(payload), with: Request(method: .post, url: server.url("/upload")),
                progress: { report in uploads.withLockedValue { $0.append(report) } })
            #expect(try jsonObject(uploaded.data)["bytes"] as? Int == payload.count)
            expectMonotone(uploads.withLockedValue { $0 }, total: Int64(payload.count))

            let downloads = NIOLockedValueBox<[TransferProgress]>([])
            let destination = directory.appendingPathComponent("progress.bin")
            _ = try await manager.download(
                Request(url: server.url("/bytes/2000000?seed=1")),
                progress: { report in downloads.withLockedValue { $0.append(report) } },
                destination: { _, _ in destination })
            #expect(try Data(contentsOf: destination) == Data(TestServer.expectedBytes(count: 2_000_000, seed: 1)))
            expectMonotone(downloads.withLockedValue { $0 }, total: 2_000_000)
        }
    }

    @Test("a request's timeout ends the task with .timedOut", arguments: TransportKind.network)
    func deadline(_ kind: TransportKind) async throws {
        try await withSession(kind) { server, manager, _ in
            let request = Request(url: server.url("/fault/never-answer?max_ms=60000"), timeoutInterval: 0.4)
            await expectCode(.timedOut) { try await manager.data(for: request) }
        }
    }

    @Test(
        "task metrics: one attempt per hop, with the bytes each way and ordered instants",
        arguments: TransportKind.network)
    func metrics(_ kind: TransportKind) async throws {
        try await withSession(kind) { server, manager, _ in
            let payload = pattern(count: 200_000, seed: 4)
            let uploaded = try await manager.upload(
                .data(payload), with: Request(method: .post, url: server.url("/upload")))
            let upload = try #require(uploaded.metrics.attempts.first)
            #expect(upload.bytesSent == Int64(payload.count))
            #expect(upload.statusCode == 200)
            // Only the transport can say when the body went out: both transports report it.
            let sent = try #require(upload.requestBodySent)
            let body = try #require(upload.responseBodyComplete)
            #expect(upload.requestStart <= sent && sent <= body)

            let redirected = try await manager.data(for: Request(url: server.url("/redirect-to?url=/bytes/5000")))
            #expect(redirected.metrics.attempts.map(\.reason) == [.initial, .redirect])
            #expect(redirected.metrics.attempts.map(\.statusCode) == [302, 200])
            #expect(redirected.metrics.attempts.last?.bytesReceived == 5000)
        }
    }

    func expectMonotone(
        _ reports: [TransferProgress], total: Int64, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!reports.isEmpty, sourceLocation: sourceLocation)
        let counts = reports.map(\.completedUnitCount)
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 <= $1 }, "\(counts)", sourceLocation: sourceLocation)
        #expect(counts.last == total, sourceLocation: sourceLocation)
    }
}
