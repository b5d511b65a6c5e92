import NIOCore

/// What to do with a response once its head has arrived (AFNetworking's did-receive-response block).
public enum ResponseDisposition: Sendable {
    /// Read the body as the task's kind says.
    case allow
    /// Stop now; the task completes with `.cancelled`.
    case cancel
    /// Stream the body to a file instead of memory, then move it as a download would (its
    /// download progress may then come from the transport's event loop, as a download's does;
    /// see `AsyncHTTPClientTransport.Configuration.writesDownloadsOnEventLoop`).
    case becomeDownload(options: DownloadOptions = [], destination: DownloadDestination)
}

/// Session-wide callbacks, as AFURLSessionManager's blocks. All are optional; each runs on the
/// task's own Swift task, so a slow hook slows only its task.
public struct SessionHooks: Sendable {
    /// Before following a redirect: return the request to send (changed or not), or nil to
    /// stop and deliver the redirect response itself.
    public var willPerformRedirection: (@Sendable (SessionTask, ResponseHead, Request) async -> Request?)?
    /// When a redirect resends a body: return the body to send. Without this hook the same body
    /// is read again from a fresh reader, and a one-shot body fails with `.bodyNotReplayable`.
    public var needNewBodyStream: (@Sendable (SessionTask, Request) async throws -> RequestBody)?
    /// When the final response head has arrived: allow, cancel, or turn into a download.
    public var didReceiveResponse: (@Sendable (SessionTask, ResponseHead) async -> ResponseDisposition)?
    /// Every body chunk as it arrives (downloads included), before it is stored.
    public var didReceiveData: (@Sendable (SessionTask, ByteBuffer) -> Void)?
    /// Once per task, with its outcome.
    public var didComplete: (@Sendable (SessionTask, Result<SessionResponse, CourierError>) -> Void)?

    /// No hooks.
    public init() {}
}

/// Observes task life events, for logging and metrics (Alamofire's EventMonitor). Every
/// method has an empty default; calls come from the task's own Swift task.
public protocol EventMonitor: Sendable {
    /// The task was resumed (started, or continued after a suspend).
    func taskDidResume(_ task: SessionTask)
    /// The task was suspended.
    func taskDidSuspend(_ task: SessionTask)
    /// The task is about to follow a redirect to `request`.
    func task(_ task: SessionTask, willRedirectTo request: Request, response: ResponseHead)
    /// The task will send `request` again after `delay` (a retrier decided so).
    func task(_ task: SessionTask, willRetry request: Request, after delay: Duration)
    /// The task completed.
    func task(_ task: SessionTask, didCompleteWith result: Result<SessionResponse, CourierError>)
}

extension EventMonitor {
    public func taskDidResume(_ task: SessionTask) {}
    public func taskDidSuspend(_ task: SessionTask) {}
    public func task(_ task: SessionTask, willRedirectTo request: Request, response: ResponseHead) {}
    public func task(_ task: SessionTask, willRetry request: Request, after delay: Duration) {}
    public func task(_ task: SessionTask, didCompleteWith result: Result<SessionResponse, CourierError>) {}
}
