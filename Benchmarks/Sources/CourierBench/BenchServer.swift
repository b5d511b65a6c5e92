import Dispatch
import Foundation
import NIOCore
import NIOPosix

/// `courier-bench serve test --port-file PATH --sink-port-file PATH`: the loopback servers of a
/// benchmark run, each port written to its file once it listens, until SIGTERM or SIGINT. With
/// `--h2-port-file PATH --h2-stats-port-file PATH --h2-cert-dir DIR`, also the test server in
/// its HTTP/2 mode (see ``HTTP2Host``).
enum BenchServer {
    static func run(options: Options) async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let sink = try await DiscardingSink.start(group: group)
        let testServer = try await TestServerHost.start(portFile: options.string("port-file", default: ""))
        let http2Host = try await HTTP2Host.start(
            portFile: options.string("h2-port-file", default: ""),
            statsPortFile: options.string("h2-stats-port-file", default: ""),
            certificateDirectory: options.string("h2-cert-dir", default: ""))
        try String(sink.localAddress?.port ?? 0).write(
            toFile: options.string("sink-port-file"), atomically: true, encoding: .utf8)
        await waitForTermination()
        try await http2Host?.stop()
        try await testServer?.stop()
        try await sink.close()
    }

    private static func waitForTermination() async {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let queue = DispatchQueue(label: "courier-bench.signals")
        let latch = SignalLatch()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            latch.arm(
                continuation,
                sources: [SIGTERM, SIGINT].map { number in
                    let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                    source.setEventHandler { latch.fire() }
                    source.resume()
                    return source
                })
        }
    }
}

/// Resumes the waiting task once, on whichever signal comes first.
private final class SignalLatch: @unchecked Sendable {
    // Guarded by `lock`.
    private var continuation: CheckedContinuation<Void, Never>?
    private var fired = false
    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()

    func arm(_ continuation: CheckedContinuation<Void, Never>, sources: [any DispatchSourceSignal]) {
        lock.lock()
        self.sources = sources
        if fired {
            lock.unlock()
            continuation.resume()
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    func fire() {
        lock.lock()
        fired = true
        let pending = continuation
        continuation = nil
        lock.unlock()
        pending?.resume()
    }
}
