import Dispatch
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGINT and SIGTERM while a request runs: the first one runs the exchange's handler (keep
/// what a download has, cancel the transfer) so the command can end in order and exit 130 or
/// 143; a second one, or one that arrives with no handler set, removes the scratch
/// directories and exits at once. The default actions would kill the process mid-write and
/// leave its temporary files behind.
final class InterruptWatch: @unchecked Sendable {
    private struct State {
        var received: Int32?
        var handler: (@Sendable (Int32) -> Void)?
        var scratchDirectories: [URL] = []
    }

    private let state = NIOLockedValueBox(State())
    // Unchecked Sendable for this alone: the sources are set once in init, never touched again
    // (dispatch sources are thread-safe), and kept only so that they stay alive.
    private let sources: [any DispatchSourceSignal]
    private static let queue = DispatchQueue(label: "courier.signals")

    /// Starts watching SIGINT and SIGTERM in place of their default actions.
    init() {
        let state = self.state
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: Self.queue)
            source.setEventHandler { Self.deliver(number, state: state) }
            source.resume()
            return source
        }
    }

    /// The signal received, if any.
    var received: Int32? { state.withLockedValue { $0.received } }

    /// The exit status for the signal received: 130 for SIGINT, 143 for SIGTERM (128 + its number).
    var exitStatus: Int32? { received.map { 128 + $0 } }

    /// Runs `handler` on the first signal (on the watch's queue), instead of exiting.
    func onInterrupt(_ handler: @escaping @Sendable (Int32) -> Void) {
        state.withLockedValue { $0.handler = handler }
    }

    /// A directory to remove when a signal ends the process at once.
    func removesOnExit(_ directory: URL) {
        state.withLockedValue { $0.scratchDirectories.append(directory) }
    }

    private static func deliver(_ number: Int32, state: NIOLockedValueBox<State>) {
        let (handler, directories) = state.withLockedValue { state -> ((@Sendable (Int32) -> Void)?, [URL]) in
            if state.received == nil {
                state.received = number
                return (state.handler, state.scratchDirectories)
            }
            return (nil, state.scratchDirectories)
        }
        if let handler {
            handler(number)
            return
        }
        for directory in directories { try? FileManager.default.removeItem(at: directory) }
        StandardStreams.writeError("\ncourier: interrupted\n")
        _exit(128 + number)
    }
}
