import Courier
import CourierTestServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CourierCore

/// A download's file handed over to the event loop that reads the body (``ResponseBodyFile``): every byte
/// lands in order whoever writes it, the file comes back when asked or when the body ends, a
/// failed write is a typed error that cancels the exchange, and no file is lent where the
/// transport should not write on its loop.
@Suite("Downloads written on the event loop")
struct EventLoopFileWritesTests {
    static let incremental = ExchangeContext(readsBodyIncrementally: true)

    /// What a sink saw: each file size it was told of, and whether each call came on an event loop.
    final class Writes: Sendable {
        private let calls = NIOLockedValueBox<[(size: Int64, onEventLoop: Bool)]>([])
        private let keepsFile: @Sendable (Int) -> Bool

        /// `keepsFile` answers for the n-th call, from 0.
        init(keepsFile: @escaping @Sendable (Int) -> Bool = { _ in true }) { self.keepsFile = keepsFile }

        func sink(for file: DownloadFile, writeTimeLimit: TimeAmount = ResponseBodyFile.stallLimit) -> ResponseBodyFile
        {
            ResponseBodyFile(file: file, writeTimeLimit: writeTimeLimit) { size in
                let count = self.calls.withLockedValue { calls in
                    calls.append((size, MultiThreadedEventLoopGroup.currentEventLoop != nil))
                    return calls.count - 1
                }
                return self.keepsFile(count)
            }
        }

        var sizes: [Int64] { calls.withLockedValue { $0.map(\.size) } }
        var allOnEventLoop: Bool { calls.withLockedValue { $0.allSatisfy(\.onEventLoop) } }
    }

    /// The exchange for `path`, read as a download is: its body, the body's file writer and a
    /// new file to write it to.
    static func download(
        _ path: String, from server: TestServer, over transport: AsyncHTTPClientTransport, into directory: URL,
        context: ExchangeContext = incremental
    ) async throws -> (body: BodyChunks, writer: any ResponseBodyFileWriter, file: DownloadFile) {
        let response = try await transport.send(Request(url: server.url(path)), context: context)
        let writer = try #require(response.body.fileWriter)
        return (response.body, writer, try DownloadFile(directory: directory))
    }

    /// Closes `file`, expects the `count` bytes `/bytes/{count}?seed=` serves in it, and removes it.
    static func expectSeededBytes(
        in file: DownloadFile, count: Int, seed: UInt64, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        file.closeDescriptor()
        let expected = Data(TestServer.expectedBytes(count: count, seed: seed))
        #expect(try Data(contentsOf: file.url) == expected, sourceLocation: sourceLocation)
        file.discard()
    }

    /// A 3 MiB body under the 1 MiB read-ahead: the socket pauses before the file is lent, so the
    /// loop writes what waited and then each part as it arrives.
    @Test(.timeLimit(.minutes(1)))
    func aLentFileGetsTheRestOfTheBodyInOrderOnTheEventLoop() async throws {
        try await withTransport { server, transport, directory in
            let (body, writer, file) = try await Self.download(
                "/bytes/\(3 << 20)?seed=11", from: server, over: transport, into: directory)
            var iterator = body.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            try file.write(first)
            let writes = Writes()
            // No stall limit: on a loaded machine one write can pass the 20 ms one and give the
            // file back, which `aStalledWriteGivesTheFileBack` covers; this test is about order.
            try await writer.writeRemainingBody(to: writes.sink(for: file, writeTimeLimit: .hours(1)))
            #expect(try await iterator.next() == nil)
            #expect(!writes.sizes.isEmpty)
            #expect(writes.allOnEventLoop)
            #expect(writes.sizes == writes.sizes.sorted())
            #expect(writes.sizes.last == 3 << 20)
            try Self.expectSeededBytes(in: file, count: 3 << 20, seed: 11)
        }
    }

    /// A sink that asks for the rest after its first write (what a paused task's does) gets it
    /// through the body's iterator, from the part after the last one written.
    @Test(.timeLimit(.minutes(1)))
    func aFileGivenBackEarlyGetsTheRestThroughTheIterator() async throws {
        try await withTransport { server, transport, directory in
            let (body, writer, file) = try await Self.download(
                "/bytes/\(5 << 20)?seed=12", from: server, over: transport, into: directory)
            let writes = Writes(keepsFile: { _ in false })
            try await writer.writeRemainingBody(to: writes.sink(for: file))
            #expect(writes.sizes.count <= 1)
            for try await chunk in body { try file.write(chunk) }
            try Self.expectSeededBytes(in: file, count: 5 << 20, seed: 12)
        }
    }

    /// A write slower than the limit (here every write, under a limit of zero) gives the file
    /// back after it, though the sink would keep it: the event loop waits on at most one.
    @Test(.timeLimit(.minutes(1)))
    func aStalledWriteGivesTheFileBack() async throws {
        try await withTransport { server, transport, directory in
            let (body, writer, file) = try await Self.download(
                "/bytes/\(5 << 20)?seed=14", from: server, over: transport, into: directory)
            var iterator = body.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            try file.write(first)
            let writes = Writes()
            try await writer.writeRemainingBody(to: writes.sink(for: file, writeTimeLimit: .zero))
            #expect(writes.sizes.count == 1)
            while let chunk = try await iterator.next() { try file.write(chunk) }
            try Self.expectSeededBytes(in: file, count: 5 << 20, seed: 14)
        }
    }

    /// A body that ended before the lend keeps its parts for the reader, which writes them.
    @Test(.timeLimit(.minutes(1)))
    func aBodyThatEndedBeforeTheLendIsReadAsUsual() async throws {
        try await withTransport { server, transport, directory in
            let (body, writer, file) = try await Self.download(
                "/bytes/1000?seed=13", from: server, over: transport, into: directory)
            // A moment for the end to arrive; should it come later, the file is lent first and
            // given back at the end, and the bytes must be the same either way.
            try await Task.sleep(for: .milliseconds(50))
            try await writer.writeRemainingBody(to: Writes().sink(for: file))
            for try await chunk in body { try file.write(chunk) }
            try Self.expectSeededBytes(in: file, count: 1000, seed: 13)
        }
    }

    /// `/dev/full` fails every write with ENOSPC: the lend ends with `.downloadFailed` naming the
    /// file, and the endless body's exchange is cancelled, its connection closed.
    @Test(.timeLimit(.minutes(1)))
    func aFailedWriteOnTheLoopIsATypedErrorAndCancelsTheExchange() async throws {
        try await withTransport { server, transport, directory in
            let url = server.url("/stream-bytes/\(1 << 30)")
            let response = try await transport.send(Request(url: url), context: Self.incremental)
            let writer = try #require(response.body.fileWriter)
            let full = try DownloadFile(directory: directory, appendingTo: URL(fileURLWithPath: "/dev/full"))
            let error = await expectCode(.downloadFailed) {
                try await writer.writeRemainingBody(to: Writes().sink(for: full))
            }
            #expect(error?.offendingInput == "/dev/full")
            await #expect(throws: (any Error).self) { for try await _ in response.body {} }
            let settled = try await server.stats(when: { $0.connectionsOpen == 0 })
            #expect(settled.connectionsOpen == 0)
        }
    }

    /// A failed write while the socket is paused for the read-ahead (a limit of one byte) and the
    /// whole response has been read: the paused read hears of the failure, so the exchange ends
    /// and its body reports it, rather than waiting for ever (found in review).
    @Test(.timeLimit(.minutes(1)))
    func aFailedWriteWhileReadsArePausedStillEndsTheExchange() async throws {
        try await withTransport { server, transport, directory in
            let context = ExchangeContext(readAheadLimit: 1, readsBodyIncrementally: true)
            let response = try await transport.send(Request(url: server.url("/bytes/4000?seed=1")), context: context)
            let writer = try #require(response.body.fileWriter)
            // A moment for the body to arrive and the reads to pause; the test's point holds
            // whether or not the end was read by then.
            try await Task.sleep(for: .milliseconds(200))
            let full = try DownloadFile(directory: directory, appendingTo: URL(fileURLWithPath: "/dev/full"))
            await expectCode(.downloadFailed) { try await writer.writeRemainingBody(to: Writes().sink(for: full)) }
            await #expect(throws: (any Error).self) { for try await _ in response.body {} }
        }
    }

    /// A lent write (here its progress report, which runs in the same turn) that holds the event
    /// loop longer than the read timeout: the timeout counts from the end of the write, not from
    /// the part before it, so a healthy download is not failed as idle (found in review). The
    /// times are wide (a 3 s timeout, a 6 s stall, a body that drips for 10 s) so that a loaded
    /// machine's own pauses cannot reach the timeout; without the fix it fails after the stall.
    @Test(.timeLimit(.minutes(1)))
    func aSlowWriteOnTheLoopIsNotTakenForAnIdleServer() async throws {
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.readTimeout = .seconds(3)
        try await withTransport(configuration: configuration) { server, transport, directory in
            let (body, writer, file) = try await Self.download(
                "/drip?numbytes=40000&duration=10", from: server, over: transport, into: directory)
            var iterator = body.makeAsyncIterator()
            try file.write(try #require(try await iterator.next()))
            let blocked = NIOLockedValueBox(false)
            let sink = ResponseBodyFile(file: file) { _ in
                let first = blocked.withLockedValue { blocked in
                    defer { blocked = true }
                    return !blocked
                }
                if first { usleep(6_000_000) }  // as a write stalled by the kernel would
                return !first
            }
            try await writer.writeRemainingBody(to: sink)
            while let chunk = try await iterator.next() { try file.write(chunk) }
            #expect(file.bytesWritten == 40_000)
            #expect(blocked.withLockedValue { $0 })
            file.discard()
        }
    }

    /// Cancelling the task that waits for a lent file cancels the exchange and gives the file
    /// back; the iterator then reports the cancel.
    @Test(.timeLimit(.minutes(1)))
    func cancellingTheWaitingTaskCancelsTheExchange() async throws {
        try await withTransport { server, transport, directory in
            let url = server.url("/stream-bytes/\(64 << 30)")
            let response = try await transport.send(Request(url: url), context: Self.incremental)
            let writer = try #require(response.body.fileWriter)
            let file = try DownloadFile(directory: directory)
            let writes = Writes()
            let sink = writes.sink(for: file)
            let waiting = Task { try await writer.writeRemainingBody(to: sink) }
            while writes.sizes.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
            waiting.cancel()
            try await waiting.value
            await expectCode(.cancelled) { for try await _ in response.body {} }
            let settled = try await server.stats(when: { $0.connectionsOpen == 0 })
            #expect(settled.connectionsOpen == 0)
            file.discard()
        }
    }

    /// No file is lent for a body read whole, when the configuration says no, or for a body the
    /// transport decodes (the decoder's chunks are not the connection's parts).
    @Test(.timeLimit(.minutes(1)))
    func noFileIsLentWhereTheLoopShouldNotWrite() async throws {
        try await withTransport { server, _, _ in
            var off = AsyncHTTPClientTransport.Configuration()
            off.writesDownloadsOnEventLoop = false
            let reluctant = AsyncHTTPClientTransport(configuration: off)
            let regular = AsyncHTTPClientTransport()
            do {
                let bytes = server.url("/bytes/100")
                #expect(try await regular.send(Request(url: bytes), context: ExchangeContext()).body.fileWriter == nil)
                #expect(try await reluctant.send(Request(url: bytes), context: Self.incremental).body.fileWriter == nil)
                let gzip = try await regular.send(Request(url: server.url("/gzip")), context: Self.incremental)
                #expect(gzip.bodyIsDecoded)
                #expect(gzip.body.fileWriter == nil)
            }
            try await reluctant.shutdown()
            try await regular.shutdown()
        }
    }
}
