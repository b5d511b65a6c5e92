import Courier
import CourierDigest
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers

/// The steps of `courier demo`, each built with Courier's serializers, sent through its
/// ``SessionManager``, and checked against what the test server says it received.
struct DemoTour: Sendable {
    static let stepCount = 6

    let server: TestServer
    let session: SessionManager
    let showProgress: Bool
    let uploadBytes: Int64
    let downloadBytes: Int64

    func run() async throws {
        say("courier demo: test server on \(server.baseURL.absoluteString)\n")
        try await nestedQuery()
        try await formPost()
        try await jsonPost()
        try await multipartUpload()
        try await redirectResendsBody()
        try await downloadCutAndResumed()
    }

    private func url(_ path: String) -> String { server.baseURL.absoluteString + path }

    // MARK: 1-3: serializers

    private func nestedQuery() async throws {
        say("1. GET with nested query parameters")
        let parameters: Parameters = ["q": "courier", "filter": ["tags": ["swift", "nio"], "limit": 10]]
        let request = try HTTPRequestSerializer().request(method: .get, urlString: url("/get"), parameters: parameters)
        say("   → GET \(MessagePrinter.target(of: request.url))")
        let answer = try await send(request)
        say("   ← \(answer.status), the server saw args \(answer.field("args"))")
        try check(
            answer.field("args") == #"{"filter[limit]": "10", "filter[tags][]": ["swift", "nio"], "q": "courier"}"#,
            "query arguments")
    }

    private func formPost() async throws {
        say("2. Form POST")
        let parameters: Parameters = ["name": "Courier", "tags": ["http", "swift"], "stable": true]
        let request = try HTTPRequestSerializer().request(
            method: .post, urlString: url("/post"), parameters: parameters)
        say("   → POST /post  \(String(decoding: request.body.bufferedBytes?.readableBytesView ?? [], as: UTF8.self))")
        let answer = try await send(request)
        say("   ← \(answer.status), the server saw form \(answer.field("form"))")
        try check(
            answer.field("form") == #"{"name": "Courier", "stable": "1", "tags[]": ["http", "swift"]}"#, "form fields")
    }

    private func jsonPost() async throws {
        say("3. JSON POST")
        let parameters: Parameters = [
            "name": "Courier", "version": 1, "layers": ["serializer", "multipart", "session"],
        ]
        let request = try JSONRequestSerializer(writingOptions: [.sortedKeys]).request(
            method: .post, urlString: url("/post"), parameters: parameters)
        say("   → POST /post  \(String(decoding: request.body.bufferedBytes?.readableBytesView ?? [], as: UTF8.self))")
        let answer = try await send(request)
        say("   ← \(answer.status), the server saw json \(answer.field("json"))")
        try check(
            answer.field("json")
                == #"{"layers": ["serializer", "multipart", "session"], "name": "Courier", "version": 1}"#,
            "JSON body")
    }

    // MARK: 4: streaming multipart upload

    private func multipartUpload() async throws {
        say("4. Multipart upload of a generated \(ProgressBar.formatBytes(uploadBytes)) file")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("payload.bin")
        let localDigest = try DemoData.writeFile(at: file, size: uploadBytes)

        var form = try MultipartFormData(boundary: "courier-demo-boundary")
        form.append("demo", name: "purpose")
        try form.append(fileURL: file, name: "payload")
        var request = try HTTPRequestSerializer().makeRequest(method: .post, urlString: url("/upload"))
        try request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        request.body = .source(form)
        say(
            "   → POST /upload  multipart/form-data, Content-Length \(form.contentLength.map(String.init) ?? "unknown")"
        )

        let bar = ProgressReporter(label: "   upload", enabled: showProgress)
        let started = Date()
        let task = session.uploadTask(
            with: request,
            progress: { progress in
                bar.update(completed: progress.completedUnitCount, total: progress.totalUnitCount)
            })
        task.resume()
        let response = try await task.response()
        let seconds = Date().timeIntervalSince(started)
        bar.finish(completed: uploadBytes, total: uploadBytes)
        let answer = try DemoAnswer(response)
        let serverDigest = answer.field("parts", 1, "sha256")
        say(
            "   ← \(answer.status), part \"payload\": \(answer.field("parts", 1, "size")) bytes, sha256 \(serverDigest)"
        )
        try check(serverDigest == localDigest, "the uploaded file's sha256")
        say(
            "   ✓ sha256 matches the local file (\(ProgressBar.formatBytes(Int64(Double(uploadBytes) / max(seconds, 0.001))))/s)"
        )
    }

    // MARK: 5: 307 resends the body

    private func redirectResendsBody() async throws {
        say("5. A 307 redirect resends the body")
        let body = DemoData.bytes(count: 1 << 20, offset: 0)
        let digest = SHA256.hash(data: body).hexString
        var request = try HTTPRequestSerializer().makeRequest(
            method: .post, urlString: url("/redirect-to?url=/upload&status_code=307"))
        try request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.body = .data(body)
        say("   → POST /redirect-to?url=/upload&status_code=307  (\(ProgressBar.formatBytes(Int64(body.count))) body)")
        let answer = try await send(request)
        say(
            "   ← \(answer.status) from \(answer.url.path): \(answer.field("bytes")) bytes, sha256 \(answer.field("sha256"))"
        )
        try check(answer.url.path == "/upload", "the redirect target")
        try check(answer.field("sha256") == digest, "the resent body's sha256")
        say("   ✓ the body arrived intact after the redirect")
    }

    // MARK: 6: download cut, resumed, verified

    private func downloadCutAndResumed() async throws {
        say("6. A download cut halfway, resumed and verified")
        let seed: UInt64 = 7
        let total = downloadBytes
        let request = try HTTPRequestSerializer().makeRequest(
            method: .get, urlString: url("/bytes/\(total)?seed=\(seed)"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("download.bin")

        let bar = ProgressReporter(label: "   download", enabled: showProgress)
        let half = total / 2
        let (cutSignal, cutContinuation) = AsyncStream<Void>.makeStream()
        let taskBox = NIOLockedValueBox<SessionTask?>(nil)
        let cutDone = NIOLockedValueBox(false)
        let task = session.downloadTask(
            with: request,
            progress: { progress in
                bar.update(completed: progress.completedUnitCount, total: progress.totalUnitCount)
                guard progress.completedUnitCount >= half else { return }
                let first = cutDone.withLockedValue { done -> Bool in
                    defer { done = true }
                    return !done
                }
                if first {
                    // Suspending stops the transfer before its next chunk; the cut happens below.
                    taskBox.withLockedValue { $0 }?.suspend()
                    cutContinuation.yield()
                    cutContinuation.finish()
                }
            },
            destination: { _, _ in destination })
        taskBox.withLockedValue { $0 = task }
        task.resume()
        let watcher = Task {
            _ = try? await task.response()
            cutContinuation.finish()
        }
        for await _ in cutSignal { break }
        guard let resumeData = await task.cancel(producingResumeData: true) else {
            watcher.cancel()
            throw CLIError.failure("demo step 6: the download could not be cut with resume data")
        }
        _ = await watcher.value
        bar.finish(completed: resumeData.bytesWritten, total: total)
        say(
            "   ✂ cut at \(ProgressBar.formatBytes(resumeData.bytesWritten)); resuming with Range: bytes=\(resumeData.bytesWritten)- and If-Range: \(resumeData.entityTag ?? resumeData.lastModified ?? "")"
        )

        let resumedBar = ProgressReporter(label: "   resume", enabled: showProgress)
        let response = try await session.download(
            Request(url: resumeData.url), resumingFrom: resumeData,
            progress: { progress in
                resumedBar.update(completed: progress.completedUnitCount, total: progress.totalUnitCount)
            },
            destination: { _, _ in destination })
        resumedBar.finish(completed: total, total: total)
        let saved = response.fileURL ?? destination
        say(
            "   ← \(response.response.statusCode) \(response.response.status.reasonPhrase), file has \(DemoData.size(of: saved)) bytes"
        )
        try check(DemoData.size(of: saved) == total, "the resumed file's size")
        let fileDigest = try DemoData.digest(of: saved)
        let expectedDigest = DemoData.expectedDownloadDigest(count: total, seed: seed)
        try check(fileDigest == expectedDigest, "the resumed file's sha256")
        say("   ✓ sha256 \(fileDigest) matches the server's bytes")
    }

    // MARK: Helpers

    private func send(_ request: Request) async throws -> DemoAnswer {
        try DemoAnswer(try await session.data(for: request))
    }

    private func check(_ condition: Bool, _ what: String) throws {
        guard condition else { throw CLIError.failure("demo check failed: \(what) differs from what was sent") }
    }

    private func say(_ line: String) {
        try? StandardStreams.writeOut(line + "\n")
    }
}
