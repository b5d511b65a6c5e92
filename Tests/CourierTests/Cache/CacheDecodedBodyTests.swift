import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// What the cache hands on says whether the body was decoded from its coding, so that a download
/// through a cached manager is never resumed over decoded bytes.
@Suite("Cache: a decoded body stays marked as decoded")
struct CacheDecodedBodyTests {
    @Test func theFlagPassesThroughAndAStoredCodedBodyCountsAsDecoded() async throws {
        let cache = HTTPCache()
        let url = URL(string: "http://127.0.0.1:9/coded")!
        var fields = HTTPFields()
        fields[.cacheControl] = "max-age=60"
        fields[.contentEncoding] = "gzip"
        let head = ResponseHead(status: .ok, headerFields: fields, url: url)
        let network = try await cache.exchange(Request(url: url), participation: .use) { _ in
            TransportResponse(
                head: head,
                body: BodyChunks(makeNext: {
                    var sent = false
                    return {
                        defer { sent = true }
                        return sent ? nil : ByteBuffer(string: "decoded text")
                    }
                }), bodyIsDecoded: true)
        }
        #expect(network.bodyIsDecoded)
        for try await _ in network.body {}

        let stored = try await cache.exchange(Request(url: url), participation: .onlyIfCached) { _ in
            throw CourierError(.transportFailed, "the stored response should have answered")
        }
        #expect(stored.bodyIsDecoded)
        var text = ""
        for try await chunk in stored.body { text += String(buffer: chunk) }
        #expect(text == "decoded text")
    }
}
