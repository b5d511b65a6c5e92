import Foundation

extension HTTPSessionManager.Verb {
    /// Uploads `content` to `path` resumably (tus 1.0 by default, or the IETF draft; see
    /// ``ResumableUploadProtocol``): creates an upload resource, appends to it from the offset
    /// the server confirms, and after a dropped connection, a reset, a timeout or a retryable
    /// status asks the server for its offset (`HEAD`) and sends from there, with the back-off of
    /// the options' ``ResumableUploadOptions/retryPolicy``. Every request goes through the
    /// manager, so the session's interceptor, hooks, cookies and monitors see each one.
    ///
    /// ```swift
    /// let done = try await manager.post.resumable("files/", .file(video), options: .init(chunkSize: 100 << 20))
    /// ```
    ///
    /// `content` is a file (sent as file regions, with sendfile where the transport has it, in
    /// constant memory), bytes, or any replayable body of known length (a stream made again for
    /// each request, its bytes before the offset skipped); the verb's method creates the upload
    /// (tus allows only `POST`). `progress` reports what the server has confirmed plus what the
    /// current request has handed to the transport, out of the whole length: after a failure it
    /// goes back to the offset the server reports. With a ``ResumableUploadOptions/store``, the
    /// upload's URL is kept under the file's fingerprint until it completes, and the same call
    /// in a later process continues it.
    ///
    /// Cancelling the calling task stops the upload where it is and leaves it resumable, unless
    /// ``ResumableUploadOptions/terminatesOnCancel`` asks for it to be deleted.
    /// - Throws: ``CourierError`` `.invalidMethod` for tus with a method other than POST; the
    ///   content's errors (`.invalidFile`, `.bodyNotReplayable`, `.unsupportedBody` for unknown
    ///   length); `.resumableUploadRejected` quoting an answer that does not fit the protocol;
    ///   `.resumableUploadLost` for an upload the server lost mid-call when restarts are not
    ///   allowed; the last transport error once the retry policy gives up; the store's errors;
    ///   `.cancelled` (or `CancellationError`) when cancelled.
    public func resumable(
        _ path: String, _ content: RequestContent, options: ResumableUploadOptions = ResumableUploadOptions(),
        progress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> ResumableUploadResponse {
        if options.uploadProtocol == .tus && method != .post {
            throw CourierError(
                .invalidMethod, "tus creates uploads with POST, not \(method.rawValue)", offendingInput: method.rawValue
            )
        }
        let endpoint = try manager.url(for: path)
        let source = try ResumableUploadSource(content, method: method, path: path)
        let policy = options.retryPolicy ?? (manager.session.interceptor as? RetryPolicy) ?? RetryPolicy(retryLimit: 5)
        var upload = ResumableUploader(
            manager: manager, creationMethod: method, endpoint: endpoint, source: source, options: options,
            policy: policy, progress: progress)
        return try await upload.run()
    }
}
