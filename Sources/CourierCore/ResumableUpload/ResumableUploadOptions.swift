import Foundation

/// How a resumable upload is made: the protocol, chunks, the store that lets it survive the
/// process, and what happens when the server loses it or the caller cancels.
public struct ResumableUploadOptions: Sendable {
    /// The protocol to speak. Default tus, what servers deploy.
    public var uploadProtocol: ResumableUploadProtocol
    /// The most bytes one append (`PATCH`) carries, for servers or proxies that limit a
    /// request's size; nil (the default) sends the rest of the upload in one request.
    public var chunkSize: Int64?
    /// Where the upload's URL is kept under the file's fingerprint, so that the same upload
    /// started again appends to the server's copy; nil (the default) keeps nothing. Only file
    /// content has a fingerprint; for other content give ``fingerprintName``.
    public var store: (any ResumableUploadStore)?
    /// The name a body that is no file is kept under in ``store`` (with its length and the
    /// endpoint); nil keeps no entry for such a body.
    public var fingerprintName: String?
    /// Whether an upload the server lost while this call ran (404 or 410: expired, deleted) is
    /// created again and sent from the start; else (the default) the call fails with
    /// `.resumableUploadLost`. A stored upload the server no longer knows is always started
    /// anew, since this call has sent nothing to it.
    public var restartsLostUploads: Bool
    /// Whether cancelling the call deletes the upload on the server (tus termination, the
    /// draft's cancellation) and forgets it in the store; else (the default) it stays
    /// resumable, and the same call later continues it.
    public var terminatesOnCancel: Bool
    /// tus only: when the first append (the whole upload, or its first ``chunkSize``) is at most
    /// this many bytes and the server offers `creation-with-upload` (asked with `OPTIONS`), the
    /// creation request carries it, which risks at most this much on a creation whose answer is
    /// lost. A longer first append goes by `PATCH` with no `OPTIONS` asked (the rest would need a
    /// `PATCH` anyway). 0 never sends data with the creation. Default 4 MiB.
    public var creationWithUploadLimit: Int64
    /// More `Upload-Metadata` pairs for tus (the file's `filename` and `filetype` are sent
    /// unless named here).
    public var metadata: [String: String]
    /// How failures are retried: its retryable statuses and error codes (and `.transportFailed`,
    /// which a connection cut mid-body may be reported as), its back-off, and its
    /// ``RetryPolicy/retryLimit`` as the most failures in a row without the server's offset
    /// moving. Its methods are ignored: an upload resumes from the server's offset, which makes
    /// every request safe to send again. Nil uses the session's interceptor when it is a
    /// ``RetryPolicy``, else `RetryPolicy(retryLimit: 5)`.
    public var retryPolicy: RetryPolicy?
    /// Header fields added to every request (authorisation, say).
    public var headers: [String: String]
    /// Each request's deadline; nil keeps the request serializer's, else the transport's.
    public var requestTimeout: Duration?
    /// Called with the upload's URL as soon as it is known (created, or found in the store).
    public var uploadURLHandler: (@Sendable (URL) -> Void)?

    /// Options with the defaults above.
    public init(
        uploadProtocol: ResumableUploadProtocol = .tus, chunkSize: Int64? = nil,
        store: (any ResumableUploadStore)? = nil, fingerprintName: String? = nil, restartsLostUploads: Bool = false,
        terminatesOnCancel: Bool = false, creationWithUploadLimit: Int64 = 4 << 20, metadata: [String: String] = [:],
        retryPolicy: RetryPolicy? = nil, headers: [String: String] = [:], requestTimeout: Duration? = nil,
        uploadURLHandler: (@Sendable (URL) -> Void)? = nil
    ) {
        self.uploadProtocol = uploadProtocol
        self.chunkSize = chunkSize
        self.store = store
        self.fingerprintName = fingerprintName
        self.restartsLostUploads = restartsLostUploads
        self.terminatesOnCancel = terminatesOnCancel
        self.creationWithUploadLimit = creationWithUploadLimit
        self.metadata = metadata
        self.retryPolicy = retryPolicy
        self.headers = headers
        self.requestTimeout = requestTimeout
        self.uploadURLHandler = uploadURLHandler
    }
}

/// The end of a resumable upload: where it lives, the last answer, and what it cost.
public struct ResumableUploadResponse: Sendable {
    /// The upload resource's URL.
    public var uploadURL: URL
    /// The last answer: the final append's (for the draft, the target resource's answer to the
    /// whole representation), or the offset retrieval that found the upload complete.
    public var response: ResponseHead
    /// The last answer's body.
    public var data: Data
    /// The offset the server held when this call began: 0 for a new upload, more for one
    /// resumed from the store.
    public var resumedFromOffset: Int64
    /// The content bytes handed to the transport in all, resends included.
    public var bytesSent: Int64
    /// The number of uploads this call created (0 when it resumed a stored one, 2 after a restart).
    public var creations: Int
    /// The failures recovered from (dropped connections, 5xx, offset mismatches).
    public var recoveries: Int
}
