import Courier
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// One request sent through Courier's ``SessionManager``, with httpie's output, progress bars,
/// `--check-status` and downloads.
///
/// A body printed to stdout is read through `stream(_:)` and written once, as it arrives
/// (Exchange+Stream.swift). A download to a file streams through the session's become-download
/// disposition into one ``ScratchDirectory`` beside its destination (renamed into place),
/// removed when the exchange ends. SIGINT or SIGTERM cancels the
/// transfer; a download then keeps the bytes it has at its destination, where `--continue`
/// looks for them (as curl's and httpie's downloads do), says so in one line, and the
/// process exits 130 or 143.
struct Exchange: Sendable {
    var request: Request
    var printer: MessagePrinter
    var output: OutputOptions
    var follow: Bool
    var maxRedirects: Int
    var connection: ConnectionOptions
    var chunked: Bool
    var checkStatus: Bool
    var download: Bool
    var outputPath: String?
    var resume: Bool
    var showProgress: Bool
    /// The `--session` cookie jar; nil gives the session a fresh one.
    var cookieStorage: CookieJar? = nil
    /// `--stream`: print the body line by line as it arrives (see ``StreamedBodyPrinter``).
    var stream = false
    /// False when an `Accept-Encoding:` item removed the header: none is sent and bodies are
    /// not decoded.
    var asksForCompression = true
    /// False under `-qq`: a status that `--check-status` turns into an exit code is not also
    /// named on stderr.
    var warnsOfStatus = true
    /// False under `-q`: a download saves its file without saying so.
    var reportsSaving = true
    /// `-A digest` credentials, answered to the server's challenge by a ``DigestAuthenticator``.
    var digestCredentials: (user: String, password: String)? = nil
    /// `-v` or `--all` with redirects followed: each redirect's response and the request that
    /// follows it are printed as they happen, before the final exchange, as httpie does.
    var showsRedirects = false
    /// `--split N`: a download over N ranged connections (Download/SplitDownload.swift).
    var split: Int? = nil

    /// The hooks an exchange starts from: redirects refused unless followed, and printed as
    /// they are followed under ``showsRedirects`` (response heads to stdout, or to stderr for a
    /// download to a file, as the final head goes).
    func redirectHooks(headsToStandardError: Bool = false) -> SessionHooks {
        var hooks = SessionHooks()
        guard follow else {
            hooks.willPerformRedirection = { _, _, _ in nil }
            return hooks
        }
        guard showsRedirects else { return hooks }
        let printer = printer
        let output = output
        let chunked = chunked
        hooks.willPerformRedirection = { _, response, next in
            if output.responseHeaders || (headsToStandardError && output.responseBody) {
                let head = printer.responseHead(response)
                if headsToStandardError {
                    StandardStreams.writeError(head)
                } else {
                    try? StandardStreams.writeOut(head)
                }
            }
            if output.printsRequest {
                try? await RequestCommand.printRequest(next, printer: printer, options: output, chunked: chunked)
            }
            return next
        }
        return hooks
    }

    /// Sets `Accept-Encoding: gzip, deflate` unless `request` has the header: what the
    /// transport adds as it sends when it decodes responses, set on the request itself so that
    /// `-v` and `--offline` show the request as it goes out.
    static func asksForCompression(in request: inout Request) {
        guard request.value(forHTTPHeaderField: "Accept-Encoding") == nil else { return }
        try? request.setValue("gzip, deflate", forHTTPHeaderField: "Accept-Encoding")
    }

    /// `request` as `-v` shows it: with the `Cookie` header the session's cookie storage adds
    /// as it sends, when the request sets none itself.
    func asSent(_ request: Request) -> Request {
        guard let jar = cookieStorage, request.value(forHTTPHeaderField: "Cookie") == nil,
            let stored = jar.cookieHeaderValue(for: request.url)
        else { return request }
        var shown = request
        try? shown.setValue(stored, forHTTPHeaderField: "Cookie")
        return shown
    }

    /// `--check-status`'s exit status for `head` (success without it), named on stderr unless
    /// stdout is a terminal, where the printed head already says it, or `-qq` asked for quiet.
    func exitStatus(for head: ResponseHead) -> ExitStatus {
        guard checkStatus else { return .success }
        let status = ExitStatus.checking(statusCode: head.statusCode, followedRedirects: follow)
        if status != .success, !printer.stdoutIsTerminal, warnsOfStatus {
            StandardStreams.writeError("courier: warning: HTTP \(head.statusCode) \(head.status.reasonPhrase)\n")
        }
        return status
    }

    /// Sends the request and prints the exchange.
    /// - Returns: the exit status (not success only under `--check-status`).
    /// - Throws: ``CLIError`` with httpie's exit code for connection failures, timeouts and
    ///   too many redirects.
    func run(interrupts: InterruptWatch) async throws -> ExitStatus {
        var request = request
        if chunked { request.body = ChunkedBody.wrapping(request.body) }
        let downloadTarget =
            download ? try DownloadTarget.prepare(outputPath: outputPath, resume: resume, url: request.url) : nil
        // A download with stdout redirected and no -o writes the body to stdout, as httpie does.
        let downloading = downloadTarget != nil && (outputPath != nil || printer.stdoutIsTerminal)
        var connection = self.connection
        connection.decompressesResponses = downloadTarget == nil && asksForCompression
        if connection.decompressesResponses { Self.asksForCompression(in: &request) }
        // Only a download to a file needs scratch space; any other body goes to stdout once
        // (Exchange+Stream.swift).
        let splitConnections = downloadTarget.flatMap(splitConnections(into:))
        let scratch =
            downloading && splitConnections == nil ? try ScratchDirectory.make(near: downloadTarget?.directory) : nil
        if let scratch { interrupts.removesOnExit(scratch.url) }
        defer { scratch?.remove() }
        let session = try SessionFactory.make(
            connection: connection, maxRedirects: maxRedirects, temporaryDirectory: scratch?.url,
            cookieStorage: cookieStorage,
            interceptor: digestCredentials.map {
                // Only the URL's own server is answered, not one a redirect leads to.
                DigestAuthenticator(user: $0.user, password: $0.password, origins: [request.url])
            })
        let transfer = Task {
            if let splitConnections, let downloadTarget {
                return try await performSplit(
                    request, session: session.manager, connections: splitConnections, target: downloadTarget)
            }
            guard let scratch, let downloadTarget else {
                return try await performStreamed(request, session: session.manager)
            }
            return try await performDownload(
                request, session: session.manager, scratch: scratch, target: downloadTarget)
        }
        interrupts.onInterrupt { _ in
            scratch?.keepPartialFile()
            transfer.cancel()
        }
        let outcome = await transfer.result
        await session.shutdown()
        switch outcome {
        case .success(let status):
            return status
        case .failure(let error):
            if let signal = interrupts.received {
                let message = (error as? CLIError)?.message ?? "interrupted"
                throw CLIError(message: message, exitCode: 128 + signal)
            }
            throw Self.cliError(for: error)
        }
    }

    /// A download to a file: the body goes through the session's become-download disposition
    /// into `scratch`, and is moved to its destination when the status says it is the file.
    private func performDownload(
        _ request: Request, session: SessionManager, scratch: ScratchDirectory, target downloadTarget: DownloadTarget
    ) async throws -> ExitStatus {
        var request = request
        if let offset = downloadTarget.resumeOffset, offset > 0 {
            try request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            if let validator = downloadTarget.ifRange {
                try request.setValue(validator, forHTTPHeaderField: "If-Range")
            }
        }

        if output.printsRequest {
            try await RequestCommand.printRequest(
                asSent(request), printer: printer, options: output, chunked: chunked, sending: true)
            if output.requestBody, !request.body.isEmpty, output.printsResponse { try StandardStreams.writeOut("\n\n") }
        }

        let bodyFile = scratch.bodyFile
        let headState = NIOLockedValueBox<ResponseHead?>(nil)
        let printer = self.printer
        let output = self.output

        var hooks = redirectHooks(headsToStandardError: true)
        hooks.didReceiveResponse = { _, head in
            headState.withLockedValue { $0 = head }
            // Headers go to stderr so that stdout stays free, as httpie's download mode does.
            if output.responseHeaders || output.responseBody {
                StandardStreams.writeError(printer.responseHead(head))
            }
            return .becomeDownload(options: [], destination: { _, _ in bodyFile })
        }
        session.hooks = hooks

        let uploadBar = ProgressReporter(
            label: "upload", enabled: showProgress && (request.body.contentLength ?? .max) >= 1 << 20)
        let downloadBar = ProgressReporter(label: "download", enabled: showProgress)
        // The file in progress gets a second name as its first bytes arrive, so that what came
        // survives a failure (a timeout, a reset) for --continue, as curl and httpie leave it;
        // the library removes its own name when the transfer fails.
        let linked = NIOLockedValueBox(false)
        let task = session.dataTask(
            with: request,
            uploadProgress: { progress in
                uploadBar.update(completed: progress.completedUnitCount, total: progress.totalUnitCount)
                if progress.isFinished {
                    uploadBar.finish(completed: progress.completedUnitCount, total: progress.totalUnitCount)
                }
            },
            downloadProgress: { progress in
                if progress.completedUnitCount > 0, !linked.withLockedValue({ $0 }) {
                    linked.withLockedValue { $0 = scratch.keepPartialFile() }
                }
                downloadBar.update(completed: progress.completedUnitCount, total: progress.totalUnitCount)
            })
        task.resume()
        let response: SessionResponse
        do {
            response = try await withTaskCancellationHandler {
                try await task.response()
            } onCancel: {
                task.cancel()
            }
        } catch {
            uploadBar.abandon()
            downloadBar.abandon()
            let head = headState.withLockedValue { $0 }
            guard Task.isCancelled else {
                let failure = Self.cliError(for: error)
                guard
                    let kept = Self.keepPartial(scratch: scratch, target: downloadTarget, head: head, url: request.url)
                else { throw failure }
                throw CLIError(message: failure.message + "; " + kept, exitCode: failure.exitCode)
            }
            throw CLIError.failure(
                "interrupted; "
                    + (Self.keepPartial(scratch: scratch, target: downloadTarget, head: head, url: request.url)
                        ?? "nothing was downloaded"))
        }
        let head = response.response
        let receivedFile = response.fileURL ?? bodyFile
        let bodySize = (try? FileManager.default.attributesOfItem(atPath: receivedFile.path)[.size] as? Int64) ?? 0

        downloadBar.finish(completed: bodySize, total: bodySize)
        if (200...299).contains(head.statusCode) {
            let saved = try downloadTarget.store(receivedFile, head: head, url: response.request.url)
            if reportsSaving {
                StandardStreams.writeError("Saved \(ProgressBar.formatBytes(bodySize)) to \"\(saved)\"\n")
            }
        } else if head.statusCode == 416, (downloadTarget.resumeOffset ?? 0) > 0 {
            try downloadTarget.checkUnsatisfiedRange(head)
            StandardStreams.writeError("\"\(downloadTarget.displayName)\" is already complete\n")
            // The file is whole, which is what the command asked for: a success, as curl's `-C -`
            // takes it, not the 4xx status a script would read as a failure.
            return .success
        } else if output.responseBody {
            // A non-2xx answer is not the file: its body goes to stdout, not to the destination.
            try await printer.writeResponseBody(
                try RequestBody.file(receivedFile).makeChunks(), served: head.value(forHTTPHeaderField: "Content-Type"))
        }

        return exitStatus(for: head)
    }

    /// Puts the bytes a download kept when it was interrupted or failed where `--continue`
    /// finds them (appended to the destination when they continue it, the destination itself
    /// otherwise) and says so in a phrase; nil when nothing of a 2xx body was kept.
    private static func keepPartial(
        scratch: ScratchDirectory, target: DownloadTarget, head: ResponseHead?, url: URL
    ) -> String? {
        let kept = scratch.keptFile
        let size = (try? FileManager.default.attributesOfItem(atPath: kept.path)[.size] as? Int64) ?? 0
        guard let head, (200...299).contains(head.statusCode), size > 0 else { return nil }
        do {
            let saved = try target.keep(kept, head: head, url: url)
            let total = (try? FileManager.default.attributesOfItem(atPath: saved)[.size] as? Int64) ?? size
            return
                "\(ProgressBar.formatBytes(total)) kept in \"\(saved)\" (--download --continue --output \"\(saved)\" resumes it)"
        } catch {
            return "the partial download could not be kept: \(error)"
        }
    }

    /// The CLI error and exit code for a library failure.
    static func cliError(for error: any Error) -> CLIError {
        if let error = error as? CLIError { return error }
        guard let error = error as? CourierError else { return CLIError.failure("\(error)") }
        switch error.code {
        case .timedOut: return CLIError.failure(error.message, .timeout)
        case .tooManyRedirects: return CLIError.failure(error.message, .tooManyRedirects)
        case .cancelled: return CLIError.failure(error.message, .interrupted)
        case .decompressionLimitExceeded:
            // The library's message names its settings; a shell user has the option and a header.
            let target = error.offendingInput ?? "the server"
            return CLIError.failure(
                "the response from \(target) decoded past 1 GiB at more bytes per byte received than --decompression-ratio allows (100 unless set), which looks like a decompression bomb; --decompression-ratio off lifts the limit, and Accept-Encoding:identity asks for the body as sent"
            )
        default: return CLIError.failure(error.message)
        }
    }
}
