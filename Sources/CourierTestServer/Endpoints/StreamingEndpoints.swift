import NIOCore
import NIOHTTP1

/// /sse, /ndjson, /gzip-bomb and /deflate-bomb: bodies that clients read as they arrive.
///
/// Written here from the formats' definitions (WHATWG HTML §9.2.5 for event streams, NDJSON,
/// RFC 1951/1952/1950 for the bombs), sharing no code with the Courier library, so that the server
/// can judge the library's parsers.
enum StreamingEndpoints {
    static func route(_ request: ServerRequest) -> any RequestBodyConsumer {
        switch request.segments.first ?? "" {
        case "sse": return serverSentEvents(request)
        case "ndjson": return ndjson(request)
        case "gzip-bomb": return bomb(request, framing: .gzip)
        case "deflate-bomb": return bomb(request, framing: .zlib)
        default: return DiscardingBody(.error(.notFound, "no such endpoint: \(request.path)"))
        }
    }

    /// The most events or lines one response carries.
    static let maximumCount = 10_000_000

    // MARK: - /sse

    /// /sse?count=5&retry=MS&event=TYPE&lines=1&delay_ms=0&drop_after=N&split=byte
    ///
    /// Events with ids 1…count, each `id: N`, an optional `event: TYPE`, and `lines` data lines
    /// (`event N`, then `line K of event N`), ended by a blank line. `Last-Event-ID` (or the
    /// `last_event_id` query item) resumes after that id; resuming at or past the last id answers
    /// 204 No Content, which tells an EventSource to stop reconnecting (HTML §9.2.3). `retry`
    /// starts the stream with a `retry:` block; `drop_after` closes the connection mid-body after
    /// that many events of this response; `split=byte` sends every byte as its own flushed chunk;
    /// `delay_ms` pauses between events.
    static func serverSentEvents(_ request: ServerRequest) -> any RequestBodyConsumer {
        let count = request.queryInt("count") ?? 5
        let lines = request.queryInt("lines") ?? 1
        let delay = request.queryInt("delay_ms") ?? 0
        let retry = request.queryValue("retry")
        let dropAfter = request.queryInt("drop_after")
        let eventType = request.queryValue("event")
        guard (0...maximumCount).contains(count), (1...100).contains(lines), (0...60_000).contains(delay),
            retry.map({ !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } }) ?? true,
            dropAfter.map({ $0 >= 0 }) ?? true,
            eventType.map({ !$0.contains(where: { $0 == "\n" || $0 == "\r" }) }) ?? true
        else {
            return DiscardingBody(
                .error(
                    .badRequest,
                    "sse needs count 0...\(maximumCount), lines 1...100, delay_ms 0...60000, retry of digits, drop_after >= 0, an event type without line breaks"
                ))
        }
        let resumeText = request.header("Last-Event-ID") ?? request.queryValue("last_event_id")
        let resumeAfter = resumeText.flatMap { Int($0.trimmingWhitespace()) }.map { max(0, $0) } ?? 0
        if resumeAfter >= count && resumeText != nil {
            return DiscardingBody(.empty(.noContent))
        }
        var prologue = ""
        if let retry { prologue = "retry: \(retry)\n\n" }
        let source = EventStreamSource(
            first: resumeAfter + 1, last: count, prologue: prologue, dropAfter: dropAfter,
            splitBytes: request.queryValue("split") == "byte", delay: .milliseconds(Int64(delay))
        ) { id in
            var text = "id: \(id)\n"
            if let eventType { text += "event: \(eventType)\n" }
            text += "data: event \(id)\n"
            for line in stride(from: 2, through: lines, by: 1) { text += "data: line \(line) of event \(id)\n" }
            return text + "\n"
        }
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(
                    status: .ok, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]),
                framing: .chunked, source: source))
    }

    // MARK: - /ndjson

    /// /ndjson?count=10&invalid_at=K&crlf=1&delay_ms=0&split=byte
    ///
    /// `count` lines `{"id":N,"name":"item N"}` (N from 1), one chunk each, LF-terminated (CR LF
    /// with `crlf=1`). `invalid_at=K` makes line K a JSON text cut short, for error tests.
    static func ndjson(_ request: ServerRequest) -> any RequestBodyConsumer {
        let count = request.queryInt("count") ?? 10
        let delay = request.queryInt("delay_ms") ?? 0
        let invalidAt = request.queryInt("invalid_at")
        guard (0...maximumCount).contains(count), (0...60_000).contains(delay) else {
            return DiscardingBody(.error(.badRequest, "ndjson needs count 0...\(maximumCount) and delay_ms 0...60000"))
        }
        let end = request.queryValue("crlf") == "1" ? "\r\n" : "\n"
        let source = EventStreamSource(
            first: 1, last: count, prologue: "", dropAfter: nil,
            splitBytes: request.queryValue("split") == "byte", delay: .milliseconds(Int64(delay))
        ) { id in
            id == invalidAt ? "{\"id\":\(id)," + end : "{\"id\":\(id),\"name\":\"item \(id)\"}" + end
        }
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(status: .ok, headers: [("Content-Type", "application/x-ndjson")]),
                framing: .chunked, source: source))
    }

    // MARK: - /gzip-bomb, /deflate-bomb

    /// /gzip-bomb?size=N and /deflate-bomb?size=N (default 64 MiB, at most 1 TiB): zero bytes,
    /// compressed about 158:1 with fixed Huffman codes, sent with `Content-Encoding`. The decoded
    /// length is `size` rounded down to 1 + a multiple of 258, given in `X-Decoded-Length`.
    static func bomb(_ request: ServerRequest, framing: ZeroRunDeflate.Framing) -> any RequestBodyConsumer {
        let size = request.queryInt("size") ?? 64 * 1024 * 1024
        guard (1...DownloadEndpoints.maximumLength).contains(size) else {
            return DiscardingBody(.error(.badRequest, "size must be 1...\(DownloadEndpoints.maximumLength)"))
        }
        let source = ZeroRunDeflate(decodedLength: size, framing: framing)
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(
                    status: .ok,
                    headers: [
                        ("Content-Type", "application/octet-stream"),
                        ("Content-Encoding", framing == .gzip ? "gzip" : "deflate"),
                        ("X-Decoded-Length", String(source.decodedLength)),
                    ]),
                framing: .chunked, source: source))
    }
}

/// Writes numbered records one at a time (a prologue first), pausing between them, splitting
/// them into one-byte chunks, or cutting the connection after some of them, as asked.
final class EventStreamSource: ResponseBodySource {
    private var next: Int
    private let last: Int
    private let dropAfter: Int?
    private let splitBytes: Bool
    private let delay: TimeAmount
    private let record: (Int) -> String
    private var written = 0
    private var queue: [BodyStep] = []
    private var queueIndex = 0

    init(
        first: Int, last: Int, prologue: String, dropAfter: Int?, splitBytes: Bool, delay: TimeAmount,
        record: @escaping (Int) -> String
    ) {
        self.next = first
        self.last = last
        self.dropAfter = dropAfter
        self.splitBytes = splitBytes
        self.delay = delay
        self.record = record
        if !prologue.isEmpty { enqueue(prologue) }
    }

    private func enqueue(_ text: String) {
        let bytes = ByteBuffer(string: text)
        guard splitBytes else {
            queue.append(.bytes(bytes))
            return
        }
        // A pause of zero flushes, so each byte leaves as its own chunk.
        for index in 0..<bytes.readableBytes {
            queue.append(.bytes(bytes.getSlice(at: bytes.readerIndex + index, length: 1) ?? ByteBuffer()))
            queue.append(.pause(.zero))
        }
    }

    func nextStep() -> BodyStep {
        while true {
            if queueIndex < queue.count {
                queueIndex += 1
                return queue[queueIndex - 1]
            }
            queue.removeAll(keepingCapacity: true)
            queueIndex = 0
            guard next <= last else { return .end }
            if let dropAfter, written >= dropAfter { return .abort(.close) }
            if written > 0 && delay > .zero { queue.append(.pause(delay)) }
            enqueue(record(next))
            next += 1
            written += 1
        }
    }
}

/// A deflate stream (RFC 1951) of zero bytes: one literal zero, then matches of length 258 at
/// distance 1 in a fixed-Huffman block (§3.2.6), 13 bits per 258 bytes; framed as gzip (RFC 1952)
/// or zlib (RFC 1950). Produced in pieces, so a client that stops early costs the server little.
final class ZeroRunDeflate: ResponseBodySource {
    enum Framing { case gzip, zlib }

    let decodedLength: Int
    private let framing: Framing
    private var matchesLeft: Int
    private var started = false
    private var finished = false
    private var bits: UInt64 = 0
    private var bitCount = 0

    init(decodedLength requested: Int, framing: Framing) {
        matchesLeft = (requested - 1) / 258
        decodedLength = 1 + matchesLeft * 258
        self.framing = framing
    }

    func nextStep() -> BodyStep {
        if finished { return .end }
        var output: [UInt8] = []
        output.reserveCapacity(16 * 1024)
        if !started {
            started = true
            output += framing == .gzip ? [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF] : [0x78, 0x01]
            write(1, count: 1, to: &output)  // BFINAL
            write(1, count: 2, to: &output)  // BTYPE 01, fixed Huffman codes
            writeCode(0x30, length: 8, to: &output)  // literal 0
        }
        let batch = min(matchesLeft, 8 * 1024)
        for _ in 0..<batch {
            writeCode(0xC5, length: 8, to: &output)  // length code 285: 258 bytes
            writeCode(0, length: 5, to: &output)  // distance code 0: distance 1
        }
        matchesLeft -= batch
        if matchesLeft == 0 {
            writeCode(0, length: 7, to: &output)  // end of block
            if bitCount > 0 { write(0, count: 8 - bitCount, to: &output) }
            output += trailer()
            finished = true
        }
        return .bytes(ByteBuffer(bytes: output))
    }

    /// Huffman codes go most significant bit first (RFC 1951 §3.1.1).
    private func writeCode(_ code: UInt64, length: Int, to output: inout [UInt8]) {
        var reversed: UInt64 = 0
        for bit in 0..<length { reversed |= ((code >> UInt64(bit)) & 1) << UInt64(length - 1 - bit) }
        write(reversed, count: length, to: &output)
    }

    /// Other fields go least significant bit first.
    private func write(_ value: UInt64, count: Int, to output: inout [UInt8]) {
        bits |= value << UInt64(bitCount)
        bitCount += count
        while bitCount >= 8 {
            output.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
            bitCount -= 8
        }
    }

    private func trailer() -> [UInt8] {
        switch framing {
        case .gzip:
            // CRC-32 of the zero bytes, worked out only when the client has read this far.
            var crc: UInt32 = 0xFFFF_FFFF
            for _ in 0..<decodedLength { crc = Self.crcTable[Int(crc & 0xFF)] ^ (crc >> 8) }
            crc = ~crc
            let size = UInt32(truncatingIfNeeded: decodedLength)
            return [crc, size].flatMap { value in (0..<4).map { UInt8(truncatingIfNeeded: value >> UInt32($0 * 8)) } }
        case .zlib:
            // Adler-32 of zero bytes: the low sum stays 1, the high sum is the length.
            let adler = UInt32(decodedLength % 65_521) << 16 | 1
            return (0..<4).reversed().map { UInt8(truncatingIfNeeded: adler >> UInt32($0 * 8)) }
        }
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }
}
