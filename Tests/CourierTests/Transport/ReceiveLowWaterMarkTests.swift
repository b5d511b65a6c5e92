import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOPosix
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Transport: the receive low-water mark for large bodies", .timeLimit(.minutes(2)))
struct ReceiveLowWaterMarkTests {
    static let raised = ReceiveLowWaterMark.raisedMark
    static let fast = ReceiveLowWaterMark.fastRead

    // MARK: The handler on an EmbeddedChannel, without a network

    @Test("raised only after a fast read of a body with a declared length, never above what is due")
    func raisedForFastBodiesOfKnownLength() throws {
        let socket = try MarkedChannel()
        try socket.head(declaredLength: 8 << 20)
        #expect(try socket.body(2048) == 1)  // a small read: the mark stays
        #expect(try socket.body(Self.fast) == Self.raised)
        #expect(try socket.body(Self.fast) == Self.raised)
        // Near the end the mark follows the bytes still due, down to the last one.
        let due = (8 << 20) - 2048 - 2 * Self.fast
        #expect(try socket.body(due - 1000) == 1000)
        #expect(try socket.body(999) == 1)
        #expect(try socket.body(1) == 1)
        #expect(try socket.end() == 1)
        try socket.finish()
    }

    @Test(
        "never raised without a declared length, and dropped before the end is passed on",
        arguments: [nil, 100] as [Int?])
    func noLengthOrSmallBody(length: Int?) throws {
        let socket = try MarkedChannel()
        try socket.head(declaredLength: length)
        #expect(try socket.body(Self.fast * 4) == 1)
        #expect(try socket.end() == 1)
        try socket.finish()
    }

    @Test("a response that ends early (a HEAD, an error) leaves the mark at 1 for the next one")
    func endWhileRaised() throws {
        let socket = try MarkedChannel()
        try socket.head(declaredLength: 100 << 20)
        #expect(try socket.body(Self.fast) == Self.raised)
        #expect(try socket.end() == 1)
        try socket.head(declaredLength: 10)
        #expect(try socket.body(10) == 1)
        try socket.finish()
    }

    @Test("a stall check drops a mark that saw no read, keeps one that did, and a small read does not raise it again")
    func stallChecks() throws {
        let socket = try MarkedChannel()
        try socket.head(declaredLength: 100 << 20)
        #expect(try socket.body(Self.fast) == Self.raised)
        #expect(try socket.stallCheck() == Self.raised)  // a part arrived since the mark was raised
        #expect(try socket.stallCheck() == 1)  // none since the last check: dropped
        #expect(try socket.stallCheck() == 1)
        #expect(try socket.body(100) == 1)  // a trickle keeps it down
        #expect(try socket.body(Self.fast) == Self.raised)  // fast again
        try socket.finish()
    }

    @Test(
        "a mark the socket refuses is not taken: a refused raise leaves 1, a refused drop stays watched and is tried again"
    )
    func refusedMarks() throws {
        let refusals = Refusals()
        let socket = try MarkedChannel(refusals: refusals)
        try socket.head(declaredLength: 100 << 20)
        refusals.values = [Self.raised]
        #expect(try socket.body(Self.fast) == 1)
        #expect(try socket.stallCheck() == 1)
        refusals.values = [1]
        #expect(try socket.body(Self.fast) == Self.raised)
        #expect(try socket.stallCheck() == Self.raised)  // a part arrived: kept
        #expect(try socket.stallCheck() == Self.raised)  // stalled, but the drop is refused
        refusals.values = []
        #expect(try socket.stallCheck() == 1)  // still watched: the next check drops it
        try socket.finish()
    }

    @Test("the declared length: one Content-Length and no transfer coding")
    func declaredLength() {
        func head(_ fields: [(String, String)]) -> HTTPResponseHead {
            HTTPResponseHead(version: .http1_1, status: .ok, headers: HTTPHeaders(fields))
        }
        typealias Handler = ReceiveLowWaterMark
        #expect(Handler.declaredLength(of: head([("Content-Length", "123")])) == 123)
        #expect(Handler.declaredLength(of: head([])) == nil)
        #expect(Handler.declaredLength(of: head([("Content-Length", "0")])) == nil)
        #expect(Handler.declaredLength(of: head([("Content-Length", "x")])) == nil)
        #expect(Handler.declaredLength(of: head([("Content-Length", "5"), ("Content-Length", "5")])) == nil)
        #expect(
            Handler.declaredLength(of: head([("Content-Length", "5"), ("Transfer-Encoding", "chunked")])) == nil)
    }

    @Test(
        "Linux releases from 4.18 on wake a reader when the mark drops",
        arguments: [
            ("6.18.44-fc-v657", true), ("4.18.0-553.el8_10.x86_64", true), ("5.4.0-1", true),
            ("4.15.0-213-generic", false), ("3.10.0-1160.el7", false), ("", false), ("x", false),
        ])
    func kernelReleases(release: String, supported: Bool) {
        #expect(ReceiveLowWaterMark.kernelReleaseSupportsMarks(release) == supported)
    }

    @Test(
        "installed after the response decoder of a plain HTTP/1.1 connection, unless turned off",
        arguments: [true, false])
    func installedUnlessTurnedOff(raising: Bool) throws {
        var settings = AsyncHTTPClientTransport.Configuration()
        settings.raisesReceiveLowWaterMark = raising
        let configuration = settings.makeClientConfiguration(connectionLedger: ConnectionLedger())
        let channel = EmbeddedChannel()
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(HTTPRequestEncoder())
        try sync.addHandler(ByteToMessageHandler(HTTPResponseDecoder()))
        let initializer = try #require(configuration.http1_1ConnectionDebugInitializer)
        try initializer(channel).wait()
        let installed = (try? sync.handler(type: ReceiveLowWaterMark.self)) != nil
        #expect(installed == (raising && ReceiveLowWaterMark.isSupported))
        _ = try channel.finish()
    }

    // MARK: On a real socket

    #if os(Linux)
        @Test("on a socket: raised during a large body, never above what is due, back to 1 for the next response")
        func marksOnARealSocket() async throws {
            try #require(ReceiveLowWaterMark.isSupported)
            let server = try await TestServer.start()
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            do {
                let recorder = MarkRecorder()
                let channel = try await ClientBootstrap(group: group)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            let sync = channel.pipeline.syncOperations
                            try sync.addHandler(HTTPRequestEncoder())
                            try sync.addHandler(ByteToMessageHandler(HTTPResponseDecoder()))
                            try sync.addHandler(ReceiveLowWaterMark())
                            try sync.addHandler(recorder)
                        }
                    }
                    .connect(host: "127.0.0.1", port: server.port).get()
                let big = 8 << 20
                let first = try await recorder.exchange("/bytes/\(big)", on: channel)
                #expect(first.bytes == big)
                // The kernel caps a mark at half the largest receive buffer (tcp_rmem), which may be below ours.
                #expect(first.marks.contains { $0 > 1 }, "marks seen: \(Set(first.marks).sorted())")
                #expect(zip(first.marks, first.due).allSatisfy { mark, due in mark <= min(Self.raised, max(1, due)) })
                #expect(first.markAfterEnd == 1)
                let second = try await recorder.exchange("/bytes/100", on: channel)  // the same connection
                #expect(second.bytes == 100)
                #expect(second.marks.allSatisfy { $0 == 1 })
                try await channel.close()
            } catch {
                try? await group.shutdownGracefully()
                try? await server.shutdown()
                throw error
            }
            try await group.shutdownGracefully()
            try await server.shutdown()
        }
    #endif

    // MARK: Through the session

    @Test("every byte sent before the server stalls reaches the reader during the stall")
    func bytesBeforeAStallArrive() async throws {
        try await StreamTests.withStreaming { server, manager in
            // 4 MiB at full speed raise the mark; after a pause, 100,000 bytes, fewer than the
            // mark, arrive and the server stalls: only the stall check can hand them over. If it
            // did not, the read below would wait until the server gives up (max_ms) and fail.
            let id = UUID().uuidString
            let before = (4 << 20) + 100_000
            let total = before + 300_000
            let response = try await manager.stream(
                Request(
                    url: server.url(
                        "/fault/hold?id=\(id)&before=\(4 << 20)&pause_ms=50&tail=100000&total=\(total)&max_ms=60000")))
            var received: [UInt8] = []
            received.reserveCapacity(total)
            var iterator = response.body.makeAsyncIterator()
            while received.count < before, let chunk = try await iterator.next() {
                received += chunk.readableBytesView
            }
            #expect(received.count == before)
            _ = try await manager.data(for: Request(url: server.url("/fault/release?id=\(id)")))
            while let chunk = try await iterator.next() { received += chunk.readableBytesView }
            #expect(received.count == total)
            #expect(received.enumerated().allSatisfy { offset, byte in byte == UInt8(ascii: "a") + UInt8(offset % 26) })

            // The connection goes back to the pool with the mark down: a small answer on it is prompt.
            let small = try await manager.data(for: Request(url: server.url("/bytes/10")))
            #expect(small.data.count == 10)
        }
    }

    @Test("a large body cut short while the mark is raised fails at once with a typed error")
    func cutWhileRaised() async throws {
        try await StreamTests.withStreaming { server, manager in
            let response = try await manager.stream(
                Request(url: server.url("/fault/close-mid-response?after=3000000&total=8000000")))
            var received = 0
            let error = await #expect(throws: CourierError.self) {
                for try await chunk in response.body { received += chunk.readableBytes }
            }
            // What was read before the cut is the reader's; what the connection still held
            // when it closed may be lost with it (the same without the mark).
            #expect(received > 0 && received <= 3_000_000)
            #expect(error != nil)
        }
    }
}

/// Records, at each body part of a response, the socket's low-water mark and the bytes still due.
private final class MarkRecorder: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPClientResponsePart

    struct Exchange: Sendable {
        var bytes = 0
        var marks: [Int] = []
        var due: [Int] = []
        var markAfterEnd = 0
    }

    // Touched only on the channel's event loop.
    private var current = Exchange()
    private var declared = 0
    private var done: EventLoopPromise<Exchange>?

    func exchange(_ path: String, on channel: any Channel) async throws -> Exchange {
        let promise = channel.eventLoop.makePromise(of: Exchange.self)
        try await channel.eventLoop.submit {
            self.current = Exchange()
            self.done = promise
        }.get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
        head.headers.add(name: "Host", value: "127.0.0.1")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil))
        return try await promise.futureResult.get()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            declared = Int(head.headers.first(name: "content-length") ?? "") ?? 0
        case .body(let part):
            current.bytes += part.readableBytes
            current.marks.append(Self.mark(of: context.channel))
            current.due.append(declared - current.bytes)
        case .end:
            current.markAfterEnd = Self.mark(of: context.channel)
            done?.succeed(current)
            done = nil
        }
    }

    private static func mark(of channel: any Channel) -> Int {
        #if os(Linux)
            let option = ChannelOptions.Types.SocketOption(
                level: .socket, name: NIOBSDSocket.Option(rawValue: SO_RCVLOWAT))
            return (try? channel.syncOptions?.getOption(option)) ?? -1
        #else
            return -1
        #endif
    }
}

/// A ``ReceiveLowWaterMark`` on an `EmbeddedChannel`, fed response parts; each step returns the
/// mark the channel was last given (it starts at 1), after checking the handler holds the same.
private struct MarkedChannel {
    let channel = EmbeddedChannel()
    let handler: ReceiveLowWaterMark
    // An EmbeddedChannel keeps one value per option type: this reads the last socket option set.
    let option = ChannelOptions.Types.SocketOption(level: .socket, name: .init(rawValue: 0))

    /// A channel whose socket refuses the marks in `refusals` (none when nil).
    init(refusals: Refusals? = nil) throws {
        let option = option
        handler = ReceiveLowWaterMark { channel, mark in
            guard refusals?.values.contains(mark) != true else { return false }
            return (try? channel.syncOptions?.setOption(option, value: mark)) != nil
        }
        try channel.syncOptions?.setOption(option, value: 1)
        try channel.pipeline.syncOperations.addHandler(handler)
    }

    func head(declaredLength: Int?) throws {
        let headers = HTTPHeaders(declaredLength.map { [("Content-Length", "\($0)")] } ?? [])
        _ = try mark(after: .head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)))
    }

    func body(_ size: Int) throws -> Int { try mark(after: .body(ByteBuffer(repeating: 0, count: size))) }

    func end() throws -> Int { try mark(after: .end(nil)) }

    /// The mark after one stall-check interval passes.
    func stallCheck() throws -> Int {
        channel.embeddedEventLoop.advanceTime(by: ReceiveLowWaterMark.stallCheck)
        return try socketMark()
    }

    func finish() throws { _ = try channel.finish() }

    private func mark(after part: HTTPClientResponsePart) throws -> Int {
        try channel.writeInbound(part)
        _ = try channel.readInbound(as: HTTPClientResponsePart.self)  // passed on
        return try socketMark()
    }

    private func socketMark() throws -> Int {
        let mark = try #require(try channel.syncOptions?.getOption(option))
        #expect(handler.mark == mark)
        return mark
    }
}

/// The marks a ``MarkedChannel``'s socket refuses, changed as a test goes on.
private final class Refusals {
    var values: Set<Int> = []
}
