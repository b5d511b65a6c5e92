import AsyncHTTPClient
import Foundation
import NIOCore

/// The peer of the small-requests row: AsyncHTTPClient used directly, with nothing on top.
enum RawAsyncHTTPClient {
    static func smallGets(options: Options) async throws -> Measurement {
        let baseURL = try options.string("url")
        let requestCount = try options.int("requests", default: 10_000)
        let concurrency = try options.int("concurrency", default: 16)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let url = baseURL + "/get"
            @Sendable func getOnce() async throws -> Int {
                let request = HTTPClientRequest(url: url)
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                return response.status == .ok ? body.readableBytes : -1
            }
            let measurement = try await SmallRequests.measure(count: requestCount, concurrency: concurrency, getOnce)
            try await client.shutdown()
            return measurement
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

/// Runs `count` requests with `concurrency` workers, each taking the next request number until
/// none is left, and counts the successes (an operation returns its body size, or -1).
enum SmallRequests {
    struct Outcome: Sendable {
        var succeeded = 0
        var bytes = 0
    }

    /// One side of the small-requests row: `concurrency × 4` requests to fill the connection pool,
    /// then `count` timed ones; correct when every timed one succeeded.
    static func measure(
        count: Int, concurrency: Int, _ operation: @escaping @Sendable () async throws -> Int
    ) async throws -> Measurement {
        _ = try await run(count: concurrency * 4, concurrency: concurrency, operation)
        let (elapsed, outcome) = try await measureAsync {
            try await run(count: count, concurrency: concurrency, operation)
        }
        return Measurement(
            seconds: elapsed, operations: count, bytes: outcome.bytes, correct: outcome.succeeded == count,
            detail: "\(outcome.succeeded)/\(count) answered 200")
    }

    static func run(
        count: Int, concurrency: Int, _ operation: @escaping @Sendable () async throws -> Int
    ) async throws -> Outcome {
        try await withThrowingTaskGroup(of: Outcome.self) { group in
            for worker in 0..<concurrency {
                // An even split: worker w does the requests w, w + concurrency, w + 2·concurrency, …
                let share = count / concurrency + (worker < count % concurrency ? 1 : 0)
                group.addTask {
                    var outcome = Outcome()
                    for _ in 0..<share {
                        let size = try await operation()
                        if size >= 0 {
                            outcome.succeeded += 1
                            outcome.bytes += size
                        }
                    }
                    return outcome
                }
            }
            var total = Outcome()
            for try await outcome in group {
                total.succeeded += outcome.succeeded
                total.bytes += outcome.bytes
            }
            return total
        }
    }
}
