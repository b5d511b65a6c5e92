/// The codes of streamed responses: reading a body as it arrives, as lines, NDJSON or
/// server-sent events.
extension CourierError.Code {
    /// A streamed response body was iterated a second time; its bytes went to the first iterator.
    ///
    /// Thrown by ``StreamedResponse/Body``'s iterator.
    public static let responseBodyAlreadyConsumed = CourierError.Code("responseBodyAlreadyConsumed")

    /// A line of a streamed body is longer than the limit given to `lines()` or `jsonLines(of:)`.
    public static let lineTooLong = CourierError.Code("lineTooLong")

    /// A line of an NDJSON body is not valid JSON for the requested type; the message names the
    /// line number (counting from 1) and `offendingInput` holds the start of the line.
    public static let invalidJSONLine = CourierError.Code("invalidJSONLine")

    /// A server-sent event (or one line of it) is larger than the parser's
    /// ``ServerSentEventParser/maximumEventLength``.
    public static let serverSentEventTooLarge = CourierError.Code("serverSentEventTooLarge")
}
