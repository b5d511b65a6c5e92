import Courier
import CourierTestServer
import Foundation
import Testing

@testable import CourierCore

@Suite("Transport: a body that stalls part-way", .timeLimit(.minutes(2)))
struct StalledBodyTests {
    @Test("every byte sent before the server stalls reaches the reader during the stall")
    func bytesBeforeAStallArrive() async throws {
        try await StreamTests.withStreaming { server, manager in
            // 4 MiB at full speed; after a pause, 100,000 bytes arrive and the server stalls until
            // released. Bytes held back anywhere on the way would leave the read below waiting
            // until the server gives up (max_ms), and it would fail.
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

            // The connection goes back to the pool as it came: a small answer on it is prompt.
            let small = try await manager.data(for: Request(url: server.url("/bytes/10")))
            #expect(small.data.count == 10)
        }
    }
}
