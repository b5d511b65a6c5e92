import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOSSL

/// The scale row (issue 43): `--requests` (10,000) GETs held open at once by the test server's
/// `/long-poll`, which answers them all when the last one arrives, on a pool sized to hold them
/// all (one connection each over HTTP/1.1; streams of one connection over HTTP/2, `--ca` given).
/// Measures the time from the first request to the last answer, and the resident memory each
/// open request costs: the process's peak resident set during the run (VmHWM, reset first
/// through `/proc/self/clear_refs`) less its resident set just before, over the request count.
/// Both sides run the same task group, so what differs is the client.
enum HeldRequests {
    struct Setup: Sendable {
        let url: String
        let warmUpURL: String
        let count: Int
        let certificates: [NIOSSLCertificate]?

        init(options: Options) throws {
            count = try options.int("requests", default: 10_000)
            let base = try options.string("url")
            // A group of its own per run, so that a late straggler of an earlier run cannot fill it.
            url = base + "/long-poll?count=\(count)&max_ms=60000&id=\(UUID().uuidString)"
            warmUpURL = base + "/long-poll?count=1&id=warm-up"
            let ca = options.string("ca", default: "")
            certificates = ca.isEmpty ? nil : try NIOSSLCertificate.fromPEMFile(ca)
        }
    }

    /// Courier's side: `SessionManager.data(for:)` on its default transport, as many connections
    /// per host as requests; with `throughSession: false` (a diagnostic side) the transport's
    /// `send` alone, so that a run splits Courier's memory between session and transport.
    static func courier(options: Options, throughSession: Bool = true) async throws -> Measurement {
        let setup = try Setup(options: options)
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.maximumConnectionsPerHost = setup.count
        // Opening 10,000 connections at once takes longer than the default 10 s on two cores;
        // AsyncHTTPClient also bounds the wait for a pooled connection by it.
        configuration.connectTimeout = .seconds(120)
        if let certificates = setup.certificates {
            try configuration.apply(ServerTrustPolicy.pinning(.certificate, to: certificates))
        }
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let manager = SessionManager(transport: transport)
        let request = Request(url: try CourierSession.url(setup.url))
        let warmUp = Request(url: try CourierSession.url(setup.warmUpURL))
        do {
            _ = try await manager.data(for: warmUp)
            let measurement = try await measure(count: setup.count) {
                guard throughSession else { return try await CourierSession.sendAlone(request, over: transport) }
                let response = try await manager.data(for: request)
                return response.response.statusCode == 200 ? response.data.count : -1
            }
            try await transport.shutdown()
            return measurement
        } catch {
            try? await transport.shutdown()
            throw error
        }
    }

    /// The peer: AsyncHTTPClient's async API, the pool's soft limit at the request count.
    static func asyncHTTPClient(options: Options) async throws -> Measurement {
        let setup = try Setup(options: options)
        var configuration = HTTPClient.Configuration()
        if let certificates = setup.certificates {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(certificates)
            configuration.tlsConfiguration = tls
        }
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: setup.count)
        configuration.timeout.connect = .seconds(120)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        @Sendable func get(_ url: String) async throws -> Int {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(120))
            let body = try await response.body.collect(upTo: 1 << 20)
            return response.status == .ok ? body.readableBytes : -1
        }
        do {
            _ = try await get(setup.warmUpURL)
            let measurement = try await measure(count: setup.count) { try await get(setup.url) }
            try await client.shutdown()
            return measurement
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Runs `count` copies of `operation` at once and reports the time and memory per request.
    static func measure(count: Int, _ operation: @escaping @Sendable () async throws -> Int) async throws
        -> Measurement
    {
        try resetPeakMemory()
        let before = try residentKiB()
        let clock = ContinuousClock()
        let start = clock.now
        let answered = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<count { group.addTask { try await operation() } }
            return try await group.reduce(0) { $0 + ($1 > 0 ? 1 : 0) }
        }
        let elapsed = clock.now - start
        let peak = PeakMemory.highWaterMarkKiB()
        let perRequest = Double(peak - before) / Double(count)
        var measurement = Measurement(
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            operations: count, bytes: 0, correct: answered == count,
            detail: "\(answered)/\(count) answered 200 after all were held; "
                + String(format: "%.1f KiB resident per open request", perRequest))
        measurement.extra["kib_per_request"] = String(format: "%.2f", perRequest)
        measurement.extra["rss_before_kib"] = String(before)
        return measurement
    }

    /// Sets VmHWM back to the current resident set (Linux: writing 5 to clear_refs).
    private static func resetPeakMemory() throws {
        guard FileManager.default.isWritableFile(atPath: "/proc/self/clear_refs") else {
            throw BenchError("/proc/self/clear_refs is not writable: the peak resident set cannot be reset")
        }
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// VmRSS from /proc/self/status, in KiB.
    private static func residentKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            if let value = Int(line.filter(\.isNumber)) { return value }
        }
        throw BenchError("no VmRSS in /proc/self/status")
    }
}
