import Courier
import Foundation

/// Every exchange that is not a download to a file: the body goes from the network to stdout
/// once, through ``SessionManager/stream(_:overrides:uploadProgress:)``, with no temporary file.
///
/// Raw output is written chunk by chunk as it arrives; formatted output is buffered up to
/// ``MessagePrinter/formatLimit`` (and passed through beyond it), unless `--stream` or a
/// `text/event-stream` response asks for line-by-line output (``StreamedBodyPrinter``). The body
/// is pulled under backpressure, so a slow stdout slows the server rather than filling memory.
/// A failed write (a closed pipe, a full disk) ends the loop that reads the body, which drops
/// the stream and so cancels the exchange at once; the error reaches the user as one line and a
/// non-zero exit (141 for a broken pipe, as a shell reports a process killed by SIGPIPE).
extension Exchange {
    func performStreamed(_ request: Request, session: SessionManager) async throws -> ExitStatus {
        if output.printsRequest {
            try await RequestCommand.printRequest(
                asSent(request), printer: printer, options: output, chunked: chunked, sending: true)
            if output.requestBody, !request.body.isEmpty, output.printsResponse { try StandardStreams.writeOut("\n\n") }
        }

        session.hooks = redirectHooks()

        let uploadBar = ProgressReporter(
            label: "upload", enabled: showProgress && (request.body.contentLength ?? .max) >= 1 << 20)
        let response: StreamedResponse
        do {
            // The body always goes to a writer (a file, a pipe, a terminal), as a download's does.
            response = try await session.stream(
                request, overrides: TaskOverrides(readAheadLimit: TaskOverrides.downloadReadAheadLimit),
                uploadProgress: { progress in
                    uploadBar.update(completed: progress.completedUnitCount, total: progress.totalUnitCount)
                    if progress.isFinished {
                        uploadBar.finish(completed: progress.completedUnitCount, total: progress.totalUnitCount)
                    }
                })
        } catch {
            uploadBar.abandon()
            throw error
        }
        let head = response.head
        if output.responseHeaders { try StandardStreams.writeOut(printer.responseHead(head)) }
        if output.responseBody {
            let served = head.value(forHTTPHeaderField: "Content-Type")
            if stream || head.mimeType == "text/event-stream" {
                let lines = StreamedBodyPrinter(
                    pretty: printer.pretty, stdoutIsTerminal: printer.stdoutIsTerminal, format: printer.format,
                    charset: printer.responseDisplay.charset.flatMap(MessagePrinter.encoding(forCharset:)))
                try await lines.write(response.body, contentType: printer.responseDisplay.contentType(for: served))
            } else {
                try await printer.writeResponseBody(response.body, served: served)
            }
        }

        return exitStatus(for: head)
    }
}
