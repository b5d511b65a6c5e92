import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat
import NIOPosix

/// The I/O driver of a task: sends attempts, follows redirects, retries, and reads the body.
/// Decisions come from ``RedirectPolicy``, the ``RequestRetrier`` and ``TaskStateMachine``.
extension SessionTask {
    func run() async {
        let deadline = startDeadlineTimer()
        let result: Result<SessionResponse, CourierError>
        do {
            result = .success(try await perform())
        } catch {
            if let deadline, inner.withLockedValue({ $0.machine.hasExpired }) {
                let target = originalRequest.url.absoluteString
                result = .failure(
                    CourierError(
                        .timedOut,
                        "the request to \(target) did not complete within its \(deadline.seconds) s deadline",
                        offendingInput: target))
            } else {
                result = .failure(Self.courierError(error, url: currentRequest.url))
            }
        }
        deadline?.timer.cancel()
        finish(result)
    }

    /// Arms the whole-task deadline (``Request/timeoutInterval``, else the transport's
    /// `requestTimeout`); nil when none applies.
    ///
    /// AsyncHTTPClient's own deadline only bounds the wait for the response head, so the body
    /// read is bounded here. The deadline is a timer on an event loop rather than a racing child
    /// task: arming and cancelling it costs no task, no task group and no thread hop per request.
    /// When it fires before the body is committed, it cancels the task's Swift task, and the
    /// transfer unwinds into `.timedOut`; once the body is committed it does nothing.
    private func startDeadlineTimer() -> (timer: Scheduled<Void>, seconds: Double)? {
        // The transport's own default deadline applies when the request sets none; its body
        // read must be bounded the same way.
        guard
            let seconds = Self.deadlineSeconds(originalRequest.timeoutInterval)
                ?? Self.deadlineSeconds(manager.transportDeadlineSeconds)
        else { return nil }
        let deadline = NIODeadline.now() + .nanoseconds(Int64(seconds * 1_000_000_000))
        let timer = MultiThreadedEventLoopGroup.singleton.next().scheduleTask(deadline: deadline) {
            self.deadlinePassed()
        }
        return (timer, seconds)
    }

    /// A usable deadline in seconds: nil for none (nil, NaN, infinite or absurdly long), 0 for negative.
    static func deadlineSeconds(_ interval: TimeInterval?) -> Double? {
        guard let interval, interval.isFinite, interval < 1e9 else { return nil }
        return max(0, interval)
    }

    static func courierError(_ error: any Error, url: URL) -> CourierError {
        AsyncHTTPClientTransport.courierError(from: error, url: url)
    }

    private func perform() async throws -> SessionResponse {
        let configuration = manager.configuration
        let runsOnCallersTask = inner.withLockedValue { $0.runsOnCallersTask }
        var request = originalRequest
        var redirectCount = 0
        var retryCount = 0
        var needsAdapting = true
        // `currentRequest` starts as `originalRequest`: while what goes out is still that request,
        // storing it again would only copy and release every field. An adapter, resume headers
        // or a redirect each make every later attempt differ from it.
        var sendsOriginal = true

        while true {
            try await waitWhileSuspended()
            if needsAdapting, let interceptor = manager.interceptor {
                do {
                    request = try await interceptor.adapt(request)
                    sendsOriginal = false
                } catch {
                    throw CourierError(
                        .requestAdaptationFailed, "adapting the request to \(request.url.absoluteString) failed",
                        offendingInput: request.url.absoluteString, underlyingError: error)
                }
            }
            needsAdapting = false

            var outgoing = request
            if let resumeData = download?.resumeData, outgoing.url == resumeData.url {
                try Self.addResumeHeaders(to: &outgoing, from: resumeData)
                sendsOriginal = false
            }
            if !sendsOriginal { inner.withLockedValue { $0.currentRequest = outgoing } }

            let bodyLength = outgoing.body.isEmpty ? nil : outgoing.body.contentLength
            let reportsUpload = !outgoing.body.isEmpty && (uploadProgressHandler != nil || kind == .upload)
            var uploadReporter: (@Sendable (Int64) -> Void)?
            if reportsUpload {
                uploadReporter = { [weak self] sent in self?.reportUpload(completed: sent, total: bodyLength) }
            }
            let transportResponse: TransportResponse
            do {
                if runsOnCallersTask {
                    // Bound around the send only, where the exchange is made: tasks that hooks
                    // start later must not inherit this task as their cancellation scope.
                    transportResponse = try await ExchangeCancellation.$scope.withValue(self) {
                        try await manager.sendHandlingCookies(outgoing, uploadProgress: uploadReporter)
                    }
                } else {
                    transportResponse = try await manager.sendHandlingCookies(outgoing, uploadProgress: uploadReporter)
                }
            } catch {
                let failure = Self.courierError(error, url: outgoing.url)
                if try await shouldRetry(outgoing, response: nil, error: failure, retryCount: &retryCount) {
                    needsAdapting = true
                    continue
                }
                throw failure
            }
            let head = transportResponse.head

            // Redirects.
            let hooks = manager.hooks
            let decision = try configuration.redirectPolicy.decide(
                request: outgoing, response: head, redirectCount: redirectCount,
                canProvideNewBody: hooks.needNewBodyStream != nil)
            if case .follow(var next) = decision {
                var stopped = false
                if let willRedirect = hooks.willPerformRedirection {
                    if let changed = await willRedirect(self, head, next) { next = changed } else { stopped = true }
                }
                if !stopped {
                    if !next.body.isEmpty, let needNewBody = hooks.needNewBodyStream {
                        next.body = try await needNewBody(self, next)
                    }
                    // Range headers belong to the resumed URL only.
                    if download?.resumeData != nil {
                        next.headerFields[.range] = nil
                        next.headerFields[.ifRange] = nil
                    }
                    for monitor in manager.eventMonitors { monitor.task(self, willRedirectTo: next, response: head) }
                    await Self.drain(transportResponse.body)
                    redirectCount += 1
                    request = next
                    sendsOriginal = false
                    continue
                }
            }

            // Retries on a status.
            if head.statusCode >= 400,
                try await shouldRetry(outgoing, response: head, error: nil, retryCount: &retryCount)
            {
                await Self.drain(transportResponse.body)
                needsAdapting = true
                continue
            }

            if reportsUpload { finishUpload() }
            inner.withLockedValue { $0.response = head }

            var download = self.download
            if let didReceiveResponse = hooks.didReceiveResponse {
                switch await didReceiveResponse(self, head) {
                case .allow:
                    break
                case .cancel:
                    throw cancelledError()
                case .becomeDownload(let options, let destination):
                    download = DownloadParameters(options: options, destination: destination, resumeData: nil)
                }
            }
            if let download {
                let fileURL = try await receiveFile(
                    transportResponse.body, head: head, request: outgoing, download: download,
                    temporaryDirectory: configuration.temporaryDirectory)
                return SessionResponse(request: outgoing, response: head, fileURL: fileURL)
            }
            let data = try await receiveData(
                transportResponse.body, head: head, request: outgoing, cap: configuration.maximumBufferedResponseSize,
                didReceiveData: hooks.didReceiveData)
            return SessionResponse(request: outgoing, response: head, data: data)
        }
    }

    /// Asks the retrier; on `.retry…` waits out the delay (through the injectable sleeper).
    private func shouldRetry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: inout Int)
        async throws -> Bool
    {
        guard let retrier = manager.interceptor else { return false }
        if error?.code == .cancelled || Task.isCancelled { return false }
        // A body that cannot be produced again cannot be retried.
        guard request.body.isReplayable else { return false }
        let decision = await retrier.retry(request, response: response, error: error, retryCount: retryCount)
        let delay: Duration
        switch decision {
        case .doNotRetry: return false
        case .retry: delay = .zero
        case .retryWithDelay(let wait): delay = wait
        }
        for monitor in manager.eventMonitors { monitor.task(self, willRetry: request, after: delay) }
        retryCount += 1
        if delay > .zero {
            do {
                try await manager.configuration.sleeper(delay)
            } catch {
                throw cancelledError()
            }
        }
        return true
    }

    private static func addResumeHeaders(to request: inout Request, from resumeData: ResumeData) throws {
        guard let validator = resumeData.ifRangeValidator else {
            throw CourierError(
                .invalidResumeData, "the resume data for \(resumeData.url.absoluteString) has no ETag or Last-Modified",
                offendingInput: resumeData.url.absoluteString)
        }
        request.headerFields[.range] = "bytes=\(resumeData.bytesWritten)-"
        request.headerFields[.ifRange] = validator
    }

    /// Reads a small redirect or retried body so the connection can be reused; a big one is dropped,
    /// which closes the connection instead of reading megabytes nobody wants.
    private static func drain(_ body: BodyChunks) async {
        var remaining = 64 * 1024
        var iterator = body.makeAsyncIterator()
        while remaining > 0, let chunk = try? await iterator.next() {
            remaining -= chunk.readableBytes
        }
    }

    private static func expectedLength(_ head: ResponseHead, request: Request) -> Int64? {
        if request.method == .head || head.statusCode == 204 || head.statusCode == 304 { return 0 }
        // Content-Length counts encoded bytes; a decompressing transport delivers more.
        if head.hasContentCoding { return nil }
        return head.expectedContentLength
    }

    private func receiveData(
        _ body: BodyChunks, head: ResponseHead, request: Request, cap: Int,
        didReceiveData: (@Sendable (SessionTask, ByteBuffer) -> Void)?
    ) async throws -> Data {
        let total = Self.expectedLength(head, request: request)
        if let total, total > Int64(cap) {
            throw tooLarge(head: head, request: request, cap: cap, size: "declares \(total) bytes")
        }
        var collected: ByteBuffer?
        var received: Int64 = 0
        var iterator = body.makeAsyncIterator()
        while true {
            try await waitWhileSuspended()
            guard let chunk = try await iterator.next() else { break }
            received += Int64(chunk.readableBytes)
            if received > Int64(cap) {
                throw tooLarge(head: head, request: request, cap: cap, size: "has more than \(cap) bytes")
            }
            didReceiveData?(self, chunk)
            if collected == nil {
                collected = chunk
            } else {
                var chunk = chunk
                if collected!.readableBytes == received - Int64(chunk.readableBytes), let total {
                    // Reserve once for the whole body instead of growing step by step.
                    collected!.reserveCapacity(minimumWritableBytes: Int(max(0, total - received + Int64(chunk.readableBytes))))
                }
                collected!.writeBuffer(&chunk)
            }
            reportDownload(completed: received, total: total)
        }
        try commit()
        finishDownload()
        guard var collected else { return Data() }
        return collected.readData(length: collected.readableBytes, byteTransferStrategy: .automatic) ?? Data()
    }

    private func tooLarge(head: ResponseHead, request: Request, cap: Int, size: String) -> CourierError {
        CourierError(
            .responseTooLarge,
            "the response from \(request.url.absoluteString) \(size), over the \(cap)-byte cap for buffered responses; use a download task to stream it to a file",
            offendingInput: request.url.absoluteString, response: head)
    }

    private func receiveFile(
        _ body: BodyChunks, head: ResponseHead, request: Request, download: DownloadParameters,
        temporaryDirectory: URL
    ) async throws -> URL {
        let file: DownloadFile
        var continuation = ResumeData.Continuation.restart
        if let resumeData = download.resumeData {
            continuation = try resumeData.continuation(for: head)
            file = try DownloadFile(
                directory: temporaryDirectory, appendingTo: resumeData.partialFileURL,
                truncating: continuation == .restart)
        } else {
            file = try DownloadFile(directory: temporaryDirectory)
        }
        if case .alreadyComplete = continuation {
            // The partial file already holds the whole representation (a 416 naming its length).
            await Self.drain(body)
            try commit()
            return try moveIntoPlace(file, head: head, download: download)
        }
        let startOffset = file.bytesWritten
        let bodyLength = Self.expectedLength(head, request: request)
        let total = bodyLength.map { $0 + startOffset }
        let didReceiveData = manager.hooks.didReceiveData
        do {
            if startOffset > 0 { reportDownload(completed: startOffset, total: total) }
            var iterator = body.makeAsyncIterator()
            while true {
                try await waitWhileSuspended()
                guard let chunk = try await iterator.next() else { break }
                didReceiveData?(self, chunk)
                try file.write(chunk)
                reportDownload(completed: file.bytesWritten, total: total)
            }
            try commit()
            return try moveIntoPlace(file, head: head, download: download)
        } catch {
            let failure = Self.courierError(error, url: request.url)
            let keep = failure.code == .cancelled && inner.withLockedValue { $0.wantsResumeData }
            let entityTag = head.value(forHTTPHeaderField: "ETag")
            let lastModified = head.value(forHTTPHeaderField: "Last-Modified")
            if keep, file.bytesWritten > 0, (200...299).contains(head.statusCode),
                entityTag != nil || lastModified != nil
            {
                file.closeDescriptor()
                let resumeData = ResumeData(
                    url: request.url, bytesWritten: file.bytesWritten, entityTag: entityTag,
                    lastModified: lastModified, partialFileURL: file.url)
                inner.withLockedValue { $0.resumeData = resumeData }
            } else {
                file.discard()
            }
            throw failure
        }
    }

    /// Asks the destination where the finished file goes and moves it there.
    /// - Throws: the destination's error, `.downloadDestinationExists` or `.downloadFailed`.
    private func moveIntoPlace(_ file: DownloadFile, head: ResponseHead, download: DownloadParameters) throws -> URL {
        file.closeDescriptor()
        do {
            let destination = try download.destination(file.url, head)
            try file.move(to: destination, options: download.options)
            finishDownload()
            return destination
        } catch {
            file.discard()
            throw error
        }
    }
}
