import CourierTestServer
import NIOHTTP1
import Testing

@Suite("Test server: long poll", .timeLimit(.minutes(3)))
struct LongPollEndpointTests {
    @Test func answersEveryRequestOfAGroupOnceAllAreHeld() async throws {
        try await TestServerHarness.withServer { server async throws in
            let replies = try await withThrowingTaskGroup(of: TestServerHarness.Reply.self) { group in
                for _ in 0..<3 {
                    group.addTask { try await TestServerHarness.fetch(server, "/long-poll?count=3&id=trio") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.count == 3)
            for reply in replies {
                #expect(reply.status == .ok)
                #expect(try reply.json()["held"] == 3)
            }
            #expect(server.stats.longPollsHeldPeak == 3)
        }
    }

    @Test func answersAGroupThatNeverFillsAtItsCap() async throws {
        try await TestServerHarness.withServer { server async throws in
            let reply = try await TestServerHarness.fetch(server, "/long-poll?count=1000&max_ms=50&id=alone")
            #expect(reply.status == .ok)
            #expect(server.stats.longPollsHeldPeak == 1)
        }
    }
}
