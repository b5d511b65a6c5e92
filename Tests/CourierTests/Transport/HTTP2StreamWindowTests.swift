import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import CourierAsyncHTTPClient

/// `HTTP2StreamWindow` in an embedded connection pipeline, with NIOHTTP2's events and frames
/// played by hand and a stream's `HTTP2StreamGuard` in a second embedded pipeline: what it grants, what it
/// lets through of the multiplexer's own grants, and which frames it copies.
@Suite("HTTP/2 stream window: a stalled stream holds a small window")
struct HTTP2StreamWindowTests {
    static let target = 1 << 20
    static let initialWindow = 65_535
    static let stream = HTTP2StreamID(1)

    /// What passes the window towards the multiplexer: window events and DATA frames.
    final class Recorder: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        var windows: [Int?] = []
        var frames: [HTTP2Frame] = []

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            frames.append(unwrapInboundIn(data))
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let updated = event as? NIOHTTP2WindowUpdatedEvent { windows.append(updated.inboundWindowSize) }
        }
    }

    /// A connection with a window, one created stream, and what NIOHTTP2 would report.
    struct Connection {
        let window = HTTP2StreamWindow(target: HTTP2StreamWindowTests.target)
        let recorder = Recorder()
        let channel: EmbeddedChannel
        /// The stream's receive window as NIOHTTP2 would count it.
        var streamWindow = HTTP2StreamWindowTests.initialWindow

        init() throws {
            channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandlers([window, recorder])
            channel.pipeline.fireUserInboundEventTriggered(
                NIOHTTP2StreamCreatedEvent(
                    streamID: HTTP2StreamWindowTests.stream, localInitialWindowSize: 65_535,
                    remoteInitialWindowSize: UInt32(HTTP2StreamWindowTests.initialWindow)))
        }

        /// The WINDOW_UPDATE increments written towards the server since the last call; each
        /// one is reported back as NIOHTTP2 does.
        mutating func grants() throws -> [Int] {
            var increments: [Int] = []
            while let frame = try channel.readOutbound(as: HTTP2Frame.self) {
                guard case .windowUpdate(let increment) = frame.payload else { continue }
                increments.append(increment)
                if frame.streamID == HTTP2StreamWindowTests.stream {
                    streamWindow += increment
                    report()
                }
            }
            return increments
        }

        /// NIOHTTP2's event for the stream's window as it now is.
        func report() {
            channel.pipeline.fireUserInboundEventTriggered(
                NIOHTTP2WindowUpdatedEvent(
                    streamID: HTTP2StreamWindowTests.stream, inboundWindowSize: streamWindow, outboundWindowSize: 65_535
                ))
        }

        /// A DATA frame of `bytes`, a slice of a 256 KiB read as a decrypted TLS read is, and the
        /// window event NIOHTTP2 fires after it.
        mutating func receive(_ bytes: Int, endStream: Bool = false) throws {
            var read = ByteBuffer(repeating: 7, count: 256 << 10)
            let slice = read.readSlice(length: bytes) ?? ByteBuffer()
            try channel.writeInbound(
                HTTP2Frame(
                    streamID: HTTP2StreamWindowTests.stream,
                    payload: .data(.init(data: .byteBuffer(slice), endStream: endStream))))
            streamWindow -= bytes
            report()
        }
    }

    static func payload(of frame: HTTP2Frame) -> ByteBuffer? {
        guard case .data(let data) = frame.payload, case .byteBuffer(let bytes) = data.data else { return nil }
        return bytes
    }

    /// A frame as the stream's codec hands it to the stream's guard.
    static func part(of frame: HTTP2Frame) -> HTTPClientResponsePart {
        .body(payload(of: frame) ?? ByteBuffer())
    }

    @Test func aStalledStreamGetsNoMoreThanItsWindowAndItsWaitingFramesAreCopied() throws {
        var connection = try Connection()
        let stream = EmbeddedChannel(handler: HTTP2StreamGuard(window: connection.window, streamID: Self.stream))
        defer { _ = try? stream.finish() }
        // Adopted: nothing is granted before the reader takes its first bytes, then the window
        // is raised to the target at once.
        #expect(try connection.grants() == [])
        stream.pipeline.read()
        try connection.receive(16_384)
        #expect(connection.recorder.windows.last == HTTP2StreamWindow.silencedWindow)
        let first = connection.recorder.frames.popLast()
        try stream.writeInbound(Self.part(of: try #require(first)))
        #expect(try connection.grants() == [Self.target - (Self.initialWindow - 16_384)])
        #expect(connection.streamWindow == Self.target)

        // The multiplexer's own grant for the stream is dropped; the connection's passes.
        try connection.channel.writeOutbound(
            HTTP2Frame(streamID: Self.stream, payload: .windowUpdate(windowSizeIncrement: 8 << 20)))
        try connection.channel.writeOutbound(
            HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: 8 << 20)))
        #expect(try connection.grants() == [8 << 20])

        // The reader never asked: the whole window arrives and waits, each frame copied out of
        // its read, and nothing more is granted.
        for _ in 0..<(Self.target / 16_384) { try connection.receive(16_384) }
        #expect(connection.streamWindow == 0)
        #expect(try connection.grants() == [])
        #expect(connection.recorder.frames.count == Self.target / 16_384)
        #expect(connection.recorder.frames.allSatisfy { (Self.payload(of: $0)?.storageCapacity ?? .max) < 32_768 })
        #expect(connection.recorder.windows.allSatisfy { $0 == HTTP2StreamWindow.silencedWindow })

        // The reader takes them: a quarter of the window back for every quarter taken.
        var granted: [Int] = []
        for frame in connection.recorder.frames {
            try stream.writeInbound(Self.part(of: frame))
            granted += try connection.grants()
        }
        #expect(granted == Array(repeating: Self.target / 4, count: 4))
        #expect(connection.streamWindow == Self.target)
    }

    @Test func framesForAReaderThatAskedAreNotCopiedAndTheEndStopsTheGrants() throws {
        var connection = try Connection()
        let stream = EmbeddedChannel(handler: HTTP2StreamGuard(window: connection.window, streamID: Self.stream))
        defer { _ = try? stream.finish() }
        stream.pipeline.read()
        try connection.receive(16_384)
        let passed = try #require(connection.recorder.frames.last.flatMap(Self.payload))
        #expect(passed.storageCapacity >= 256 << 10, "the slice itself, no copy")

        // Given to the reader, who does not ask again: the next frame will wait, so it is copied.
        try stream.writeInbound(Self.part(of: try #require(connection.recorder.frames.last)))
        #expect(try connection.grants().count == 1)
        try connection.receive(16_384)
        #expect((connection.recorder.frames.last.flatMap(Self.payload)?.storageCapacity ?? .max) < 32_768)

        // After END_STREAM the window is the multiplexer's again (closed), and nothing is granted.
        try connection.receive(Self.target / 8, endStream: true)
        for frame in connection.recorder.frames.dropFirst() { try stream.writeInbound(Self.part(of: frame)) }
        #expect(try connection.grants() == [])
        try connection.channel.writeOutbound(
            HTTP2Frame(streamID: Self.stream, payload: .windowUpdate(windowSizeIncrement: 1)))
        #expect(try connection.grants() == [1])
    }

    @Test func aStreamWithoutAGuardKeepsTheMultiplexersWindow() throws {
        var connection = try Connection()
        try connection.receive(16_384)
        #expect(connection.recorder.windows == [Self.initialWindow - 16_384], "reported as NIOHTTP2 counts it")
        try connection.channel.writeOutbound(
            HTTP2Frame(streamID: Self.stream, payload: .windowUpdate(windowSizeIncrement: 8 << 20)))
        #expect(try connection.grants() == [8 << 20])
    }
}
