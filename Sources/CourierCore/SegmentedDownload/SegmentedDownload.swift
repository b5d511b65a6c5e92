import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// One download over several ranged requests at once, each writing its bytes at their offset in
/// one file (see ``SessionManager/download(_:to:connections:partialFile:options:progress:)``).
///
/// Every request goes through the session's one path (``SessionManager/stream(_:overrides:uploadProgress:)``: redirects,
/// the interceptor, hooks, the transport's pool). The first asks for `bytes=0-`: a `206` with a
/// length and a strong validator splits the rest among the other connections while its own body
/// goes on filling the first segment; anything else (a `200`, no length, no validator, a content
/// coding) is written whole from that one response, as a plain download is.
///
/// Each segment writes through a descriptor of its own, positioned at its offset, so the
/// transport's event-loop file writer (``ResponseBodyFile``) writes it as it writes any download:
/// no copy to another thread, memory of one chunk per connection.
final class SegmentedDownload: Sendable {
    /// A segment that fails this many times in a row without a byte of progress fails the download.
    static let attemptsWithoutProgress = 3

    let session: SessionManager
    let request: Request
    let file: URL
    let connections: Int
    let record: URL?
    private let progress: ProgressHandler?
    private let state: NIOLockedValueBox<State>

    private struct State {
        var plan: SegmentPlan?
        var tracker = ProgressTracker()
        /// A segment showed another representation than the first response.
        var changed = false
    }

    /// A download of `request` into `file` over at most `connections` requests at once; `record`
    /// is where its resume record goes (nil: a failure keeps nothing).
    init(
        session: SessionManager, request: Request, file: URL, connections: Int, record: URL?,
        progress: ProgressHandler?
    ) {
        self.session = session
        self.request = request
        self.file = file
        self.connections = connections
        self.record = record
        self.progress = progress
        self.state = NIOLockedValueBox(State())
    }

    /// Fetches the whole representation into ``file``, continuing `leftOver` (a resume record's
    /// representation and missing ranges) when given; returns the head of the first response.
    /// - Throws: ``CourierError``: the first segment's failure after its retries, cancellation,
    ///   or `.downloadFailed` when a segment shows another representation than the first.
    func run(continuing leftOver: (RangedRepresentation, [Range<Int64>])?) async throws -> StreamedResponse {
        if let (representation, missing) = leftOver {
            let plan = SegmentPlan(length: representation.length, missing: missing)
            state.withLockedValue { $0.plan = plan }
            report()
            // The first missing range, or the last byte when none is: its answer shows whether the
            // file is still the one the record describes.
            let probe = plan.missing.first ?? (representation.length - 1)..<representation.length
            let first = try await session.stream(representation.request(request, for: probe))
            do {
                try representation.check(first.head, requested: probe, url: request.url)
            } catch {
                discardLeftOver()
                throw error
            }
            if plan.isComplete {
                if let record { ResumeRecord.remove(at: record) }
                report(finishing: true)
                return first
            }
            try await fetchAll(representation, url: first.request.url, first: first)
            return first
        }
        var opening = request
        opening.headerFields[.range] = "bytes=0-"
        opening.headerFields[.acceptEncoding] = "identity"
        let first = try await session.stream(opening)
        guard let representation = RangedRepresentation(first: first.head) else {
            try await writeWhole(first)
            return first
        }
        try prepareFile(truncating: true)
        let plan = SegmentPlan(length: representation.length, count: connections)
        state.withLockedValue { $0.plan = plan }
        try storeRecord(representation)
        try await fetchAll(representation, url: first.request.url, first: first)
        return first
    }

    /// Fetches every missing range with up to ``connections`` workers; the first worker takes
    /// over `first`, the body of the first request, which fills segment 0 (the plan's segments
    /// are in file order, and the first request asked for the first of them).
    private func fetchAll(_ representation: RangedRepresentation, url: URL, first: StreamedResponse) async throws {
        var retargeted = request
        retargeted.url = url
        let target = retargeted
        let starts: [Int] = state.withLockedValue { state in
            state.plan?.start(0)
            var starts = [0]
            while starts.count < connections, let next = state.plan?.assign() { starts.append(next) }
            return starts
        }
        // The record is refreshed once a second by a task of its own, not by the event loop that
        // writes the segments (a file write and rename there would hold up its connections), and
        // that task has ended before the download's last word on the record (kept or removed).
        let recorder =
            record == nil
            ? nil
            : Task {
                while (try? await Task.sleep(for: .seconds(1))) != nil { try? self.storeRecord(representation) }
            }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (worker, index) in starts.enumerated() {
                    let body = worker == 0 ? first : nil
                    group.addTask { try await self.work(from: index, body: body, representation, target) }
                }
                try await group.waitForAll()
            }
            recorder?.cancel()
            await recorder?.value
        } catch {
            recorder?.cancel()
            await recorder?.value
            if state.withLockedValue({ $0.changed }) {
                discardLeftOver()
            } else {
                try? storeRecord(representation)
            }
            throw error
        }
        if let record { ResumeRecord.remove(at: record) }
        report(finishing: true)
    }

    /// Removes the file and its record: their bytes belong to a representation the server no
    /// longer has, so the next attempt starts over.
    private func discardLeftOver() {
        guard let record else { return }
        ResumeRecord.remove(at: record)
        unlink(file.path)
    }

    /// One connection's work: its segment, then whatever ``SegmentPlan/assign()`` gives it next.
    private func work(
        from index: Int, body: StreamedResponse?, _ representation: RangedRepresentation, _ target: Request
    ) async throws {
        var current: Int? = index
        var body = body
        while let segment = current {
            defer { body = nil }
            do {
                try await fetch(segment, opened: body, representation, target)
            } catch {
                state.withLockedValue { $0.plan?.release(segment) }
                throw error
            }
            current = state.withLockedValue { state in
                state.plan?.release(segment)
                return state.plan?.assign()
            }
        }
    }

    /// Fetches segment `index` to its end, retrying from where it got to after a transport
    /// failure; a response that shows another representation is not retried.
    private func fetch(
        _ index: Int, opened: StreamedResponse?, _ representation: RangedRepresentation, _ target: Request
    ) async throws {
        var response = opened
        var failures = 0
        while let range = state.withLockedValue({ $0.plan?.segments[index] }).map({ $0.position..<$0.end }),
            !range.isEmpty
        {
            try Task.checkCancellation()
            do {
                let answer: StreamedResponse
                if let response {
                    answer = response
                } else {
                    answer = try await session.stream(representation.request(target, for: range))
                    do {
                        try representation.check(answer.head, requested: range, url: target.url)
                    } catch {
                        state.withLockedValue { $0.changed = true }
                        throw error
                    }
                }
                response = nil
                try await write(answer.body.chunks, from: range.lowerBound) { size in
                    self.didWrite(index, at: size)
                }
                let (after, remaining) = state.withLockedValue { state in
                    (
                        state.plan?.segments[index].position ?? range.lowerBound,
                        state.plan?.segments[index].remaining ?? 0
                    )
                }
                if remaining > 0 {
                    // Retried as a lost connection is: the next request starts where this one stopped.
                    throw CourierError(
                        .connectionFailed,
                        "the response for bytes \(range.lowerBound)-\(range.upperBound - 1) of \(target.url.absoluteString) ended at byte \(after)",
                        offendingInput: target.url.absoluteString, response: answer.head)
                }
            } catch let error as CourierError where Self.retries(error) {
                response = nil
                let moved = state.withLockedValue { $0.plan?.segments[index].position ?? 0 } > range.lowerBound
                failures = moved ? 1 : failures + 1
                if failures >= Self.attemptsWithoutProgress { throw error }
            }
        }
    }

    /// Whether a segment's failure is worth another request: a lost connection or a short
    /// body, not a changed representation, a cancellation, a timeout, or a failed write.
    private static func retries(_ error: CourierError) -> Bool {
        error.code == .connectionFailed || error.code == .transportFailed
    }

    /// Writes `chunks` at `offset` onwards until they end or `keepsGoing` (told the file's size
    /// after each write) says the segment is whole; hands the file to the transport's
    /// event-loop writer when the body offers one and the first write kept up.
    private func write(_ chunks: BodyChunks, from offset: Int64, keepsGoing: @escaping @Sendable (Int64) -> Bool)
        async throws
    {
        let file = try DownloadFile(segmentOf: self.file, at: offset)
        defer { file.closeDescriptor() }
        var iterator = chunks.makeAsyncIterator()
        var writer = chunks.fileWriter
        while let chunk = try await iterator.next() {
            let started = writer == nil ? nil : NIODeadline.now()
            try file.write(chunk)
            let keptUp = started.map { NIODeadline.now() - $0 < ResponseBodyFile.stallLimit } ?? false
            // Past the segment's end (an idle connection took its back half): the rest is dropped,
            // which cancels the exchange.
            guard keepsGoing(file.bytesWritten) else { return }
            if let handing = writer {
                writer = nil
                guard keptUp else { continue }
                try await handing.writeRemainingBody(to: ResponseBodyFile(file: file, didWrite: keepsGoing))
                guard keepsGoing(file.bytesWritten) else { return }
            }
        }
    }

    /// After a write of segment `index` reached `size`: advances the plan (which the record
    /// follows, so a killed process keeps never more than is written), reports progress, and
    /// says whether the segment goes on.
    private func didWrite(_ index: Int, at size: Int64) -> Bool {
        let goesOn = state.withLockedValue { $0.plan?.advance(index, to: size) ?? false }
        report()
        return goesOn && !Task.isCancelled
    }

    /// Reports the plan's completed bytes to the progress handler, when they moved.
    private func report(finishing: Bool = false) {
        let next = state.withLockedValue { state -> TransferProgress? in
            guard let plan = state.plan else { return nil }
            if finishing { return state.tracker.finish() }
            return state.tracker.advance(completed: plan.completed, total: plan.length)
        }
        if let next { progress?(next) }
    }

    /// The whole body of a response that cannot be split (no ranges, no length, no validator, a
    /// content coding), over its one connection, with the validators recorded as a plain
    /// resumable download records them.
    /// - Throws: ``CourierError`` `.downloadFailed` for a status outside 2xx or a partial range.
    private func writeWhole(_ response: StreamedResponse) async throws {
        let head = response.head
        let url = response.request.url
        if head.statusCode == 206 {
            let range = head.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init)
            guard case .satisfied(0, let last, let length) = range, length.map({ $0 == last + 1 }) ?? false else {
                throw CourierError(
                    .downloadFailed, "\(url.absoluteString) answered bytes=0- with only part of the file",
                    offendingInput: url.absoluteString, response: head)
            }
        } else if !(200...299).contains(head.statusCode) {
            throw CourierError(
                .downloadFailed, "\(url.absoluteString) answered \(head.statusCode)",
                offendingInput: url.absoluteString, response: head)
        }
        try prepareFile(truncating: true)
        if let record {
            let resumable = !head.hasContentCoding
            if resumable, let kept = ResumeRecord(from: head, url: url) {
                try kept.write(to: record)
            } else {
                ResumeRecord.remove(at: record)
            }
        }
        let total = head.hasContentCoding ? nil : head.expectedContentLength
        let tracker = NIOLockedValueBox(ProgressTracker())
        let progress = progress
        try await write(response.body.chunks, from: 0) { size in
            if let next = tracker.withLockedValue({ $0.advance(completed: size, total: total) }) { progress?(next) }
            return !Task.isCancelled
        }
        try Task.checkCancellation()
        if let record { ResumeRecord.remove(at: record) }
        if let last = tracker.withLockedValue({ $0.finish() }) { progress?(last) }
    }

    /// Creates ``file`` (private, 0600) or empties it.
    private func prepareFile(truncating: Bool) throws {
        let file = try DownloadFile(
            directory: self.file.deletingLastPathComponent(), appendingTo: self.file, truncating: truncating)
        file.closeDescriptor()
    }

    /// Writes the plan's missing ranges with the representation to the resume record.
    private func storeRecord(_ representation: RangedRepresentation) throws {
        guard let record, let missing = state.withLockedValue({ $0.plan?.missing }),
            var kept = ResumeRecord(
                url: request.url, entityTag: representation.entityTag, lastModified: representation.lastModified)
        else { return }
        kept.split(length: representation.length, missing: missing)
        try kept.write(to: record)
    }
}
