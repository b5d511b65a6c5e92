import Foundation
import NIOCore

extension AsyncSequence where Element == ByteBuffer {
    /// The body's lines as UTF-8 text: CR LF, LF or CR end a line (see ``ByteBufferLineSequence``).
    /// A line past `maximumLineLength` bytes throws ``CourierError/Code/lineTooLong``.
    public func lines(
        maximumLineLength: Int = ByteBufferLineSequence<Self>.defaultMaximumLineLength
    ) -> ByteBufferLineSequence<Self> {
        ByteBufferLineSequence(self, maximumLineLength: maximumLineLength)
    }

    /// The body's server-sent events, parsed to the WHATWG HTML standard (§9.2.5–§9.2.6); see
    /// ``ServerSentEventParser``. An event past `maximumEventLength` bytes throws
    /// ``CourierError/Code/serverSentEventTooLarge``.
    public func serverSentEvents(
        lastEventID: String = "",
        maximumEventLength: Int = ServerSentEventParser.defaultMaximumEventLength
    ) -> ServerSentEventSequence<Self> {
        ServerSentEventSequence(self, lastEventID: lastEventID, maximumEventLength: maximumEventLength)
    }

    /// The body's NDJSON lines, each decoded into `Value`; a line that does not decode throws
    /// ``CourierError/Code/invalidJSONLine`` naming its line number (see ``JSONLineSequence``).
    public func jsonLines<Value: Decodable>(
        of type: Value.Type = Value.self,
        decoder: JSONDecoder = JSONDecoder(),
        maximumLineLength: Int = ByteBufferLineSequence<Self>.defaultMaximumLineLength
    ) -> JSONLineSequence<Self, Value> {
        JSONLineSequence(self, of: type, decoder: decoder, maximumLineLength: maximumLineLength)
    }
}
