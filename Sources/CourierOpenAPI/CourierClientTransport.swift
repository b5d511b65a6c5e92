import Courier
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` that sends every operation of a generated client
/// through a Courier ``/CourierCore/SessionManager``, so the manager's redirects, retries, cookies,
/// interceptor, trust policy and deadlines apply to OpenAPI calls as to any other request.
///
/// ```swift
/// let transport = CourierClientTransport(
///     manager: SessionManager(interceptor: RetryPolicy()),
///     configuration: .init(operations: ["getUser": .init(timeout: .seconds(5), maximumRedirects: 0)]))
/// let client = Client(serverURL: URL(string: "https://api.example.com/v1")!, transport: transport)
/// ```
///
/// Bodies stream both ways, chunk by chunk, with no whole-body buffer: a request `HTTPBody` of
/// known length goes out with `Content-Length`, one of unknown length chunked. A body whose
/// `iterationBehavior` is `.multiple` is a replayable ``/CourierCore/RequestBody``, so a 307/308 redirect or a
/// retry sends it again; a `.single` body is sent once, and a 307/308 that needs it again fails
/// with ``/CourierCore/CourierError/Code/bodyNotReplayable`` (a retry is not attempted for it: the failed
/// response is returned). The response body is the session's ``/CourierCore/SessionManager/stream(_:overrides:uploadProgress:)`` body
/// under backpressure, as a `.single` `HTTPBody` whose `length` comes from `Content-Length`.
/// Each chunk is copied once in each direction, because `HTTPBody` carries `ArraySlice<UInt8>`
/// and the network layer `ByteBuffer`.
///
/// Errors are ``/CourierCore/CourierError``s (the generated client wraps them in OpenAPIRuntime's
/// `ClientError`, whose `underlyingError` is the ``/CourierCore/CourierError``). Cancelling the calling task
/// cancels the exchange, and so does dropping the response body before its end.
public struct CourierClientTransport: ClientTransport {
    /// The session every operation is sent through.
    public let manager: SessionManager
    /// The per-operation policies.
    public var configuration: Configuration

    /// Makes a transport that sends through `manager` (by default a manager of its own, on
    /// ``/CourierAsyncHTTPClient/AsyncHTTPClientTransport/shared``), with per-operation policies from `configuration`.
    public init(manager: SessionManager = SessionManager(), configuration: Configuration = Configuration()) {
        self.manager = manager
        self.configuration = configuration
    }

    /// Sends one operation's request and returns once the response head has arrived, with the
    /// body still streaming.
    /// - Throws: ``/CourierCore/CourierError``: `.invalidURL` when the request's path does not join `baseURL`;
    ///   anything the session throws (`.timedOut`, `.cancelled`, `.connectionFailed`,
    ///   `.tooManyRedirects`, `.bodyNotReplayable`, `.bodyLengthMismatch`, …).
    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let policy = configuration.policy(for: operationID)
        let outgoing = Request(
            method: request.method,
            url: try OpenAPIRequestConversion.url(for: request, baseURL: baseURL),
            headerFields: request.headerFields,
            body: try await OpenAPIRequestConversion.body(body),
            timeoutInterval: policy.timeout.map(OpenAPIRequestConversion.seconds))
        let streamed = try await manager.stream(outgoing, overrides: policy.taskOverrides)
        return try await OpenAPIResponseConversion.response(streamed, method: request.method)
    }
}
