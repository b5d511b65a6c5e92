import Foundation

/// Streamed counterparts of the verbs: the request is built exactly as `get`, `post` and the
/// `json:` verbs build it (base URL, request serializer, headers), sent through
/// ``SessionManager/stream(_:)``, and returned once the final head is in, with the body unread
/// (``StreamedResponse``: `body`, `lines()`, `serverSentEvents()`, `jsonLines(of:)`).
///
/// The manager's ``HTTPSessionManager/responseSerializer`` is not used, since nothing is
/// decoded; the status is checked against `acceptableStatusCodes` instead (200–299 unless
/// given; nil accepts any status, for reading an error's body). Redirects, cookies, the
/// interceptor and the hooks apply as for the buffered verbs.
extension HTTPSessionManager {
    /// The statuses a stream verb accepts unless told otherwise: 200–299, as the buffered verbs'
    /// default response serializers.
    public static let defaultStreamStatusCodes: Set<Int> = Set(200..<300)

    /// `method path` with `parameters` encoded as the verbs encode them (in the query for GET,
    /// HEAD and DELETE, in the body otherwise), returned with its body unread.
    /// - Throws: ``CourierError`` from building or sending (as
    ///   ``send(_:_:parameters:headers:serializer:uploadProgress:downloadProgress:)``), and
    ///   `.unacceptableStatusCode` with the head for a status outside `acceptableStatusCodes`
    ///   (the body is then left unread and the exchange closed).
    public func stream(
        _ method: HTTPMethod, _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        acceptableStatusCodes: Set<Int>? = defaultStreamStatusCodes
    ) async throws -> StreamedResponse {
        let request = try request(method, path, parameters: parameters, headers: headers)
        return try await Self.checked(session.stream(request), acceptableStatusCodes)
    }

    /// `method path` with `body` as JSON (`Content-Type: application/json` unless `headers` names
    /// one), returned with its body unread: the shape of the streaming APIs that answer a JSON
    /// request with server-sent events or NDJSON.
    /// - Throws: ``CourierError`` `.encodingFailed` when `encoder` refuses `body` (as
    ///   ``send(_:_:json:headers:encoder:serializer:uploadProgress:downloadProgress:isolation:)``),
    ///   errors from sending, and `.unacceptableStatusCode` as
    ///   ``stream(_:_:parameters:headers:acceptableStatusCodes:)``.
    public func stream(
        _ method: HTTPMethod, _ path: String, json body: some Encodable, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), acceptableStatusCodes: Set<Int>? = defaultStreamStatusCodes,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> StreamedResponse {
        // Encoded here, on the caller's actor, so that a non-Sendable body never crosses actors.
        let encoded = try EncodedBody(json: body, encoder: encoder, path: path)
        return try await stream(
            method, path, body: encoded, headers: headers, acceptableStatusCodes: acceptableStatusCodes)
    }

    /// `GET path`, the counterpart of ``get(_:parameters:headers:downloadProgress:)``, with its body unread.
    /// - Throws: as ``stream(_:_:parameters:headers:acceptableStatusCodes:)``.
    public func getStream(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        acceptableStatusCodes: Set<Int>? = defaultStreamStatusCodes
    ) async throws -> StreamedResponse {
        try await stream(
            .get, path, parameters: parameters, headers: headers, acceptableStatusCodes: acceptableStatusCodes)
    }

    /// `POST path` with `parameters` in the body, the counterpart of
    /// ``post(_:parameters:headers:uploadProgress:downloadProgress:)``, with its body unread.
    /// - Throws: as ``stream(_:_:parameters:headers:acceptableStatusCodes:)``.
    public func postStream(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        acceptableStatusCodes: Set<Int>? = defaultStreamStatusCodes
    ) async throws -> StreamedResponse {
        try await stream(
            .post, path, parameters: parameters, headers: headers, acceptableStatusCodes: acceptableStatusCodes)
    }

    /// `POST path` with `body` as JSON, the counterpart of
    /// ``post(_:json:headers:encoder:uploadProgress:downloadProgress:isolation:)``, with its body unread.
    /// - Throws: as ``stream(_:_:json:headers:encoder:acceptableStatusCodes:isolation:)``.
    public func postStream(
        _ path: String, json body: some Encodable, headers: [String: String] = [:],
        encoder: JSONEncoder = JSONEncoder(), acceptableStatusCodes: Set<Int>? = defaultStreamStatusCodes,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> StreamedResponse {
        let encoded = try EncodedBody(json: body, encoder: encoder, path: path)
        return try await stream(
            .post, path, body: encoded, headers: headers, acceptableStatusCodes: acceptableStatusCodes)
    }

    /// The server-sent events of `GET path`, reconnecting as a browser's `EventSource` does
    /// (``SessionManager/eventSource(for:options:)``). Nothing is sent until the first `next()`.
    /// - Throws: ``CourierError`` `.invalidURL`, `.invalidHeader` or the request serializer's
    ///   error when the request cannot be built; the sequence throws as ``ServerSentEventSource``.
    public func eventSource(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        options: ServerSentEventSource.Options = .init()
    ) throws -> ServerSentEventSource {
        session.eventSource(for: try request(.get, path, parameters: parameters, headers: headers), options: options)
    }

    /// Nonisolated, unlike its callers: the exchange runs off the caller's actor.
    func stream(
        _ method: HTTPMethod, _ path: String, body: EncodedBody, headers: [String: String],
        acceptableStatusCodes: Set<Int>?
    ) async throws -> StreamedResponse {
        let request = try request(method, path, body: body, headers: headers)
        return try await Self.checked(session.stream(request), acceptableStatusCodes)
    }

    private static func checked(_ response: StreamedResponse, _ statusCodes: Set<Int>?) throws -> StreamedResponse {
        guard let statusCodes else { return response }
        return try response.validate(statusCodes: statusCodes)
    }
}
