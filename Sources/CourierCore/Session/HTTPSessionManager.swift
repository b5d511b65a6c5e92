import Foundation
import NIOConcurrencyHelpers

/// REST verbs on a base URL over a ``SessionManager`` (AFHTTPSessionManager).
///
/// Paths resolve against ``baseURL`` by RFC 3986, after AFNetworking's rule that a base URL
/// with a path gets a trailing slash: with `http://h/v1`, `"get"` becomes `http://h/v1/get`
/// and `"/get"` becomes `http://h/get`. Requests are built by ``requestSerializer``; per-call
/// headers win over its default headers.
///
/// Typed verbs take an `Encodable` body (`json:` or `form:`) and decode the response into the
/// `Decodable` type given as `as:`: `get(_:parameters:as:)`, `post(_:json:as:)`,
/// `post(_:form:as:)`. The AFNetworking-style verbs without `as:` decode with
/// ``responseSerializer`` (JSON by default, as AFNetworking); `send` takes any serializer.
/// Both kinds end in the same generic path.
public final class HTTPSessionManager: Sendable {
    /// The URL that paths resolve against, already given its trailing slash; nil when every path is absolute.
    public let baseURL: URL?
    /// The session that runs the tasks (hooks, tasks, shutdown).
    public let session: SessionManager

    private let serializers: NIOLockedValueBox<Serializers>

    private struct Serializers {
        var request: any RequestSerializer = HTTPRequestSerializer()
        var response: any ResponseSerializer = JSONResponseSerializer()
    }

    /// Makes a manager on a new ``SessionManager`` sending through `transport` (the `Courier`
    /// module adds one whose transport defaults to `AsyncHTTPClientTransport.shared`). Drop it
    /// when done; see ``SessionManager`` for the lifetime rules.
    public init(
        baseURL: URL? = nil, configuration: SessionManager.Configuration = SessionManager.Configuration(),
        transport: any Transport, interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        self.baseURL = baseURL.map(Self.withTrailingSlash)
        self.session = SessionManager(
            configuration: configuration, transport: transport, interceptor: interceptor, eventMonitors: eventMonitors)
        self.serializers = NIOLockedValueBox(Serializers())
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

    /// Decodes every response of the verbs without a `serializer:` argument (a ``JSONResponseSerializer`` unless set).
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
        let resolved: URL?
        if let baseURL {
            resolved = URL(string: path, relativeTo: baseURL)?.absoluteURL
        } else {
            resolved = URL(string: path)
        }
        guard let resolved, resolved.scheme != nil, resolved.host != nil else {
            let base = baseURL.map { " against \($0.absoluteString)" } ?? " (there is no base URL)"
            throw CourierError(
                .invalidURL, "\"\(path)\" does not resolve to an absolute URL\(base)", offendingInput: path)
        }
        return resolved
    }

    /// The request a verb would send: the serializer's defaults, `headers` over them, `parameters` encoded.
    /// - Throws: ``CourierError`` `.invalidURL`, `.invalidHeader`, or the serializer's error.
    public func request(
        _ method: HTTPMethod, _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:]
    ) throws -> Request {
        let serializer = requestSerializer
        var request = Request(method: method, url: try url(for: path))
        if let options = Self.httpSerializer(in: serializer) {
            request.timeoutInterval = options.timeoutInterval
            request.httpShouldHandleCookies = options.httpShouldHandleCookies
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            try request.setValue(value, forHTTPHeaderField: name)
        }
        return try serializer.serialize(request, parameters: parameters)
    }

    /// The ``HTTPRequestSerializer`` that holds `serializer`'s options and default headers:
    /// itself, or the one inside an ``HTTPBasedRequestSerializer``; nil for other serializers.
    static func httpSerializer(in serializer: any RequestSerializer) -> HTTPRequestSerializer? {
        if let http = serializer as? HTTPRequestSerializer { return http }
        return (serializer as? any HTTPBasedRequestSerializer)?.httpSerializer
    }

    // MARK: Verbs (async), decoded by the manager's response serializer
    //
    // A layer over the generic `send(_:_:parameters:headers:serializer:…)` that the typed verbs
    // (HTTPSessionManager+Typed.swift) also use: the configured serializer, its type erased.

    /// `GET path` with `parameters` in the query; the body decoded by ``responseSerializer``.
    /// - Throws: ``CourierError`` from building, sending or decoding.
    public func get(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .get, path, parameters: parameters, headers: headers, serializer: configuredSerializer,
            downloadProgress: downloadProgress)
    }

    /// `HEAD path`; the response has no body.
    /// - Throws: ``CourierError`` from building, sending or validating.
    public func head(_ path: String, parameters: Parameters? = nil, headers: [String: String] = [:]) async throws
        -> DataResponse<any Sendable>
    {
        try await send(.head, path, parameters: parameters, headers: headers, serializer: configuredSerializer)
    }

    /// `POST path` with `parameters` in the body as the request serializer encodes them.
    /// - Throws: ``CourierError`` from building, sending or decoding.
    public func post(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .post, path, parameters: parameters, headers: headers, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `PUT path` with `parameters` in the body.
    /// - Throws: ``CourierError`` from building, sending or decoding.
    public func put(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .put, path, parameters: parameters, headers: headers, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `PATCH path` with `parameters` in the body.
    /// - Throws: ``CourierError`` from building, sending or decoding.
    public func patch(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .patch, path, parameters: parameters, headers: headers, serializer: configuredSerializer,
            uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// `DELETE path` with `parameters` in the query.
    /// - Throws: ``CourierError`` from building, sending or decoding.
    public func delete(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<any Sendable> {
        try await send(
            .delete, path, parameters: parameters, headers: headers, serializer: configuredSerializer,
            downloadProgress: downloadProgress)
    }

    /// Any verb, decoded by a serializer of the caller's, with a typed value.
    /// - Throws: ``CourierError`` from building, sending or decoding.
    public func send<Serializer: ResponseSerializer>(
        _ method: HTTPMethod, _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        serializer: Serializer, uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil
    ) async throws -> DataResponse<Serializer.SerializedObject> {
        let request = try request(method, path, parameters: parameters, headers: headers)
        return try await session.data(
            for: request, serializer: serializer, uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    /// Downloads `path` into the file `destination`, with every option of
    /// ``SessionManager/download(_:to:partialFile:options:progress:)`` (``DownloadOptions/resumesPartialFile`` included).
    /// - Throws: ``CourierError`` from building or sending; `.downloadDestinationExists` and
    ///   `.downloadFailed` for a destination that exists or whose directory does not, before
    ///   anything is fetched.
    public func download(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], to destination: URL,
        options: DownloadOptions = [], progress: ProgressHandler? = nil
    ) async throws -> SessionResponse {
        let request = try request(.get, path, parameters: parameters, headers: headers)
        return try await session.download(request, to: destination, options: options, progress: progress)
    }

    /// Downloads `path` to where `destination` says once the response is known.
    /// - Throws: as ``download(_:parameters:headers:to:options:progress:)``.
    public func download(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        options: DownloadOptions = [], progress: ProgressHandler? = nil,
        destination: @escaping DownloadDestination
    ) async throws -> SessionResponse {
        let request = try request(.get, path, parameters: parameters, headers: headers)
        return try await session.download(request, options: options, progress: progress, destination: destination)
    }

    /// ``responseSerializer`` as read now, for the generic path that every verb ends in.
    var configuredSerializer: ErasedResponseSerializer { ErasedResponseSerializer(responseSerializer) }

    /// A finished exchange run through `serializer`: the one place a ``SessionResponse`` becomes a ``DataResponse``
    /// outside ``SessionManager/data(for:serializer:uploadProgress:downloadProgress:)``.
    static func serialize<Serializer: ResponseSerializer>(_ response: SessionResponse, with serializer: Serializer)
        throws
        -> DataResponse<Serializer.SerializedObject>
    {
        let value = try serializer.serialize(
            request: response.request, response: response.response, data: response.data)
        return DataResponse(request: response.request, response: response.response, data: response.data, value: value)
    }
}
