/// Which bytes of a split download each connection fetches, and what is still missing.
///
/// A segment is a half-open byte range `position..<end`: `position` moves up as its bytes are
/// written, `end` moves down when an idle connection takes the back half of it. A connection
/// that finishes its own segment takes a fresh one if any is left, else halves the segment with
/// the most bytes to go (aria2 and axel split the same way), so a slow connection never holds
/// the last megabytes alone. Pieces smaller than ``minimumPiece`` are not split further: a new
/// request costs a round trip, more than such a piece takes to arrive.
struct SegmentPlan: Sendable, Hashable {
    /// One range of the file and whether a connection is fetching it.
    struct Segment: Sendable, Hashable {
        /// The first byte not yet written.
        var position: Int64
        /// One past the last byte this segment covers.
        var end: Int64
        /// A connection is fetching it.
        var busy: Bool

        /// Bytes still to write.
        var remaining: Int64 { max(0, end - position) }
    }

    /// The smallest back half worth a request of its own.
    static let minimumPiece: Int64 = 1 << 20

    /// The representation's length.
    let length: Int64
    /// Every segment, finished ones included, in no particular order.
    private(set) var segments: [Segment]

    /// A plan for `length` bytes in `count` equal segments (at least one; none under
    /// ``minimumPiece`` unless the file is smaller). Segment 0 starts at byte 0.
    init(length: Int64, count: Int) {
        self.length = length
        let pieces = Int64(max(1, min(Int64(count), length / Self.minimumPiece)))
        let size = length / pieces
        segments = (0..<pieces).map { index in
            let start = index * size
            return Segment(position: start, end: index == pieces - 1 ? length : start + size, busy: false)
        }
    }

    /// A plan that continues the `missing` ranges of a file of `length` bytes (a resumed
    /// download), each range a segment, in file order; ranges outside the file are clipped.
    init(length: Int64, missing: [Range<Int64>]) {
        self.length = length
        segments = missing.sorted { $0.lowerBound < $1.lowerBound }.compactMap { range in
            let start = max(0, range.lowerBound)
            let end = min(length, range.upperBound)
            return start < end ? Segment(position: start, end: end, busy: false) : nil
        }
    }

    /// Bytes written so far.
    var completed: Int64 { length - segments.reduce(0) { $0 + $1.remaining } }

    /// Whether every byte is written.
    var isComplete: Bool { segments.allSatisfy { $0.remaining == 0 } }

    /// The ranges still missing, for the resume record; in file order.
    var missing: [Range<Int64>] {
        segments.filter { $0.remaining > 0 }.map { $0.position..<$0.end }.sorted { $0.lowerBound < $1.lowerBound }
    }

    /// Marks segment `index` busy for a connection that starts it (the first request does so
    /// for the segment at byte 0).
    mutating func start(_ index: Int) {
        segments[index].busy = true
    }

    /// The next segment for an idle connection, marked busy: a segment nobody fetches, else the
    /// back half of the busy segment with the most to go; nil when nothing is worth a request.
    mutating func assign() -> Int? {
        if let idle = segments.indices.first(where: { !segments[$0].busy && segments[$0].remaining > 0 }) {
            segments[idle].busy = true
            return idle
        }
        guard
            let largest = segments.indices.filter({ segments[$0].busy }).max(by: {
                segments[$0].remaining < segments[$1].remaining
            }),
            segments[largest].remaining >= 2 * Self.minimumPiece
        else { return nil }
        let middle = segments[largest].position + segments[largest].remaining / 2
        segments.append(Segment(position: middle, end: segments[largest].end, busy: true))
        segments[largest].end = middle
        return segments.count - 1
    }

    /// Records that segment `index` has its bytes up to `position` (at most its end) and says
    /// whether its connection should go on (bytes remain).
    mutating func advance(_ index: Int, to position: Int64) -> Bool {
        segments[index].position = max(segments[index].position, min(position, segments[index].end))
        return segments[index].remaining > 0
    }

    /// The connection of segment `index` stopped (finished, or failed and will not retry).
    mutating func release(_ index: Int) {
        segments[index].busy = false
    }
}
