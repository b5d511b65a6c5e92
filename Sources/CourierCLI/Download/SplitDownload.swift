import Courier
import Foundation

/// `--download --split N`: one file over N ranged connections at once (aria2's `-s`), written
/// in place at its destination with the library's resume record beside it
/// (`.NAME.courier-resume`, 0600), which lists the ranges still missing; `--continue` (with or
/// without `--split`) continues every one of them.
extension Exchange {
    /// The connections a download into `target` uses, nil for one connection written in order:
    /// `--split N`, else under `--continue` the split download left at `--output` (one
    /// connection per missing range, at most 8). A device, FIFO or socket at `--output` cannot
    /// take bytes at offsets: it is written through over one connection, as without `--split`
    /// (what curl would write into it), and one line says so; so is a body that goes to a
    /// redirected stdout (no `--output`), as every download without `--output` sends it there.
    func splitConnections(into target: DownloadTarget) -> Int? {
        guard let outputPath = target.outputPath else {
            guard split != nil, !printer.stdoutIsTerminal else { return split }
            StandardStreams.writeError(
                "courier: warning: --split: the body goes to stdout, which takes it in order; downloading it over one connection\n"
            )
            return nil
        }
        guard let file = target.regularFile else {
            if split != nil {
                StandardStreams.writeError(
                    "courier: warning: --split: \"\(outputPath)\" is not a regular file; downloading it over one connection\n"
                )
            }
            return nil
        }
        guard let split else {
            guard resume, let kept = ResumeData(partialFile: URL(fileURLWithPath: file)),
                let missing = kept.missingRanges
            else { return nil }
            return max(1, min(8, missing.count))
        }
        return split
    }

    /// Downloads `request` over `connections` ranged requests into `target`'s regular file
    /// (`--output` with its links followed, or a name from the URL in the current directory),
    /// with one progress bar. A file this creates gets `0666 & ~umask`, as one written by a
    /// download over one connection does.
    /// - Returns: the exit status (`--check-status`'s for a status outside 2xx).
    /// - Throws: ``CLIError``: the library's failure, with where the bytes kept are and how to
    ///   continue them.
    func performSplit(_ request: Request, session: SessionManager, connections: Int, target: DownloadTarget)
        async throws -> ExitStatus
    {
        let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let path =
            target.outputPath
            ?? directory.appendingPathComponent(
                DownloadFileName.unique(
                    DownloadFileName.suggested(contentDisposition: nil, url: request.url, contentType: nil),
                    in: directory)
            ).path
        // Messages name the path the user gave; the bytes go to the file its links lead to.
        let file = URL(fileURLWithPath: target.regularFile ?? path)
        // Said before any request, in the words a download over one connection says it after one.
        var parent = stat()
        let found = stat(file.deletingLastPathComponent().path, &parent) == 0
        guard found, parent.st_mode & S_IFMT == S_IFDIR else {
            let reason = String(cString: strerror(found ? ENOTDIR : errno))
            throw CLIError.failure("cannot open \"\(path)\" to write the download: \(reason)")
        }
        var before = stat()
        let creates = lstat(file.path, &before) != 0 && errno == ENOENT
        // The library fills a file it creates privately (0600); this one is the user's, kept or whole.
        defer { if creates { chmod(file.path, NewFileMode.bits) } }
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
