import NIOCore

/// The server-sent events of a `text/event-stream` body that arrives as `ByteBuffer` chunks,
/// parsed by ``ServerSentEventParser`` (WHATWG HTML §9.2.5–§9.2.6). An unterminated event at the
/// end of the body is discarded, as the standard says.
///
/// Pull-based: the next chunk is read only when the events of the previous one are used up, so
/// a slow consumer holds at most one chunk and one event. Made by `serverSentEvents()`.
public struct ServerSentEventSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == ByteBuffer {
    public typealias Element = ServerSentEvent

    let base: Base
    let lastEventID: String
    let maximumEventLength: Int

    /// Makes the event sequence of `base`; `lastEventID` seeds the last event ID (HTML §9.2.6).
    public init(
        _ base: Base, lastEventID: String = "",
        maximumEventLength: Int = ServerSentEventParser.defaultMaximumEventLength
    ) {
        self.base = base
        self.lastEventID = lastEventID
        self.maximumEventLength = maximumEventLength
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            base: base.makeAsyncIterator(),
            parser: ServerSentEventParser(lastEventID: lastEventID, maximumEventLength: maximumEventLength))
    }

    /// Reads events one at a time; its ``lastEventID`` and ``reconnectionTime`` are what a
    /// reconnection needs, including what blocks without data set.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        var parser: ServerSentEventParser
        var chunk = ByteBuffer()
        var baseEnded = false

        /// The stream's last event ID so far (HTML §9.2.6, dispatch step 1).
        public var lastEventID: String { parser.lastEventID }
        /// The reconnection time in milliseconds from the latest valid `retry` field, or nil.
        public var reconnectionTime: Int? { parser.reconnectionTime }

        /// The next event, or nil when the body has ended.
        /// - Throws: ``CourierError/Code/serverSentEventTooLarge``, or what the base sequence throws.
        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                if let event = try parser.nextEvent(from: &chunk) { return event }
                if baseEnded { return nil }
                guard let next = try await base.next() else {
                    baseEnded = true
                    parser.finish()
                    return nil
                }
                chunk = next
            }
        }
    }
}

extension ServerSentEventSequence: Sendable where Base: Sendable {}
