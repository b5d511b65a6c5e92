import AsyncHTTPClient
import Foundation
import NIOCore

/// The peer of the small-requests row: AsyncHTTPClient used directly, with nothing on top.
enum RawAsyncHTTPClient {
    static func smallGets(options: Options) async throws -> Measurement {
        try await measuringGets(options: options) { client, url in
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept-Encoding", value: SmallRequests.acceptEncoding)
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            return response.status == .ok ? body.readableBytes : -1
        }
    }

    /// The same GETs on AsyncHTTPClient's delegate API, the one Courier's transport uses: with
    /// ``smallGets(options:)`` it splits Courier's gap to the async API into what the two APIs
    /// differ by and what Courier itself adds.
    static func smallGetsDelegate(options: Options) async throws -> Measurement {
        var measurement = try await measuringGets(options: options) { client, url in
            var request = try HTTPClient.Request(url: url)
            request.headers.add(name: "Accept-Encoding", value: SmallRequests.acceptEncoding)
            let task = client.execute(
                request: request, delegate: CollectingDelegate(), eventLoop: .indifferent, deadline: nil)
            let answer = try await task.futureResult.get()
            return answer.status == .ok ? answer.body.count : -1
        }
        measurement.detail += ", delegate API"
        return measurement
    }

    /// Times `getOnce` against the test server's `/get` on a client whose pool holds one
    /// connection per worker, and shuts the client down whatever happens.
    private static func measuringGets(
        options: Options, _ getOnce: @escaping @Sendable (HTTPClient, String) async throws -> Int
    ) async throws -> Measurement {
        let url = try options.string("url") + "/get"
        let requestCount = try options.int("requests", default: 10_000)
        let concurrency = try options.int("concurrency", default: 16)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let measurement = try await SmallRequests.measure(count: requestCount, concurrency: concurrency) {
                try await getOnce(client, url)
            }
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
    /// What Courier asks for by default (issue 14), and so what every raw peer of a small-requests
    /// row asks for too: the test server echoes the request's headers into its answer, so a peer
    /// that sent one header less got a shorter answer and cost the server less on the same two
    /// cores (measured: 0.94x its own throughput with the header, 2026-11-26). Same request bytes
    /// on the wire, so the rows compare clients, not requests.
    static let acceptEncoding = "gzip, deflate"

    /// Throws when the test server's echo of Courier's request shows another `Accept-Encoding`
    /// than ``acceptEncoding``: a change to Courier's default would otherwise leave the peers
    /// sending a different request again, unnoticed. A body that echoes no headers (the
    /// discarding sink) has nothing to compare.
    static func checkSameRequest(echoedBy body: Data) throws {
        let echo = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        guard let headers = echo?["headers"] as? [String: Any] else { return }
        let sent = headers["Accept-Encoding"] as? String
        guard sent == acceptEncoding else {
            throw BenchError(
                "Courier sent Accept-Encoding \(sent ?? "(none)"), the raw peers send \(acceptEncoding): update SmallRequests.acceptEncoding"
            )
        }
    }

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
