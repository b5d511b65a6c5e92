import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// What may be stored (RFC 9111 §3), Vary matching (§4.1), the in-memory LRU and the disk
/// file format, without a network.
@Suite("HTTP cache: storing, Vary, memory and disk")
struct CacheStorageTests {
    static func mayStore(
        _ fields: HTTPFields, status: Int = 200, request: HTTPFields = [:]
    ) -> Bool {
        let entry = CacheFreshnessTests.entry(fields, status: HTTPResponse.Status(code: status))
        return CacheStorage.mayStore(
            status: status, response: entry, requestFields: request,
            requestDirectives: CacheStorage.requestDirectives(request))
    }

    @Test("§3: no-store, Authorization, partial content, Vary: *, and responses that could never be reused")
    func storability() {
        #expect(Self.mayStore([.cacheControl: "max-age=60"]))
        #expect(Self.mayStore([.cacheControl: "private, max-age=60"]))
        #expect(!Self.mayStore([.cacheControl: "no-store, max-age=60"]))
        #expect(!Self.mayStore([.cacheControl: "max-age=60"], request: [.cacheControl: "no-store"]))
        // must-understand with an understood status overrides no-store (§5.2.2.3).
        #expect(Self.mayStore([.cacheControl: "must-understand, no-store, max-age=60"]))
        #expect(!Self.mayStore([.cacheControl: "must-understand, no-store, max-age=60"], status: 299))
        // §3.5: Authorization needs public, s-maxage or must-revalidate.
        let authorized: HTTPFields = [.authorization: "Bearer t"]
        #expect(!Self.mayStore([.cacheControl: "max-age=60"], request: authorized))
        #expect(!Self.mayStore([.cacheControl: "private, max-age=60"], request: authorized))
        #expect(Self.mayStore([.cacheControl: "public, max-age=60"], request: authorized))
        #expect(Self.mayStore([.cacheControl: "max-age=60, must-revalidate"], request: authorized))
        #expect(Self.mayStore([.cacheControl: "s-maxage=60, max-age=60"], request: authorized))
        #expect(!Self.mayStore([.cacheControl: "max-age=60"], status: 206))
        #expect(!Self.mayStore([.cacheControl: "max-age=60", .vary: "*"]))
        // No explicit freshness, a status that is not heuristically cacheable.
        #expect(!Self.mayStore([.lastModified: "Sun, 06 Nov 1994 08:49:37 GMT"], status: 500))
        // Cacheable but stale at once and without a validator: never reusable, so not kept.
        #expect(!Self.mayStore([.cacheControl: "max-age=0"]))
        #expect(Self.mayStore([.cacheControl: "max-age=0", .eTag: "\"a\""]))
        #expect(Self.mayStore([.cacheControl: "no-cache", .eTag: "\"a\""]))
    }

    @Test("hop-by-hop fields and those Connection names are not stored (§3.1)")
    func storedFields() {
        let fields: HTTPFields = [
            .connection: "close, X-Private", .transferEncoding: "chunked", .contentType: "text/plain",
            HTTPField.Name("X-Private")!: "1", HTTPField.Name("Keep-Alive")!: "timeout=5",
        ]
        let kept = CacheStorage.storableFields(fields)
        #expect(kept.map { $0.name.canonicalName } == ["content-type"])
    }

    @Test("§4.1: Vary values must match; absent matches absent; Vary: * matches nothing")
    func vary() {
        let fields: HTTPFields = [.cacheControl: "max-age=60", .vary: "Accept, accept-language"]
        #expect(CacheVary.names(fields) == ["accept", "accept-language"])
        let stored = CacheFreshnessTests.entry(
            fields,
            varying: [
                .init(name: "accept", value: "application/json"), .init(name: "accept-language", value: nil),
            ])
        #expect(stored.matches([.accept: "application/json"]))
        #expect(stored.matches([.accept: " application/json "]))
        #expect(!stored.matches([.accept: "text/html"]))
        #expect(!stored.matches([:]))
        #expect(!stored.matches([.accept: "application/json", .acceptLanguage: "en"]))
        let star = CacheFreshnessTests.entry([.cacheControl: "max-age=60", .vary: "Accept, *"])
        #expect(star.variesOnEverything)
        #expect(!star.matches([:]))
    }

    @Test("§4.3.4: a 304 replaces stored fields (not Content-Length) and restarts the age")
    func freshening() {
        let stored = CacheFreshnessTests.entry([
            .cacheControl: "max-age=10", .eTag: "\"v1\"", .contentLength: "4", HTTPField.Name("X-Old")!: "kept",
        ])
        let later = CacheFreshnessTests.t0.addingTimeInterval(500)
        let refreshed = stored.freshened(
            with: [.cacheControl: "max-age=60", .contentLength: "0", HTTPField.Name("X-New")!: "added"],
            requestTime: later, responseTime: later)
        #expect(refreshed.headerFields[.cacheControl] == "max-age=60")
        #expect(refreshed.headerFields[.contentLength] == "4")
        #expect(refreshed.headerFields[HTTPField.Name("X-Old")!] == "kept")
        #expect(refreshed.headerFields[HTTPField.Name("X-New")!] == "added")
        #expect(refreshed.lifetime.seconds == 60)
        // Replaced where they stood; new fields last.
        #expect(
            refreshed.headerFields.map { $0.name.canonicalName } == [
                "cache-control", "etag", "content-length", "x-old", "x-new",
            ])
        #expect(
            CacheReuse.decide(refreshed, request: CacheControl(), now: later.addingTimeInterval(30)) == .serve(age: 30))
        #expect(refreshed.body == stored.body)
    }

    @Test("memory: least recently used out first once past the byte limit")
    func memoryLRU() {
        func entry(_ name: String) -> CachedResponse {
            CachedResponse(
                key: name, url: URL(string: "http://h/\(name)")!, status: .ok, headerFields: [:],
                body: ByteBuffer(repeating: 0x61, count: 700), requestTime: CacheFreshnessTests.t0,
                responseTime: CacheFreshnessTests.t0, varyingFields: [])
        }
        var store = CacheMemoryStore(capacity: 2500)
        store.insert(entry("a"))
        store.insert(entry("b"))
        _ = store.variants(for: "a")
        store.insert(entry("c"))
        #expect(store.variants(for: "b").isEmpty)
        #expect(store.variants(for: "a").count == 1)
        #expect(store.variants(for: "c").count == 1)
        #expect(store.byteCount <= 2500)
        // Bigger than the whole cache: not kept.
        var small = CacheMemoryStore(capacity: 100)
        small.insert(entry("big"))
        #expect(small.entryCount == 0 && small.byteCount == 0)
    }

    @Test("disk format: round trip; truncated, padded or flipped files are no entry")
    func diskFormat() throws {
        let entry = CacheFreshnessTests.entry(
            [.cacheControl: "max-age=60", .eTag: "\"v1\"", .contentType: "text/plain"],
            varying: [.init(name: "accept", value: "text/plain"), .init(name: "cookie", value: nil)])
        let data = try entry.encodedForDisk()
        let decoded = try #require(CachedResponse.decodedFromDisk(data))
        #expect(decoded.key == entry.key && decoded.url == entry.url && decoded.status == entry.status)
        #expect(decoded.headerFields == entry.headerFields && decoded.body == entry.body)
        #expect(decoded.requestTime == entry.requestTime && decoded.responseTime == entry.responseTime)
        #expect(decoded.varyingFields == entry.varyingFields)
        for cut in [1, 8, data.count / 2, data.count - 1] {
            #expect(CachedResponse.decodedFromDisk(data.prefix(data.count - cut)) == nil, "cut \(cut)")
        }
        #expect(CachedResponse.decodedFromDisk(data + Data([0])) == nil)
        for index in stride(from: 0, to: data.count, by: max(1, data.count / 40)) {
            var flipped = data
            flipped[index] ^= 0x20
            #expect(CachedResponse.decodedFromDisk(flipped) == nil, "flipped byte \(index)")
        }
        #expect(CachedResponse.decodedFromDisk(Data()) == nil)
        #expect(CachedResponse.decodedFromDisk(Data(repeating: 0xff, count: 64)) == nil)
    }
}
