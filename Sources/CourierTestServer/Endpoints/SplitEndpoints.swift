import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// /split/{n}: a file of n bytes for split (segmented) downloads, with one `Range` and
/// `If-Range` honoured, and the ways a server can make splitting unsafe.
///
/// Query: `id` names the file's request counter (each id counts on its own);
/// `validator=etag|last-modified|weak|none` picks the validators sent (default both a strong
/// ETag and Last-Modified); `ranges=ignore` answers every request with the whole file (200);
/// `change_after=K` makes the file another one (other bytes, ETag and Last-Modified) from the
/// (K+1)-th request of its id on, as a file replaced on the server between two segments;
/// `cut_once=1` makes the first request that starts past byte 0 end its connection halfway
/// through its body (once per id), as a connection lost mid-segment; `hold_at=B` makes a response
/// whose range starts at byte B send its head, then hold its body until another request of its
/// id arrives (at most ``holdLimit``), as a connection that stalls until an idle one takes the
/// back half of its range; `pace_ms=M` follows every 64 KiB of a body with a pause of M ms (at
/// most 1000), as a server that caps each connection's rate.
enum SplitEndpoints {
    /// The longest a `hold_at` response waits for the next request before it goes on anyway.
    static let holdLimit: TimeAmount = .seconds(30)

    /// What one id has seen, shared by every connection.
    struct Counter {
        /// Requests of the id so far.
        var requests = 0
        /// Whether its `cut_once` cut happened.
        var cut = false
        /// Body bytes handed to its connections, in all.
        var bytesSent = 0
    }

    private static let counters = NIOLockedValueBox<[String: Counter]>([:])

    /// The body bytes `/split/` responses of `id` have handed to their connections so far.
    static func bytesSent(id: String) -> Int { counters.withLockedValue { $0[id]?.bytesSent ?? 0 } }

    static func route(_ request: ServerRequest, length text: String) -> any RequestBodyConsumer {
        guard let length = DownloadEndpoints.parseLength(text) else { return DownloadEndpoints.badLength(text) }
        let id = request.queryValue("id") ?? "default"
        let changeAfter = request.queryInt("change_after")
        var outcome = DownloadEndpoints.evaluate(range: request.header("Range"), length: length)
        let startsPastZero: Bool
        if case .partial(let first, _) = outcome { startsPastZero = first > 0 } else { startsPastZero = false }
        let holdAt = request.queryInt("hold_at")
        let pace = request.queryInt("pace_ms").map { TimeAmount.milliseconds(Int64(min(max($0, 0), 1000))) }
        let (requestNumber, cuts) = counters.withLockedValue { counters -> (Int, Bool) in
            var entry = counters[id] ?? Counter()
            entry.requests += 1
            let cuts = request.queryValue("cut_once") == "1" && !entry.cut && startsPastZero
            if cuts { entry.cut = true }
            counters[id] = entry
            return (entry.requests, cuts)
        }
        let version = changeAfter.map { requestNumber > $0 ? 2 : 1 } ?? 1
        let etag = "\"split-\(length)-v\(version)\""
        let lastModified = "Thu, 0\(version) Jan 2026 00:00:00 GMT"
        var headers: [(name: String, value: String)] = [("Content-Type", "application/octet-stream")]
        switch request.queryValue("validator") ?? "both" {
        case "etag": headers.append(("ETag", etag))
        case "last-modified": headers.append(("Last-Modified", lastModified))
        case "weak": headers.append(("ETag", "W/\(etag)"))
        case "none": break
        default: headers += [("ETag", etag), ("Last-Modified", lastModified)]
        }
        if request.queryValue("ranges") == "ignore" {
            outcome = .full
        } else {
            headers.append(("Accept-Ranges", "bytes"))
        }
        if let condition = request.header("If-Range"), condition != etag, condition != lastModified {
            outcome = .full
        }
        let tape = PeriodicTape.seeded(UInt64(version))
        switch outcome {
        case .full:
            let whole = TapeSource(tape: tape, offset: 0, count: length, chunkSize: 64 * 1024)
            return DiscardingBody(
                .streamed(
                    ResponseHeadSpec(status: .ok, headers: headers), framing: .contentLength(length),
                    source: counted(pace.map { PacedSource(inner: whole, pause: $0) } ?? whole, id: id)))
        case .partial(let first, let last):
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(length)"))
            let count = last - first + 1
            var source: any ResponseBodySource =
                cuts
                ? CutSource(
                    inner: TapeSource(tape: tape, offset: first, count: count / 2, chunkSize: 16 * 1024), ending: .close
                )
                : TapeSource(tape: tape, offset: first, count: count, chunkSize: 64 * 1024)
            if let pace { source = PacedSource(inner: source, pause: pace) }
            if holdAt == first {
                source = StalledSource(
                    inner: source, until: .now() + holdLimit,
                    released: { counters.withLockedValue { ($0[id]?.requests ?? 0) > requestNumber } })
            }
            return DiscardingBody(
                .streamed(
                    ResponseHeadSpec(status: .partialContent, headers: headers), framing: .contentLength(count),
                    source: counted(source, id: id)))
        case .unsatisfiable:
            headers.append(("Content-Range", "bytes */\(length)"))
            return DiscardingBody(.empty(.rangeNotSatisfiable, headers: headers))
        }
    }
}

extension SplitEndpoints {
    /// `source`, with the bytes it hands out added to `id`'s ``Counter/bytesSent``.
    fileprivate static func counted(_ source: any ResponseBodySource, id: String) -> any ResponseBodySource {
        CountingSource(inner: source) { count in
            counters.withLockedValue { $0[id, default: Counter()].bytesSent += count }
        }
    }
}

extension TestServer {
    /// The body bytes `/split/` responses of `id` have handed to their connections
    /// (process-wide, like the request counts behind `change_after`).
    package func splitBytesSent(id: String) -> Int { SplitEndpoints.bytesSent(id: id) }
}

/// Another source's steps, each run of bytes told to `count` as it is handed out.
final class CountingSource: ResponseBodySource {
    private let inner: any ResponseBodySource
    private let count: (Int) -> Void

    init(inner: any ResponseBodySource, count: @escaping (Int) -> Void) {
        self.inner = inner
        self.count = count
    }

    func nextStep() -> BodyStep {
        let step = inner.nextStep()
        if case .bytes(let bytes) = step { count(bytes.readableBytes) }
        return step
    }
}

/// Another source's steps with a pause after each run of bytes: a server that caps its rate.
final class PacedSource: ResponseBodySource {
    private let inner: any ResponseBodySource
    private let pause: TimeAmount
    private var pausesNext = false

    init(inner: any ResponseBodySource, pause: TimeAmount) {
        self.inner = inner
        self.pause = pause
    }

    func nextStep() -> BodyStep {
        if pausesNext {
            pausesNext = false
            return .pause(pause)
        }
        let step = inner.nextStep()
        if case .bytes = step { pausesNext = true }
        return step
    }
}

/// Another source's steps once `released` says so or `until` has passed; until then the body
/// stalls, looked at again every few milliseconds.
final class StalledSource: ResponseBodySource {
    private let inner: any ResponseBodySource
    private let until: NIODeadline
    private let released: () -> Bool
    private var holding = true

    init(inner: any ResponseBodySource, until: NIODeadline, released: @escaping () -> Bool) {
        self.inner = inner
        self.until = until
        self.released = released
    }

    func nextStep() -> BodyStep {
        if holding, !released(), NIODeadline.now() < until { return .pause(.milliseconds(5)) }
        holding = false
        return inner.nextStep()
    }
}
