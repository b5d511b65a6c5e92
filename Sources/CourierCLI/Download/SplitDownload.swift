import Courier
import Foundation

/// `--download --split N`: one file over N ranged connections at once (aria2's `-s`), written
/// in place at its destination with the library's resume record beside it
/// (`.NAME.courier-resume`, 0600), which lists the ranges still missing; `--continue` (with or
/// without `--split`) continues every one of them.
extension Exchange {
    /// The connections `--continue` uses for a split download left at `outputPath` when no
    /// `--split` is given: one per missing range, at most 8; nil when no split download is there.
    static func splitLeftAt(_ outputPath: String?) -> Int? {
        guard let outputPath, let kept = ResumeData(partialFile: URL(fileURLWithPath: outputPath)),
            let missing = kept.missingRanges
        else { return nil }
        return max(1, min(8, missing.count))
    }

    /// Downloads `request` over `connections` ranged requests into `--output` (or a name from the
    /// URL in the current directory), with one progress bar.
    /// - Returns: the exit status (`--check-status`'s for a status outside 2xx).
    /// - Throws: ``CLIError``: the library's failure, with where the bytes kept are and how to
    ///   continue them.
    func performSplit(_ request: Request, session: SessionManager, connections: Int) async throws -> ExitStatus {
        let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let path =
            outputPath
            ?? directory.appendingPathComponent(
                DownloadFileName.unique(
                    DownloadFileName.suggested(contentDisposition: nil, url: request.url, contentType: nil),
                    in: directory)
            ).path
        let file = URL(fileURLWithPath: path)
        // Without --continue the download starts over, whatever a record beside it says.
        if !resume { ResumeData.removeValidators(besidePartialFile: file) }
        if output.printsRequest {
            try await RequestCommand.printRequest(
                asSent(request), printer: printer, options: output, chunked: chunked, sending: true)
        }
        session.hooks = redirectHooks(headsToStandardError: true)
        let bar = ProgressReporter(label: "download", enabled: showProgress)
        let response: SessionResponse
        do {
            response = try await session.download(
                request, to: file, connections: connections, partialFile: file,
                options: [.resumesPartialFile, .removePreviousFile],
                progress: { bar.update(completed: $0.completedUnitCount, total: $0.totalUnitCount) })
        } catch {
            bar.abandon()
            if let failure = error as? CourierError, let head = failure.response,
                !(200...299).contains(head.statusCode)
            {
                if output.responseHeaders || output.responseBody {
                    StandardStreams.writeError(printer.responseHead(head))
                }
                return exitStatus(for: head)
            }
            let kept = ResumeData(partialFile: file).map {
                "\(ProgressBar.formatBytes($0.bytesWritten)) kept in \"\(path)\" (--download --continue --split \(connections) --output \"\(path)\" resumes it)"
            }
            if Task.isCancelled { throw CLIError.failure("interrupted; " + (kept ?? "nothing was kept")) }
            let failure = Self.cliError(for: error)
            throw CLIError(message: failure.message + (kept.map { "; " + $0 } ?? ""), exitCode: failure.exitCode)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
        bar.finish(completed: size, total: size)
        if output.responseHeaders || output.responseBody {
            StandardStreams.writeError(printer.responseHead(response.response))
        }
        if reportsSaving { StandardStreams.writeError("Saved \(ProgressBar.formatBytes(size)) to \"\(path)\"\n") }
        return exitStatus(for: response.response)
    }
}
