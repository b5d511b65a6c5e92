import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CourierCore

/// A slow consumer holds the server back: while nobody reads a streamed body, the server's
/// writes stop (TCP flow control), so what is in flight is bounded by socket buffers, not by the
/// body's size; reading again resumes them. Measured at the server, by the bytes its socket
/// took, never by timing.
@Suite("Session: stream(_:) under backpressure", .timeLimit(.minutes(3)))
struct StreamBackpressureTests {
    @Test("a consumer that stops reading pauses the server; reading on resumes it to the end")
    func slowConsumerPausesTheServer() async throws {
        let length = 256 << 20
        try await withPumpServer(bodyLength: length) { server, transport in
            let manager = SessionManager(transport: transport)
            let response = try await manager.stream(Request(url: server.url))
            var iterator = response.body.makeAsyncIterator()
            var received = try await iterator.next()?.readableBytes ?? 0
            let baseline = residentBytes()

            // The consumer now reads nothing. The server's socket takes bytes until the buffers
            // between it and the client are full, then its writes stall: wait (bounded) until
            // it has been unwritable with no progress across a few polls.
            let settled = await server.waitUntilStalled()
            let writtenWhilePaused = server.bytesWritten
            #expect(settled, "the server never stalled: it wrote \(writtenWhilePaused >> 20) MiB")
            // Kernel socket buffers (a few MiB on loopback) plus the transport's ~1 MiB read-ahead;
            // a client that buffered the body would let the server write all 256 MiB.
            #expect(
                writtenWhilePaused < 64 << 20, "the server wrote \(writtenWhilePaused >> 20) MiB to a paused reader")
            if let baseline, let now = residentBytes() {
                #expect(now - baseline < 64 << 20, "resident memory grew by \((now - baseline) >> 20) MiB while paused")
            }

            while let chunk = try await iterator.next() { received += chunk.readableBytes }
            #expect(received == length)
            // A write is counted when its promise completes on the server's loop, which can come
            // after the client has read the bytes: wait (bounded) for the count to catch up.
            let written = await server.waitUntilWritten(length)
            #expect(written == length)
        }
    }

    @Test("raising an exchange's read-ahead after the head lets the transport read on while nobody reads")
    func aRaisedReadAheadReadsOn() async throws {
        // A raise to 16 MiB, far short of the body, so the client holds at most that: other
        // suites measure the process's resident memory while this one runs beside them (a first
        // version that took in all 48 MiB pushed the 1 GiB stream test past its bound in CI).
        // The body is larger than anything the kernel may buffer on top: a 48 MiB body flaked on a
        // machine whose receive buffers grow to 32 MiB (net.ipv4.tcp_rmem), where 16 MiB of
        // read-ahead and the socket buffers together took in the whole body.
        let length = 128 << 20
        let raised = 16 << 20
        try await withPumpServer(bodyLength: length) { server, transport in
            let response = try await transport.send(
                Request(url: server.url), context: ExchangeContext(readAheadLimit: 1 << 20))
            #expect(await server.waitUntilStalled())
            let heldBack = server.bytesWritten
            #expect(heldBack < 24 << 20, "the server wrote \(heldBack >> 20) MiB under a 1 MiB read-ahead")

            // Still nobody reads: only the raise lets more in, and only up to the new limit.
            response.raiseReadAhead?(raised)
            let target = heldBack + raised / 2
            #expect(await server.waitUntilWritten(target) >= target)
            #expect(await server.waitUntilStalled())
            #expect(server.bytesWritten < length, "a raise to 16 MiB let the whole 128 MiB body in")

            var received = 0
            for try await chunk in response.body { received += chunk.readableBytes }
            #expect(received == length)
        }
    }

    /// Runs `body` against a fresh ``PumpServer`` and transport, and shuts both down after it,
    /// whether it threw or not.
    private func withPumpServer(
        bodyLength: Int, _ body: (PumpServer, AsyncHTTPClientTransport) async throws -> Void
    ) async throws {
        let server = try await PumpServer.start(bodyLength: bodyLength)
        let transport = AsyncHTTPClientTransport()
        do {
            try await body(server, transport)
        } catch {
            try? await transport.shutdown()
            try? await server.shutdown()
            throw error
        }
        try await transport.shutdown()
        try await server.shutdown()
    }
}

/// A loopback server that answers every request with a `bodyLength`-byte body, writing only
/// while its socket is writable and counting the bytes each write handed to the kernel.
final class PumpServer: Sendable {
    private let channel: any Channel
    private let counters: Counters

    final class Counters: Sendable {
        let written = NIOLockedValueBox(0)
        let writable = NIOLockedValueBox(true)
    }

    var url: URL {
        URL(string: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)/body") ?? URL(fileURLWithPath: "/")
    }
    var bytesWritten: Int { counters.written.withLockedValue { $0 } }

    private init(channel: any Channel, counters: Counters) {
        self.channel = channel
        self.counters = counters
    }

    static func start(bodyLength: Int) async throws -> PumpServer {
        let counters = Counters()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        PumpHandler(bodyLength: bodyLength, counters: counters))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return PumpServer(channel: channel, counters: counters)
    }

    /// Polls until the socket has been unwritable and the byte count unchanged for five polls in
    /// a row (50 ms apart), or 30 s have passed; returns whether it settled.
    func waitUntilStalled() async -> Bool {
        var unchanged = 0
        var last = -1
        for _ in 0..<600 {
            try? await Task.sleep(for: .milliseconds(50))
            let now = bytesWritten
            let writable = counters.writable.withLockedValue { $0 }
            unchanged = (now == last && !writable) ? unchanged + 1 : 0
            last = now
            if unchanged >= 5 { return true }
        }
        return false
    }

    /// Polls (50 ms apart, at most 30 s) until `count` bytes are counted as written; returns the count then.
    func waitUntilWritten(_ count: Int) async -> Int {
        for _ in 0..<600 where bytesWritten < count {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return bytesWritten
    }

    func shutdown() async throws { try await channel.close() }

    private final class PumpHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let bodyLength: Int
        let counters: Counters
        var queued = 0
        var started = false
        let chunk = ByteBuffer(repeating: 0x61, count: 64 * 1024)

        init(bodyLength: Int, counters: Counters) {
            self.bodyLength = bodyLength
            self.counters = counters
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            // One request per connection: any bytes start the answer.
            guard !started else { return }
            started = true
            let head =
                "HTTP/1.1 200 OK\r\nContent-Length: \(bodyLength)\r\nContent-Type: application/octet-stream\r\n\r\n"
            context.write(wrapOutboundOut(ByteBuffer(string: head)), promise: nil)
            pump(context: context)
        }

        func channelWritabilityChanged(context: ChannelHandlerContext) {
            counters.writable.withLockedValue { $0 = context.channel.isWritable }
            if context.channel.isWritable { pump(context: context) }
            context.fireChannelWritabilityChanged()
        }

        private func pump(context: ChannelHandlerContext) {
            while queued < bodyLength && context.channel.isWritable {
                let size = min(chunk.readableBytes, bodyLength - queued)
                queued += size
                let promise = context.eventLoop.makePromise(of: Void.self)
                let counters = self.counters
                promise.futureResult.whenSuccess { counters.written.withLockedValue { $0 += size } }
                context.writeAndFlush(wrapOutboundOut(chunk.getSlice(at: 0, length: size) ?? chunk), promise: promise)
            }
            counters.writable.withLockedValue { $0 = context.channel.isWritable }
        }
    }
}
