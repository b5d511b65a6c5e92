import NIOCore

/// `/fault/hold` and `/fault/release`: a body that stops part-way until the test lets it go, so
/// a test can prove that every byte sent before a stall reaches the reader during the stall.
extension FaultEndpoints {
    /// `/fault/hold?id=X&before=N&pause_ms=P&tail=T&total=M`: declares `total` bytes (default
    /// `before` + `tail` + 1000) of the alphabet tape; sends the first `before` (default 1 MiB) at
    /// full speed, then after `pause_ms` (default 0) the next `tail` (default 0), then nothing
    /// until `/fault/release?id=X` is asked for, and then the rest. After `max_ms` (see
    /// ``cap(_:)``) without a release the connection is cut instead.
    static func hold(_ request: ServerRequest) -> any RequestBodyConsumer {
        let id = request.queryValue("id") ?? "default"
        let before = max(0, request.queryInt("before") ?? 1 << 20)
        let tail = max(0, request.queryInt("tail") ?? 0)
        let pause = max(0, min(request.queryInt("pause_ms") ?? 0, 60_000))
        let total = max(before + tail, request.queryInt("total") ?? before + tail + 1000)
        let tape = { (offset: Int, count: Int) in
            TapeSource(tape: .alphabet, offset: offset, count: count, chunkSize: 64 * 1024)
        }
        let source = HeldSource(
            before: tape(0, before), pause: .milliseconds(Int64(pause)), tail: tape(before, tail),
            after: tape(before + tail, total - before - tail),
            isReleased: { [server = request.server] in server.isHoldReleased(id: id) },
            giveUpAt: .now() + cap(request))
        return DiscardingBody(
            .streamed(
                ResponseHeadSpec(status: .ok, headers: [("Content-Type", "application/octet-stream")]),
                framing: .contentLength(total), source: source))
    }

    /// `/fault/release?id=X`: lets the held body `id` go on; `{"released": "X"}`.
    static func release(_ request: ServerRequest) -> any RequestBodyConsumer {
        let id = request.queryValue("id") ?? "default"
        request.server.releaseHold(id: id)
        return DiscardingBody(.json(["released": .string(id)]))
    }
}

/// Sends `before`, waits `pause`, sends `tail`, then waits (checking every millisecond) until
/// `isReleased`, then sends `after`; cuts the connection at `giveUpAt` if still held.
final class HeldSource: ResponseBodySource {
    private enum Stage { case before, pause, tail, held, after }

    private let before: TapeSource
    private let pause: TimeAmount
    private let tail: TapeSource
    private let after: TapeSource
    private let isReleased: () -> Bool
    private let giveUpAt: NIODeadline
    private var stage = Stage.before

    init(
        before: TapeSource, pause: TimeAmount, tail: TapeSource, after: TapeSource,
        isReleased: @escaping () -> Bool, giveUpAt: NIODeadline
    ) {
        self.before = before
        self.pause = pause
        self.tail = tail
        self.after = after
        self.isReleased = isReleased
        self.giveUpAt = giveUpAt
    }

    func nextStep() -> BodyStep {
        while true {
            switch stage {
            case .before:
                if case .bytes(let slice) = before.nextStep() { return .bytes(slice) }
                stage = .pause
            case .pause:
                stage = .tail
                if pause > .zero { return .pause(pause) }
            case .tail:
                if case .bytes(let slice) = tail.nextStep() { return .bytes(slice) }
                stage = .held
            case .held:
                guard isReleased() else {
                    return NIODeadline.now() >= giveUpAt ? .abort(.close) : .pause(.milliseconds(1))
                }
                stage = .after
            case .after:
                return after.nextStep()
            }
        }
    }
}
