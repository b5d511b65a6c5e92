import NIOConcurrencyHelpers

extension SessionManager {
    /// Sends `request` and returns as soon as the final response head has arrived, with the body
    /// still to be read, as an `AsyncSequence` of `ByteBuffer` under backpressure (see
    /// ``StreamedResponse``): for server-sent events, NDJSON feeds, long polls and bodies too big
    /// to hold.
    ///
    /// The exchange runs as a data task does: redirects, cookies, the interceptor's adapting and
    /// retrying, the hooks and event monitors all apply up to the head. Any status is returned
    /// (use ``StreamedResponse/validate(statusCodes:contentTypes:)``). Download progress and the
    /// did-receive-data hook are not reported for the streamed body; a did-receive-response
    /// `.becomeDownload` is ignored. Cancelling the calling Swift task before the head arrives
    /// cancels the task; after that, dropping the response or cancelling its reader cancels the
    /// exchange.
    ///
    /// `overrides` gives this request its own redirect policy and retrier (see ``TaskOverrides``);
    /// its deadline is the request's ``Request/timeoutInterval`` as for any task. The request
    /// body's upload progress goes to `uploadProgress`.
    /// - Throws: ``CourierError`` from the transport, redirects, the interceptor, or cancellation.
    public func stream(
        _ request: Request, overrides: TaskOverrides = TaskOverrides(), uploadProgress: ProgressHandler? = nil
    ) async throws -> StreamedResponse {
        let handoff = NIOLockedValueBox<BodyChunks?>(nil)
        let task = makeTask(
            kind: .data, request: request, uploadProgress: uploadProgress, downloadProgress: nil,
            streamHandoff: handoff, overrides: overrides
        ).task
        let response = try await task.response()
        guard let body = handoff.withLockedValue({ $0.take() }) else {
            // The task completed without reaching its body: it cannot, but a missing body must
            // not look like an empty one.
            throw CourierError(
                .cancelled, "the stream from \(request.url.absoluteString) ended before its body was handed over",
                offendingInput: request.url.absoluteString)
        }
        return StreamedResponse(
            request: response.request, head: response.response, body: body, metrics: response.metrics)
    }
}
