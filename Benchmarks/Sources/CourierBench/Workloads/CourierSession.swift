import Courier
import Foundation
import NIOSSL

/// Courier's side of the session rows: `SessionManager` on its default AsyncHTTPClient transport.
enum CourierSession {
    static func url(_ text: String) throws -> URL {
        guard let url = URL(string: text) else { throw BenchError("not a URL: \(text)") }
        return url
    }

    /// A download to a file named up front (written beside it, then renamed); the driver hashes
    /// the file afterwards.
    static func download(options: Options) async throws -> Measurement {
        let base = try options.string("url")
        let path = try options.string("path")
        let destination = URL(fileURLWithPath: try options.string("destination"))
        let transport = AsyncHTTPClientTransport(configuration: try bodyTransportConfiguration(options))
        let manager = SessionManager(transport: transport)
        do {
            let (elapsed, response) = try await measureAsync {
                try await manager.download(
                    Request(url: try url(base + path)), to: destination, options: [.removePreviousFile])
            }
            try await manager.shutdown()
            try await transport.shutdown()
            let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int) ?? -1
            return Measurement(
                seconds: elapsed, operations: 1, bytes: size,
                correct: response.response.statusCode == 200 && response.fileURL?.path == destination.path,
                detail: "status \(response.response.statusCode), \(size) bytes at \(destination.path)")
        } catch {
            try? await manager.shutdown()
            try? await transport.shutdown()
            throw error
        }
    }

    /// The transport's configuration for the rows that move one large body: the defaults, or with
    /// `--low-water-mark off` the socket's receive low-water mark left alone (an A/B switch for
    /// `Configuration.raisesReceiveLowWaterMark`, which the table's rows keep on).
    static func bodyTransportConfiguration(_ options: Options) throws -> AsyncHTTPClientTransport.Configuration {
        var configuration = AsyncHTTPClientTransport.Configuration()
        switch options.string("low-water-mark", default: "on") {
        case "on": configuration.raisesReceiveLowWaterMark = true
        case "off": configuration.raisesReceiveLowWaterMark = false
        case let other: throw BenchError("--low-water-mark takes on or off, not \(other)")
        }
        // `--event-loop-writes off`: a download's file written on its task only (an A/B switch for
        // `Configuration.writesDownloadsOnEventLoop`, which the table's rows keep on).
        switch options.string("event-loop-writes", default: "on") {
        case "on": configuration.writesDownloadsOnEventLoop = true
        case "off": configuration.writesDownloadsOnEventLoop = false
        case let other: throw BenchError("--event-loop-writes takes on or off, not \(other)")
        }
        // The HTTP/2 download rows: `--ca PEM` trusts only the test server's certificate, and
        // `--http2 off` keeps the exchange on HTTP/1.1 over the same TLS server.
        let ca = options.string("ca", default: "")
        if !ca.isEmpty {
            try configuration.apply(ServerTrustPolicy.pinning(.certificate, to: NIOSSLCertificate.fromPEMFile(ca)))
        }
        switch options.string("http2", default: "on") {
        case "on": configuration.allowsHTTP2 = true
        case "off": configuration.allowsHTTP2 = false
        case let other: throw BenchError("--http2 takes on or off, not \(other)")
        }
        return configuration
    }

    /// Many small GETs over keep-alive, as the raw AsyncHTTPClient peer does them. With
    /// `throughSession: false` (the `transport` side, a diagnostic that the table does not score)
    /// the same GETs go through `AsyncHTTPClientTransport.send` alone, so that a run can split
    /// Courier's cost into transport and session.
    static func smallGets(options: Options, throughSession: Bool = true) async throws -> Measurement {
        var configuration = AsyncHTTPClientTransport.Configuration()
        configuration.maximumConnectionsPerHost = try options.int("concurrency", default: 16)
        return try await smallGets(
            options: options, over: AsyncHTTPClientTransport(configuration: configuration),
            throughSession: throughSession)
    }

    /// The same GETs over any transport, which this call shuts down.
    static func smallGets(options: Options, over transport: any Transport, throughSession: Bool = true) async throws
        -> Measurement
    {
        let base = try options.string("url")
        let requestCount = try options.int("requests", default: 10_000)
        let concurrency = try options.int("concurrency", default: 16)
        let manager = SessionManager(transport: transport)
        do {
            let request = Request(url: try url(base + "/get"))
            if transport is AsyncHTTPClientTransport {
                try SmallRequests.checkSameRequest(echoedBy: try await manager.data(for: request).data)
            }
            @Sendable func getOnce() async throws -> Int {
                guard throughSession else { return try await sendAlone(request, over: transport) }
                let response = try await manager.data(for: request)
                return response.response.statusCode == 200 ? response.data.count : -1
            }
            let measurement = try await SmallRequests.measure(count: requestCount, concurrency: concurrency, getOnce)
            try await manager.shutdown()
            try await transport.shutdown()
            return measurement
        } catch {
            try? await manager.shutdown()
            try? await transport.shutdown()
            throw error
        }
    }

    /// One request through `transport.send` alone, no session (the diagnostic `transport` sides):
    /// the body's size when the status is 200, else -1.
    static func sendAlone(_ request: Request, over transport: any Transport) async throws -> Int {
        let response = try await transport.send(request, context: ExchangeContext())
        var size = 0
        for try await chunk in response.body { size += chunk.readableBytes }
        return response.head.statusCode == 200 ? size : -1
    }
}
