import CourierCore
import NIOCore

extension Channel {
    /// Runs `install` with the channel on its event loop: at once when already there (as a debug
    /// initializer is, the usual case: no hop, and a static function passed costs no
    /// allocation), else as a task.
    func runOnLoop(_ install: @escaping @Sendable (any Channel) -> Void) -> EventLoopFuture<Void> {
        guard eventLoop.inEventLoop else { return eventLoop.submit { install(self) } }
        install(self)
        return eventLoop.makeSucceededVoidFuture()
    }
}
