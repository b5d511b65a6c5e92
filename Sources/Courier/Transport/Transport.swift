import Foundation
import NIOCore

/// Sends one HTTP exchange: a ``Request`` out, a response head and a streamed body back.
///
/// A transport follows no redirects and retries nothing; the session layer does both, so a
/// transport only has to move bytes. Cancelling the calling Swift `Task` cancels the exchange,
/// and so does dropping the response body before it is fully read.
public protocol Transport: Sendable {
    /// Sends `request` and returns once the response head has arrived.
    ///
    /// The body is produced from a fresh ``RequestBody/makeChunks()`` for every call, so a
    /// replayable body can be sent again. `uploadProgress` receives the running count of body
    /// bytes handed to the connection, never decreasing within one call.
    /// - Throws: ``CourierError`` (`.cancelled`, `.timedOut`, `.connectionFailed`,
    ///   `.transportFailed`, or a body error such as `.bodyNotReplayable`).
    func send(_ request: Request, uploadProgress: (@Sendable (Int64) -> Void)?) async throws -> TransportResponse

    /// Closes connections and releases resources; sends after this fail.
    /// - Throws: ``CourierError`` `.transportFailed` when the underlying client does not shut down cleanly.
    func shutdown() async throws
}

/// A response head and its body, still streaming.
public struct TransportResponse: Sendable {
    /// The status line and headers.
    public var head: ResponseHead
    /// The body bytes as they arrive; iterate once. Dropping it early cancels the exchange.
    public var body: BodyChunks

    /// Makes a response.
    public init(head: ResponseHead, body: BodyChunks) {
        self.head = head
        self.body = body
    }
}

extension CourierError.Code {
    /// The request was cancelled (by the caller, a task handle, or the calling Swift `Task`).
    public static let cancelled = CourierError.Code("cancelled")
    /// A connect, read or whole-request deadline passed.
    public static let timedOut = CourierError.Code("timedOut")
    /// The connection could not be made or broke before the response was complete.
    public static let connectionFailed = CourierError.Code("connectionFailed")
    /// Any other failure below HTTP (TLS, protocol errors, a shut-down transport).
    public static let transportFailed = CourierError.Code("transportFailed")
    /// The URL's scheme is not one the transport speaks (AsyncHTTPClient: http, https and the
    /// unix-socket forms), or the URL names no host to connect to.
    public static let unsupportedScheme = CourierError.Code("unsupportedScheme")
}
