import Courier
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// `ResponseStatusGuard` on its own (an `EmbeddedChannel`), and its place in every client's
/// pipelines, HTTP/2 streams included, which the live tests (HTTP/1.1 only, see
/// `statusCodesBelow100AreATypedErrorNotATrap`) do not reach.
@Suite("Transport: status codes below 100 stop at the guard")
struct ResponseStatusGuardTests {
    static func head(_ code: Int) -> HTTPClientResponsePart {
        .head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: code)))
    }

    @Test(arguments: [0, 50, 99])
    func aStatusBelow100IsAnErrorAndClosesTheChannel(_ code: Int) throws {
        let channel = EmbeddedChannel(handler: ResponseStatusGuard())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        #expect(throws: InvalidResponseStatus(code: code)) { try channel.writeInbound(Self.head(code)) }
        #expect(!channel.isActive)
        // What follows on the connection is dropped, not passed on.
        _ = try? channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(string: "ok")))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == nil)
    }

    @Test(arguments: [100, 101, 200, 404, 599, 999])
    func anyOtherStatusPassesWithItsBody(_ code: Int) throws {
        let channel = EmbeddedChannel(handler: ResponseStatusGuard())
        try channel.writeInbound(Self.head(code))
        try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(string: "ok")))
        try channel.writeInbound(HTTPClientResponsePart.end(nil))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == Self.head(code))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == .body(ByteBuffer(string: "ok")))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == .end(nil))
        _ = try channel.finish()
    }

    /// The client configuration puts a guard after the HTTP/1.1 decoder, and an `HTTP2StreamGuard`
    /// (which refuses such codes itself) after an HTTP/2 stream's codec.
    @Test func everyPipelineGetsAGuard() throws {
        let configuration = AsyncHTTPClientTransport.Configuration().makeClientConfiguration(
            connectionLedger: ConnectionLedger())

        let connection = EmbeddedChannel()
        try connection.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
        try connection.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPResponseDecoder()))
        let connectionInitializer = try #require(configuration.http1_1ConnectionDebugInitializer)
        try connectionInitializer(connection).wait()
        #expect((try? connection.pipeline.syncOperations.handler(type: ResponseStatusGuard.self)) != nil)
        _ = try connection.finish()

        let stream = EmbeddedChannel()
        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ClientCodec(httpProtocol: .https))
        let streamInitializer = try #require(configuration.http2StreamChannelDebugInitializer)
        try streamInitializer(stream).wait()
        #expect((try? stream.pipeline.syncOperations.handler(type: HTTP2StreamGuard.self)) != nil)
        _ = try stream.finish()
    }
}
