import NIOCore

/// An incremental parser for `text/event-stream` bodies, to the letter of the WHATWG HTML
/// standard, §9.2.5 "Parsing an event stream" and §9.2.6 "Interpreting an event stream".
///
/// Feed it the body's chunks as they arrive, split at any byte: a field, a UTF-8 sequence, the
/// byte order mark or a CR LF pair may straddle two chunks. What it implements:
///
/// - The stream is UTF-8; one leading U+FEFF byte order mark is dropped (the "UTF-8 decode"
///   algorithm), and invalid sequences become U+FFFD.
/// - Lines end at CR LF, LF or CR (§9.2.5). A CR at the end of one chunk and an LF at the start of
///   the next are one line end.
/// - A blank line dispatches the event; a line starting with `:` is a comment; `name:value` is a
///   field, with one space after the colon dropped; a line without a colon is a field named by
///   the whole line with an empty value (§9.2.6).
/// - `event` sets the type, `data` appends its value and an LF, `id` sets the last event ID unless
///   the value contains U+0000 NULL, `retry` sets the reconnection time when the value is ASCII
///   digits only (an empty value is not a number and is ignored; a value past `Int.max` saturates),
///   and any other field is ignored.
/// - Dispatch (§9.2.6) first sets ``lastEventID``; then, when the data buffer is empty, it resets
///   the type and makes no event. Otherwise one trailing LF is removed and an event is made.
/// - At the end of the stream an unterminated event is discarded, never dispatched.
///
/// Cost: one pass over each byte. A line or event that lies within one chunk is read in place;
/// only a line split across chunks is copied (into a buffer that is reused), and each dispatched
/// event costs its `String`s. The bytes held for one event (a partial line plus the `data`,
/// `event` and `id` values) are capped by ``maximumEventLength`` so that a server cannot make the
/// client buffer without bound.
public struct ServerSentEventParser: Sendable {
    /// The default cap on the bytes held for one event: 16 MiB.
    public static let defaultMaximumEventLength = 16 * 1024 * 1024

    /// The most bytes the parser holds for one event before it throws
    /// ``CourierError/Code/serverSentEventTooLarge``.
    public let maximumEventLength: Int
    /// The event source's last event ID string: the `id` buffer as of the last dispatch
    /// (HTML §9.2.6, dispatch step 1), which a reconnection sends as `Last-Event-ID`.
    public private(set) var lastEventID: String
    /// The reconnection time in milliseconds from the stream's latest valid `retry` field, or nil
    /// when it sent none (the client then picks its own, HTML §9.2.3).
    public private(set) var reconnectionTime: Int?

    private var lineBuffer: [UInt8] = []
    private var dataBuffer: [UInt8] = []
    private var typeBuffer: [UInt8] = []
    private var idBuffer: [UInt8]
    private var idBufferChanged = false
    private var blockRetry: Int?
    private var byteOrderMarkMatched = 0
    private var byteOrderMarkChecked = false
    private var lineEnds = LineEnds()

    /// Makes a parser for one stream. `lastEventID` seeds the last event ID (a reconnection
    /// carries it over from the previous connection, as browsers do).
    public init(lastEventID: String = "", maximumEventLength: Int = defaultMaximumEventLength) {
        self.lastEventID = lastEventID
        self.idBuffer = Array(lastEventID.utf8)
        self.maximumEventLength = max(1, maximumEventLength)
    }

    /// Reads bytes from `chunk` until an event is dispatched, and returns it with `chunk`'s reader
    /// index just past the blank line; returns nil once the whole chunk is consumed without one.
    /// Call it again with the same chunk until it returns nil, then with the next chunk.
    /// - Throws: ``CourierError/Code/serverSentEventTooLarge`` when an event outgrows
    ///   ``maximumEventLength``; the parser holds nothing after that.
    public mutating func nextEvent(from chunk: inout ByteBuffer) throws -> ServerSentEvent? {
        let (consumed, outcome) = chunk.withUnsafeReadableBytes { bytes in scan(bytes) }
        chunk.moveReaderIndex(forwardBy: consumed)
        switch outcome {
        case .event(let event):
            return event
        case .needsMore:
            return nil
        case .tooLarge:
            finish()
            throw CourierError(
                .serverSentEventTooLarge,
                "a server-sent event is larger than the limit of \(maximumEventLength) bytes")
        }
    }

    /// Parses a whole chunk, calling `onEvent` for each event it completes.
    /// - Throws: what ``nextEvent(from:)`` throws, and what `onEvent` throws.
    public mutating func parse(_ chunk: ByteBuffer, onEvent: (ServerSentEvent) throws -> Void) throws {
        var chunk = chunk
        while let event = try nextEvent(from: &chunk) {
            try onEvent(event)
        }
    }

    /// Ends the stream: a partial line and an undispatched event are discarded (HTML §9.2.6: "If
    /// the file ends in the middle of an event, before the final empty line, the incomplete event
    /// is not dispatched"). ``lastEventID`` and ``reconnectionTime`` are kept.
    public mutating func finish() {
        lineBuffer.removeAll()
        dataBuffer.removeAll()
        typeBuffer.removeAll()
        blockRetry = nil
        lineEnds = LineEnds()
    }

    // MARK: - Scanning

    private enum Outcome {
        case event(ServerSentEvent)
        case needsMore
        case tooLarge
    }

    private static let lineFeed = LineEnds.lineFeed
    private static let carriageReturn = LineEnds.carriageReturn
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")
    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    private var heldBytes: Int { lineBuffer.count + dataBuffer.count + typeBuffer.count + idBuffer.count }

    private mutating func scan(_ bytes: UnsafeRawBufferPointer) -> (consumed: Int, Outcome) {
        let count = bytes.count
        var index = 0
        // The "UTF-8 decode" algorithm drops one BOM at the very start of the stream, which may
        // itself arrive split; bytes that turn out not to be a BOM are ordinary line bytes.
        while !byteOrderMarkChecked && index < count {
            if bytes[index] == Self.byteOrderMark[byteOrderMarkMatched] {
                byteOrderMarkMatched += 1
                index += 1
                if byteOrderMarkMatched == Self.byteOrderMark.count { byteOrderMarkChecked = true }
            } else {
                byteOrderMarkChecked = true
                lineBuffer.append(contentsOf: Self.byteOrderMark[..<byteOrderMarkMatched])
            }
        }
        lineEnds.skipContinuation(at: &index, in: bytes)
        var lineStart = index
        while index < count {
            let byte = bytes[index]
            guard byte == Self.lineFeed || byte == Self.carriageReturn else {
                index += 1
                continue
            }
            let lineEnd = index
            lineEnds.skipLineEnd(at: &index, in: bytes)
            let event: ServerSentEvent?
            if lineBuffer.isEmpty {
                event = processLine(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<lineEnd]))
            } else {
                lineBuffer.append(contentsOf: bytes[lineStart..<lineEnd])
                // Taken out of `self` so that processing may mutate the other buffers.
                var line: [UInt8] = []
                swap(&line, &lineBuffer)
                event = line.withUnsafeBytes { processLine($0) }
                line.removeAll(keepingCapacity: true)
                swap(&line, &lineBuffer)
            }
            if heldBytes > maximumEventLength { return (index, .tooLarge) }
            lineStart = index
            if let event { return (index, .event(event)) }
        }
        if lineStart < count {
            guard heldBytes + (count - lineStart) <= maximumEventLength else { return (count, .tooLarge) }
            lineBuffer.append(contentsOf: bytes[lineStart..<count])
        }
        return (count, .needsMore)
    }

    // MARK: - Interpreting (HTML §9.2.6)

    private mutating func processLine(_ line: UnsafeRawBufferPointer) -> ServerSentEvent? {
        guard let first = line.first else { return dispatch() }
        if first == Self.colon { return nil }
        let name: UnsafeRawBufferPointer
        let value: UnsafeRawBufferPointer
        if let colonIndex = line.firstIndex(of: Self.colon) {
            name = UnsafeRawBufferPointer(rebasing: line[..<colonIndex])
            var valueStart = colonIndex + 1
            if valueStart < line.count && line[valueStart] == Self.space { valueStart += 1 }
            value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        } else {
            name = line
            value = UnsafeRawBufferPointer(rebasing: line[line.count...])
        }
        switch name.count {
        case 4 where name.elementsEqual("data".utf8):
            dataBuffer.append(contentsOf: value)
            dataBuffer.append(Self.lineFeed)
        case 5 where name.elementsEqual("event".utf8):
            typeBuffer.removeAll(keepingCapacity: true)
            typeBuffer.append(contentsOf: value)
        case 2 where name.elementsEqual("id".utf8):
            if !value.contains(0) {
                idBuffer.removeAll(keepingCapacity: true)
                idBuffer.append(contentsOf: value)
                idBufferChanged = true
            }
        case 5 where name.elementsEqual("retry".utf8):
            if let milliseconds = Self.asciiDigitsValue(value) {
                reconnectionTime = milliseconds
                blockRetry = milliseconds
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        if idBufferChanged {
            lastEventID = String(decoding: idBuffer, as: UTF8.self)
            idBufferChanged = false
        }
        let retry = blockRetry
        blockRetry = nil
        guard !dataBuffer.isEmpty else {
            typeBuffer.removeAll(keepingCapacity: true)
            return nil
        }
        if dataBuffer.last == Self.lineFeed { dataBuffer.removeLast() }
        let event = ServerSentEvent(
            type: typeBuffer.isEmpty ? "message" : String(decoding: typeBuffer, as: UTF8.self),
            data: String(decoding: dataBuffer, as: UTF8.self),
            lastEventID: lastEventID,
            retry: retry)
        dataBuffer.removeAll(keepingCapacity: dataBuffer.capacity <= 64 * 1024)
        typeBuffer.removeAll(keepingCapacity: true)
        return event
    }

    /// The value of a field made only of ASCII digits, saturating at `Int.max`; nil for any
    /// other byte and for an empty value.
    private static func asciiDigitsValue(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (sum, carried) = shifted.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            value = overflowed || carried ? Int.max : sum
        }
        return value
    }
}
