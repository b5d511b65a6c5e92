import Foundation
import HTTPTypes

/// The representation a split download assembles: its length and the validator every segment's
/// request sends in `If-Range`, so that a server whose file changed answers a segment with a
/// `200` (the whole new file) rather than a range of the new bytes; either way the segment is
/// refused (``check(_:requested:url:)``), and the file is never spliced from two versions.
struct RangedRepresentation: Sendable, Hashable {
    /// The complete length, from the first `Content-Range`.
    let length: Int64
    /// The strong `ETag` of the first response, if it had one.
    let entityTag: String?
    /// The `Last-Modified` of the first response, if it had one.
    let lastModified: String?

    /// What `If-Range` carries: the strong ETag, else Last-Modified (RFC 9110 §13.1.5).
    var validator: String {
        entityTag ?? lastModified ?? ""
    }

    /// The representation a first response (to `Range: bytes=0-`) describes, or nil when it
    /// cannot be split: not a `206` from byte 0 with a known length, a body in a content coding
    /// (the ranges would count coded bytes), or no strong validator (nothing would tell two
    /// versions apart).
    init?(first head: ResponseHead) {
        guard head.statusCode == 206, !head.hasContentCoding,
            let value = head.value(forHTTPHeaderField: "Content-Range"),
            case .satisfied(let first, let last, let length?) = ContentRange(value), first == 0, last == length - 1
        else { return nil }
        let tag = head.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
        let modified = head.value(forHTTPHeaderField: "Last-Modified")
        guard tag != nil || modified != nil else { return nil }
        self.init(length: length, entityTag: tag, lastModified: modified)
    }

    /// A representation known from a resume record.
    init(length: Int64, entityTag: String?, lastModified: String?) {
        self.length = length
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// `request` asking for `range` of this representation, if it is still the same one.
    func request(_ request: Request, for range: Range<Int64>) -> Request {
        var ranged = request
        ranged.headerFields[.range] = "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
        ranged.headerFields[.ifRange] = validator
        ranged.headerFields[.acceptEncoding] = "identity"
        return ranged
    }

    /// Checks that `head` answers `range` of this very representation: a `206` whose
    /// `Content-Range` starts at the range's start, covers no byte past the file, states the
    /// same length, and whose validators, when sent, are the same.
    /// - Throws: ``CourierError`` `.downloadFailed` naming what differs (a `200` means the
    ///   server's file changed, or it stopped honouring ranges).
    func check(_ head: ResponseHead, requested range: Range<Int64>, url: URL) throws {
        let value = head.value(forHTTPHeaderField: "Content-Range")
        func refuse(_ why: String) -> CourierError {
            CourierError(
                .downloadFailed,
                "the split download of \(url.absoluteString) stopped: asked for bytes \(range.lowerBound)-\(range.upperBound - 1), \(why); no bytes of it were written",
                offendingInput: value ?? "\(head.statusCode)", response: head)
        }
        guard head.statusCode == 206 else {
            throw refuse(
                head.statusCode == 200
                    ? "the server sent the whole file (200): it changed since the first segment, or ignores ranges now"
                    : "the server answered \(head.statusCode)")
        }
        guard !head.hasContentCoding else { throw refuse("the server answered in a content coding") }
        guard let value, case .satisfied(let first, _, let total?) = ContentRange(value), first == range.lowerBound
        else { throw refuse("the server answered Content-Range: \(value ?? "(none)")") }
        guard total == length else {
            throw refuse("the file is now \(total) bytes, not \(length): it changed since the first segment")
        }
        if let entityTag, let sent = head.value(forHTTPHeaderField: "ETag"), sent != entityTag {
            throw refuse("its ETag is now \(sent), not \(entityTag): it changed since the first segment")
        }
        if entityTag == nil, let lastModified, let sent = head.value(forHTTPHeaderField: "Last-Modified"),
            sent != lastModified
        {
            throw refuse("its Last-Modified is now \(sent), not \(lastModified): it changed since the first segment")
        }
    }
}
