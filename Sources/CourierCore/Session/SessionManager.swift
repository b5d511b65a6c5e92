import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import Tracing

/// Creates and runs data, upload and download tasks over a ``Transport`` (AFURLSessionManager).
///
/// Which manager? This one takes ``Request`` values you build and gives back tasks and raw
/// responses; ``HTTPSessionManager`` (AFHTTPSessionManager) sits on top of one, builds requests
/// from paths, parameters and ``RequestContent`` against a base URL, and decodes the responses.
/// Every `HTTPSessionManager` has its `SessionManager` as ``HTTPSessionManager/session``.
///
/// The manager follows redirects itself (``RedirectPolicy``), retries through its
/// ``RequestInterceptor``, reports progress, calls its ``SessionHooks`` and event monitors,
/// and caps buffered bodies.
///
/// A manager is an ordinary value: drop it when done, with no shutdown to call. Given no
/// transport it uses `AsyncHTTPClientTransport.shared`, which lives as long as the process, so
/// managers made and dropped per request share its connections. A transport you give it stays
/// yours: call its `shutdown()` to close its connections and wait, or drop it too
/// (`AsyncHTTPClientTransport` then closes them in the background). A running task keeps its
/// manager, and so the transport, alive until it completes. ``shutdown()`` is there to cancel
/// the manager's tasks and wait for them to end.
public final class SessionManager: Sendable {
    /// Settings that apply to every task of a manager.
    public struct Configuration: Sendable {
        /// How redirects are followed, and how many.
        public var redirectPolicy = RedirectPolicy()
        /// The most bytes a data or upload task keeps in memory; more is `.responseTooLarge`
        /// (use a download task for big bodies). Default 64 MiB.
        public var maximumBufferedResponseSize: Int = 64 << 20
        /// Where downloads are written while in flight. Default: the system temporary directory.
        public var temporaryDirectory: URL = FileManager.default.temporaryDirectory
        /// Waits out retry delays; inject one that does not sleep in tests.
        public var sleeper: RetrySleeper = { try await Task.sleep(for: $0) }
        /// Where cookies from `Set-Cookie` are kept and sent back from, for requests whose
        /// ``Request/httpShouldHandleCookies`` is true; nil turns cookie handling off.
        /// Default: a new, empty ``CookieJar`` for each `Configuration()`, so managers made from
        /// separate configurations do not share cookies, and managers made from one copy do.
        public var cookieStorage: (any CookieStorage)? = CookieJar()
        /// Receives a client span per task and per attempt, and injects trace context into
        /// requests (see Docs/Observability.md); nil uses the bootstrapped `InstrumentationSystem.tracer`.
        public var tracer: (any Tracer)?
        /// Makes the request-duration timer, active-request meter and byte and retry counters;
        /// nil uses the bootstrapped `MetricsSystem.factory`.
        public var metricsFactory: (any MetricsFactory)?
        /// Gets one debug line per attempt, credentials redacted by ``redaction``; at a level
        /// above `debug` nothing is logged.
        public var logger = Logger(label: "courier.session")
        /// Which header values, URL passwords and query values logs and spans hide.
        public var redaction = HeaderRedaction()
        /// The private HTTP cache (RFC 9111) that answers and stores GET responses; nil (the
        /// default) for none. Each request says how it uses it in ``Request/cachePolicy``.
        public var cache: HTTPCache?

        /// The defaults.
        public init() {}
    }

    /// The transport that sends requests.
    public let transport: any Transport
    /// The manager's settings.
    public let configuration: Configuration
    /// Adapts requests and decides retries; nil for neither.
    public let interceptor: (any RequestInterceptor)?
    /// Observers of task events.
    public let eventMonitors: [any EventMonitor]
    /// The tracer, metrics factory and logger, resolved once.
    let instruments: SessionInstruments

    /// The transport's whole-request deadline in seconds, for tasks whose request sets none;
    /// read once here from its ``TransportCapabilities``.
    let transportDeadlineSeconds: Double?
    /// The task list and the hooks, the manager's only mutable state; see SessionManager+TaskList.swift.
    let state: NIOLockedValueBox<State>

    struct State {
        var nextIdentifier = 1
        var tasks: [Int: SessionTask] = [:]
        var hooks = SessionHooks()
    }

    /// Makes a manager that sends through `transport`, which stays the caller's (the manager
    /// never shuts it down). The `Courier` module adds an initialiser whose transport defaults
    /// to `AsyncHTTPClientTransport.shared`.
    public init(
        configuration: Configuration = Configuration(),
        transport: any Transport,
        interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        self.configuration = configuration
        self.transport = transport
        self.transportDeadlineSeconds = transport.capabilities.defaultTimeout?.seconds
        self.interceptor = interceptor
        self.eventMonitors = eventMonitors
        self.instruments = SessionInstruments(
            tracer: configuration.tracer, metricsFactory: configuration.metricsFactory, logger: configuration.logger,
            redaction: configuration.redaction)
        self.state = NIOLockedValueBox(State())
    }

    /// The session's hooks. A task reads them once as it starts (`didComplete` as it completes)
    /// and keeps them for all its attempts, so set them before resuming tasks.
    public var hooks: SessionHooks {
        get { state.withLockedValue { $0.hooks } }
        set { state.withLockedValue { $0.hooks = newValue } }
    }

    /// Tasks created and not yet completed.
    public var tasks: [SessionTask] {
        state.withLockedValue { Array($0.tasks.values) }.sorted { $0.identifier < $1.identifier }
    }

    /// Cancels every unfinished task and waits until each has completed. The transport is left
    /// running: the shared one serves other managers, and a given one is the caller's to shut down.
    /// Not needed before dropping the manager.
    /// - Throws: nothing at present; the signature leaves room for work that can fail.
    public func shutdown() async throws {
        let pending = state.withLockedValue { Array($0.tasks.values) }
        for task in pending { task.cancel() }
        for task in pending { _ = await task.outcome() }
    }

    // MARK: Task handles (start suspended; call resume())

    /// A task that sends `request` (with its body, if any) and keeps the response body in memory.
    /// `overrides` changes this task's rules. A task whose `didReceiveResponse` hook turns it into
    /// a download gets a download's read-ahead from then on, unless `overrides` chose a limit.
    public func dataTask(
        with request: Request, uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
        overrides: TaskOverrides = TaskOverrides()
    ) -> SessionTask {
        makeTask(
            kind: .data, request: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
            overrides: overrides
        ).task
    }

    /// A task that uploads `body` as the body of `request` (`.data(bytes)`, `try .file(url)`,
    /// a stream), or the body `request` already has (a multipart form, say) when `body` is nil.
    public func uploadTask(
        with request: Request, from body: RequestBody? = nil, progress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil
    ) -> SessionTask {
        var request = request
        if let body { request.body = body }
        return makeTask(kind: .upload, request: request, uploadProgress: progress, downloadProgress: downloadProgress)
            .task
    }

    // MARK: Async forms (each task runs on the calling Swift task; cancelling it cancels the request)

    /// Sends `request` and returns the response with its body in memory.
    /// - Throws: ``CourierError`` from the transport, redirects, the cap, or cancellation.
    public func data(
        for request: Request, uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil
    ) async throws -> SessionResponse {
        let (task, hooks) = makeTask(
            kind: .data, request: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress)
        return try await task.response(hooks: hooks)
    }

    /// Sends `request` and runs `serializer` on the response.
    /// - Throws: ``CourierError`` from the exchange, or the serializer's error.
    public func data<Serializer: ResponseSerializer>(
        for request: Request, serializer: Serializer, uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        try await data(
            for: request, kind: .data, serializer: serializer, uploadProgress: uploadProgress,
            downloadProgress: downloadProgress)
    }

    /// The awaited path of every verb: a task of `kind`, its response run through `serializer`.
    /// Nonisolated, unlike the verbs: from here on, decoding included, the work runs off the
    /// caller's actor.
    func data<Serializer: ResponseSerializer>(
        for request: Request, kind: SessionTask.Kind, serializer: Serializer, uploadProgress: ProgressHandler?,
        downloadProgress: ProgressHandler?
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let (task, hooks) = makeTask(
            kind: kind, request: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress)
        return try await task.response(hooks: hooks).serialized(by: serializer)
    }

    /// Uploads `body` as the body of `request`; see ``uploadTask(with:from:progress:downloadProgress:)``.
    /// - Throws: ``CourierError`` as ``data(for:uploadProgress:downloadProgress:)``.
    public func upload(_ body: RequestBody, with request: Request, progress: ProgressHandler? = nil) async throws
        -> SessionResponse
    {
        try await uploadTask(with: request, from: body, progress: progress).response()
    }
}
