import CourierCore
import NIOCore

extension Channel {
    /// Runs `body` on the channel's event loop: at once when already there (as a connection's
    /// debug initializer is, the usual case: no hop), else as a task.
    func runOnLoop(_ body: @escaping @Sendable () -> Void) -> EventLoopFuture<Void> {
        guard eventLoop.inEventLoop else { return eventLoop.submit(body) }
        body()
        return eventLoop.makeSucceededVoidFuture()
    }
}
