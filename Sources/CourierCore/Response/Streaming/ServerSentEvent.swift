/// One event of a `text/event-stream` body, as the WHATWG HTML standard's event-stream
/// interpretation produces it (HTML §9.2.6 "Interpreting an event stream").
///
/// An event is made only when a blank line ends a block whose data buffer is not empty; see
/// ``ServerSentEventParser``.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type: the block's last `event` field, or `"message"` when it had none or an
    /// empty one (HTML §9.2.6, dispatch step 5).
    public var type: String
    /// The block's `data` fields joined with LF (U+000A), without a trailing LF.
    public var data: String
    /// The last event ID when the event was dispatched: the value of the most recent `id` field
    /// of the stream (not only of this block), `""` when there was none. A reconnecting client
    /// sends it as `Last-Event-ID` (HTML §9.2.4).
    public var lastEventID: String
    /// The reconnection time, in milliseconds, set by a `retry` field within this event's block,
    /// or nil. Only values made of ASCII digits count (HTML §9.2.6); a `retry` field in a block
    /// that dispatches nothing still changes ``ServerSentEventParser/reconnectionTime``.
    public var retry: Int?

    /// Makes an event; `type` defaults to `"message"`, as for an event without an `event` field.
    public init(type: String = "message", data: String, lastEventID: String = "", retry: Int? = nil) {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
        self.retry = retry
    }
}

extension ServerSentEvent: CustomStringConvertible {
    public var description: String {
        var text = "ServerSentEvent(type: \(type.debugDescription), data: \(data.debugDescription)"
        if !lastEventID.isEmpty { text += ", lastEventID: \(lastEventID.debugDescription)" }
        if let retry { text += ", retry: \(retry)" }
        return text + ")"
    }
}
