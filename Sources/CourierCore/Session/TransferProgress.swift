/// How far an upload or a download has come.
///
/// Reported values never decrease within a task and the last one equals the total: when the
/// total was unknown at the start, the final report states it.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes handed to the transport (uploads) or received (downloads) so far.
    public var completedUnitCount: Int64
    /// The expected byte count, from the body length or `Content-Length`; nil when unknown.
    public var totalUnitCount: Int64?

    /// Makes a progress value.
    public init(completedUnitCount: Int64, totalUnitCount: Int64?) {
        self.completedUnitCount = completedUnitCount
        self.totalUnitCount = totalUnitCount
    }

    /// `completed / total` in 0...1, or nil while the total is unknown.
    public var fractionCompleted: Double? {
        guard let total = totalUnitCount else { return nil }
        if total <= 0 { return 1 }
        return min(1, Double(completedUnitCount) / Double(total))
    }

    /// True once the completed count has reached a known total.
    public var isFinished: Bool {
        guard let total = totalUnitCount else { return false }
        return completedUnitCount >= total
    }
}

/// Receives progress reports; called on whatever thread moves the bytes (the session's task, or
/// the transport's event loop for uploads and for downloads whose file it writes), so keep it
/// quick and never block in it: on an event loop, `EventLoopFuture.wait()` and a synchronous
/// shutdown trap, and a slow handler delays every connection on that loop.
public typealias ProgressHandler = @Sendable (TransferProgress) -> Void

/// Keeps reported progress monotone: a resend after a redirect or retry starts counting again
/// from zero, and nothing is reported until it passes what was already reported.
struct ProgressTracker: Sendable {
    private(set) var current = TransferProgress(completedUnitCount: 0, totalUnitCount: nil)
    private var hasReported = false

    /// Returns the value to report, or nil when it would not move forward.
    mutating func advance(completed: Int64, total: Int64?) -> TransferProgress? {
        let next = TransferProgress(
            completedUnitCount: max(completed, hasReported ? current.completedUnitCount : 0),
            totalUnitCount: total ?? current.totalUnitCount)
        if hasReported && next == current { return nil }
        current = next
        hasReported = true
        return next
    }

    /// The closing report: completed equals total. Nil when that was already reported.
    mutating func finish() -> TransferProgress? {
        let total = max(current.completedUnitCount, current.totalUnitCount ?? current.completedUnitCount)
        let final = TransferProgress(completedUnitCount: total, totalUnitCount: total)
        if hasReported && final == current { return nil }
        current = final
        hasReported = true
        return final
    }
}
