/// Where a transport registers how to cancel the exchange it is running, when the Swift task
/// that runs it cannot be cancelled on its own.
///
/// A session task started by one of the async forms (`SessionManager.data(for:)`) may run its
/// transfer on the caller's own Swift task instead of a task of its own, which saves a task and
/// two thread hops per request. Cancelling that task from elsewhere (``SessionTask/cancel()``,
/// the task's deadline, `shutdown()`) must then stop the exchange without cancelling the
/// caller's Swift task; the transport makes that possible by handing its cancel action to the
/// scope in ``ExchangeCancellation/scope`` as soon as the exchange exists (the session binds it around
/// the send only).
protocol ExchangeCancellationScope: AnyObject, Sendable {
    /// Keeps `cancelExchange` as the way to stop the exchange now in flight (replacing an earlier
    /// one), or calls it at once when the scope is already cancelled.
    func register(cancelExchange: @escaping @Sendable () -> Void)
}

/// The scope of the transfer running on the current Swift task, if it needs one.
enum ExchangeCancellation {
    @TaskLocal static var scope: (any ExchangeCancellationScope)?
}
