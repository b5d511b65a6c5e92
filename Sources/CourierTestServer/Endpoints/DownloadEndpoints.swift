import NIOCore
import NIOHTTP1

/// /bytes/{n}, /stream-bytes/{n}, /range/{n} and /drip: generated bodies of any length,
/// streamed in constant memory.
enum DownloadEndpoints {
    /// The largest body these endpoints generate (1 TiB): "several GiB" with room to spare.
    static let maximumLength = 1 << 40

    /// `Last-Modified` for generated content, which never changes.
    static let lastModified = "Thu, 01 Jan 2026 00:00:00 GMT"

    /// /bytes/{n}?seed=S: n pseudo-random bytes from seed S (default 0), with Content-Length.
    /// Honors a single `Range` (ETag `"bytes-n-S"`), which download-resume tests rely on.
    static func bytes(_ request: ServerRequest, length text: String) -> any RequestBodyConsumer {
        guard let length = parseLength(text) else { return badLength(text) }
        guard let seed = parseSeed(request) else { return badSeed(request) }
        let tape = PeriodicTape.seeded(seed)
        let etag = "\"bytes-\(length)-\(seed)\""
        return DiscardingBody(ranged(request, tape: tape, length: length, etag: etag))
    }

    /// /stream-bytes/{n}?seed=S&chunk_size=C: the same bytes as /bytes, chunked.
    static func streamBytes(_ request: ServerRequest, length text: String) -> any RequestBodyConsumer {
        guard let length = parseLength(text) else { return badLength(text) }
        guard let seed = parseSeed(request) else { return badSeed(request) }
        let chunkSize = max(1, min(request.queryInt("chunk_size") ?? 10 * 1024, PeriodicTape.seededPeriod))
        let source = TapeSource(tape: .seeded(seed), offset: 0, count: length, chunkSize: chunkSize)
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(status: .ok, headers: [("Content-Type", "application/octet-stream")]),
                framing: .chunked, source: source))
    }

    /// /range/{n}: `abc…` repeated, with Range, If-Range, ETag `"range{n}"` and Accept-Ranges.
    static func range(_ request: ServerRequest, length text: String) -> any RequestBodyConsumer {
        guard let length = parseLength(text) else { return badLength(text) }
        let chunkSize = max(1, min(request.queryInt("chunk_size") ?? 64 * 1024, PeriodicTape.alphabet.period))
        return DiscardingBody(
            ranged(request, tape: .alphabet, length: length, etag: "\"range\(length)\"", chunkSize: chunkSize))
    }

    /// /drip?numbytes=10&duration=2&delay=0&code=200: `*` bytes spread evenly over `duration` seconds.
    static func drip(_ request: ServerRequest) -> any RequestBodyConsumer {
        let count = request.queryInt("numbytes") ?? 10
        let duration = request.queryValue("duration").flatMap(Double.init) ?? 2
        let delay = request.queryValue("delay").flatMap(Double.init) ?? 0
        let code = request.queryInt("code") ?? 200
        guard (0...(64 * 1024 * 1024)).contains(count), duration.isFinite, (0...60).contains(duration),
            delay.isFinite, (0...60).contains(delay), (200...999).contains(code)
        else {
            return DiscardingBody(
                .error(.badRequest, "drip needs numbytes 0...67108864, duration and delay 0...60 s, code 200...999"))
        }
        let source = DripSource(count: count, duration: duration, initialDelay: delay)
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(
                    status: HTTPResponseStatus(statusCode: code),
                    headers: [("Content-Type", "application/octet-stream")]),
                framing: .contentLength(count), source: source))
    }

    // MARK: - Ranges

    /// The outcome of a `Range` header against a representation of `length` bytes (RFC 9110 §14).
    enum RangeOutcome: Equatable {
        case full
        case partial(first: Int, last: Int)
        case unsatisfiable
    }

    /// Reads one `bytes=` range; multiple ranges and syntax errors are ignored (full response),
    /// as RFC 9110 permits.
    static func evaluate(range header: String?, length: Int) -> RangeOutcome {
        guard let header else { return .full }
        let trimmed = header.trimmingWhitespace()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .full }
        let spec = trimmed.dropFirst("bytes=".count).trimmingWhitespace()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .full }
        let firstText = spec[..<dash].trimmingWhitespace()
        let lastText = spec[spec.index(after: dash)...].trimmingWhitespace()
        if firstText.isEmpty {
            guard let suffix = Int(lastText), suffix >= 0 else { return .full }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .partial(first: max(0, length - suffix), last: length - 1)
        }
        guard let first = Int(firstText), first >= 0 else { return .full }
        var last = length - 1
        if !lastText.isEmpty {
            guard let parsed = Int(lastText), parsed >= first else { return .full }
            last = min(parsed, length - 1)
        }
        guard first < length else { return .unsatisfiable }
        return .partial(first: first, last: last)
    }

    private static func ranged(
        _ request: ServerRequest, tape: PeriodicTape, length: Int, etag: String, chunkSize: Int = 64 * 1024
    ) -> ResponsePlan {
        var outcome = evaluate(range: request.header("Range"), length: length)
        if let condition = request.header("If-Range"), condition != etag, condition != lastModified {
            outcome = .full
        }
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/octet-stream"), ("ETag", etag), ("Accept-Ranges", "bytes"),
            ("Last-Modified", lastModified),
        ]
        switch outcome {
        case .full:
            return .streamed(
                ResponseHeadSpec(status: .ok, headers: headers), framing: .contentLength(length),
                source: TapeSource(tape: tape, offset: 0, count: length, chunkSize: chunkSize))
        case .partial(let first, let last):
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(length)"))
            let count = last - first + 1
            return .streamed(
                ResponseHeadSpec(status: .partialContent, headers: headers), framing: .contentLength(count),
                source: TapeSource(tape: tape, offset: first, count: count, chunkSize: chunkSize))
        case .unsatisfiable:
            headers.append(("Content-Range", "bytes */\(length)"))
            return .empty(.rangeNotSatisfiable, headers: headers)
        }
    }

    // MARK: - Arguments

    static func parseLength(_ text: String) -> Int? {
        guard let length = Int(text), (0...maximumLength).contains(length) else { return nil }
        return length
    }

    static func parseSeed(_ request: ServerRequest) -> UInt64? {
        guard let text = request.queryValue("seed") else { return 0 }
        return UInt64(text)
    }

    static func badLength(_ text: String) -> any RequestBodyConsumer {
        DiscardingBody(
            .error(
                .badRequest, "the length must be an integer from 0 to \(maximumLength), got \(text.debugDescription)"))
    }

    static func badSeed(_ request: ServerRequest) -> any RequestBodyConsumer {
        DiscardingBody(
            .error(
                .badRequest,
                "seed must be an unsigned 64-bit integer, got \((request.queryValue("seed") ?? "").debugDescription)"))
    }
}

/// Streams `count` bytes of a tape starting at `offset`, as shared slices.
final class TapeSource: ResponseBodySource {
    private let tape: PeriodicTape
    private var offset: Int
    private var remaining: Int
    private let chunkSize: Int

    init(tape: PeriodicTape, offset: Int, count: Int, chunkSize: Int) {
        self.tape = tape
        self.offset = offset
        self.remaining = count
        self.chunkSize = chunkSize
    }

    func nextStep() -> BodyStep {
        guard remaining > 0 else { return .end }
        let slice = tape.slice(at: offset, maximumLength: min(chunkSize, remaining))
        offset += slice.readableBytes
        remaining -= slice.readableBytes
        return .bytes(slice)
    }
}

/// `/drip`: an initial delay, then `*` bytes paced evenly; bytes are batched when the
/// interval would be under a millisecond.
final class DripSource: ResponseBodySource {
    private var remaining: Int
    private var pendingDelay: TimeAmount?
    private let batch: Int
    private let interval: TimeAmount
    private var pauseNext = false

    init(count: Int, duration: Double, initialDelay: Double) {
        remaining = count
        pendingDelay = initialDelay > 0 ? .nanoseconds(Int64(initialDelay * 1e9)) : nil
        let perByte = count > 0 ? duration / Double(count) : 0
        let batch =
            perByte >= 0.001 || perByte == 0 ? (perByte == 0 ? max(count, 1) : 1) : Int((0.001 / perByte).rounded(.up))
        self.batch = max(1, batch)
        interval = .nanoseconds(Int64(perByte * Double(self.batch) * 1e9))
    }

    func nextStep() -> BodyStep {
        if let delay = pendingDelay {
            pendingDelay = nil
            return .pause(delay)
        }
        guard remaining > 0 else { return .end }
        if pauseNext && interval > .zero {
            pauseNext = false
            return .pause(interval)
        }
        pauseNext = true
        let size = min(batch, remaining)
        remaining -= size
        return .bytes(ByteBuffer(repeating: UInt8(ascii: "*"), count: size))
    }
}
