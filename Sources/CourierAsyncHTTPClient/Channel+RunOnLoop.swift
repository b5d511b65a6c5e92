import CourierCore
import NIOCore

extension Channel {
    /// Runs `body` on the channel's event loop, then `next` (an initializer installed before this
    /// one) there: at once when already there (as a connection's debug initializer is, the usual
    /// case: no hop, and no futures chained, which cost a promise, a future and a callback for each
    /// HTTP/2 stream), else as a task.
    func runOnLoop(
        then next: (@Sendable (any Channel) -> EventLoopFuture<Void>)? = nil,
        _ body: @escaping @Sendable () -> Void
    ) -> EventLoopFuture<Void> {
        guard eventLoop.inEventLoop else { return eventLoop.flatSubmit { self.runOnLoop(then: next, body) } }
        body()
        return next?(self) ?? eventLoop.makeSucceededVoidFuture()
    }
}
