import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

@Suite("Transport: decompression by default, Accept-Encoding, bombs", .timeLimit(.minutes(3)))
struct DecompressionTests {
    /// Runs `body` with a server and a manager on a transport of its own made from `configure`.
    static func withTransport<R>(
        _ configure: (inout AsyncHTTPClientTransport.Configuration) -> Void = { _ in },
        _ body: (TestServer, SessionManager) async throws -> R
    ) async throws -> R {
        var configuration = AsyncHTTPClientTransport.Configuration()
        configure(&configuration)
        let transport = AsyncHTTPClientTransport(configuration: configuration)
        let server = try await TestServer.start()
        let manager = SessionManager(transport: transport)
        do {
            let result = try await body(server, manager)
            try await transport.shutdown()
            try await server.shutdown()
            return result
        } catch {
            try? await transport.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    @Test("the defaults: on, ratio 100 past 1 GiB")
    func defaults() {
        let configuration = AsyncHTTPClientTransport.Configuration()
        #expect(configuration.decompressesResponses)
        #expect(configuration.decompressionRatioLimit == 100)
        #expect(configuration.decompressionRatioFreeSize == 1 << 30)
    }

    @Test("gzip and deflate bodies arrive decoded, and the request asked for them", arguments: ["gzip", "deflate"])
    func decodesByDefault(_ coding: String) async throws {
        try await Self.withTransport { server, manager in
            let response = try await manager.data(for: Request(url: server.url("/\(coding)")))
            #expect(response.response.value(forHTTPHeaderField: "Content-Encoding") == coding)
            let object = try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
            #expect(object[coding == "gzip" ? "gzipped" : "deflated"] as? Bool == true)
            let headers = try #require(object["headers"] as? [String: String])
            #expect(headers["Accept-Encoding"] == "gzip, deflate")
        }
    }

    @Test("the transport says when it decoded a body, so that the session keeps no resume data for it")
    func reportsDecodedBodies() async throws {
        let server = try await TestServer.start()
        let off = AsyncHTTPClientTransport(
            configuration: {
                var configuration = AsyncHTTPClientTransport.Configuration()
                configuration.decompressesResponses = false
                return configuration
            }())
        do {
            let cases: [(any Transport, String, Bool)] = [
                (AsyncHTTPClientTransport.shared, "/gzip", true), (AsyncHTTPClientTransport.shared, "/deflate", true),
                (AsyncHTTPClientTransport.shared, "/get", false), (off, "/gzip", false),
            ]
            for (transport, path, decoded) in cases {
                let response = try await transport.send(Request(url: server.url(path)), context: ExchangeContext())
                #expect(response.bodyIsDecoded == decoded, "\(path)")
                for try await _ in response.body {}
            }
        } catch {
            Issue.record(error)
        }
        try await off.shutdown()
        try await server.shutdown()
    }

    @Test("the shared transport decodes too")
    func sharedTransportDecodes() async throws {
        let server = try await TestServer.start()
        let response: SessionResponse
        do {
            response = try await SessionManager().data(for: Request(url: server.url("/gzip")))
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
        let object = try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
        #expect(object["gzipped"] as? Bool == true)
    }

    @Test("a caller's own Accept-Encoding is sent as it is, and only it")
    func callersAcceptEncodingWins() async throws {
        try await Self.withTransport { server, manager in
            var fields = HTTPFields()
            fields[.acceptEncoding] = "identity"
            _ = try await manager.data(for: Request(url: server.url("/get"), headerFields: fields))
            #expect(server.stats.lastRequestHead?.values("Accept-Encoding") == ["identity"])
        }
    }

    @Test("turned off: no Accept-Encoding, and the bytes as sent")
    func off() async throws {
        try await Self.withTransport({ $0.decompressesResponses = false }) { server, manager in
            let response = try await manager.data(for: Request(url: server.url("/gzip")))
            #expect(Array(response.data.prefix(2)) == [0x1F, 0x8B])
            #expect(server.stats.lastRequestHead?.values("Accept-Encoding") == [])
        }
    }

    @Test("a decompression bomb is a typed error, buffered or downloaded", arguments: ["gzip", "deflate"])
    func bomb(_ coding: String) async throws {
        // The ratio-free size lowered from 1 GiB, so that the test stays small.
        try await Self.withTransport({ $0.decompressionRatioFreeSize = 1 << 20 }) { server, manager in
            // 64 MiB of zeros in about 400 KiB: 158:1, past the ratio of 100 past 1 MiB.
            let url = server.url("/\(coding)-bomb?size=67108864")
            let buffered = await expectCode(.decompressionLimitExceeded) {
                try await manager.data(for: Request(url: url))
            }
            #expect(buffered?.underlyingError != nil)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-bomb-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            await expectCode(.decompressionLimitExceeded) {
                try await manager.download(Request(url: url)) { _, _ in directory.appendingPathComponent("bomb") }
            }
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("bomb").path))
            // The connection is not left busy: the next request on the manager succeeds.
            #expect(try await manager.data(for: Request(url: server.url("/get"))).response.statusCode == 200)
        }
    }

    @Test("below the ratio-free size the ratio does not apply: 158:1 zeros decode")
    func smallBodiesAreNotBombs() async throws {
        try await Self.withTransport({ $0.decompressionRatioFreeSize = 1 << 20 }) { server, manager in
            let response = try await manager.data(for: Request(url: server.url("/deflate-bomb?size=1000000")))
            #expect(response.data.count == 999_751)
        }
    }

    @Test("a raised ratio lets a highly compressible body through, decoded")
    func raisedRatio() async throws {
        try await Self.withTransport({
            $0.decompressionRatioLimit = 1_000
            $0.decompressionRatioFreeSize = 1 << 19
        }) { server, manager in
            let response = try await manager.data(for: Request(url: server.url("/gzip-bomb?size=1000000")))
            #expect(response.data.count == 999_751)
            #expect(response.data.allSatisfy { $0 == 0 })
        }
    }

    /// What nginx's `gzip on` makes of a repetitive log (about 120:1) or `gzip -9` of a padded file
    /// (over 200:1) is an ordinary body, not a bomb: at the defaults, 8 MiB of zeros at 158:1
    /// arrive whole, buffered, streamed and downloaded.
    @Test("an ordinary body that compresses well past 100:1 decodes at the defaults")
    func wellCompressedBodiesAreNotBombs() async throws {
        try await Self.withTransport { server, manager in
            let url = server.url("/gzip-bomb?size=8388608")
            let response = try await manager.data(for: Request(url: url))
            #expect(response.data.count == 8_388_355)
            var streamed = 0
            for try await chunk in try await manager.stream(Request(url: url)).body { streamed += chunk.readableBytes }
            #expect(streamed == 8_388_355)
        }
    }
}
