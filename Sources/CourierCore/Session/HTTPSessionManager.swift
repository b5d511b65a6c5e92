import Foundation
import NIOConcurrencyHelpers

/// REST verbs on a base URL, over a ``SessionManager`` (AFNetworking's `AFHTTPSessionManager`).
///
/// Which manager? This one, unless you build ``Request`` values yourself. An `HTTPSessionManager`
/// turns a path and a ``RequestContent`` into a request (base URL, ``requestSerializer``, headers,
/// timeout) and its response into a value (``responseSerializer`` or a `Decodable` type). It runs
/// every request through its ``session``, the ``SessionManager`` underneath (AFNetworking's
/// `AFURLSessionManager`), which owns the transport, redirects, retries, cookies, the cache,
/// hooks and tasks; reach for that one to send a ``Request`` you made, or to hold a task handle.
///
/// Paths resolve against ``baseURL`` by RFC 3986, after AFNetworking's rule that a base URL
/// with a path gets a trailing slash: with `http://h/v1`, `"get"` becomes `http://h/v1/get`
/// and `"/get"` becomes `http://h/get`.
///
/// The verbs ``get``, ``head``, ``post``, ``put``, ``patch`` and ``delete`` are ``Verb`` values
/// called like methods, so each takes the same arguments: parameters or a ``RequestContent``,
/// headers, a `timeout`, progress handlers, and `as:` a `Decodable` type or nothing (then
/// ``responseSerializer`` decodes, JSON by default, as AFNetworking does):
///
/// ```swift
/// let found = try await manager.get("search", parameters: ["q": "swift"], as: [User].self)
/// let created = try await manager.post("users", .json(newUser), as: User.self, timeout: .seconds(5))
/// ```
///
/// Every verb ends in ``send(_:_:_:headers:timeout:serializer:uploadProgress:downloadProgress:isolation:)``
/// (any serializer) or ``Verb/stream(_:_:headers:timeout:acceptableStatusCodes:isolation:)`` (the
/// body unread), and every request in ``request(_:_:_:headers:timeout:)``.
public final class HTTPSessionManager: Sendable {
    /// The URL that paths resolve against, already given its trailing slash; nil when every path is absolute.
    public let baseURL: URL?
    /// The session that runs the tasks (transport, hooks, tasks, shutdown).
    public let session: SessionManager

    private let serializers: NIOLockedValueBox<Serializers>

    private struct Serializers {
        var request: any RequestSerializer = HTTPRequestSerializer()
        var response: any ResponseSerializer = JSONResponseSerializer()
    }

    /// Makes a manager on a new ``SessionManager`` sending through `transport` (the `Courier`
    /// module adds one whose transport defaults to `AsyncHTTPClientTransport.shared`). Drop it
    /// when done; see ``SessionManager`` for the lifetime rules.
    public convenience init(
        baseURL: URL? = nil, configuration: SessionManager.Configuration = SessionManager.Configuration(),
        transport: any Transport, interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        let session = SessionManager(
            configuration: configuration, transport: transport, interceptor: interceptor, eventMonitors: eventMonitors)
        self.init(baseURL: baseURL, session: session)
    }

    /// Makes a manager on an existing session.
    public init(baseURL: URL?, session: SessionManager) {
        self.baseURL = baseURL.map(Self.withTrailingSlash)
        self.session = session
        self.serializers = NIOLockedValueBox(Serializers())
    }

    /// Builds every request (an ``HTTPRequestSerializer`` unless set).
    public var requestSerializer: any RequestSerializer {
        get { serializers.withLockedValue { $0.request } }
        set { serializers.withLockedValue { $0.request = newValue } }
    }

    /// Decodes every response of the verbs called without `as:` (a ``JSONResponseSerializer`` unless set).
    public var responseSerializer: any ResponseSerializer {
        get { serializers.withLockedValue { $0.response } }
        set { serializers.withLockedValue { $0.response = newValue } }
    }

    /// Cancels the session's running tasks and waits for them to end (``SessionManager/shutdown()``);
    /// not needed before dropping the manager.
    /// - Throws: as ``SessionManager/shutdown()``.
    public func shutdown() async throws {
        try await session.shutdown()
    }

    // MARK: Building requests

    /// AFNetworking's rule: a base URL with a non-empty path that does not end in `/` gets one,
    /// so relative paths extend it instead of replacing its last segment.
    static func withTrailingSlash(_ url: URL) -> URL {
        let absolute = url.absoluteString
        guard !url.path.isEmpty, !absolute.hasSuffix("/") else { return url }
        if url.query == nil && url.fragment == nil, let slashed = URL(string: absolute + "/") { return slashed }
        return url.appendingPathComponent("")
    }

    /// The absolute URL for `path` (a path relative to ``baseURL``, or an absolute URL string).
    /// - Throws: ``CourierError`` `.invalidURL` quoting `path` when it is not a URL reference
    ///   or resolves to no absolute http(s) URL.
    public func url(for path: String) throws -> URL {
        let resolved = baseURL.map { URL(string: path, relativeTo: $0)?.absoluteURL } ?? URL(string: path)
        guard let resolved, resolved.scheme != nil, resolved.host != nil else {
            let base = baseURL.map { " against \($0.absoluteString)" } ?? " (there is no base URL)"
            throw CourierError(
                .invalidURL, "\"\(path)\" does not resolve to an absolute URL\(base)", offendingInput: path)
        }
        return resolved
    }

    /// The request a verb sends, built in this one place: the serializer's timeout and cookie
    /// options, `headers` (they win over the serializer's default headers), `content` (nil or
    /// `.parameters` through ``requestSerializer``, else its body with its `Content-Type` unless
    /// `headers` name one), `timeout` over the serializer's, and credentials in the URL moved into
    /// a Basic `Authorization` header, as ``HTTPRequestSerializer/makeRequest(method:urlString:)`` does.
    /// - Throws: ``CourierError`` `.invalidURL`, `.invalidHeader`, the serializer's error, or
    ///   `content`'s (see ``RequestContent``).
    public func request(
        _ method: HTTPMethod, _ path: String, _ content: RequestContent? = nil, headers: [String: String] = [:],
        timeout: Duration? = nil
    ) throws -> Request {
        let serializer = requestSerializer
        // The serializer that holds the options and default headers: itself, or the one inside
        // an HTTPBasedRequestSerializer; nil for other serializers.
        let http =
            serializer as? HTTPRequestSerializer ?? (serializer as? any HTTPBasedRequestSerializer)?.httpSerializer
        var request = Request(
            method: method, url: try url(for: path), timeoutInterval: http?.timeoutInterval,
            httpShouldHandleCookies: http?.httpShouldHandleCookies ?? true)
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            try request.setValue(value, forHTTPHeaderField: name)
        }
        if let encoded = try content?.encodedBody(for: method, path: path) {
            if let http {
                try http.applyDefaultHeaders(to: &request)
            } else {
                request = try serializer.serialize(request, parameters: nil)
            }
            request.body = encoded.body
            let namesType = headers.keys.contains { $0.caseInsensitiveCompare("Content-Type") == .orderedSame }
            if let contentType = encoded.contentType, !namesType {
                try request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            }
            if let length = encoded.contentLength { request.headerFields[.contentLength] = String(length) }
        } else {
            request = try serializer.serialize(request, parameters: content?.serializerParameters)
        }
        request = request.movingURLCredentialsToAuthorization()
        if let timeout { request.timeoutInterval = timeout.seconds }
        return request
    }

    // MARK: The generic path

    /// `method path` with `content`, the response run through `serializer`: where every verb ends.
    /// It starts on the caller's actor (`isolation`, SE-0420; never passed by hand) and writes
    /// `content` there before its first suspension; the exchange and the decoding run off it.
    /// - Throws: ``CourierError`` from building (see ``request(_:_:_:headers:timeout:)``) or
    ///   sending, `.timedOut` past `timeout`, or the serializer's error.
    public func send<Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, _ content: RequestContent? = nil, headers: [String: String] = [:],
        timeout: Duration? = nil, serializer: Serializer, uploadProgress: ProgressHandler? = nil,
        downloadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let request = try request(method, path, content, headers: headers, timeout: timeout)
        return try await session.data(
            for: request, kind: content?.taskKind ?? .data, serializer: serializer, uploadProgress: uploadProgress,
            downloadProgress: downloadProgress)
    }

    /// The completion-handler forms' one path: `makeTask` builds the request and its task (a
    /// failure goes to `completion`, and no task is made); the task is resumed, and `completion`
    /// gets its response through `deliver`.
    func start<Value>(
        _ path: String, completion: @escaping @Sendable (Result<Value, CourierError>) -> Void,
        makeTask: () throws -> SessionTask, deliver: @escaping @Sendable (SessionResponse) throws -> Value
    ) -> SessionTask? {
        let task: SessionTask
        do {
            task = try makeTask()
        } catch {
            completion(.failure(Self.asCourierError(error, path: path)))
            return nil
        }
        Task {
            let outcome = await task.outcome()
            completion(
                outcome.flatMap { response in
                    Result { try deliver(response) }.mapError { Self.asCourierError($0, path: path) }
                })
        }
        task.resume()
        return task
    }

    static func asCourierError(_ error: any Error, path: String) -> CourierError {
        .wrapping(error, as: .transportFailed, "the request for \"\(path)\" failed: \(error)", offendingInput: path)
    }

    // MARK: Streams

    /// The statuses a stream accepts unless told otherwise: 200–299, as the buffered verbs'
    /// default response serializers.
    public static let defaultStreamStatusCodes: Set<Int> = Set(200..<300)
}
