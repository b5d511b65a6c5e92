import NIOConcurrencyHelpers

/// The handle through which one exchange is stopped from outside the Swift task that runs it.
///
/// A ``SessionManager`` runs an awaited request on the caller's own Swift task rather than on a
/// task of its own, which saves a task and two thread hops per request. Stopping the session
/// task from elsewhere (``SessionTask/cancel()``, its deadline, ``SessionManager/shutdown()``)
/// must then stop the exchange without cancelling the caller's Swift task. Every transport makes
/// that possible by handing its cancel action to ``onCancel(_:)`` as soon as the exchange
/// exists, an action that stops the exchange up to the last byte of its response body; the
/// session calls it when the task is stopped.
///
/// A handle a session makes belongs to its task and costs no allocation; ``init()`` makes a
/// free-standing one for calling a transport directly, and ``none`` is one that nothing cancels.
public struct ExchangeCancellation: Sendable {
    private let target: (any ExchangeCancellationTarget)?

    init(target: (any ExchangeCancellationTarget)?) {
        self.target = target
    }

    /// A new handle, not cancelled yet, that ``cancel()`` triggers.
    public init() {
        self.init(target: ExchangeCancellationSource())
    }

    /// A handle that nothing cancels: the exchange stops only when its Swift task is cancelled.
    public static var none: ExchangeCancellation { ExchangeCancellation(target: nil) }

    /// Keeps `action` as the way to stop the exchange now in flight, replacing an earlier one;
    /// calls it at once, on this thread, when the handle is already cancelled. A transport calls
    /// this as soon as its exchange exists; `action` must be quick and must not block.
    public func onCancel(_ action: @escaping @Sendable () -> Void) {
        target?.register(cancelExchange: action)
    }

    /// Stops the exchange through the action its transport registered, now or as it registers.
    /// On a session task's handle, this cancels that task.
    public func cancel() {
        target?.cancel()
    }

    /// True once ``cancel()`` was called, or the session task that owns the handle is stopping.
    public var isCancelled: Bool {
        target?.isStopping ?? false
    }
}

/// What an ``ExchangeCancellation`` forwards to: a session task, or a free-standing source.
protocol ExchangeCancellationTarget: AnyObject, Sendable {
    func register(cancelExchange: @escaping @Sendable () -> Void)
    func cancel()
    var isStopping: Bool { get }
}

/// The target behind ``ExchangeCancellation/init()``.
private final class ExchangeCancellationSource: ExchangeCancellationTarget {
    private struct State {
        var isCancelled = false
        var cancelExchange: (@Sendable () -> Void)?
    }

    private let state = NIOLockedValueBox(State())

    func register(cancelExchange: @escaping @Sendable () -> Void) {
        let cancelled = state.withLockedValue { state -> Bool in
            if state.isCancelled { return true }
            state.cancelExchange = cancelExchange
            return false
        }
        if cancelled { cancelExchange() }
    }

    func cancel() {
        let action = state.withLockedValue { state -> (@Sendable () -> Void)? in
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            defer { state.cancelExchange = nil }
            return state.cancelExchange
        }
        // Outside the lock: the action may call back into the handle.
        action?()
    }

    var isStopping: Bool { state.withLockedValue { $0.isCancelled } }
}
