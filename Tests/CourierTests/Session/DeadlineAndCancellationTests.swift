import Courier
import CourierTestServer
import Foundation
import NIOSSL
import Testing

@testable import CourierCore

/// Every wait of a task is bounded: the request deadline covers the body, a paused task and a
/// download; cancels from progress callbacks end the task; a cancel after the last byte is too
/// late; TLS refusals are typed. Session logic runs over the scripted test server; the
/// transport's own timeout, a closed connection and TLS over the loopback one.
@Suite("Session deadlines, cancellation from callbacks, late cancels, TLS errors", .timeLimit(.minutes(3)))
struct DeadlineAndCancellationTests {
    /// Names of the files a download left in `directory` (the session's temporary directory).
    func leftovers(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".download") }
    }

    @Test func aBodyThatGoesSilentWithNoReadTimeoutHitsTheRequestDeadline() async throws {
        // One byte, then nothing for a minute: no chunk arrives to be checked and there is no
        // read timeout, so only the session's own deadline can end the task.
        try await withScriptedSession { server, manager, _ in
            var request = Request(url: server.url("/fault/drip-forever?interval_ms=60000&max_ms=20000"))
            request.timeoutInterval = 0.5
            await expectFailure([.timedOut]) { try await manager.data(for: request) }
        }
    }

    @Test func theTransportsRequestTimeoutAlsoBoundsASilentBody() async throws {
        try await withFaultSession(transport: {
            $0.readTimeout = nil
            $0.requestTimeout = .milliseconds(500)
        }) { server, manager, _ in
            let request = Request(url: server.url("/fault/drip-forever?interval_ms=60000&max_ms=20000"))
            await expectFailure([.timedOut]) { try await manager.data(for: request) }
        }
    }

    @Test func aTimedOutBodyClosesItsConnection() async throws {
        try await withFaultSession { server, manager, _ in
            // The drip's own cap is 10 minutes, so only the client can close within the suite's limit.
            var request = Request(url: server.url("/fault/drip-forever?interval_ms=20&max_ms=600000"))
            request.timeoutInterval = 0.3
            await expectFailure([.timedOut]) { try await manager.data(for: request) }
            // The server learns of the close some time after the client closes, so its counter
            // is polled with a bound rather than read once.
            let settled = try await server.stats(when: { $0.connectionsOpen == 0 })
            #expect(settled.connectionsOpen == 0)
            // (On a loaded machine the deadline can pass before the connection is even made.)
            #expect(settled.connectionsAccepted <= 1)
        }
    }

    @Test func aDownloadThatHitsTheDeadlineLeavesNoFile() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("never.bin")
            var request = Request(url: server.url("/fault/drip-forever?interval_ms=20"))
            request.timeoutInterval = 0.3
            await expectFailure([.timedOut]) {
                try await manager.download(request, destination: { _, _ in destination })
            }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            let left = try leftovers(in: directory)
            #expect(left.isEmpty)
        }
    }

    @Test func aTaskPausedFromItsProgressCallbackStillHitsItsDeadline() async throws {
        try await withScriptedSession { server, manager, _ in
            var request = Request(url: server.url("/fault/drip-forever?interval_ms=20"))
            request.timeoutInterval = 0.5
            let handle = LockedSlot<SessionTask>()
            let task = manager.dataTask(with: request, downloadProgress: { _ in handle.value?.suspend() })
            handle.value = task
            task.resume()
            await expectFailure([.timedOut]) { try await task.response() }
            #expect(task.state == .completed)
        }
    }

    @Test func cancellingSynchronouslyFromAProgressCallbackEndsTheDownload() async throws {
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("cancelled.bin")
            let handle = LockedSlot<SessionTask>()
            let task = manager.downloadTask(
                with: Request(url: server.url("/range/3000000")),
                progress: { progress in
                    if progress.completedUnitCount > 0 { handle.value?.cancel() }
                },
                destination: { _, _ in destination })
            handle.value = task
            task.resume()
            await expectFailure([.cancelled]) { try await task.response() }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            let left = try leftovers(in: directory)
            #expect(left.isEmpty)
        }
    }

    @Test func resumeDataRequestedFromAProgressCallbackResumesToTheExactBytes() async throws {
        // cancel(producingResumeData:) is async; started from a callback it must neither
        // deadlock on the task's lock nor lose the partial file.
        try await withScriptedSession { server, manager, directory in
            let destination = directory.appendingPathComponent("resumed.bin")
            let handle = LockedSlot<SessionTask>()
            let cutter = LockedSlot<Task<ResumeData?, Never>>()
            let task = manager.downloadTask(
                with: Request(url: server.url("/range/2000000")),
                progress: { progress in
                    guard progress.completedUnitCount >= 100_000, cutter.value == nil, let task = handle.value else {
                        return
                    }
                    cutter.value = Task { await task.cancel(producingResumeData: true) }
                },
                destination: { _, _ in destination })
            handle.value = task
            task.resume()
            let outcome = await task.outcome()
            let produced = await cutter.value?.value
            switch outcome {
            case .success:
                // Every byte was in before the cancel: the cancel was too late and did nothing.
                #expect(produced == nil)
                #expect(FileManager.default.fileExists(atPath: destination.path))
            case .failure(let error):
                #expect(error.code == .cancelled)
                let resumeData = try #require(produced)
                let resumed = try await manager.download(
                    Request(url: resumeData.url), resumingFrom: resumeData, destination: { _, _ in destination })
                let bytes = try Data(contentsOf: try #require(resumed.fileURL))
                #expect(bytes == Data(TestServer.expectedRangeBytes(count: 2_000_000)))
            }
        }
    }

    @Test func aResumeWhosePartialFileIsAlreadyCompleteFinishesOnA416() async throws {
        try await withScriptedSession { server, manager, directory in
            let size = 5000
            let partial = directory.appendingPathComponent("partial.download")
            try Data(TestServer.expectedRangeBytes(count: size)).write(to: partial)
            let resumeData = ResumeData(
                url: server.url("/range/\(size)"), bytesWritten: Int64(size), entityTag: "\"range\(size)\"",
                lastModified: nil, partialFileURL: partial)
            let destination = directory.appendingPathComponent("whole.bin")
            let response = try await manager.download(
                Request(url: resumeData.url), resumingFrom: resumeData, destination: { _, _ in destination })
            #expect(response.response.statusCode == 416)
            let bytes = try Data(contentsOf: try #require(response.fileURL))
            #expect(bytes == Data(TestServer.expectedRangeBytes(count: size)))
        }
    }

    @Test func a416ForAnotherLengthIsInvalidResumeData() async throws {
        try await withScriptedSession { server, manager, directory in
            let partial = directory.appendingPathComponent("partial.download")
            try Data(TestServer.expectedRangeBytes(count: 6000)).write(to: partial)
            let resumeData = ResumeData(
                url: server.url("/range/5000"), bytesWritten: 6000, entityTag: "\"range5000\"", lastModified: nil,
                partialFileURL: partial)
            await expectFailure([.invalidResumeData]) {
                try await manager.download(
                    Request(url: resumeData.url), resumingFrom: resumeData,
                    destination: { _, _ in directory.appendingPathComponent("x.bin") })
            }
        }
    }

    @Test(arguments: [Double.infinity, Double.nan, 1e300, -1])
    func aTimeoutIntervalThatIsNotAUsableNumberMeansNoDeadline(_ interval: Double) async throws {
        try await withScriptedSession { server, manager, _ in
            var request = Request(url: server.url("/get"))
            request.timeoutInterval = interval
            if interval < 0 {
                // Negative is "already passed".
                await expectFailure([.timedOut]) { try await manager.data(for: request) }
            } else {
                let response = try await manager.data(for: request)
                #expect(response.response.statusCode == 200)
            }
        }
    }

    @Test func anUntrustedCertificateIsATypedTrustError() async throws {
        let certificates = try TestCertificates.shared.get()
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificates.selfSigned.certificate)],
            privateKey: .privateKey(certificates.selfSigned.key))
        let server = try await TestServer.start(tls: try NIOSSLContext(configuration: tls))
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.connectTimeout = .seconds(60)  // the parallel suite can starve a handshake
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let manager = SessionManager(transport: transport)
        var request = Request(url: server.url("/get"))
        request.timeoutInterval = 60  // a guard against a hang, not a measure: the parallel suite can starve it
        let error = await expectFailure([.serverTrustFailed]) { try await manager.data(for: request) }
        #expect(error?.offendingInput == "127.0.0.1")
        // A trust failure is final: the transport does not try the handshake again.
        #expect(server.stats.connectionsAccepted == 1)
        try? await manager.shutdown()
        try? await transport.shutdown()
        try? await server.shutdown()
    }
}

// Commit and expiry in every state: Task/TaskStateMachineTests.swift.
