import Courier
import CourierTestServer
import Foundation
import NIOCore
import Testing

@testable import CourierAsyncHTTPClient
@testable import CourierCore

/// Downloads and streams ride HTTP/2, and a reader slower than the server holds back its
/// stream's flow-control window rather than the body: the server stops at the window the client
/// granted (`HTTP2StreamWindow`'s, 1 MiB ahead of the reader), other streams on the connection
/// go on, and reading again reopens the window. What the server wrote and what the client
/// granted come from the test server's per-response flow (`TestServerStats.http2ResponseFlows`),
/// never from timing.
@Suite("HTTP/2: back-pressure on downloads and streams", .serialized, .timeLimit(.minutes(3)))
struct HTTP2BackPressureTests {
    /// The window each stream starts with: AsyncHTTPClient announces no
    /// SETTINGS_INITIAL_WINDOW_SIZE, so RFC 9113's default holds.
    static let initialStreamWindow = 65_535
    static let http2 = HTTPProtocolVersion(major: 2, minor: 0)

    /// The flow of the response to `target` once the server holds bytes that the client's window
    /// does not let out (the reader stopped); fails after a minute without.
    static func heldFlow(_ server: TestServer, _ target: String) async throws -> HTTP2ResponseFlow {
        for _ in 0..<3_000 {
            if let flow = server.stats.http2ResponseFlows[target],
                flow.bodyBytesQueued > initialStreamWindow + flow.windowIncrements
            {
                return flow
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record(
            "the server never waited for the window: \(String(describing: server.stats.http2ResponseFlows[target]))")
        throw CancellationError()
    }

    @Test func downloadsStreamsAndHookedDataTasksRideHTTP2() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2-dl-\(UUID()).bin")
        let hooked = FileManager.default.temporaryDirectory.appendingPathComponent("courier-h2-hook-\(UUID()).bin")
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: hooked)
        }
        try await HTTP2TransportTests.withHTTP2 { server, manager in
            let download = try await manager.download(
                Request(url: server.url("/bytes/2000000?seed=5")), to: file, options: [.removePreviousFile])
            #expect(download.response.httpVersion == Self.http2)
            #expect(Array(try Data(contentsOf: file)) == TestServer.expectedBytes(count: 2_000_000, seed: 5))

            let stream = try await manager.stream(Request(url: server.url("/bytes/300000?seed=6")))
            #expect(stream.head.httpVersion == Self.http2)
            var received: [UInt8] = []
            for try await chunk in stream.body { received += chunk.readableBytesView }
            #expect(received == TestServer.expectedBytes(count: 300_000, seed: 6))

            // A data task that a hook may turn into a download is read as it arrives, too.
            var hooks = SessionHooks()
            hooks.didReceiveResponse = { _, _ in .becomeDownload(options: [], destination: { _, _ in hooked }) }
            manager.hooks = hooks
            let task = manager.dataTask(with: Request(url: server.url("/bytes/400000?seed=8")))
            task.resume()
            let response = try await task.response()
            #expect(response.response.httpVersion == Self.http2)
            #expect(Array(try Data(contentsOf: hooked)) == TestServer.expectedBytes(count: 400_000, seed: 8))

            let stats = server.stats
            #expect(stats.http2StreamsServed == 3)
            #expect(stats.http2ConnectionsOpened == 1)
        }
    }

    /// A 1 GiB stream whose reader stops after its first chunk: the server writes what the window
    /// allows and then waits, with nothing more granted, while a download and a stream on the
    /// same connection complete; once the reader reads again, the window reopens and the bytes
    /// go on, in order.
    @Test func aSlowReaderHoldsItsStreamsWindowWhileOtherStreamsComplete() async throws {
        try await HTTP2TransportTests.withHTTP2 { server, manager in
            let target = "/bytes/\(1 << 30)?seed=21"
            let expected = TestServer.expectedBytes(count: 40 << 20, seed: 21)
            let slow = try await manager.stream(Request(url: server.url(target)))
            #expect(slow.head.httpVersion == Self.http2)
            var iterator = slow.body.makeAsyncIterator()
            var received = 0
            let first = try #require(try await iterator.next())
            #expect(Array(first.readableBytesView) == Array(expected[0..<first.readableBytes]))
            received += first.readableBytes

            _ = try await Self.heldFlow(server, target)
            let fast = try await manager.data(for: Request(url: server.url("/bytes/3000000?seed=22")))
            #expect(fast.response.httpVersion == Self.http2)
            #expect(Array(fast.data) == TestServer.expectedBytes(count: 3_000_000, seed: 22))
            let held = try #require(server.stats.http2ResponseFlows[target])
            let other = try await manager.stream(Request(url: server.url("/bytes/1000000?seed=23")))
            var otherBytes: [UInt8] = []
            for try await chunk in other.body { otherBytes += chunk.readableBytesView }
            #expect(otherBytes == TestServer.expectedBytes(count: 1_000_000, seed: 23))

            let after = try #require(server.stats.http2ResponseFlows[target])
            #expect(after == held, "nothing granted or written while the reader waited")
            #expect(held.bodyBytesWritten <= Self.initialStreamWindow + held.windowIncrements)
            #expect(held.bodyBytesQueued > Self.initialStreamWindow + held.windowIncrements)
            // What the reader holds (Courier's read-ahead and the part beyond it) and the stream's
            // window (HTTP2StreamWindow's, not AsyncHTTPClient's 8 MiB), not the body.
            #expect(
                held.bodyBytesWritten
                    <= StreamingResponseDelegate.defaultBufferedByteLimit + 2 * HTTP2StreamWindow.defaultTarget)
            #expect(server.stats.http2ConnectionsOpened == 1)

            while received < expected.count, let chunk = try await iterator.next() {
                let end = min(expected.count, received + chunk.readableBytes)
                #expect(Array(chunk.readableBytesView.prefix(end - received)) == Array(expected[received..<end]))
                received += chunk.readableBytes
            }
            #expect(received >= expected.count)
            let reopened = try #require(server.stats.http2ResponseFlows[target])
            #expect(reopened.windowIncrements > held.windowIncrements)
            #expect(reopened.bodyBytesWritten >= received)
        }
    }

    /// Streams dropped while their windows are held are reset; what the server had in flight
    /// for them does not count as a flood (HTTP2ConnectionGuard), and the connection serves on.
    @Test func droppingHeldStreamsLeavesTheConnectionServing() async throws {
        try await HTTP2TransportTests.withHTTP2 { server, manager in
            for index in 0..<8 {
                let target = "/bytes/\(1 << 30)?seed=\(30 + index)"
                let stream = try await manager.stream(Request(url: server.url(target)))
                var iterator = stream.body.makeAsyncIterator()
                _ = try #require(try await iterator.next())
                _ = try await Self.heldFlow(server, target)
            }
            for index in 0..<4 {
                let response = try await manager.data(
                    for: Request(url: server.url("/bytes/2000000?seed=\(40 + index)")))
                #expect(response.response.httpVersion == Self.http2)
                #expect(Array(response.data) == TestServer.expectedBytes(count: 2_000_000, seed: UInt64(40 + index)))
            }
            #expect(server.stats.http2ConnectionsOpened == 1)
        }
    }
}
