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
/// through its body (once per id), as a connection lost mid-segment.
enum SplitEndpoints {
    /// The requests each id has had, and whether its cut happened; shared by every connection.
    private static let counters = NIOLockedValueBox<[String: (requests: Int, cut: Bool)]>([:])

    static func route(_ request: ServerRequest, length text: String) -> any RequestBodyConsumer {
        guard let length = DownloadEndpoints.parseLength(text) else { return DownloadEndpoints.badLength(text) }
        let id = request.queryValue("id") ?? "default"
        let changeAfter = request.queryInt("change_after")
        var outcome = DownloadEndpoints.evaluate(range: request.header("Range"), length: length)
        let startsPastZero: Bool
        if case .partial(let first, _) = outcome { startsPastZero = first > 0 } else { startsPastZero = false }
        let (count, cuts) = counters.withLockedValue { counters -> (Int, Bool) in
            var entry = counters[id] ?? (0, false)
            entry.requests += 1
            let cuts = request.queryValue("cut_once") == "1" && !entry.cut && startsPastZero
            if cuts { entry.cut = true }
            counters[id] = entry
            return (entry.requests, cuts)
        }
        let version = changeAfter.map { count > $0 ? 2 : 1 } ?? 1
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
            return DiscardingBody(
                .streamed(
                    ResponseHeadSpec(status: .ok, headers: headers), framing: .contentLength(length),
                    source: TapeSource(tape: tape, offset: 0, count: length, chunkSize: 64 * 1024)))
        case .partial(let first, let last):
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(length)"))
            let count = last - first + 1
            let source: any ResponseBodySource =
                cuts
                ? CutSource(
                    inner: TapeSource(tape: tape, offset: first, count: count / 2, chunkSize: 16 * 1024), ending: .close
                )
                : TapeSource(tape: tape, offset: first, count: count, chunkSize: 64 * 1024)
            return DiscardingBody(
                .streamed(
                    ResponseHeadSpec(status: .partialContent, headers: headers), framing: .contentLength(count),
                    source: source))
        case .unsatisfiable:
            headers.append(("Content-Range", "bytes */\(length)"))
            return DiscardingBody(.empty(.rangeNotSatisfiable, headers: headers))
        }
    }
}
