import Foundation
import Testing

@testable import Courier
import CourierTestServer

/// Load held by one manager: many concurrent requests, no leaked descriptors, bounded memory.
@Suite("Load: 1,000 concurrent requests through one manager", .timeLimit(.minutes(1)))
struct LoadTests {
    @Test func thousandConcurrentRequestsAllSucceedWithoutLeaks() async throws {
        let server = try await TestServer.start()
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        // One warm-up request so the pool and the event loops exist before counting.
        _ = try await manager.session.data(for: Request(url: server.url("/get")))
        let descriptorsBefore = ProcessProbe.openFileDescriptorCount()
        let residentBefore = ProcessProbe.residentBytes()

        let outcome: Result<[(Int, Int, Int)], any Error>
        do {
            outcome = .success(try await withThrowingTaskGroup(of: (Int, Int, Int).self) { group in
                for index in 0..<1_000 {
                    group.addTask {
                        let response = try await manager.session.data(
                            for: Request(url: server.url("/bytes/\(1_000 + index)?seed=\(index)")))
                        return (index, response.response.statusCode, response.data.count)
                    }
                }
                var results: [(Int, Int, Int)] = []
                for try await result in group { results.append(result) }
                return results
            })
        } catch {
            outcome = .failure(error)
        }
        guard case .success(let statuses) = outcome else {
            // Shut down before failing: an HTTPClient dropped without shutdown traps in debug builds.
            try? await manager.shutdown()
            try? await server.shutdown()
            _ = try outcome.get()
            return
        }
        #expect(statuses.count == 1_000)
        #expect(statuses.allSatisfy { $0.1 == 200 && $0.2 == 1_000 + $0.0 })
        let residentAfter = ProcessProbe.residentBytes()

        try await manager.shutdown()
        try await server.shutdown()
        let descriptorsAfter = ProcessProbe.openFileDescriptorCount()
        // After shutdown not one socket to the server remains. (How many pooled connections are
        // still idle right after the load depends on timing, so that count is not asserted.)
        if let socketsAfter = ProcessProbe.socketDescriptorCount(port: server.port) {
            #expect(socketsAfter == 0, "\(socketsAfter) sockets to port \(server.port) still open")
        }
        if let residentBefore, let residentAfter {
            // 1,000 responses of about 1.5 KB each; the bound is generous but finite.
            #expect(residentAfter - residentBefore < 256 << 20, "RSS grew by \(residentAfter - residentBefore)")
        }
        if let descriptorsBefore, let descriptorsAfter {
            // The whole-process count also sees other suites running in parallel; a leak of one
            // descriptor per request would still show as hundreds.
            #expect(descriptorsAfter - descriptorsBefore < 100, "open descriptors \(descriptorsBefore) → \(descriptorsAfter)")
        }
    }
}
