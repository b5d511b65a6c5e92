import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// A response whose body is read as it arrives: what `SessionManager.stream(_:)` returns once
/// the final response head is in (after redirects, cookies, the interceptor and retries).
///
/// The body is pulled: the transport reads from the socket only while fewer than about a
/// mebibyte waits unread, so a slow consumer holds the server back through TCP flow control
/// instead of growing memory. Dropping the response (or its body's iterator) before the end
/// cancels the exchange and closes its connection; so does cancelling the Swift task that is
/// reading. A ``Request/timeoutInterval`` bounds the whole exchange, body included; leave it nil
/// for a long-lived stream, whose idle gaps the transport's read timeout still bounds.
public struct StreamedResponse: Sendable {
    /// The request as it was last sent (after redirects and adapters).
    public let request: Request
    /// The final response's status line and headers.
    public let head: ResponseHead
    /// The body bytes as they arrive; it can be iterated once.
    public let body: Body
    /// The task's metrics up to the final head: its last attempt has no body-complete instant
    /// or byte counts, since the body is still to be read.
    public let metrics: TaskMetrics

    /// Makes a streamed response around a transport's body chunks.
    public init(request: Request, head: ResponseHead, body: BodyChunks, metrics: TaskMetrics? = nil) {
        self.request = request
        self.head = head
        self.body = Body(chunks: body)
        self.metrics = metrics ?? .unrecorded
    }

    /// The body of a ``StreamedResponse``: an `AsyncSequence` of `ByteBuffer` chunks, in the
    /// sizes the network delivers them.
    public struct Body: AsyncSequence, Sendable {
        public typealias Element = ByteBuffer

        let chunks: BodyChunks
        private let claimed = NIOLockedValueBox(false)

        init(chunks: BodyChunks) { self.chunks = chunks }

        /// The iterator; a second one throws ``CourierError/Code/responseBodyAlreadyConsumed``
        /// from its first `next()`, since the bytes went to the first.
        public func makeAsyncIterator() -> AsyncIterator {
            let isFirst = claimed.withLockedValue { claimed in
                defer { claimed = true }
                return !claimed
            }
            return AsyncIterator(base: isFirst ? chunks.makeAsyncIterator() : nil)
        }

        /// Reads the body a chunk at a time.
        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: BodyChunks.AsyncIterator?

            /// The next chunk, or nil at the end of the body.
            /// - Throws: ``CourierError`` from the transport (`.cancelled`, `.timedOut`,
            ///   `.connectionFailed`, `.decompressionLimitExceeded`, …), or
            ///   `.responseBodyAlreadyConsumed` for a second iterator.
            public mutating func next() async throws -> ByteBuffer? {
                guard var iterator = base else {
                    throw CourierError(
                        .responseBodyAlreadyConsumed, "the streamed response body was already read by another iterator")
                }
                defer { base = iterator }
                return try await iterator.next()
            }
        }
    }

    /// The body's lines as UTF-8 text; see ``ByteBufferLineSequence``.
    public func lines(
        maximumLineLength: Int = ByteBufferLineSequence<Body>.defaultMaximumLineLength
    ) -> ByteBufferLineSequence<Body> {
        body.lines(maximumLineLength: maximumLineLength)
    }

    /// The body's server-sent events, parsed to WHATWG HTML §9.2.5–§9.2.6; see
    /// ``ServerSentEventParser``. This reads one response; `SessionManager.eventSource(for:options:)`
    /// reconnects as a browser's `EventSource` does.
    public func serverSentEvents(
        lastEventID: String = "",
        maximumEventLength: Int = ServerSentEventParser.defaultMaximumEventLength
    ) -> ServerSentEventSequence<Body> {
        body.serverSentEvents(lastEventID: lastEventID, maximumEventLength: maximumEventLength)
    }

    /// The body's NDJSON lines decoded into `Value`; see ``JSONLineSequence``.
    public func jsonLines<Value: Decodable>(
        of type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder(),
        maximumLineLength: Int = ByteBufferLineSequence<Body>.defaultMaximumLineLength
    ) -> JSONLineSequence<Body, Value> {
        body.jsonLines(of: type, decoder: decoder, maximumLineLength: maximumLineLength)
    }

    /// Returns the response when its status is in `statusCodes` and, when `contentTypes` is
    /// given, its media type (``ResponseHead/mimeType``) is one of them; the body is not read.
    /// - Throws: ``CourierError`` `.unacceptableStatusCode` or `.unacceptableContentType`, with
    ///   the head; dropping the response then closes the exchange.
    public func validate(
        statusCodes: some Sequence<Int> = 200..<300, contentTypes: [String]? = nil
    ) throws -> StreamedResponse {
        let target = request.url.absoluteString
        guard statusCodes.contains(head.statusCode) else {
            throw CourierError(
                .unacceptableStatusCode, "the response from \(target) has status \(head.statusCode)",
                offendingInput: String(head.statusCode), response: head)
        }
        if let contentTypes {
            let type = head.mimeType ?? ""
            guard contentTypes.contains(where: { $0.lowercased() == type }) else {
                throw CourierError(
                    .unacceptableContentType,
                    "the response from \(target) has Content-Type \(type.isEmpty ? "(none)" : type), not one of \(contentTypes.joined(separator: ", "))",
                    offendingInput: type, response: head)
            }
        }
        return self
    }
}
