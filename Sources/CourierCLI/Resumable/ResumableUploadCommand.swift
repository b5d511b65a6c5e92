import Courier
import Foundation

/// `courier --resumable URL @FILE` (or `< FILE`): uploads the file with tus (or the IETF draft)
/// through ``HTTPSessionManager/Verb/resumable(_:_:options:progress:isolation:)``, keeping its
/// upload URL in `$XDG_STATE_HOME/courier/uploads` until it completes, so that the same command
/// after a Ctrl-C, a crash or a lost network continues where the server stands.
struct ResumableUploadCommand {
    var request: Request
    var file: URL
    var uploadProtocol: ResumableUploadProtocol
    var chunkSize: Int64?
    var connection: ConnectionOptions
    var showsProgress: Bool
    var reports: Bool
    var store: any ResumableUploadStore = FileResumableUploadStore.standard()

    /// Runs the upload and prints the final answer's body to stdout.
    /// - Returns: `.success`, or the status's exit code for a final answer outside 2xx.
    /// - Throws: ``CLIError`` for failures, with 130 or 143 after a signal (the upload then stays resumable).
    func run(interrupts: InterruptWatch) async throws -> ExitStatus {
        let session = try SessionFactory.make(connection: connection)
        let manager = HTTPSessionManager(baseURL: nil, session: session.manager)
        var headers: [String: String] = [:]
        for field in request.headerFields where !Self.bodyFields.contains(field.name.canonicalName) {
            headers[field.name.rawName] = field.value
        }
        let reports = reports
        let options = ResumableUploadOptions(
            uploadProtocol: uploadProtocol, chunkSize: chunkSize, store: store, headers: headers,
            uploadURLHandler: { url in
                if reports { StandardStreams.writeError("courier: upload URL: \(url.absoluteString)\n") }
            })
        let bar = ProgressReporter(label: "Uploading", enabled: showsProgress)
        let method = request.method
        let target = request.url.absoluteString
        let file = file
        let transfer = Task {
            try await HTTPSessionManager.Verb(manager: manager, method: method).resumable(
                target, .file(file), options: options,
                progress: { bar.update(completed: $0.completedUnitCount, total: $0.totalUnitCount) })
        }
        interrupts.onInterrupt { _ in transfer.cancel() }
        let outcome = await transfer.result
        await session.shutdown()
        switch outcome {
        case .success(let done):
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int64) ?? nil
            bar.finish(completed: size ?? done.bytesSent, total: size)
            if reports {
                let resumed =
                    done.resumedFromOffset > 0 ? ", resumed at \(ProgressBar.formatBytes(done.resumedFromOffset))" : ""
                StandardStreams.writeError(
                    "courier: uploaded \(file.lastPathComponent) to \(done.uploadURL.absoluteString)\(resumed)\n")
            }
            if !done.data.isEmpty { try StandardStreams.writeOut(done.data) }
            return .success
        case .failure(let error):
            bar.abandon()
            if let signal = interrupts.received {
                throw CLIError(
                    message: "interrupted; the same command continues the upload", exitCode: 128 + signal)
            }
            throw Exchange.cliError(for: error)
        }
    }

    /// Fields that describe the body the command line would have sent, not the upload's requests.
    private static let bodyFields: Set<String> = ["content-type", "content-length", "transfer-encoding"]
}
